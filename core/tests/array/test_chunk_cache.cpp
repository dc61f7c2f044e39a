// The cache of decoded chunks (zarr3/chunk_cache.hpp): LRU order, the byte
// bound, version and write-epoch keys, large reads bypassing it, repeated
// windows served without chunk bytes, and concurrent readers sharing one.
#include "test_util.hpp"
#include "zarr3/array.hpp"
#include "zarr3/chunk_cache.hpp"
#include "zarr3/counting_store.hpp"
#include "zarr3/sharding.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <thread>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_array_test_chunk_cache {

using namespace zarr3;
using nlohmann::json;

namespace {

std::shared_ptr<const ChunkBuffer> bytes_of(size_t n, uint8_t v) {
    auto b = std::make_shared<ChunkBuffer>(n);
    std::fill_n(b->data(), n, v);
    return b;
}

const ObjectVersion kV1{"v1"}, kV2{"v2"};

// The bytes one entry of `n` data bytes under `key` and kV1 is counted for.
uint64_t entry_size(const std::string& key, size_t n) {
    ChunkCache c(1ull << 30);
    c.put(key, kV1, ChunkCache::write_epoch(key), bytes_of(n, 0));
    return c.bytes();
}

// 64x64 int32 in 16x16 chunks (regular) or 32x32 shards of 8x8 inner chunks.
json meta_json(bool sharded) {
    const json bytes_le = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
    if (!sharded) return testutil::regular_square_json(64, 16, "int32");
    json m = testutil::regular_square_json(64, 32, "int32");
    m["codecs"] = json::array({{{"name", "sharding_indexed"},
                                {"configuration",
                                 {{"chunk_shape", {8, 8}},
                                  {"codecs", json::array({bytes_le})},
                                  {"index_codecs", json::array({bytes_le})},
                                  {"index_location", "end"}}}}});
    return m;
}

// Requests for bytes of chunks in `log` (CountingStore::log): whole gets
// and range requests with ranges; a request for no bytes (a version check)
// is not one.
size_t chunk_byte_requests(const std::vector<std::string>& log) {
    size_t n = 0;
    for (const auto& line : log) {
        if (line.starts_with("get a/c/")) ++n;
        if (line.starts_with("ranges a/c/") && line.find(' ', 7) != std::string::npos) ++n;
    }
    return n;
}

struct Fixture {
    std::shared_ptr<MemoryStore> mem = std::make_shared<MemoryStore>();
    std::shared_ptr<CountingStore> counting = std::make_shared<CountingStore>(mem);
    std::shared_ptr<ChunkCache> cache;
    std::shared_ptr<Array> array;
    std::vector<int32_t> values = testutil::ramp_values(64 * 64);

    explicit Fixture(bool sharded, uint64_t bound = 16ull << 20)
        : cache(std::make_shared<ChunkCache>(bound)) {
        auto w = Array::create(mem, "a", parse_array_metadata(meta_json(sharded), "t"));
        w->write(Selection::all({64, 64}), values.data());
        ShardIndexCache::global().clear();
        array = Array::open(counting, "a");
        ReadOptions opt;
        opt.chunk_cache = cache;
        array->set_read_options(opt);
    }
    // Reads the window and checks it against `expect` (the stored values).
    void check_window(uint64_t r0, uint64_t c0, uint64_t n, const std::vector<int32_t>& expect) {
        std::vector<int32_t> out(n * n, -1);
        array->read(Selection{{r0, c0}, {n, n}, {}}, out.data());
        for (uint64_t r = 0; r < n; ++r)
            for (uint64_t c = 0; c < n; ++c)
                ASSERT_EQ(out[r * n + c], expect[(r0 + r) * 64 + c0 + c])
                    << "element " << r0 + r << "," << c0 + c;
    }
};

} // namespace

TEST(ChunkCache, EvictsTheLeastRecentlyUsedFirst) {
    const uint64_t one = entry_size("s|a", 1000);
    ChunkCache c(3 * one);
    for (const char* k : {"s|a", "s|b", "s|c"})
        c.put(k, kV1, ChunkCache::write_epoch(k), bytes_of(1000, 1));
    ASSERT_TRUE(c.get("s|a", kV1, 1000)); // a is now the most recently used
    c.put("s|d", kV1, ChunkCache::write_epoch("s|d"), bytes_of(1000, 1));
    EXPECT_TRUE(c.get("s|a", kV1, 1000));
    EXPECT_FALSE(c.get("s|b", kV1, 1000)) << "b was the least recently used";
    EXPECT_TRUE(c.get("s|c", kV1, 1000));
    EXPECT_TRUE(c.get("s|d", kV1, 1000));
}

