// Manifests split along axis 0 (issue 43, commits whose size does not grow
// with history): a commit writes a manifest only for the splits holding a
// changed chunk, keeps the others, rewrites an unsplit manifest into splits
// once, and an append to 100,000 chunks writes under 10% of what one
// manifest for the whole array costs.
#include "icechunk_test_util.hpp"
#include "zarr3/icechunk_write.hpp"
#include "zarr3/metadata.hpp"

#include <cstdlib>
#include <iostream>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_icechunk_test_icechunk_manifest_split {

using namespace zarr3;
using namespace zarr3::icechunk;

namespace {

ArrayMetadata meta_of(uint64_t n) {
    return icetest::vector_meta(n, "int16", 1);
}

const std::string kGroup = R"({"zarr_format":3,"node_type":"group","attributes":{}})";

std::vector<int16_t> ramp(size_t n) {
    std::vector<int16_t> v(n);
    for (size_t i = 0; i < n; ++i)
        v[i] = int16_t(i % 30000);
    return v;
}

// A repository with array "a" of `n` one-element chunks 0, 1, 2 ...
std::shared_ptr<MemoryStore> series(uint64_t n) {
    auto st = std::make_shared<MemoryStore>();
    create_repository(st);
    auto s = IcechunkSession::open(st);
    s->put("zarr.json", ByteView(reinterpret_cast<const uint8_t*>(kGroup.data()), kGroup.size()));
    const auto v = ramp(n);
    Array::create(s, "a", meta_of(n), true)->write(Selection::all({n}), v.data());
    s->commit("series");
    return st;
}

// Appends value 7 at the end of "a"; returns the bytes the commit wrote
// besides the chunk (manifests, snapshot, transaction log).
uint64_t append_one(const std::shared_ptr<MemoryStore>& st) {
    std::map<std::string, size_t> before;
    for (const char* dir : {"manifests", "snapshots", "transactions"})
        for (const auto& k : st->list_dir(dir))
            before[std::string(dir) + "/" + k] = 1;
    auto s = IcechunkSession::open(st);
    auto a = Array::open(s, "a");
    const uint64_t n = a->metadata().shape[0];
    a->resize({n + 1});
    const int16_t seven = 7;
    a->write(Selection{{n}, {1}, {}}, &seven);
    s->commit("append");
    uint64_t bytes = 0;
    for (const char* dir : {"manifests", "snapshots", "transactions"})
        for (const auto& k : st->list_dir(dir))
            if (!before.count(std::string(dir) + "/" + k))
                bytes += st->get(std::string(dir) + "/" + k)->size();
    return bytes;
}

std::vector<ManifestExtent> manifests_of(const std::shared_ptr<MemoryStore>& st) {
    auto store = IcechunkStore::open(st);
    return store->snapshot().find("/a")->manifests;
}

std::vector<int16_t> read_a(const std::shared_ptr<MemoryStore>& st, const VersionSpec& v = {}) {
    return icetest::read_all<int16_t>(IcechunkStore::open(st, v), "a");
}

struct SplitEnv {
    explicit SplitEnv(const char* v) { ::setenv("ZARR3_ICECHUNK_SPLIT_CHUNKS", v, 1); }
    ~SplitEnv() { ::unsetenv("ZARR3_ICECHUNK_SPLIT_CHUNKS"); }
};

} // namespace

TEST(IcechunkManifestSplit, ACommitWritesOneManifestPerSplitAndAnAppendOnlyTheLast) {
    auto st = series(2500);
    auto m = manifests_of(st);
    ASSERT_EQ(m.size(), 3u);
    EXPECT_EQ(m[0].axes[0], (std::pair<uint32_t, uint32_t>(0, 1000)));
    EXPECT_EQ(m[1].axes[0], (std::pair<uint32_t, uint32_t>(1000, 2000)));
    EXPECT_EQ(m[2].axes[0], (std::pair<uint32_t, uint32_t>(2000, 2500)));
    const size_t files = st->list_dir("manifests").size();
    append_one(st);
    const auto after = manifests_of(st);
    ASSERT_EQ(after.size(), 3u);
    EXPECT_EQ(after[0].manifest_id, m[0].manifest_id);
    EXPECT_EQ(after[1].manifest_id, m[1].manifest_id);
    EXPECT_NE(after[2].manifest_id, m[2].manifest_id);
    EXPECT_EQ(after[2].axes[0], (std::pair<uint32_t, uint32_t>(2000, 2501)));
    EXPECT_EQ(st->list_dir("manifests").size(), files + 1);
    auto want = ramp(2500);
    want.push_back(7);
    EXPECT_EQ(read_a(st), want);
    want.pop_back();
    EXPECT_EQ(
        read_a(st, {.snapshot =
                        Repository::open(st)->history(Repository::open(st)->resolve({}))[1].id}),
        want);
}

TEST(IcechunkManifestSplit, AChangeInTheMiddleRewritesItsSplitOnly) {
    auto st = series(2500);
    const auto m = manifests_of(st);
    auto s = IcechunkSession::open(st);
    const int16_t v = -5;
    Array::open(s, "a")->write(Selection{{1500}, {1}, {}}, &v);
    s->erase("a/c/2100");
    s->commit("middle");
    const auto after = manifests_of(st);
    ASSERT_EQ(after.size(), 3u);
    EXPECT_EQ(after[0].manifest_id, m[0].manifest_id);
    EXPECT_NE(after[1].manifest_id, m[1].manifest_id);
    EXPECT_NE(after[2].manifest_id, m[2].manifest_id);
    auto want = ramp(2500);
    want[1500] = -5;
    want[2100] = -1; // the fill value
    EXPECT_EQ(read_a(st), want);
}

TEST(IcechunkManifestSplit, AnUnsplitManifestIsSplitAtTheNextCommit) {
    std::shared_ptr<MemoryStore> st;
    {
        SplitEnv one("100000"); // as written before splitting: one manifest
        st = series(2500);
        EXPECT_EQ(manifests_of(st).size(), 1u);
    }
    append_one(st);
    const auto m = manifests_of(st);
    ASSERT_EQ(m.size(), 3u);
    EXPECT_EQ(m[2].axes[0], (std::pair<uint32_t, uint32_t>(2000, 2501)));
    auto want = ramp(2500);
    want.push_back(7);
    EXPECT_EQ(read_a(st), want);
}

TEST(IcechunkManifestSplit, AnAppendTo100000ChunksWritesUnderATenthOfOneManifest) {
    auto split = series(100000);
    const uint64_t with_splits = append_one(split);
    uint64_t whole = 0;
    {
        SplitEnv one("1000000000"); // one manifest per array: what an append wrote before
        whole = append_one(series(100000));
    }
    std::cout << "append to 100,000 chunks: " << with_splits << " bytes with split manifests, "
              << whole << " bytes with one manifest\n";
    EXPECT_LT(with_splits * 10, whole);
    EXPECT_EQ(read_a(split).back(), 7);
}

} // namespace ut_icechunk_test_icechunk_manifest_split
