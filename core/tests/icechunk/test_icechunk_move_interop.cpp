// Issue 39.5 with the real Icechunk (2.2) moving the node: this library
// writes group g and array g/a, the real Icechunk moves g/a to g/b (a
// rearrange session's moveNode, committed on main; between the two tests,
// scripts/icechunk/move_written.mjs run by scripts/icechunk/check_written.sh),
// then an update session opened on the snapshot before the move writes a
// chunk of g/a (and changes its metadata): the commit is a conflict naming
// the node and commits nothing (it used to drop the chunks silently, and
// crash when the metadata changed too). A session changing another array
// rebases over the move; g/b reads back with its values.
#include "icechunk_test_util.hpp"
#include "zarr3/builder.hpp"
#include "zarr3/icechunk_write.hpp"

#include <cstdlib>
#include <nlohmann/json.hpp>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_icechunk_test_icechunk_move_interop {

using namespace zarr3;
using namespace zarr3::icechunk;

namespace {

std::vector<int32_t> ramp(int32_t first, size_t n) {
    std::vector<int32_t> v(n);
    for (size_t i = 0; i < n; ++i)
        v[i] = first + int32_t(i);
    return v;
}

// Array `path`, int32 values `v`, chunks of 2, zstd.
void write_array(const std::shared_ptr<Store>& s, const std::string& path,
                 const std::vector<int32_t>& v) {
    const auto m = ArrayBuilder({v.size()}, data_type_from_name("int32"))
                       .regular_chunk_shape({2})
                       .zstd(1)
                       .build(path);
    Array::create(s, path, m, true)->write(Selection::all(m.shape), v.data());
}

std::string tip(const std::shared_ptr<Store>& st, const std::string& branch = "main") {
    return Repository::open(st)->resolve({.branch = branch});
}

} // namespace

TEST(IcechunkMoveInterop, Write) {
    const char* out = std::getenv("ZARR3_ICECHUNK_MOVE_OUT");
    if (!out) GTEST_SKIP() << "ZARR3_ICECHUNK_MOVE_OUT not set";
    auto st = std::make_shared<FileStore>(out);
    create_repository(st);
    auto s = IcechunkSession::open(st);
    Group::create(s, "");
    Group::create(s, "g");
    write_array(s, "g/a", ramp(10, 6)); // 3 chunks
    write_array(s, "c", ramp(100, 4));  // 2 chunks
    s->commit("g/a by zarr3");
}

TEST(IcechunkMoveInterop, Check) {
    const char* out = std::getenv("ZARR3_ICECHUNK_MOVE_OUT");
    const char* report = std::getenv("ZARR3_ICECHUNK_MOVE_CHECK");
    if (!out || !report) GTEST_SKIP() << "ZARR3_ICECHUNK_MOVE_CHECK not set";
    const auto text = testutil::read_file(report);
    const auto r = nlohmann::json::parse(std::string(text.begin(), text.end()));
    auto st = std::make_shared<FileStore>(out);
    auto repo = Repository::open(st);
    const auto h = repo->history(repo->resolve({}));
    ASSERT_EQ(icetest::messages(h),
              (std::vector<std::string>{"move /g/a to /g/b by icechunk", "g/a by zarr3",
                                        "Repository initialized"}));
    const std::string moved = h[0].id, base = h[1].id;
    EXPECT_EQ(r.at("before").get<std::string>(), base);
    EXPECT_EQ(r.at("commit").get<std::string>(), moved);
    // Icechunk keeps the node (same id) at its new path.
    const Node* before = repo->snapshot(base)->find("/g/a");
    const Node* after = repo->snapshot(moved)->find("/g/b");
    ASSERT_TRUE(before && after);
    EXPECT_EQ(after->id, before->id);
    EXPECT_FALSE(repo->snapshot(moved)->find("/g/a"));

    // Sessions opened before the move (on its parent snapshot).
    for (const bool meta : {false, true}) {
        SCOPED_TRACE(meta ? "chunk and metadata" : "chunk");
        {
            auto s = IcechunkSession::open_at(st, "main", base);
            auto a = Array::open(s, "g/a");
            const std::vector<int32_t> v{-1, -2};
            a->write(Selection{{2}, {2}, {}}, v.data());
            if (meta) a->set_attributes({{"k", 1}});
            try {
                s->commit("over the move");
                ADD_FAILURE() << "no conflict";
            } catch (const CommitConflict& e) {
                const std::string what = e.what();
                for (const std::string w :
                     {"conflict", "node /g/a", "moved to /g/b", meta ? "metadata" : "chunks"})
                    EXPECT_NE(what.find(w), std::string::npos) << "'" << w << "' not in " << what;
            }
        } // the session closes (it crashed here with a metadata change)
        EXPECT_EQ(tip(st), moved);
    }
    auto store = IcechunkStore::open(st, {});
    EXPECT_EQ(icetest::read_all<int32_t>(store, "g/b"), ramp(10, 6));
    EXPECT_EQ(icetest::read_all<int32_t>(store, "c"), ramp(100, 4));
    EXPECT_THROW(Array::open(store, "g/a"), Error);

    // A change to another array, from the same base, rebases over the move
    // (on a branch, so main stays as Icechunk left it).
    create_branch(*st, "rebase", moved);
    auto s = IcechunkSession::open_at(st, "rebase", base);
    const std::vector<int32_t> v{-1, -2};
    Array::open(s, "c")->write(Selection{{2}, {2}, {}}, v.data());
    s->commit("c over the move");
    EXPECT_EQ(tip(st), moved);
    auto rebased = IcechunkStore::open(st, {.branch = "rebase"});
    EXPECT_EQ(icetest::read_all<int32_t>(rebased, "c"), (std::vector<int32_t>{100, 101, -1, -2}));
    EXPECT_EQ(icetest::read_all<int32_t>(rebased, "g/b"), ramp(10, 6));
    EXPECT_THROW(Array::open(rebased, "g/a"), Error);
}

} // namespace ut_icechunk_test_icechunk_move_interop
