// Caches that never lie: a cached shard index is tied to the version of the
// shard it was read from (file identity, MemoryStore put counter), index and
// data of one read come from one version, and a decode failure after a cached
// lookup drops the entry and reads once more from the store.
#include "test_util.hpp"
#include "zarr3/array.hpp"
#include "zarr3/counting_store.hpp"
#include "zarr3/sharding.hpp"

#include <chrono>
#include <cstring>
#include <fstream>
#include <gtest/gtest.h>
#include <thread>
#include <unistd.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_codecs_test_cache_identity {

using namespace zarr3;
using nlohmann::json;

namespace {

// 8x8 uint8 array, one 8x8 shard of four 4x4 inner chunks (bytes codec, no
// compression: every inner chunk is 16 bytes), index at the end.
json sharded_meta() {
    return testutil::sharded_8x8_json();
}

// Values of the whole 8x8 array: base + row * 8 + col.
std::vector<uint8_t> values(int base) {
    std::vector<uint8_t> v(64);
    for (size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<uint8_t>(base + static_cast<int>(i));
    return v;
}

// A shard of `v` whose inner chunks are stored in `order` after `pad` zero
// bytes; inner chunks listed in `empty` are left out (empty index entries).
Bytes make_shard(const std::vector<uint8_t>& v, std::vector<int> order, size_t pad,
                 std::vector<int> empty = {}) {
    Bytes out(pad, 0);
    std::vector<uint64_t> index(8, kEmptyEntry);
    for (int k : order) {
        if (std::find(empty.begin(), empty.end(), k) != empty.end()) continue;
        const int r0 = (k / 2) * 4, c0 = (k % 2) * 4;
        index[2 * k] = out.size();
        index[2 * k + 1] = 16;
        for (int r = 0; r < 4; ++r)
            for (int c = 0; c < 4; ++c)
                out.push_back(v[(r0 + r) * 8 + c0 + c]);
    }
    for (uint64_t e : index)
        for (int b = 0; b < 8; ++b)
            out.push_back(static_cast<uint8_t>(e >> (8 * b)));
    return out;
}

// Inner chunk k (4x4) of a full array of values.
std::vector<uint8_t> inner(const std::vector<uint8_t>& v, int k) {
    std::vector<uint8_t> out;
    const int r0 = (k / 2) * 4, c0 = (k % 2) * 4;
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c)
            out.push_back(v[(r0 + r) * 8 + c0 + c]);
    return out;
}

// The process-wide shard index cache (the one an Array's sharding codec uses)
// keeps indexes, or none (a capacity of 0 bytes) while this is in scope.
struct IndexCacheHolds {
    explicit IndexCacheHolds(bool keep) {
        if (!keep) ShardIndexCache::global().set_max_bytes(0);
    }
    ~IndexCacheHolds() { ShardIndexCache::global().set_max_bytes(64ull << 20); }
};

// Inner chunk k read through a fresh Array (a partial read: index, then data).
std::vector<uint8_t> read_inner(const std::shared_ptr<Store>& store, int k) {
    auto a = Array::open(store, "a");
    std::vector<uint8_t> out(16, 0xEE);
    a->read(Selection{{uint64_t((k / 2) * 4), uint64_t((k % 2) * 4)}, {4, 4}, {1, 1}}, out.data());
    return out;
}

struct Fixture {
    testutil::TempDir tmp;
    std::shared_ptr<FileStore> store = std::make_shared<FileStore>(tmp.str());
    Fixture() {
        Array::create(store, "a", parse_array_metadata(sharded_meta(), "t"));
        ShardIndexCache::global().clear();
    }
    std::string shard_path() const { return tmp.str() + "/a/c/0/0"; }
};

// Another writer (its own store) replaces the shard by rename.
void rewrite_by_rename(const std::string& root, const Bytes& shard) {
    FileStore other(root);
    other.put("a/c/0/0", shard);
}

} // namespace

TEST(CacheIdentity, ShardRewrittenWithSameSizeOtherLayoutReadsNewValues) {
    Fixture f;
    const auto v1 = values(1), v2 = values(101);
    f.store->put("a/c/0/0", make_shard(v1, {0, 1, 2, 3}, 0));
    for (int k = 0; k < 4; ++k)
        ASSERT_EQ(read_inner(f.store, k), inner(v1, k)); // fills the global cache
    const Bytes s2 = make_shard(v2, {3, 2, 1, 0}, 0);
    ASSERT_EQ(s2.size(), make_shard(v1, {0, 1, 2, 3}, 0).size());
    rewrite_by_rename(f.tmp.str(), s2);
    for (int k = 0; k < 4; ++k)
        EXPECT_EQ(read_inner(f.store, k), inner(v2, k)) << "inner chunk " << k;
}

