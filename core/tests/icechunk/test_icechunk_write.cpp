// Writing Icechunk repositories: create, commit, history, tags and
// branches, concurrent sessions (rebase or conflict), hostile repo files,
// killed commits.
#include "icechunk/icechunk_writer.hpp"
#include "icechunk_test_util.hpp"
#include "zarr3/icechunk_write.hpp"
#include "zarr3/metadata.hpp"

#include <csignal>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <snapshot_generated.h>
#include <sys/wait.h>
#include <unistd.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_icechunk_test_icechunk_write {

using namespace zarr3;
using namespace zarr3::icechunk;
using icetest::expect_error;

namespace {

const std::string kGroup = R"({"zarr_format":3,"node_type":"group","attributes":{}})";

ArrayMetadata meta_of(const std::string& grid, uint64_t n, const std::string& codecs) {
    const std::string text = R"({"zarr_format":3,"node_type":"array","shape":[)" +
                             std::to_string(n) + R"(],"data_type":"float32","chunk_grid":)" + grid +
                             R"(,"chunk_key_encoding":{"name":"default"},
        "fill_value":-1,"codecs":)" +
                             codecs + "}";
    return parse_array_metadata(parse_json_text(text, "test"), "test");
}

const std::string kBytesCodec = R"([{"name":"bytes","configuration":{"endian":"little"}}])";
const std::string kRect = R"({"name":"rectilinear","configuration":{"kind":"inline",
    "chunk_shapes":[[2,3,5]]}})";
const std::string kShardGrid = R"({"name":"regular","configuration":{"chunk_shape":[8]}})";
const std::string kSharded = R"([{"name":"sharding_indexed","configuration":{"chunk_shape":[2],
    "codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd",
    "configuration":{"level":1}}],"index_codecs":[{"name":"bytes","configuration":
    {"endian":"little"}}],"index_location":"end"}}])";

std::vector<float> ramp(size_t n, float base) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i)
        v[i] = base + float(i);
    return v;
}

void write_all(std::shared_ptr<Store> s, const std::string& path, const ArrayMetadata& m,
               const std::vector<float>& v) {
    auto a = Array::create(std::move(s), path, m, true);
    a->write(Selection::all(m.shape), v.data());
}

void write_at(std::shared_ptr<Store> s, const std::string& path, uint64_t start,
              const std::vector<float>& v) {
    auto a = Array::open(std::move(s), path);
    a->write(Selection{{start}, {v.size()}, {}}, v.data());
}

std::vector<float> read(std::shared_ptr<Store> storage, const std::string& path,
                        const VersionSpec& v = {}) {
    return icetest::read_all<float>(IcechunkStore::open(std::move(storage), v), path);
}

std::string tip(std::shared_ptr<Store> storage, const std::string& branch = "main") {
    return Repository::open(std::move(storage))->resolve({.branch = branch});
}

// A repository with root group, rectilinear array r (10 values) and sharded
// array s (8 values) in one commit "first".
std::string populate(std::shared_ptr<Store> storage) {
    create_repository(storage);
    auto s = IcechunkSession::open(storage);
    s->put("zarr.json", ByteView(reinterpret_cast<const uint8_t*>(kGroup.data()), kGroup.size()));
    write_all(s, "r", meta_of(kRect, 10, kBytesCodec), ramp(10, 0));
    write_all(s, "s", meta_of(kShardGrid, 8, kSharded), ramp(8, 100));
    return s->commit("first");
}

// A store without locks (an object store): no compare-and-swap.
class PlainStore : public MemoryStore {
  public:
    std::unique_ptr<StoreLock> lock(const std::string&) override { return nullptr; }
    StoreCapabilities capabilities() const override { return {.locks = false}; }
};

} // namespace

