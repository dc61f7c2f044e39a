// sharding_indexed reads: conformance shards, request patterns of partial
// reads, index cache. Encode/decode round trips and malformed shards are in
// test_sharding_codec.cpp.
//
// Request accounting (CountingStore::counts()): every store call is one
// request: `gets` (whole value), `range_calls` (one get_ranges call, however
// many ranges it carries; `ranges` counts those) and `sizes` (size()). The
// sharding codec never calls size().
#include "zarr3/array.hpp"
#include "zarr3/chunk_grid.hpp"
#include "zarr3/counting_store.hpp"
#include "zarr3/dtype.hpp"
#include "zarr3/sharding.hpp"
#include "zarr3/store.hpp"

#include "test_util.hpp"

#include <atomic>
#include <cstring>
#include <gtest/gtest.h>
#include <thread>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_codecs_test_sharding {

using namespace zarr3;
using nlohmann::json;

namespace {

const std::string kConf = testutil::conformance_dir();

// One sharded conformance array ("a" in the case's store).
struct ConfCase {
    std::string name, store_dir, dir;
    Shape shape;
    DataType dtype;
    Bytes fill;
    ChunkGrid grid;
    CodecChain chain;                     // the whole outer chain
    std::shared_ptr<ShardingCodec> codec; // built directly from its configuration
    Bytes expected;

    explicit ConfCase(const std::string& n) : name(n) {
        store_dir = kConf + "/" + n + "/store.zarr";
        dir = store_dir + "/a";
        const json meta = testutil::read_json(dir + "/zarr.json");
        const std::string where = dir + "/zarr.json";
        shape = meta["shape"].get<Shape>();
        dtype = parse_data_type(meta["data_type"], where);
        fill = parse_fill_value(meta["fill_value"], dtype, where);
        grid = ChunkGrid::parse(meta["chunk_grid"], shape, where);
        const ChunkSpec first = spec_of(Shape(shape.size(), 0));
        chain = CodecChain::parse(meta["codecs"], first, where);
        EXPECT_EQ(meta["codecs"][0]["name"], "sharding_indexed");
        codec = std::make_shared<ShardingCodec>(meta["codecs"][0]["configuration"], first, where);
        codec->validate_grid(grid, where);
        expected = testutil::read_file(kConf + "/" + n + "/expected/a.bin");
    }
    ChunkSpec spec_of(const Shape& idx) const {
        ChunkSpec s;
        s.shape = grid.chunk_shape(idx);
        s.dtype = dtype;
        s.fill_value = fill;
        return s;
    }
    std::string key_of(const Shape& idx) const {
        std::string k = "a/c";
        for (auto i : idx)
            k += "/" + std::to_string(i);
        return k;
    }
    std::vector<Shape> shard_indices() const {
        std::vector<Shape> out;
        const Shape gs = grid.grid_shape();
        Shape pos(gs.size(), 0);
        const uint64_t n = checked_product(gs, "grid");
        for (uint64_t i = 0; i < n; ++i) {
            out.push_back(pos);
            for (size_t a = gs.size(); a-- > 0;) {
                if (++pos[a] < gs[a]) break;
                pos[a] = 0;
            }
        }
        return out;
    }
    // The part of shard `idx` inside the array, as a region of the shard, and
    // the view of it inside a dense C-order array buffer.
    Region clip(const Shape& idx) const {
        Region r;
        const Shape o = grid.chunk_origin(idx), s = grid.chunk_shape(idx);
        r.start.assign(s.size(), 0);
        for (size_t a = 0; a < s.size(); ++a)
            r.count.push_back(std::min(s[a], shape[a] - o[a]));
        return r;
    }
    StridedView view_in(Bytes& arr, const Shape& idx) const {
        const auto st = c_strides(shape, dtype.size);
        const Shape o = grid.chunk_origin(idx);
        int64_t off = 0;
        for (size_t a = 0; a < o.size(); ++a)
            off += static_cast<int64_t>(o[a]) * st[a];
        return StridedView{arr.data() + off, st};
    }
    // Whole shard decoded by ShardingCodec::decode (outer bytes->bytes codecs undone first).
    std::optional<Bytes> decode_shard(const Shape& idx) const {
        const std::string p = store_dir + "/" + key_of(idx);
        if (!std::filesystem::exists(p)) return std::nullopt;
        Bytes b = testutil::read_file(p);
        const auto& bb = chain.bytes_to_bytes();
        for (auto it = bb.rbegin(); it != bb.rend(); ++it)
            b = (*it)->decode(b, std::nullopt, kMaxChunkBytes);
        const ChunkSpec spec = spec_of(idx);
        Bytes out(spec.num_bytes());
        codec->decode(b, spec, out.data());
        return out;
    }
};

const char* kShardCases[] = {"shard_regular_zstd", "shard_rect_outer", "shard_index_start",
                             "shard_sparse_fill"};

// A counting read-only view of a conformance store.
std::shared_ptr<CountingStore> counting(const ConfCase& c) {
    return std::make_shared<CountingStore>(std::make_shared<FileStore>(c.store_dir, false));
}

// A conformance case read through a counting store, its codec with a private
// index cache.
struct CountedReads {
    ConfCase c;
    std::shared_ptr<CountingStore> store;
    std::shared_ptr<ShardIndexCache> cache = std::make_shared<ShardIndexCache>();
    ReadOptions opt;
    explicit CountedReads(const char* name) : c(name), store(counting(c)) {
        c.codec->set_index_cache(cache);
    }
};

void expect_counts(const CountingStore& s, uint64_t gets, uint64_t range_calls, uint64_t ranges) {
    std::string log;
    for (const auto& l : s.log())
        log += l + "; ";
    SCOPED_TRACE("requests: " + log);
    const auto c = s.counts();
    EXPECT_EQ(c.gets, gets);
    EXPECT_EQ(c.range_calls, range_calls);
    EXPECT_EQ(c.ranges, ranges);
    EXPECT_EQ(c.sizes, 0u);
}

} // namespace