TEST(CacheIdentity, ShardRewrittenInPlaceReadsNewValues) {
    Fixture f;
    const auto v1 = values(1), v2 = values(71);
    f.store->put("a/c/0/0", make_shard(v1, {0, 1, 2, 3}, 0));
    ASSERT_EQ(read_inner(f.store, 2), inner(v1, 2));
    // Same inode, same size: only the modification time tells (file times
    // advance by clock ticks: another process writes later than this).
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    {
        const Bytes s2 = make_shard(v2, {2, 0, 3, 1}, 0);
        std::ofstream out(f.shard_path(), std::ios::binary | std::ios::in | std::ios::out);
        out.write(reinterpret_cast<const char*>(s2.data()), std::streamsize(s2.size()));
    }
    for (int k = 0; k < 4; ++k)
        EXPECT_EQ(read_inner(f.store, k), inner(v2, k)) << "inner chunk " << k;
}

TEST(CacheIdentity, ShardRewrittenWithOtherSizeReadsNewValues) {
    Fixture f;
    const auto v1 = values(1), v2 = values(51), v3 = values(151);
    f.store->put("a/c/0/0", make_shard(v1, {0, 1, 2, 3}, 0, {1}));
    ASSERT_EQ(read_inner(f.store, 0), inner(v1, 0));
    ASSERT_EQ(read_inner(f.store, 1), std::vector<uint8_t>(16, 0)); // empty: fill
    // Larger: padding in front, another order, inner chunk 1 present now.
    rewrite_by_rename(f.tmp.str(), make_shard(v2, {1, 3, 0, 2}, 40));
    EXPECT_EQ(read_inner(f.store, 1), inner(v2, 1)); // the cached index said "empty"
    EXPECT_EQ(read_inner(f.store, 3), inner(v2, 3));
    // Smaller: two inner chunks only; the cached entries would reach past the end.
    ASSERT_EQ(read_inner(f.store, 3), inner(v2, 3));
    rewrite_by_rename(f.tmp.str(), make_shard(v3, {3, 0}, 0, {1, 2}));
    EXPECT_EQ(read_inner(f.store, 3), inner(v3, 3));
    EXPECT_EQ(read_inner(f.store, 2), std::vector<uint8_t>(16, 0));
    EXPECT_EQ(read_inner(f.store, 0), inner(v3, 0));
}

TEST(CacheIdentity, FileAndMemoryStoreVersions) {
    Fixture f;
    f.store->put("a/c/0/0", make_shard(values(1), {0, 1, 2, 3}, 0));
    std::optional<uint64_t> total;
    ObjectVersion a, b, c, d;
    ASSERT_TRUE(f.store->get_ranges_versioned("a/c/0/0", {RangeFromStart{0, 4}}, total, a));
    ASSERT_TRUE(f.store->get_versioned("a/c/0/0", b));
    EXPECT_TRUE(a.known());
    EXPECT_EQ(a, b);
    EXPECT_EQ(total, 128u);
    rewrite_by_rename(f.tmp.str(), make_shard(values(1), {0, 1, 2, 3}, 0)); // same bytes
    ASSERT_TRUE(f.store->get_ranges_versioned("a/c/0/0", {}, total, c));
    EXPECT_NE(a, c);
    // A wrapper forwards the version.
    CountingStore counting(f.store);
    ASSERT_TRUE(counting.get_ranges_versioned("a/c/0/0", {}, total, d));
    EXPECT_EQ(c, d);
    EXPECT_FALSE(f.store->get_versioned("a/c/9/9", d));

    MemoryStore m;
    m.put("k", Bytes{1, 2, 3});
    ASSERT_TRUE(m.get_versioned("k", a));
    ASSERT_TRUE(m.get_ranges_versioned("k", {RangeFromStart{1, 1}}, total, b));
    EXPECT_TRUE(a.known());
    EXPECT_EQ(a, b);
    m.put("k", Bytes{1, 2, 3});
    ASSERT_TRUE(m.get_versioned("k", c));
    EXPECT_NE(a, c);
}