TEST(IcechunkWrite, CreateWritesTheInitialSnapshot) {
    auto m = std::make_shared<MemoryStore>();
    auto repo = create_repository(m);
    EXPECT_EQ(repo->spec_version(), 2);
    EXPECT_EQ(icetest::names(repo->branches()), std::vector<std::string>{"main"});
    EXPECT_EQ(repo->resolve({}), kInitialSnapshotId);
    auto h = repo->history(repo->resolve({}));
    EXPECT_EQ(icetest::messages(h), std::vector<std::string>{"Repository initialized"});
    EXPECT_TRUE(repo->snapshot(kInitialSnapshotId)->nodes.empty());
    EXPECT_TRUE(m->get(std::string("transactions/") + kInitialSnapshotId));
    expect_error([&] { create_repository(m); }, {"/repo", "already exists"});
    expect_error([&] { create_repository(std::make_shared<PlainStore>()); }, {"compare-and-swap"});
    // The initial snapshot's "__icechunk" metadata is the bytes Icechunk writes.
    const std::string up = icetest::upstream("test-repo-v2");
    if (std::filesystem::exists(up)) {
        auto theirs = testutil::read_file(up + "/snapshots/" + kInitialSnapshotId);
        auto ours = *m->get(std::string("snapshots/") + kInitialSnapshotId);
        auto a = open_envelope(theirs, FileType::Snapshot, "theirs").payload;
        auto b = open_envelope(ours, FileType::Snapshot, "ours").payload;
        const std::string marker = "is_root";
        auto pos = [&](const Bytes& x) {
            return std::search(x.begin(), x.end(), marker.begin(), marker.end()) - x.begin();
        };
        ASSERT_LT(size_t(pos(a)), a.size());
        ASSERT_LT(size_t(pos(b)), b.size());
        EXPECT_EQ(Bytes(a.begin() + pos(a), a.begin() + pos(a) + 18),
                  Bytes(b.begin() + pos(b), b.begin() + pos(b) + 18));
    }
}

TEST(IcechunkWrite, CommitRectilinearAndShardedReadBack) {
    for (bool on_disk : {false, true}) {
        testutil::TempDir dir;
        std::shared_ptr<Store> st =
            on_disk ? std::shared_ptr<Store>(std::make_shared<FileStore>(dir.str()))
                    : std::make_shared<MemoryStore>();
        const std::string id = populate(st);
        EXPECT_EQ(tip(st), id);
        EXPECT_EQ(read(st, "r"), ramp(10, 0));
        EXPECT_EQ(read(st, "s"), ramp(8, 100));
        auto store = IcechunkStore::open(st);
        EXPECT_EQ(store->snapshot().nodes.size(), 3u);
        EXPECT_EQ(store->list_dir("r/c"), (std::vector<std::string>{"0", "1", "2"}));
        EXPECT_TRUE(st->list_dir("overwritten").size() == 1u) << on_disk;
    }
}

TEST(IcechunkWrite, SessionReadsStagedStateOverTheBase) {
    auto m = std::make_shared<MemoryStore>();
    populate(m);
    auto s = IcechunkSession::open(m);
    EXPECT_EQ(icetest::read_all<float>(s, "r"), ramp(10, 0)); // the base shows through
    write_at(s, "r", 2, {50, 51, 52});
    auto r = icetest::read_all<float>(s, "r");
    EXPECT_EQ(r[2], 50);
    EXPECT_EQ(r[5], 5);
    EXPECT_EQ(read(m, "r"), ramp(10, 0)); // not committed: the branch is unchanged
    s->erase("r/c/2");
    EXPECT_FALSE(s->get("r/c/2"));
    EXPECT_EQ(s->list_dir("r/c"), (std::vector<std::string>{"0", "1"}));
    EXPECT_EQ(s->list_dir(""), (std::vector<std::string>{"r", "s", "zarr.json"}));
    expect_error([&] { s->put("r/c/x", Bytes{1}); }, {"r/c/x", "not a chunk key"});
}