// ------------------------------------------------------------ conformance

TEST(ShardingConformance, DecodeWholeShardsMatchExpected) {
    for (const char* name : kShardCases) {
        SCOPED_TRACE(name);
        ConfCase c(name);
        Bytes arr(c.expected.size(), 0);
        ASSERT_EQ(arr.size(), checked_product(c.shape, "n") * c.dtype.size);
        int present = 0;
        for (const auto& idx : c.shard_indices()) {
            const Region r = c.clip(idx);
            const StridedView v = c.view_in(arr, idx);
            auto shard = c.decode_shard(idx);
            if (!shard) {
                fill_view(v, r.count, c.fill);
                continue;
            }
            ++present;
            copy_region_out(shard->data(), c.grid.chunk_shape(idx), c.dtype.size, r, v);
        }
        EXPECT_GT(present, 0);
        EXPECT_TRUE(arr == c.expected);
    }
}

TEST(ShardingConformance, PartialReadsMatchExpected) {
    // Cases without bytes->bytes codecs after sharding: read every shard
    // through read_partial in row bands of 7 (not aligned to inner chunks).
    for (const char* name : {"shard_regular_zstd", "shard_rect_outer", "shard_sparse_fill"}) {
        SCOPED_TRACE(name);
        CountedReads reads(name);
        auto& [c, store, cache, opt] = reads;
        ASSERT_TRUE(c.chain.supports_partial_read());
        Bytes arr(c.expected.size(), 0xAB);
        for (const auto& idx : c.shard_indices()) {
            StoreByteSource src(*store, c.key_of(idx));
            const Region full = c.clip(idx);
            const StridedView v = c.view_in(arr, idx);
            for (uint64_t r0 = 0; r0 < full.count[0]; r0 += 7) {
                Region band = full;
                band.start[0] = r0;
                band.count[0] = std::min<uint64_t>(7, full.count[0] - r0);
                StridedView bv{v.data + static_cast<int64_t>(r0) * v.strides[0], v.strides};
                if (!c.codec->read_partial(src, c.spec_of(idx), band, bv, opt))
                    fill_view(bv, band.count, c.fill);
            }
        }
        EXPECT_TRUE(arr == c.expected);
        EXPECT_EQ(store->counts().sizes, 0u);
    }
}

TEST(ShardingConformance, ArrayOpenOnFileStoreMatchesExpected) {
    for (const char* name : kShardCases) {
        SCOPED_TRACE(name);
        ConfCase c(name);
        auto arr = Array::open(std::make_shared<FileStore>(c.store_dir, false), "a");
        Bytes out(c.expected.size());
        arr->read(Selection::all(c.shape), out.data());
        EXPECT_TRUE(out == c.expected);
        // A window crossing shard and inner-chunk borders.
        Selection sel;
        sel.start = {c.shape[0] / 2 - 13, c.shape[1] / 2 - 11};
        sel.count = {26, 22};
        Bytes win(26 * 22 * c.dtype.size);
        arr->read(sel, win.data());
        const size_t e = c.dtype.size;
        bool same = true;
        for (uint64_t i = 0; i < 26; ++i)
            same = same && std::memcmp(win.data() + i * 22 * e,
                                       c.expected.data() +
                                           ((sel.start[0] + i) * c.shape[1] + sel.start[1]) * e,
                                       22 * e) == 0;
        EXPECT_TRUE(same);
    }
}