namespace {

// A MemoryStore in which another writer replaces "a/c/0/0" right after some
// of the range requests of a read: after the first one only (a rename
// between the index request and the data request), or after every one.
class SwappingStore : public MemoryStore {
  public:
    std::vector<Bytes> versions;
    bool every_time = false;
    int calls = 0;
    std::optional<ReadResult> read(const ReadRequest& request) override {
        auto r = MemoryStore::read(request);
        if (request.kind == ReadRequest::Kind::Ranges && request.key == "a/c/0/0" &&
            (every_time || calls == 0)) {
            ++calls;
            put(request.key, versions[static_cast<size_t>(calls) % versions.size()]);
        }
        return r;
    }
};

std::shared_ptr<SwappingStore> swapping_store(const std::vector<Bytes>& versions) {
    auto s = std::make_shared<SwappingStore>();
    Array::create(s, "a", parse_array_metadata(sharded_meta(), "t"));
    s->versions = versions;
    s->put("a/c/0/0", versions[0]);
    return s;
}

} // namespace

TEST(CacheIdentity, IndexAndDataOfOneReadComeFromOneVersion) {
    const auto v1 = values(1), v2 = values(201);
    // The new version larger, or smaller (the old index then points past its end).
    for (const auto& [pad1, pad2] : {std::pair<size_t, size_t>{0, 8}, {100, 0}})
        for (bool cache : {false, true}) {
            SCOPED_TRACE(std::string(cache ? "global cache" : "no cache") + ", pads " +
                         std::to_string(pad1) + " " + std::to_string(pad2));
            ShardIndexCache::global().clear();
            const IndexCacheHolds holds(cache);
            auto s = swapping_store(
                {make_shard(v1, {0, 1, 2, 3}, pad1), make_shard(v2, {3, 2, 1, 0}, pad2)});
            auto a = Array::open(s, "a");
            std::vector<uint8_t> out(16);
            a->read(Selection{{4, 0}, {4, 4}, {1, 1}}, out.data());
            EXPECT_EQ(s->calls, 1); // the swap happened after the index request
            EXPECT_EQ(out, inner(v2, 2));
        }
}

TEST(CacheIdentity, ShardChangingOnEveryRangeRequestIsReadWholeInOneRequest) {
    // A writer replacing the shard after every range request: index and data
    // never agree, so after a bounded number of tries the read takes the
    // whole shard in one request (one version) and always finishes.
    for (bool cache : {false, true}) {
        SCOPED_TRACE(cache ? "global cache" : "no cache");
        ShardIndexCache::global().clear();
        const auto v1 = values(1), v9 = values(9);
        auto s = swapping_store({make_shard(v1, {0, 1, 2, 3}, 0), make_shard(v9, {1, 0, 3, 2}, 0)});
        s->every_time = true;
        const IndexCacheHolds holds(cache);
        auto a = Array::open(s, "a");
        std::vector<uint8_t> out(16);
        a->read(Selection{{0, 4}, {4, 4}, {1, 1}}, out.data());
        EXPECT_LE(s->calls, 4); // bounded
        // The whole shard is the version the store held at the end.
        EXPECT_EQ(out, inner(s->calls % 2 == 0 ? v1 : v9, 1));
    }
}

TEST(CacheIdentity, DecodeFailureAfterCachedLookupRetriesFromTheStore) {
    Fixture f;
    const auto v1 = values(3);
    f.store->put("a/c/0/0", make_shard(v1, {0, 1, 2, 3}, 0));
    std::optional<uint64_t> total;
    ObjectVersion version;
    ASSERT_TRUE(f.store->get_ranges_versioned("a/c/0/0", {}, total, version));
    // A cached index of the right version whose entries do not decode
    // (3-byte inner chunks where the bytes codec needs 16).
    auto bad = std::make_shared<ShardIndex>();
    bad->chunks_per_shard = {2, 2};
    bad->entries = {0, 3, 16, 3, 32, 3, 48, 3};
    bad->version = version;
    const std::string key = f.store->uri() + "|a/c/0/0";
    ShardIndexCache::global().put(key, bad);
    EXPECT_EQ(read_inner(f.store, 1), inner(v1, 1));
    const auto now = ShardIndexCache::global().get(key);
    ASSERT_NE(now, nullptr);
    EXPECT_EQ(now->nbytes(1), 16u); // the entry was replaced by the store's index
}

}  // namespace ut_codecs_test_cache_identity