TEST(IcechunkWrite, HistoryParentsAndUnchangedManifests) {
    auto m = std::make_shared<MemoryStore>();
    const std::string first = populate(m);
    auto s = IcechunkSession::open(m);
    write_at(s, "r", 2, {50, 51, 52});
    expect_error([&] { IcechunkSession::open(m)->commit("empty"); }, {"nothing to commit"});
    const std::string second = s->commit("second");
    EXPECT_EQ(s->base_snapshot(), second);
    s->erase("s/zarr.json");
    const std::string third = s->commit("third");
    auto repo = Repository::open(m);
    auto h = repo->history(repo->resolve({}));
    EXPECT_EQ(icetest::messages(h),
              (std::vector<std::string>{"third", "second", "first", "Repository initialized"}));
    EXPECT_EQ(h[1].id, second);
    EXPECT_EQ(h[1].parent, first);
    EXPECT_EQ(h[0].parent, second);
    auto r2 = read(m, "r");
    EXPECT_EQ(std::vector<float>(r2.begin(), r2.begin() + 6),
              (std::vector<float>{0, 1, 50, 51, 52, 5}));
    EXPECT_EQ(read(m, "r", {.snapshot = first}), ramp(10, 0)); // old snapshot unchanged
    EXPECT_EQ(read(m, "s", {.snapshot = second}), ramp(8, 100));
    EXPECT_FALSE(IcechunkStore::open(m)->get("s/zarr.json"));
    // s kept its manifest in "second"; r got a new one.
    auto s1 = repo->snapshot(first), s2 = repo->snapshot(second);
    EXPECT_EQ(s1->find("/s")->manifests[0].manifest_id, s2->find("/s")->manifests[0].manifest_id);
    EXPECT_NE(s1->find("/r")->manifests[0].manifest_id, s2->find("/r")->manifests[0].manifest_id);
    EXPECT_EQ(s2->find("/r")->id, s1->find("/r")->id);
}

TEST(IcechunkWrite, TagsAndBranches) {
    auto m = std::make_shared<MemoryStore>();
    const std::string first = populate(m);
    create_tag(*m, "v1", first);
    create_branch(*m, "dev", first);
    expect_error([&] { create_tag(*m, "v1", first); }, {"tag 'v1' already exists"});
    expect_error([&] { create_branch(*m, "x", "00000000000000000000"); }, {"no snapshot"});
    expect_error([&] { create_branch(*m, "a/b", first); }, {"not a valid branch name"});
    auto s = IcechunkSession::open(m, "dev");
    write_at(s, "r", 0, {9});
    const std::string dev = s->commit("on dev");
    EXPECT_EQ(tip(m, "dev"), dev);
    EXPECT_EQ(tip(m), first);
    EXPECT_EQ(read(m, "r", {.tag = "v1"})[0], 0);
    EXPECT_EQ(read(m, "r", {.branch = "dev"})[0], 9);
    auto repo = Repository::open(m);
    EXPECT_EQ(icetest::names(repo->tags()), std::vector<std::string>{"v1"});
    EXPECT_EQ(icetest::names(repo->branches()), (std::vector<std::string>{"dev", "main"}));
}

// Undo (issue 40.8): reset_branch moves a branch to any snapshot, records
// the previous tip, keeps later snapshots readable by id; with the tip the
// caller saw, a commit made since fails the reset instead of being dropped.
TEST(IcechunkWrite, ResetBranchMovesItBackAndRefusesToDropACommitMadeSince) {
    auto m = std::make_shared<MemoryStore>();
    const std::string first = populate(m);
    auto s = IcechunkSession::open(m);
    write_at(s, "r", 0, {9});
    const std::string second = s->commit("second");
    EXPECT_EQ(reset_branch(*m, "main", first, second), second);
    EXPECT_EQ(tip(m), first);
    EXPECT_EQ(read(m, "r")[0], 0);
    EXPECT_EQ(read(m, "r", {.snapshot = second})[0], 9); // still readable by id
    // Forward again (any snapshot, as Icechunk's reset_branch).
    EXPECT_EQ(reset_branch(*m, "main", second), first);
    EXPECT_EQ(tip(m), second);
    // A commit since the tip the caller saw: refused, the commit kept.
    auto t = IcechunkSession::open(m);
    write_at(t, "r", 0, {4});
    const std::string third = t->commit("third");
    EXPECT_THROW(reset_branch(*m, "main", first, second), CommitConflict);
    EXPECT_EQ(tip(m), third);
    expect_error([&] { reset_branch(*m, "main", first, second); },
                 {"moved from " + second + " to " + third, "nothing was reset"});
    expect_error([&] { reset_branch(*m, "nope", first); }, {"no branch 'nope'"});
    expect_error([&] { reset_branch(*m, "main", "00000000000000000000"); }, {"no snapshot"});
    EXPECT_EQ(tip(m), third);
}