// ------------------------------------------------------------ request patterns

TEST(ShardingRequests, OneInnerChunkIsIndexPlusOneRange) {
    CountedReads reads("shard_regular_zstd");
    auto& [c, store, cache, opt] = reads;
    StoreByteSource src(*store, "a/c/0/0");
    const ChunkSpec spec = c.spec_of({0, 0});
    const Bytes ref = *c.decode_shard({0, 0});
    std::vector<int32_t> out(100, -1);
    Region r{{10, 20}, {10, 10}, {}};
    ASSERT_TRUE(c.codec->read_partial(src, spec, r, testutil::view_of(out, {10, 10}), opt));
    expect_counts(*store, 0, 2, 2); // index (suffix range) + one inner chunk
    const auto log = store->log();
    ASSERT_EQ(log.size(), 2u);
    EXPECT_EQ(log[0], "ranges a/c/0/0 -484"); // 30 entries * 16 + crc32c
    const auto* refi = reinterpret_cast<const int32_t*>(ref.data());
    for (int i = 0; i < 10; ++i)
        for (int j = 0; j < 10; ++j)
            ASSERT_EQ(out[i * 10 + j], refi[(10 + i) * 50 + 20 + j]);

    // Same shard again: the index comes from the cache.
    store->reset();
    ASSERT_TRUE(c.codec->read_partial(src, spec, Region{{0, 0}, {3, 3}, {}},
                                      testutil::view_of(out, {3, 3}), opt));
    expect_counts(*store, 0, 1, 1);
    EXPECT_EQ(out[4], refi[50 + 1]);
}

TEST(ShardingRequests, AdjacentInnerChunksMergeIntoOneRange) {
    CountedReads reads("shard_regular_zstd");
    auto& [c, store, cache, opt] = reads;
    StoreByteSource src(*store, "a/c/1/1");
    const ChunkSpec spec = c.spec_of({1, 1});
    const Bytes ref = *c.decode_shard({1, 1});
    // Rows 5..24, cols 3..32: 3x4 = 12 inner chunks out of 30.
    std::vector<int32_t> out(20 * 30);
    Region r{{5, 3}, {20, 30}, {}};
    ASSERT_TRUE(c.codec->read_partial(src, spec, r, testutil::view_of(out, {20, 30}), opt));
    expect_counts(*store, 0, 2, 2); // index + ONE merged range
    const auto* refi = reinterpret_cast<const int32_t*>(ref.data());
    for (int i = 0; i < 20; ++i)
        for (int j = 0; j < 30; ++j)
            ASSERT_EQ(out[i * 30 + j], refi[(5 + i) * 50 + 3 + j]);

    // With coalesce_gap 0, two inner chunks that are not neighbours in the
    // file ((0,0) at 0+278 and (0,1) at 551+281 in shard 0/0) stay two ranges
    // of one get_ranges call.
    StoreByteSource src00(*store, "a/c/0/0");
    opt.coalesce_gap = 0;
    ASSERT_TRUE(c.codec->read_partial(src00, spec, Region{{0, 0}, {10, 20}, {}},
                                      testutil::view_of(out, {10, 20}), opt));
    store->reset();
    ASSERT_TRUE(c.codec->read_partial(src00, spec, Region{{0, 0}, {10, 20}, {}},
                                      testutil::view_of(out, {10, 20}), opt));
    expect_counts(*store, 0, 1, 2);
    EXPECT_EQ(store->log().at(0), "ranges a/c/0/0 0+278 551+281");
    // The default gap (16 KiB) merges them.
    opt.coalesce_gap = 16 * 1024;
    store->reset();
    ASSERT_TRUE(c.codec->read_partial(src00, spec, Region{{0, 0}, {10, 20}, {}},
                                      testutil::view_of(out, {10, 20}), opt));
    expect_counts(*store, 0, 1, 1);
    EXPECT_EQ(store->log().at(0), "ranges a/c/0/0 0+832");
}

