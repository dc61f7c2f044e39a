// Issue 39 (9): decoded manifests and snapshots are held under one byte budget
// per repository (one dataset), whatever the number of arrays: manifests
// padded with a zstd run of zeros (a few KB stored, many MB decoded) once held
// every decoded byte for the life of the dataset.
#include "address_space_guard.hpp"
#include "icechunk/icechunk_test_util.hpp"
#include "icechunk/icechunk_writer.hpp"

#include "zarr3/counting_store.hpp"

#include <zstd.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_icechunk_test_icechunk_memory {

using namespace zarr3;
using namespace zarr3::icechunk;

namespace {

constexpr size_t kHeader = 12 + 24 + 3; // magic, implementation, version/type/compression

std::string zarr_json() {
    return R"({"zarr_format":3,"node_type":"array","shape":[2],"data_type":"uint8",
        "chunk_grid":{"name":"regular","configuration":{"chunk_shape":[2]}},
        "chunk_key_encoding":{"name":"default","configuration":{"separator":"/"}},
        "fill_value":0,"codecs":[{"name":"bytes","configuration":{"endian":"little"}}]})";
}

// The same file with `pad` zero bytes after its flatbuffer, zstd-compressed.
Bytes padded(const Bytes& file, size_t pad) {
    Bytes payload(file.begin() + kHeader, file.end());
    payload.resize(payload.size() + pad, 0);
    Bytes out(file.begin(), file.begin() + kHeader);
    out[kHeader - 1] = 1; // zstd
    const size_t at = out.size();
    out.resize(at + ZSTD_compressBound(payload.size()));
    const size_t n =
        ZSTD_compress(out.data() + at, out.size() - at, payload.data(), payload.size(), 1);
    EXPECT_FALSE(ZSTD_isError(n));
    out.resize(at + n);
    return out;
}

// `arrays` arrays /a<i> holding {i, 1}, each in a manifest decoding to about
// `pad` bytes.
std::shared_ptr<CountingStore> repo_of(int arrays, size_t pad) {
    icewriter::RepoSpec spec;
    for (int i = 0; i < arrays; ++i) {
        icewriter::ArraySpec a{"/a" + std::to_string(i), zarr_json(), {}};
        a.refs.push_back({{0}, {uint8_t(i), 1}, {}, "", 0, 0, "", 0});
        spec.arrays.push_back(std::move(a));
    }
    auto mem = std::make_shared<MemoryStore>();
    for (auto& [key, bytes] : icewriter::build(spec))
        mem->put(key, key.rfind("manifests/", 0) == 0 ? padded(bytes, pad) : bytes);
    return std::make_shared<CountingStore>(mem);
}

std::vector<uint8_t> values(int i) {
    return {uint8_t(i), 1};
}

} // namespace

TEST(IcechunkMemory, ManifestsAreKeptUnderTheRepositoryBudget) {
    constexpr size_t kPad = 4 << 20;
    auto store = IcechunkStore::open(repo_of(8, kPad));
    const auto& repo = store->repository();
    repo->set_cache_budget(10 << 20); // two manifests
    for (int round = 0; round < 2; ++round)
        for (int i = 0; i < 8; ++i) {
            EXPECT_EQ(icetest::read_all<uint8_t>(store, "a" + std::to_string(i)), values(i));
            EXPECT_LE(repo->cached_bytes(), uint64_t(10 << 20));
            EXPECT_GT(repo->cached_bytes(), uint64_t(kPad));
        }
    EXPECT_EQ(store->manifests_loaded(), 16u); // each dropped, then read again
    // Read again right away: kept.
    EXPECT_EQ(icetest::read_all<uint8_t>(store, "a7"), values(7));
    EXPECT_EQ(store->manifests_loaded(), 16u);
}

TEST(IcechunkMemory, AManifestLargerThanTheBudgetIsReadAloneOneAtATime) {
    constexpr size_t kPad = 4 << 20;
    auto store = IcechunkStore::open(repo_of(3, kPad));
    const auto& repo = store->repository();
    repo->set_cache_budget(1 << 20);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(icetest::read_all<uint8_t>(store, "a" + std::to_string(i)), values(i));
        EXPECT_GT(repo->cached_bytes(), uint64_t(kPad)); // this one, kept alone
        EXPECT_LT(repo->cached_bytes(), uint64_t(2 * kPad));
    }
    EXPECT_EQ(store->manifests_loaded(), 3u);
}

// The default budget (every new repository's) bounds the address space: 8
// manifests of 32 MiB decoded (256 MiB if all were kept, as before) within
// 192 MiB more than the process uses, under a default budget of 64 MiB.
TEST(IcechunkMemory, ManyLargeManifestsStayWithinTheAddressSpace) {
    constexpr size_t kPad = 32 << 20;
    const uint64_t saved = default_cache_budget();
    set_default_cache_budget(64 << 20);
    auto store = IcechunkStore::open(repo_of(8, kPad));
    set_default_cache_budget(saved);
    ASSERT_EQ(store->repository()->cache_budget(), uint64_t(64 << 20));
    testutil::AddressSpaceGuard guard(192ull << 20);
    if (!guard.active()) GTEST_SKIP() << "no address-space limit here (sanitizer build)";
    for (int i = 0; i < 8; ++i)
        EXPECT_EQ(icetest::read_all<uint8_t>(store, "a" + std::to_string(i)), values(i));
    EXPECT_LE(store->repository()->cached_bytes(), uint64_t(64 << 20));
}

} // namespace ut_icechunk_test_icechunk_memory