TEST(IcechunkWrite, DisjointConcurrentCommitIsRebased) {
    auto m = std::make_shared<MemoryStore>();
    const std::string first = populate(m);
    auto a = IcechunkSession::open(m), b = IcechunkSession::open(m);
    auto old_reader = IcechunkStore::open(m);
    write_at(a, "r", 0, {7, 7});
    write_at(b, "s", 0, {8, 8});
    const std::string ida = a->commit("a");
    const std::string idb = b->commit("b");
    auto repo = Repository::open(m);
    auto h = repo->history(repo->resolve({}));
    EXPECT_EQ(icetest::messages(h)[0], "b");
    EXPECT_EQ(h[0].id, idb);
    EXPECT_EQ(h[0].parent, ida);
    EXPECT_EQ(read(m, "r")[0], 7);
    EXPECT_EQ(read(m, "s")[0], 8);
    EXPECT_EQ(icetest::read_all<float>(old_reader, "r"), ramp(10, 0));
}

TEST(IcechunkWrite, ConflictingCommitFailsAndTheWinnerStays) {
    auto m = std::make_shared<MemoryStore>();
    populate(m);
    auto a = IcechunkSession::open(m), b = IcechunkSession::open(m);
    write_at(a, "r", 2, {1});
    write_at(b, "r", 3, {2}); // the same chunk (2..4)
    const std::string ida = a->commit("a");
    expect_error([&] { b->commit("b"); }, {"conflict", "chunk (1)", "/r"});
    EXPECT_EQ(tip(m), ida);
    EXPECT_EQ(read(m, "r")[2], 1);
    EXPECT_EQ(read(m, "r")[3], 3);
    // Two appends: both grow the array (its zarr.json): not disjoint.
    auto c = IcechunkSession::open(m), d = IcechunkSession::open(m);
    for (auto& s : {c, d}) {
        auto arr = Array::open(s, "r");
        auto meta = arr->metadata();
        meta.shape[0] = 10; // same shape, rewritten metadata
        meta.attributes["day"] = s == c ? 1 : 2;
        Array::create(s, "r", meta, true);
    }
    const std::string idc = c->commit("c");
    try {
        d->commit("d");
        ADD_FAILURE() << "no conflict";
    } catch (const CommitConflict& e) {
        EXPECT_NE(std::string(e.what()).find("node /r"), std::string::npos) << e.what();
    }
    EXPECT_EQ(tip(m), idc);
}

TEST(IcechunkWrite, GarbageRepoFileAndStoresWithoutCompareAndSwap) {
    auto m = std::make_shared<MemoryStore>();
    const std::string first = populate(m);
    auto s = IcechunkSession::open(m);
    write_at(s, "r", 0, {5});
    const Bytes good = *m->get("repo");
    m->put("repo", Bytes{1, 2, 3, 4});
    expect_error([&] { s->commit("x"); }, {"/repo"});
    EXPECT_EQ(*m->get("repo"), (Bytes{1, 2, 3, 4})); // not replaced
    m->put("repo", good);
    EXPECT_EQ(read(m, "r"), ramp(10, 0)); // nothing lost
    EXPECT_EQ(s->commit("x") != first, true);
    EXPECT_EQ(read(m, "r")[0], 5);
    auto plain = std::make_shared<PlainStore>();
    for (const auto& [k, v] : m->snapshot())
        plain->put(k, v);
    expect_error([&] { IcechunkSession::open(plain); }, {"compare-and-swap", "concurrent"});
}

TEST(IcechunkWrite, CompareAndSwapOnMemoryAndFiles) {
    testutil::TempDir dir;
    std::vector<std::shared_ptr<Store>> stores = {std::make_shared<MemoryStore>(),
                                                  std::make_shared<FileStore>(dir.str())};
    for (auto& st : stores) {
        EXPECT_TRUE(st->can_compare_and_swap());
        EXPECT_TRUE(st->compare_and_swap("k", std::nullopt, Bytes{1}));
        EXPECT_FALSE(st->compare_and_swap("k", std::nullopt, Bytes{2}));
        EXPECT_FALSE(st->compare_and_swap("k", Bytes{3}, Bytes{2}));
        EXPECT_FALSE(st->compare_and_swap("k", Bytes{1, 0}, Bytes{2}));
        EXPECT_EQ(*st->get("k"), Bytes{1});
        EXPECT_TRUE(st->compare_and_swap("k", Bytes{1}, Bytes{2}));
        EXPECT_EQ(*st->get("k"), Bytes{2});
    }
    PlainStore p;
    expect_error([&] { p.compare_and_swap("k", std::nullopt, Bytes{1}); },
                 {"/k", "compare-and-swap"});
}