TEST(ShardingRequests, FullShardIsOneRequest) {
    CountedReads reads("shard_regular_zstd");
    auto& [c, store, cache, opt] = reads;
    StoreByteSource src(*store, "a/c/0/1");
    const ChunkSpec spec = c.spec_of({0, 1});
    const Bytes ref = *c.decode_shard({0, 1});
    Bytes out(ref.size());
    const StridedView v{out.data(), c_strides({60, 50}, 4)};
    ASSERT_TRUE(c.codec->read_partial(src, spec, Region{{0, 0}, {60, 50}, {}}, v, opt));
    expect_counts(*store, 1, 0, 0);
    EXPECT_TRUE(out == ref);
    // The whole-shard read filled the cache: a partial read needs no index request.
    store->reset();
    std::vector<int32_t> one(1);
    ASSERT_TRUE(c.codec->read_partial(src, spec, Region{{59, 49}, {1, 1}, {}},
                                      testutil::view_of(one, {1, 1}), opt));
    expect_counts(*store, 0, 1, 1);
    EXPECT_EQ(one[0], reinterpret_cast<const int32_t*>(ref.data())[59 * 50 + 49]);
    // A stepped selection touching every inner chunk also reads the whole shard.
    store->reset();
    std::vector<int32_t> st(12 * 10);
    ASSERT_TRUE(c.codec->read_partial(src, spec, Region{{2, 4}, {12, 10}, {5, 5}},
                                      testutil::view_of(st, {12, 10}), opt));
    expect_counts(*store, 1, 0, 0);
    for (int i = 0; i < 12; ++i)
        for (int j = 0; j < 10; ++j)
            ASSERT_EQ(st[i * 10 + j],
                      reinterpret_cast<const int32_t*>(ref.data())[(2 + 5 * i) * 50 + 4 + 5 * j]);
}

TEST(ShardingRequests, SparseAndAbsentShards) {
    CountedReads reads("shard_sparse_fill");
    auto& [c, store, cache, opt] = reads;
    const ChunkSpec spec = c.spec_of({0, 1});
    std::vector<float> out(20 * 20, 0.f);
    const StridedView v = testutil::view_of(out, {20, 20});
    // Shard 0/1 holds inner chunks (0,0), (1,0), (2,0) only: rows 20..39 of
    // columns 20..39 are empty inner chunks -> fill, no data request.
    StoreByteSource src(*store, "a/c/0/1");
    ASSERT_TRUE(c.codec->read_partial(src, spec, Region{{20, 20}, {20, 20}, {}}, v, opt));
    expect_counts(*store, 0, 1, 1);
    for (float f : out)
        ASSERT_EQ(f, 1.5f);
    // Absent shard: false, one request.
    store->reset();
    StoreByteSource absent(*store, "a/c/1/1");
    EXPECT_FALSE(c.codec->read_partial(absent, spec, Region{{0, 0}, {5, 5}, {}}, v, opt));
    expect_counts(*store, 0, 1, 1);
    EXPECT_EQ(cache->get(absent.cache_key()), nullptr);
}

TEST(ShardingRequests, ParallelExecutorDecodesEveryInnerChunk) {
    CountedReads reads("shard_rect_outer");
    auto& [c, store, cache, opt] = reads;
    std::atomic<int> calls{0};
    opt.executor = [&](size_t n, const std::function<void(size_t)>& task) {
        ++calls;
        std::vector<std::thread> th;
        std::atomic<size_t> next{0};
        for (int t = 0; t < 4; ++t)
            th.emplace_back([&] {
                size_t i = next++;
                while (i < n) {
                    task(i);
                    i = next++;
                }
            });
        for (auto& t : th)
            t.join();
    };
    Bytes arr(c.expected.size());
    for (const auto& idx : c.shard_indices()) {
        StoreByteSource src(*store, c.key_of(idx));
        const Region full = c.clip(idx);
        Region part = full;
        part.start[0] = 1; // not the whole shard: index + ranges path
        part.count[0] -= 1;
        StridedView v = c.view_in(arr, idx);
        ASSERT_TRUE(c.codec->read_partial(src, c.spec_of(idx), full, v, opt)); // whole
        ASSERT_TRUE(c.codec->read_partial(src, c.spec_of(idx), part,
                                          {v.data + v.strides[0], v.strides}, opt));
    }
    EXPECT_TRUE(arr == c.expected);
    EXPECT_EQ(calls.load(), 12);
}

// ------------------------------------------------------------ index cache