TEST(ChunkCache, StaysWithinItsByteBound) {
    const uint64_t bound = 10 * entry_size("s|k000", 4096);
    ChunkCache c(bound);
    for (int i = 0; i < 100; ++i) {
        const std::string k = "s|k" + std::to_string(100 + i);
        c.put(k, kV1, ChunkCache::write_epoch(k), bytes_of(4096, 2));
        ASSERT_LE(c.bytes(), bound);
    }
    EXPECT_EQ(c.entries(), 10u);
    c.put("s|huge", kV1, ChunkCache::write_epoch("s|huge"), bytes_of(bound, 3));
    EXPECT_FALSE(c.get("s|huge", kV1, bound)) << "an entry larger than the bound is not kept";
    EXPECT_LE(c.bytes(), bound);
    c.set_max_bytes(0);
    EXPECT_EQ(c.bytes(), 0u);
    EXPECT_EQ(c.entries(), 0u);
}

TEST(ChunkCache, KeyHoldsTheObjectVersion) {
    ChunkCache c(1 << 20);
    c.put("s|a", kV1, ChunkCache::write_epoch("s|a"), bytes_of(10, 1));
    EXPECT_FALSE(c.get("s|a", kV2, 10)) << "another version of the object";
    EXPECT_FALSE(c.get("s|a", kV1, 10)) << "the stale entry was dropped";
    c.put("s|b", ObjectVersion{}, ChunkCache::write_epoch("s|b"), bytes_of(10, 1));
    EXPECT_EQ(c.entries(), 0u) << "an unknown version cannot be revalidated: never kept";
    c.put("s|c", kV1, ChunkCache::write_epoch("s|c"), bytes_of(10, 1));
    EXPECT_FALSE(c.get("s|c", kV1, 20)) << "a chunk of another decoded size";
}

TEST(ChunkCache, AWriteOfTheKeyInThisProcessMakesItsEntriesStale) {
    ChunkCache c(1 << 20);
    const std::string shard = "/some/store|arr/c/0/1";
    const uint64_t before = ChunkCache::write_epoch(shard);
    c.put(shard, kV1, before, bytes_of(10, 1));
    c.put(shard + "#3", kV1, ChunkCache::write_epoch(shard + "#3"), bytes_of(10, 1));
    ASSERT_TRUE(c.has(shard, kV1, 10));
    ChunkCache::note_write("arr/c/0/1"); // a store's put of the key (any store object)
    EXPECT_FALSE(c.get(shard, kV1, 10)) << "same version token, but written since";
    EXPECT_FALSE(c.get(shard + "#3", kV1, 10)) << "an inner chunk of the written shard";
    // An entry read before a write but put after it is stale too.
    c.put(shard, kV1, before, bytes_of(10, 1));
    EXPECT_FALSE(c.get(shard, kV1, 10));
}

TEST(ChunkCacheArray, RepeatedWindowReadsNoChunkBytes) {
    for (const bool sharded : {false, true}) {
        SCOPED_TRACE(sharded ? "sharded" : "regular");
        Fixture f(sharded);
        f.check_window(5, 7, 20, f.values);
        EXPECT_GT(chunk_byte_requests(f.counting->log()), 0u);
        EXPECT_GT(f.cache->entries(), 0u);
        f.counting->reset();
        const uint64_t hits = f.cache->hits();
        f.check_window(5, 7, 20, f.values);
        f.check_window(9, 11, 12, f.values); // inside the same chunks
        EXPECT_EQ(chunk_byte_requests(f.counting->log()), 0u) << "served from decoded chunks";
        EXPECT_GT(f.cache->hits(), hits);
    }
}