TEST(IcechunkWrite, KilledCommitLeavesTheBranch) {
    for (const char* step : {"icechunk-chunks", "icechunk-snapshot", "icechunk-repo"}) {
        testutil::TempDir dir;
        auto st = std::make_shared<FileStore>(dir.str());
        const std::string first = populate(st);
        const pid_t kid = ::fork();
        ASSERT_GE(kid, 0);
        if (kid == 0) {
            ::setenv("ZARR3_TEST_KILL_AT", step, 1);
            auto s = IcechunkSession::open(std::make_shared<FileStore>(dir.str()));
            write_at(s, "r", 0, {42});
            s->commit("killed");
            ::_exit(3);
        }
        int status = 0;
        ASSERT_EQ(::waitpid(kid, &status, 0), kid);
        EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << step;
        EXPECT_EQ(tip(st), first) << step;
        EXPECT_EQ(read(st, "r"), ramp(10, 0)) << step;
        auto s = IcechunkSession::open(st); // a later commit works
        write_at(s, "r", 0, {43});
        s->commit("after");
        EXPECT_EQ(read(st, "r")[0], 43) << step;
    }
}

// Interop with the real Icechunk (scripts/icechunk/check_written.sh): writes
// a repository into $ZARR3_ICECHUNK_WRITE_OUT, then, once Icechunk read it
// and committed on top, compares what Icechunk read ($ZARR3_ICECHUNK_CHECK,
// its JSON report) with this reader, and reads Icechunk's commit.
TEST(IcechunkWrite, InteropWrite) {
    const char* out = std::getenv("ZARR3_ICECHUNK_WRITE_OUT");
    if (!out) GTEST_SKIP() << "ZARR3_ICECHUNK_WRITE_OUT not set";
    // One manifest per chunk index (split manifests, issue 43) for Icechunk to read.
    ::setenv("ZARR3_ICECHUNK_SPLIT_CHUNKS", "1", 1);
    auto st = std::make_shared<FileStore>(out);
    const std::string first = populate(st);
    EXPECT_EQ(Repository::open(st)->snapshot(first)->find("/r")->manifests.size(), 3u);
    auto s = IcechunkSession::open(st);
    write_at(s, "r", 2, {50, 51, 52});
    s->commit("second");
    // A commit rebased over another one, then a node deleted.
    auto a = IcechunkSession::open(st), b = IcechunkSession::open(st);
    write_at(a, "r", 5, {77});
    write_at(b, "s", 0, {88});
    a->commit("a");
    b->commit("b (rebased)");
    auto c = IcechunkSession::open(st);
    c->erase("s/zarr.json");
    c->commit("c: s deleted");
    create_tag(*st, "v1", first);
    create_branch(*st, "dev", first);
    ::unsetenv("ZARR3_ICECHUNK_SPLIT_CHUNKS");
}

TEST(IcechunkWrite, InteropCheck) {
    const char* report = std::getenv("ZARR3_ICECHUNK_CHECK");
    const char* repo_dir = std::getenv("ZARR3_ICECHUNK_WRITE_OUT");
    if (!report || !repo_dir) GTEST_SKIP() << "ZARR3_ICECHUNK_CHECK not set";
    const auto bytes = testutil::read_file(report);
    const auto j = nlohmann::json::parse(bytes.begin(), bytes.end());
    auto st = std::make_shared<FileStore>(repo_dir);
    size_t keys = 0;
    for (const auto& [id, values] : j["snapshots"].items()) {
        auto store = IcechunkStore::open(st, {.snapshot = id});
        for (const auto& [key, hex] : values.items()) {
            auto v = store->get(key);
            ASSERT_TRUE(v) << id << " " << key;
            std::string ours;
            for (uint8_t b : *v) {
                const char* digits = "0123456789abcdef";
                ours += digits[b >> 4];
                ours += digits[b & 15];
            }
            EXPECT_EQ(ours, hex.get<std::string>()) << id << " " << key;
            ++keys;
        }
    }
    EXPECT_GT(keys, 5u);
    auto repo = Repository::open(st);
    EXPECT_EQ(repo->resolve({}), j["icechunk_commit"].get<std::string>());
    auto r = read(st, "r");
    EXPECT_EQ(std::vector<float>(r.begin(), r.begin() + 6),
              (std::vector<float>{1000, 1001, 50, 51, 52, 77}));
    EXPECT_EQ(icetest::messages(repo->history(repo->resolve({}))),
              (std::vector<std::string>{"by icechunk", "c: s deleted", "b (rebased)", "a", "second",
                                        "first", "Repository initialized"}));
    EXPECT_EQ(j["snapshots"].size(), 6u);
}