TEST(ShardIndexCache, LruByBytesAndInvalidation) {
    auto make = [](uint64_t n) {
        auto i = std::make_shared<ShardIndex>();
        i->chunks_per_shard = {n};
        i->entries.assign(2 * n, 0);
        return i;
    };
    const uint64_t one = make(10)->memory_bytes() + 2; // + key length
    ShardIndexCache cache(3 * one);
    cache.put("k1", make(10));
    cache.put("k2", make(10));
    cache.put("k3", make(10));
    EXPECT_EQ(cache.bytes(), 3 * one);
    EXPECT_NE(cache.get("k1"), nullptr); // k1 becomes most recent
    cache.put("k4", make(10));           // evicts k2
    EXPECT_EQ(cache.get("k2"), nullptr);
    EXPECT_NE(cache.get("k1"), nullptr);
    EXPECT_NE(cache.get("k3"), nullptr);
    EXPECT_NE(cache.get("k4"), nullptr);
    EXPECT_EQ(cache.bytes(), 3 * one);
    cache.put("k4", make(10)); // replace, no growth
    EXPECT_EQ(cache.bytes(), 3 * one);
    cache.put("big", make(1000)); // larger than the cache: not kept
    EXPECT_EQ(cache.get("big"), nullptr);
    cache.invalidate("k1");
    EXPECT_EQ(cache.get("k1"), nullptr);
    EXPECT_EQ(cache.bytes(), 2 * one);
    cache.put("zz", make(10));
    cache.invalidate_prefix("k");
    EXPECT_EQ(cache.get("k3"), nullptr);
    EXPECT_NE(cache.get("zz"), nullptr);
    cache.set_max_bytes(1);
    EXPECT_EQ(cache.bytes(), 0u);
    cache.set_max_bytes(1 << 20);
    cache.put("a", make(1));
    cache.clear();
    EXPECT_EQ(cache.bytes(), 0u);
    EXPECT_EQ(&ShardIndexCache::global(), &ShardIndexCache::global());
}

TEST(ShardIndexCache, ConcurrentUse) {
    ShardIndexCache cache(64 * 1024);
    std::vector<std::thread> th;
    for (int t = 0; t < 4; ++t)
        th.emplace_back([&, t] {
            for (int i = 0; i < 2000; ++i) {
                auto idx = std::make_shared<ShardIndex>();
                idx->entries.assign(2 * (1 + i % 50), static_cast<uint64_t>(i));
                const std::string k = "key" + std::to_string((i * 7 + t) % 300);
                cache.put(k, idx);
                auto g = cache.get("key" + std::to_string(i % 300));
                if (g) {
                    EXPECT_FALSE(g->entries.empty());
                }
                if (i % 97 == 0) cache.invalidate_prefix("key1");
            }
        });
    for (auto& t : th)
        t.join();
    EXPECT_LE(cache.bytes(), 64u * 1024);
}

TEST(ShardingRequests, TheCodecOwnsItsIndexCache) {
    ShardIndexCache::global().clear();
    CountedReads reads("shard_regular_zstd");
    auto& [c, store, cache, opt] = reads;
    StoreByteSource src(*store, "a/c/0/0");
    const ChunkSpec spec = c.spec_of({0, 0});
    std::vector<int32_t> out(9, -1);
    const Region r{{0, 0}, {3, 3}, {}};
    ASSERT_TRUE(c.codec->read_partial(src, spec, r, testutil::view_of(out, {3, 3}), opt));
    EXPECT_EQ(c.codec->index_cache(), cache.get());
    EXPECT_NE(cache->get(src.cache_key()), nullptr); // kept in the codec's own cache
    EXPECT_EQ(ShardIndexCache::global().bytes(), 0u);
    // Without a cache every read asks for the index again.
    c.codec->set_index_cache(nullptr);
    for (int k = 0; k < 2; ++k) {
        store->reset();
        ASSERT_TRUE(c.codec->read_partial(src, spec, r, testutil::view_of(out, {3, 3}), opt));
        expect_counts(*store, 0, 2, 2); // index + one inner chunk
    }
    const Bytes ref = *c.decode_shard({0, 0});
    EXPECT_EQ(out[4], reinterpret_cast<const int32_t*>(ref.data())[50 + 1]);
    // A codec parsed from metadata uses the process-wide cache.
    const auto* parsed = dynamic_cast<const ShardingCodec*>(&c.chain.array_to_bytes());
    ASSERT_NE(parsed, nullptr);
    EXPECT_EQ(parsed->index_cache(), &ShardIndexCache::global());
}

}  // namespace ut_codecs_test_sharding