TEST(ChunkCacheArray, AChunkRewrittenByAnotherWriterIsReadAgain) {
    for (const bool sharded : {false, true}) {
        SCOPED_TRACE(sharded ? "sharded" : "regular");
        testutil::TempDir tmp;
        auto store = std::make_shared<FileStore>(tmp.str());
        std::vector<int32_t> v1 = testutil::ramp_values(64 * 64), v2(v1.size());
        for (size_t i = 0; i < v2.size(); ++i)
            v2[i] = -v1[i]; // same size uncompressed: only the version tells
        Array::create(store, "a", parse_array_metadata(meta_json(sharded), "t"))
            ->write(Selection::all({64, 64}), v1.data());
        auto reader = Array::open(store, "a");
        ReadOptions opt;
        opt.chunk_cache = std::make_shared<ChunkCache>(16ull << 20);
        reader->set_read_options(opt);
        std::vector<int32_t> out(100);
        reader->read(Selection{{3, 3}, {10, 10}, {}}, out.data());
        ASSERT_EQ(out[0], v1[3 * 64 + 3]);
        // Another process's writer: a store object of its own over the folder.
        auto other = std::make_shared<FileStore>(tmp.str());
        Array::open(other, "a")->write(Selection::all({64, 64}), v2.data());
        reader->read(Selection{{3, 3}, {10, 10}, {}}, out.data());
        for (uint64_t r = 0; r < 10; ++r)
            for (uint64_t c = 0; c < 10; ++c)
                ASSERT_EQ(out[r * 10 + c], v2[(3 + r) * 64 + 3 + c]);
    }
}

TEST(ChunkCacheArray, AWriteThroughThisProcessIsSeenAtOnce) {
    for (const bool sharded : {false, true}) {
        SCOPED_TRACE(sharded ? "sharded" : "regular");
        Fixture f(sharded);
        f.check_window(0, 0, 20, f.values);
        std::vector<int32_t> patch(4 * 4, 7777);
        Array::open(f.mem, "a")->write(Selection{{2, 2}, {4, 4}, {}}, patch.data());
        for (uint64_t r = 2; r < 6; ++r)
            for (uint64_t c = 2; c < 6; ++c)
                f.values[r * 64 + c] = 7777;
        f.check_window(0, 0, 20, f.values);
    }
}

TEST(ChunkCacheArray, LargeAndFullReadsBypassTheCache) {
    for (const bool sharded : {false, true}) {
        SCOPED_TRACE(sharded ? "sharded" : "regular");
        // 16 KiB holds a 16x16 int32 chunk (1 KiB) many times but not a
        // quarter of the 16 KiB array's chunks.
        Fixture f(sharded, 16 << 10);
        std::vector<int32_t> all(64 * 64);
        f.array->read(Selection::all({64, 64}), all.data());
        EXPECT_EQ(all, f.values);
        EXPECT_EQ(f.cache->entries(), 0u) << "a full read";
        f.check_window(0, 0, 40, f.values); // 9 of 16 chunks: more than a quarter
        EXPECT_EQ(f.cache->entries(), 0u) << "a read that would only evict";
        f.check_window(16, 16, 16, f.values); // whole chunks (whole inner chunks)
        EXPECT_EQ(f.cache->entries(), 0u) << "a read aligned on chunks";
        f.check_window(1, 1, 10, f.values);
        EXPECT_GT(f.cache->entries(), 0u) << "a small window is kept";
    }
}

TEST(ChunkCacheArray, ConcurrentReadersShareOneCache) {
    for (const bool sharded : {false, true}) {
        SCOPED_TRACE(sharded ? "sharded" : "regular");
        // Room for a few chunks only: readers evict each other's entries.
        Fixture f(sharded, 10 << 10);
        ReadOptions opt = f.array->read_options();
        opt.executor = testutil::thread_executor(3);
        f.array->set_read_options(opt);
        std::vector<std::thread> readers;
        std::atomic<int> wrong{0};
        for (int t = 0; t < 6; ++t)
            readers.emplace_back([&, t] {
                std::mt19937 rng(static_cast<unsigned>(t));
                for (int i = 0; i < 60; ++i) {
                    const uint64_t r0 = rng() % 50, c0 = rng() % 50;
                    std::vector<int32_t> out(14 * 14);
                    f.array->read(Selection{{r0, c0}, {14, 14}, {}}, out.data());
                    for (uint64_t r = 0; r < 14; ++r)
                        for (uint64_t c = 0; c < 14; ++c)
                            if (out[r * 14 + c] != f.values[(r0 + r) * 64 + c0 + c]) ++wrong;
                }
            });
        for (auto& th : readers)
            th.join();
        EXPECT_EQ(wrong.load(), 0);
        EXPECT_LE(f.cache->bytes(), f.cache->max_bytes());
        EXPECT_GT(f.cache->hits(), 0u);
    }
}

} // namespace ut_array_test_chunk_cache