TEST(IcechunkWrite, TwoProcessesCommittingLoseNothing) {
    testutil::TempDir dir;
    auto st = std::make_shared<FileStore>(dir.str());
    populate(st);
    constexpr int kRounds = 6;
    pid_t kids[2];
    for (int w = 0; w < 2; ++w) {
        kids[w] = ::fork();
        ASSERT_GE(kids[w], 0);
        if (kids[w] == 0) {
            int rc = 0;
            try {
                auto mine = std::make_shared<FileStore>(dir.str());
                for (int k = 0; k < kRounds; ++k) {
                    auto s = IcechunkSession::open(mine);
                    write_at(s, w == 0 ? "r" : "s", 0, {float(w * 100 + k)});
                    s->commit("w" + std::to_string(w) + " k" + std::to_string(k));
                }
            } catch (const std::exception& e) {
                std::fprintf(stderr, "writer %d: %s\n", w, e.what());
                rc = 1;
            }
            ::_exit(rc);
        }
    }
    for (pid_t kid : kids) {
        int status = 0;
        ASSERT_EQ(::waitpid(kid, &status, 0), kid);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    auto repo = Repository::open(st);
    auto msgs = icetest::messages(repo->history(repo->resolve({})));
    EXPECT_EQ(msgs.size(), 2u + 2 * kRounds);
    for (int w = 0; w < 2; ++w)
        for (int k = 0; k < kRounds; ++k)
            EXPECT_EQ(std::count(msgs.begin(), msgs.end(),
                                 "w" + std::to_string(w) + " k" + std::to_string(k)),
                      1);
    EXPECT_EQ(read(st, "r")[0], float(kRounds - 1));
    EXPECT_EQ(read(st, "s")[0], float(100 + kRounds - 1));
}

TEST(IcechunkWrite, NewArraysGroupsAndTransactionLog) {
    auto m = std::make_shared<MemoryStore>();
    const std::string first = populate(m);
    auto s = IcechunkSession::open(m);
    s->put("g/zarr.json", ByteView(reinterpret_cast<const uint8_t*>(kGroup.data()), kGroup.size()));
    write_all(s, "g/n", meta_of(kRect, 10, kBytesCodec), ramp(10, 200));
    EXPECT_EQ(s->list_dir("g"), (std::vector<std::string>{"n", "zarr.json"}));
    EXPECT_EQ(icetest::read_all<float>(s, "g/n"), ramp(10, 200));
    const std::string id = s->commit("new nodes");
    EXPECT_EQ(read(m, "g/n"), ramp(10, 200));
    auto tx = open_envelope(*m->get("transactions/" + id), FileType::TransactionLog, "tx");
    EXPECT_GT(tx.payload.size(), 0u);
    auto snap = Repository::open(m)->snapshot(id);
    ASSERT_TRUE(snap->find("/g/n"));
    EXPECT_EQ(snap->find("/g/n")->manifests.size(), 1u);
    EXPECT_EQ(snap->find("/g/n")->manifests[0].axes,
              (std::vector<std::pair<uint32_t, uint32_t>>{{0, 3}}));
}

// Icechunk finds a node's manifests in the snapshot's manifest_files_v2 by
// binary search: the list must be sorted by id.
TEST(IcechunkWrite, ManifestListSortedById) {
    auto m = std::make_shared<MemoryStore>();
    populate(m);
    for (int k = 0; k < 4; ++k) { // more arrays, each with its own manifest
        auto s = IcechunkSession::open(m);
        write_all(s, "x" + std::to_string(k), meta_of(kRect, 10, kBytesCodec), ramp(10, float(k)));
        s->commit("x" + std::to_string(k));
    }
    const std::string id = Repository::open(m)->resolve({});
    auto env = open_envelope(*m->get("snapshots/" + id), FileType::Snapshot, "snap");
    const auto* list =
        flatbuffers::GetRoot<generated::Snapshot>(env.payload.data())->manifest_files_v2();
    ASSERT_TRUE(list);
    std::vector<std::string> ids;
    for (const auto* mi : *list)
        ids.push_back(encode_id(ByteView(mi->id()->bytes()->data(), 12)));
    EXPECT_EQ(ids.size(), 6u);
    EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
    std::set<std::string> referenced;
    const auto snap = Repository::open(m)->snapshot(id);
    for (const auto& n : snap->nodes)
        for (const auto& e : n.manifests)
            referenced.insert(e.manifest_id);
    EXPECT_EQ(std::vector<std::string>(referenced.begin(), referenced.end()), ids);
}

// Two appends of a day to the same array (new grid edge, new chunk 3): the
// second one fails naming the array; the branch holds the first append.
TEST(IcechunkWrite, TwoAppendsConflict) {
    auto m = std::make_shared<MemoryStore>();
    populate(m);
    const std::string grown = R"({"name":"rectilinear","configuration":{"kind":"inline",
        "chunk_shapes":[[2,3,5,2]]}})";
    auto a = IcechunkSession::open(m), b = IcechunkSession::open(m);
    for (auto& [s, v] : {std::pair{a, 31.f}, std::pair{b, 32.f}}) {
        Array::create(s, "r", meta_of(grown, 12, kBytesCodec), true);
        write_at(s, "r", 10, {v, v});
    }
    // The session reads its own append over the base.
    auto mine = icetest::read_all<float>(a, "r");
    EXPECT_EQ(mine.size(), 12u);
    EXPECT_EQ(mine[9], 9);
    EXPECT_EQ(mine[11], 31);
    const std::string ida = a->commit("append a");
    expect_error([&] { b->commit("append b"); }, {"conflict", "/r"});
    EXPECT_EQ(tip(m), ida);
    auto r = read(m, "r");
    ASSERT_EQ(r.size(), 12u);
    EXPECT_EQ(std::vector<float>(r.begin() + 8, r.end()), (std::vector<float>{8, 9, 31, 31}));
}

// Another writer (the real Icechunk's moveNode, or a delete) rearranges the
// nodes a session changes: the commit is a conflict naming the node and
// commits nothing (it used to drop the chunks silently, and crash when the
// metadata changed too); a move of another node is rebased over.
TEST(IcechunkWrite, MovedOrDeletedNodeIsAConflict) {
    struct Case {
        std::string from, to;
        bool meta;
        std::vector<std::string> words;
    };
    for (const Case& c : {Case{"/r", "/moved", false, {"node /r", "moved to /moved", "chunks"}},
                          Case{"/r", "/moved", true, {"node /r", "moved to /moved", "metadata"}},
                          Case{"/r", "", false, {"node /r", "was deleted"}},
                          Case{"/r", "", true, {"node /r", "was deleted"}}}) {
        SCOPED_TRACE(c.from + " -> " + c.to);
        auto m = std::make_shared<MemoryStore>();
        populate(m);
        auto s = IcechunkSession::open(m);
        write_at(s, "r", 0, {7, 7});
        if (c.meta) Array::open(s, "r")->set_attributes({{"k", 1}});
        const std::string theirs = icewriter::rearrange(m, "main", c.from, c.to);
        try {
            s->commit("mine");
            ADD_FAILURE() << "no conflict";
        } catch (const CommitConflict& e) {
            for (const std::string& w : c.words)
                EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << e.what();
        }
        EXPECT_EQ(tip(m), theirs);
        if (!c.to.empty()) {
            EXPECT_EQ(read(m, "moved"), ramp(10, 0));
        }
    }
    // A new array under a group another writer moved away.
    auto m = std::make_shared<MemoryStore>();
    populate(m);
    auto g = IcechunkSession::open(m);
    Group::create(g, "g");
    g->commit("group");
    auto s = IcechunkSession::open(m);
    write_all(s, "g/new", meta_of(kRect, 10, kBytesCodec), ramp(10, 5));
    const std::string theirs = icewriter::rearrange(m, "main", "/g", "/h");
    expect_error([&] { s->commit("mine"); }, {"group /g", "parent of node /g/new"});
    EXPECT_EQ(tip(m), theirs);
    // A move of another node is rebased over.
    auto d = IcechunkSession::open(m);
    write_at(d, "r", 0, {9, 9});
    icewriter::rearrange(m, "main", "/s", "/t");
    d->commit("disjoint");
    EXPECT_EQ(read(m, "r")[0], 9);
    EXPECT_EQ(read(m, "t"), ramp(8, 100));
}

// A session opened at an older snapshot of the branch is the session opened
// when that snapshot was the tip: its commit rebases over the commits since,
// or is a conflict; a snapshot outside the branch's history is refused.
TEST(IcechunkWrite, SessionOpenedAtAnOlderBase) {
    auto m = std::make_shared<MemoryStore>();
    const std::string first = populate(m);
    auto t = IcechunkSession::open(m);
    write_at(t, "r", 0, {5});
    const std::string second = t->commit("second");
    auto s = IcechunkSession::open_at(m, "main", first);
    EXPECT_EQ(s->base_snapshot(), first);
    EXPECT_EQ(icetest::read_all<float>(s, "r")[0], 0);
    write_at(s, "r", 0, {6});
    expect_error([&] { s->commit("mine"); }, {"conflict", "chunk (0)", "/r"});
    EXPECT_EQ(tip(m), second);
    auto d = IcechunkSession::open_at(m, "main", first);
    write_at(d, "s", 0, {7});
    d->commit("disjoint");
    EXPECT_EQ(read(m, "r")[0], 5);
    EXPECT_EQ(read(m, "s")[0], 7);
    EXPECT_EQ(IcechunkSession::open_at(m, "main", tip(m))->base_snapshot(), tip(m));
    create_branch(*m, "dev", first);
    auto dev = IcechunkSession::open(m, "dev");
    write_at(dev, "r", 1, {8});
    const std::string other = dev->commit("dev only");
    expect_error([&] { IcechunkSession::open_at(m, "main", other); },
                 {"snapshot " + other, "not in the history of branch 'main'"});
}

// The repository's write policy (spec 2's repo file): a status other than
// Online refuses sessions, commits, tags and branches, naming the status; a
// disabled create_tag flag refuses tags, naming the flag.
TEST(IcechunkWrite, StatusAndFeatureFlagsAreHonoured) {
    auto m = std::make_shared<MemoryStore>();
    const std::string first = populate(m);
    auto s = IcechunkSession::open(m);
    write_at(s, "r", 0, {7});
    icewriter::edit_repo(*m, [](generated::RepoT& r) {
        r.status->availability = generated::RepoAvailability::ReadOnly;
        r.status->limited_availability_reason = "gc";
    });
    expect_error([&] { s->commit("x"); }, {"status is ReadOnly (gc)", "commit", "refused"});
    expect_error([&] { IcechunkSession::open(m); }, {"status is ReadOnly", "branch 'main'"});
    expect_error([&] { create_tag(*m, "v1", first); }, {"status is ReadOnly", "tag creation"});
    expect_error([&] { create_branch(*m, "dev", first); }, {"ReadOnly", "branch creation"});
    expect_error([&] { reset_branch(*m, "main", first); }, {"ReadOnly", "branch reset"});
    icewriter::edit_repo(*m, [](generated::RepoT& r) {
        r.status->availability = generated::RepoAvailability::Offline;
    });
    expect_error([&] { s->commit("x"); }, {"status is Offline"});
    EXPECT_EQ(tip(m), first);
    auto repo = Repository::open(m);
    EXPECT_TRUE(repo->tags().empty());
    EXPECT_EQ(repo->branches().size(), 1u);
    icewriter::edit_repo(*m, [](generated::RepoT& r) {
        r.status->availability = generated::RepoAvailability::Online;
        r.disabled_feature_flags = {4}; // create_tag
    });
    expect_error([&] { create_tag(*m, "v1", first); }, {"feature flag 'create_tag'", "disabled"});
    EXPECT_TRUE(Repository::open(m)->tags().empty());
    create_branch(*m, "dev", first);
    s->commit("x");
    EXPECT_EQ(read(m, "r")[0], 7);
}

} // namespace ut_icechunk_test_icechunk_write
