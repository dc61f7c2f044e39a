// sharding_indexed: conformance shards, request patterns of partial reads,
// encode/decode round trips, nested sharding, malformed shards, index cache.
//
// Request accounting (CountingStore::counts()): every store call is one
// request: `gets` (whole value), `range_calls` (one get_ranges call, however
// many ranges it carries; `ranges` counts those) and `sizes` (size()). The
// sharding codec never calls size().
#include "zarr3/array.hpp"
#include "zarr3/chunk_grid.hpp"
#include "zarr3/dtype.hpp"
#include "zarr3/sharding.hpp"
#include "zarr3/store.hpp"

#include "test_util.hpp"

#include <atomic>
#include <cstring>
#include <gtest/gtest.h>
#include <thread>

using namespace zarr3;
using nlohmann::json;

namespace {

const std::string kConf = ZARR3_CONFORMANCE_DIR;

ChunkSpec make_spec(const Shape& shape, const std::string& dt, const json& fill) {
    ChunkSpec s;
    s.shape = shape;
    s.dtype = data_type_from_name(dt);
    s.fill_value = parse_fill_value(fill, s.dtype, "test fill_value");
    return s;
}

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
        ConfCase c(name);
        ASSERT_TRUE(c.chain.supports_partial_read());
        auto store = counting(c);
        ShardIndexCache cache;
        ReadOptions opt;
        opt.index_cache = &cache;
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
    ConfCase c("shard_regular_zstd");
    auto store = counting(c);
    ShardIndexCache cache;
    ReadOptions opt;
    opt.index_cache = &cache;
    StoreByteSource src(*store, "a/c/0/0");
    const ChunkSpec spec = c.spec_of({0, 0});
    const Bytes ref = *c.decode_shard({0, 0});
    std::vector<int32_t> out(100, -1);
    Region r{{10, 20}, {10, 10}, {}};
    ASSERT_TRUE(c.codec->read_partial(
        src, spec, r, {reinterpret_cast<uint8_t*>(out.data()), c_strides({10, 10}, 4)}, opt));
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
    ASSERT_TRUE(
        c.codec->read_partial(src, spec, Region{{0, 0}, {3, 3}, {}},
                              {reinterpret_cast<uint8_t*>(out.data()), c_strides({3, 3}, 4)}, opt));
    expect_counts(*store, 0, 1, 1);
    EXPECT_EQ(out[4], refi[50 + 1]);
}

TEST(ShardingRequests, AdjacentInnerChunksMergeIntoOneRange) {
    ConfCase c("shard_regular_zstd");
    auto store = counting(c);
    ShardIndexCache cache;
    ReadOptions opt;
    opt.index_cache = &cache;
    StoreByteSource src(*store, "a/c/1/1");
    const ChunkSpec spec = c.spec_of({1, 1});
    const Bytes ref = *c.decode_shard({1, 1});
    // Rows 5..24, cols 3..32: 3x4 = 12 inner chunks out of 30.
    std::vector<int32_t> out(20 * 30);
    Region r{{5, 3}, {20, 30}, {}};
    ASSERT_TRUE(c.codec->read_partial(
        src, spec, r, {reinterpret_cast<uint8_t*>(out.data()), c_strides({20, 30}, 4)}, opt));
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
    ASSERT_TRUE(c.codec->read_partial(
        src00, spec, Region{{0, 0}, {10, 20}, {}},
        {reinterpret_cast<uint8_t*>(out.data()), c_strides({10, 20}, 4)}, opt));
    store->reset();
    ASSERT_TRUE(c.codec->read_partial(
        src00, spec, Region{{0, 0}, {10, 20}, {}},
        {reinterpret_cast<uint8_t*>(out.data()), c_strides({10, 20}, 4)}, opt));
    expect_counts(*store, 0, 1, 2);
    EXPECT_EQ(store->log().at(0), "ranges a/c/0/0 0+278 551+281");
    // The default gap (16 KiB) merges them.
    opt.coalesce_gap = 16 * 1024;
    store->reset();
    ASSERT_TRUE(c.codec->read_partial(
        src00, spec, Region{{0, 0}, {10, 20}, {}},
        {reinterpret_cast<uint8_t*>(out.data()), c_strides({10, 20}, 4)}, opt));
    expect_counts(*store, 0, 1, 1);
    EXPECT_EQ(store->log().at(0), "ranges a/c/0/0 0+832");
}

TEST(ShardingRequests, FullShardIsOneRequest) {
    ConfCase c("shard_regular_zstd");
    auto store = counting(c);
    ShardIndexCache cache;
    ReadOptions opt;
    opt.index_cache = &cache;
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
                                      {reinterpret_cast<uint8_t*>(one.data()), {4, 4}}, opt));
    expect_counts(*store, 0, 1, 1);
    EXPECT_EQ(one[0], reinterpret_cast<const int32_t*>(ref.data())[59 * 50 + 49]);
    // A stepped selection touching every inner chunk also reads the whole shard.
    store->reset();
    std::vector<int32_t> st(12 * 10);
    ASSERT_TRUE(c.codec->read_partial(
        src, spec, Region{{2, 4}, {12, 10}, {5, 5}},
        {reinterpret_cast<uint8_t*>(st.data()), c_strides({12, 10}, 4)}, opt));
    expect_counts(*store, 1, 0, 0);
    for (int i = 0; i < 12; ++i)
        for (int j = 0; j < 10; ++j)
            ASSERT_EQ(st[i * 10 + j],
                      reinterpret_cast<const int32_t*>(ref.data())[(2 + 5 * i) * 50 + 4 + 5 * j]);
}

TEST(ShardingRequests, SparseAndAbsentShards) {
    ConfCase c("shard_sparse_fill");
    auto store = counting(c);
    ShardIndexCache cache;
    ReadOptions opt;
    opt.index_cache = &cache;
    const ChunkSpec spec = c.spec_of({0, 1});
    std::vector<float> out(20 * 20, 0.f);
    const StridedView v{reinterpret_cast<uint8_t*>(out.data()), c_strides({20, 20}, 4)};
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
    EXPECT_EQ(cache.get(absent.cache_key()), nullptr);
}

TEST(ShardingRequests, ParallelExecutorDecodesEveryInnerChunk) {
    ConfCase c("shard_rect_outer");
    auto store = counting(c);
    ShardIndexCache cache;
    ReadOptions opt;
    opt.index_cache = &cache;
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

// ------------------------------------------------------------ round trips

namespace {

json config_for(const Shape& inner, bool start, bool crc, const std::string& endian,
                const json& inner_codecs =
                    json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}})) {
    json ic = json::array({{{"name", "bytes"}, {"configuration", {{"endian", endian}}}}});
    if (crc) ic.push_back({{"name", "crc32c"}});
    return {{"chunk_shape", inner},
            {"codecs", inner_codecs},
            {"index_codecs", ic},
            {"index_location", start ? "start" : "end"}};
}

// 8x15 uint16 shard, inner 4x5 (2x3 inner chunks); inner chunks (0,1) and
// (1,2) hold only the fill value 7.
Bytes test_shard_data() {
    std::vector<uint16_t> v(8 * 15);
    for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 15; ++j) {
            const int ci = i / 4, cj = j / 5;
            const bool fill = (ci == 0 && cj == 1) || (ci == 1 && cj == 2);
            v[i * 15 + j] = fill ? 7 : static_cast<uint16_t>(100 + i * 15 + j);
        }
    Bytes b(v.size() * 2);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

std::vector<uint64_t> entries_of(const ShardingCodec& codec, const Bytes& shard, const Shape& cps) {
    const uint64_t isz = codec.index_size(cps);
    const ByteView all(shard);
    const ByteView enc = codec.index_location() == ShardingCodec::IndexLocation::Start
                             ? all.first(isz)
                             : all.last(isz);
    return codec.parse_index(enc, cps, shard.size(), "test")->entries;
}

} // namespace

TEST(ShardingRoundTrip, IndexLocationCrcAndEndianness) {
    const ChunkSpec spec = make_spec({8, 15}, "uint16", 7);
    const Bytes data = test_shard_data();
    for (bool start : {false, true})
        for (bool crc : {false, true})
            for (const char* endian : {"little", "big"}) {
                SCOPED_TRACE(std::string(start ? "start" : "end") + (crc ? " crc " : " ") + endian);
                ShardingCodec codec(config_for({4, 5}, start, crc, endian), spec, "test");
                const Shape cps{2, 3};
                const uint64_t isz = codec.index_size(cps);
                EXPECT_EQ(isz, 96u + (crc ? 4 : 0));
                const Bytes enc = codec.encode(data, spec);
                EXPECT_EQ(enc.size(), isz + 4 * 40); // 4 stored inner chunks of 4x5 uint16
                const auto e = entries_of(codec, enc, cps);
                for (uint64_t lin = 0; lin < 6; ++lin) {
                    const bool empty = lin == 1 || lin == 5;
                    EXPECT_EQ(e[2 * lin] == kEmptyEntry, empty) << lin;
                    EXPECT_EQ(e[2 * lin + 1] == kEmptyEntry, empty) << lin;
                    if (!empty) {
                        EXPECT_EQ(e[2 * lin + 1], 40u);
                        EXPECT_GE(e[2 * lin], start ? isz : 0u);
                        EXPECT_LE(e[2 * lin] + 40, start ? enc.size() : enc.size() - isz);
                    }
                }
                // First entry's offset as stored, in the index's byte order.
                const uint8_t* raw = start ? enc.data() : enc.data() + enc.size() - isz;
                uint64_t first = 0;
                for (int k = 0; k < 8; ++k)
                    first |= static_cast<uint64_t>(raw[std::string(endian) == "big" ? 7 - k : k])
                             << (8 * k);
                EXPECT_EQ(first, start ? isz : 0u);
                Bytes dec(data.size(), 0);
                codec.decode(enc, spec, dec.data());
                EXPECT_TRUE(dec == data);
                // The JSON form rebuilds the same codec.
                const json j = codec.to_json();
                EXPECT_EQ(j["name"], "sharding_indexed");
                ShardingCodec again(j["configuration"], spec, "test");
                EXPECT_TRUE(again.encode(data, spec) == enc);
            }
}

TEST(ShardingRoundTrip, AllFillShardHasEmptyIndex) {
    const ChunkSpec spec = make_spec({8, 15}, "uint16", 7);
    ShardingCodec codec(config_for({4, 5}, false, true, "little"), spec, "test");
    Bytes data(8 * 15 * 2);
    for (size_t i = 0; i < data.size(); i += 2)
        data[i] = 7;
    const Bytes enc = codec.encode(data, spec);
    EXPECT_EQ(enc.size(), 100u);
    for (uint64_t v : entries_of(codec, enc, {2, 3}))
        EXPECT_EQ(v, kEmptyEntry);
    Bytes dec(data.size(), 0xEE);
    codec.decode(enc, spec, dec.data());
    EXPECT_TRUE(dec == data);
}

TEST(ShardingRoundTrip, ChunksPerShardFollowsTheShardShape) {
    // One codec serves shards of different shapes (rectilinear shard grid).
    const ChunkSpec spec = make_spec({8, 15}, "uint16", 7);
    ShardingCodec codec(config_for({4, 5}, false, true, "little"), spec, "test");
    const ChunkSpec small = make_spec({4, 10}, "uint16", 7);
    Bytes data(4 * 10 * 2);
    for (size_t i = 0; i < data.size(); ++i)
        data[i] = static_cast<uint8_t>(i * 3);
    const Bytes enc = codec.encode(data, small);
    EXPECT_EQ(enc.size(), 2 * 40 + 2 * 16 + 4u);
    Bytes dec(data.size());
    codec.decode(enc, small, dec.data());
    EXPECT_TRUE(dec == data);
    EXPECT_THROW(codec.encode(data, make_spec({5, 8}, "uint16", 7)), FormatError);
}

TEST(ShardingRoundTrip, NestedSharding) {
    const ChunkSpec spec = make_spec({16, 16}, "int32", 0);
    const json nested = json::array(
        {{{"name", "sharding_indexed"},
          {"configuration",
           {{"chunk_shape", json::array({4, 4})},
            {"codecs", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                    {{"name", "zstd"}, {"configuration", {{"level", 1}}}}})},
            {"index_codecs",
             json::array({{{"name", "bytes"}, {"configuration", {{"endian", "big"}}}},
                          {{"name", "crc32c"}}})}}}}});
    ShardingCodec codec(config_for({8, 8}, false, true, "little", nested), spec, "test");
    std::vector<int32_t> v(256);
    for (int i = 0; i < 256; ++i)
        v[i] = (i / 16 < 4 && i % 16 < 4) ? 0 : i * 1000 - 7;
    Bytes data(1024);
    std::memcpy(data.data(), v.data(), data.size());
    const Bytes enc = codec.encode(data, spec);
    Bytes dec(data.size());
    codec.decode(enc, spec, dec.data());
    EXPECT_TRUE(dec == data);

    // Partial stepped read through a store: inner shards are read partially too.
    auto mem = std::make_shared<MemoryStore>();
    mem->put("s", enc);
    CountingStore cs(mem);
    StoreByteSource src(cs, "s");
    ReadOptions opt;
    std::vector<int32_t> out(6 * 5, -1);
    // Rows 1..6, columns 3..11 step 2: outer inner chunks (0,0) and (0,1).
    ASSERT_TRUE(codec.read_partial(src, spec, Region{{1, 3}, {6, 5}, {1, 2}},
                                   {reinterpret_cast<uint8_t*>(out.data()), c_strides({6, 5}, 4)},
                                   opt));
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 5; ++j)
            ASSERT_EQ(out[i * 5 + j], v[(1 + i) * 16 + 3 + 2 * j]);
    EXPECT_EQ(cs.counts().range_calls, 2u); // outer index + one merged range
    EXPECT_EQ(cs.counts().ranges, 2u);
    EXPECT_EQ(cs.counts().gets, 0u);

    // A nested inner shape that does not divide the outer inner chunk.
    json bad = nested;
    bad[0]["configuration"]["chunk_shape"] = json::array({3, 4});
    EXPECT_THROW(ShardingCodec(config_for({8, 8}, false, true, "little", bad), spec, "test"),
                 FormatError);
}

TEST(ShardingRoundTrip, StridedAndNegativeOutputViews) {
    const ChunkSpec spec = make_spec({8, 15}, "uint16", 7);
    ShardingCodec codec(config_for({4, 5}, true, true, "big"), spec, "test");
    const Bytes data = test_shard_data();
    const Bytes enc = codec.encode(data, spec);
    MemoryByteSource src(enc, "mem shard");
    // Rows 1..6 step 5 (2 rows), cols 14 down to 0 via a negative output
    // stride (i.e. the row reversed), into a padded buffer.
    std::vector<uint16_t> out(2 * 20, 0);
    StridedView v{reinterpret_cast<uint8_t*>(out.data() + 14), {40, -2}};
    ASSERT_TRUE(codec.read_partial(src, spec, Region{{1, 0}, {2, 15}, {5, 1}}, v, ReadOptions{}));
    const auto* d = reinterpret_cast<const uint16_t*>(data.data());
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 15; ++j)
            ASSERT_EQ(out[i * 20 + 14 - j], d[(1 + 5 * i) * 15 + j]);
    for (int i = 0; i < 2; ++i)
        for (int j = 15; j < 20; ++j)
            EXPECT_EQ(out[i * 20 + j], 0);
    // A region leaving the shard is an error, not a crash.
    EXPECT_THROW(codec.read_partial(src, spec, Region{{7, 0}, {2, 1}, {}}, v, ReadOptions{}),
                 Error);
}

// ------------------------------------------------------------ malformed shards

namespace {

struct Broken {
    ChunkSpec spec = make_spec({8, 15}, "uint16", 7);
    ShardingCodec codec;
    Bytes enc;
    explicit Broken(bool crc, bool start = false)
        : codec(config_for({4, 5}, start, crc, "little"), spec, "test") {
        enc = codec.encode(test_shard_data(), spec);
    }
    uint64_t index_pos() const {
        return codec.index_location() == ShardingCodec::IndexLocation::Start
                   ? 0
                   : enc.size() - codec.index_size({2, 3});
    }
    void set_entry(uint64_t lin, uint64_t off, uint64_t nb) {
        std::memcpy(enc.data() + index_pos() + 16 * lin, &off, 8);
        std::memcpy(enc.data() + index_pos() + 16 * lin + 8, &nb, 8);
    }
    std::string decode_error() const {
        Bytes out(spec.num_bytes());
        try {
            codec.decode(enc, spec, out.data());
        } catch (const FormatError& e) {
            return e.what();
        }
        return "no error";
    }
};

} // namespace

TEST(ShardingMalformed, CorruptIndexChecksum) {
    Broken b(true);
    b.enc[b.index_pos() + 3] ^= 0x40;
    const std::string err = b.decode_error();
    EXPECT_NE(err.find("checksum"), std::string::npos) << err;
    // Through a store, too.
    auto mem = std::make_shared<MemoryStore>();
    mem->put("x/c/0", b.enc);
    StoreByteSource src(*mem, "x/c/0");
    std::vector<uint16_t> out(4);
    try {
        b.codec.read_partial(src, b.spec, Region{{0, 0}, {2, 2}, {}},
                             {reinterpret_cast<uint8_t*>(out.data()), {4, 2}}, ReadOptions{});
        FAIL() << "no error";
    } catch (const FormatError& e) {
        EXPECT_NE(std::string(e.what()).find("checksum mismatch"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("x/c/0"), std::string::npos) << e.what();
    }
}

TEST(ShardingMalformed, EntriesOutsideTheDataRegion) {
    {
        Broken b(false);
        b.set_entry(2, b.enc.size() - 96 - 10, 40); // overlaps the index at the end
        const std::string err = b.decode_error();
        EXPECT_NE(err.find("inner chunk (0,2)"), std::string::npos) << err;
        EXPECT_NE(err.find("past the end"), std::string::npos) << err;
    }
    {
        Broken b(false);
        b.set_entry(0, ~0ull - 3, 5); // offset + nbytes overflows
        EXPECT_NE(b.decode_error().find("overflows"), std::string::npos);
    }
    {
        Broken b(false);
        b.set_entry(3, kEmptyEntry, 40); // half empty
        EXPECT_NE(b.decode_error().find("inner chunk (1,0)"), std::string::npos);
    }
    {
        Broken b(false);
        b.set_entry(0, 0, uint64_t{1} << 40); // huge nbytes: refused before any read
        EXPECT_NE(b.decode_error().find("maximum"), std::string::npos);
        // Partial read: refused while parsing the index, before the data range.
        auto mem = std::make_shared<MemoryStore>();
        mem->put("k", b.enc);
        CountingStore cs(mem);
        StoreByteSource src(cs, "k");
        std::vector<uint16_t> out(1);
        EXPECT_THROW(b.codec.read_partial(src, b.spec, Region{{0, 0}, {1, 1}, {}},
                                          {reinterpret_cast<uint8_t*>(out.data()), {2, 2}},
                                          ReadOptions{}),
                     FormatError);
        EXPECT_EQ(cs.counts().range_calls, 1u);
    }
    {
        Broken b(false, true);
        b.set_entry(0, 10, 40); // index at start: offset inside the index
        EXPECT_NE(b.decode_error().find("points into the shard index"), std::string::npos);
    }
    {
        // Partial read of an entry past the end of the value: the store
        // refuses the range (the shard size is not fetched).
        Broken b(false);
        b.set_entry(0, b.enc.size() + 100, 40);
        auto mem = std::make_shared<MemoryStore>();
        mem->put("k", b.enc);
        StoreByteSource src(*mem, "k");
        std::vector<uint16_t> out(1);
        EXPECT_THROW(b.codec.read_partial(src, b.spec, Region{{0, 0}, {1, 1}, {}},
                                          {reinterpret_cast<uint8_t*>(out.data()), {2, 2}},
                                          ReadOptions{}),
                     FormatError);
    }
}

TEST(ShardingMalformed, TruncatedShard) {
    for (bool start : {false, true}) {
        Broken b(true, start);
        Bytes small(b.enc.begin(), b.enc.begin() + 50);
        Bytes out(b.spec.num_bytes());
        try {
            b.codec.decode(small, b.spec, out.data());
            FAIL() << "no error";
        } catch (const FormatError& e) {
            EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
        }
        // Cut inside the data: the checksum (end) or bounds (start) catch it.
        Bytes cut(b.enc.begin(), b.enc.end() - 30);
        EXPECT_THROW(b.codec.decode(cut, b.spec, out.data()), FormatError);
        auto mem = std::make_shared<MemoryStore>();
        mem->put("k", small);
        StoreByteSource src(*mem, "k");
        EXPECT_THROW(b.codec.read_partial(src, b.spec, Region{{0, 0}, {1, 1}, {}},
                                          {out.data(), {2, 2}}, ReadOptions{}),
                     FormatError);
        EXPECT_THROW(b.codec.read_partial(src, b.spec, Region{{0, 0}, {8, 15}, {}},
                                          {out.data(), c_strides({8, 15}, 2)}, ReadOptions{}),
                     FormatError);
    }
}

TEST(ShardingMalformed, ConfigurationErrors) {
    const ChunkSpec spec = make_spec({8, 15}, "uint16", 7);
    auto expect_error = [&](json cfg, const std::string& needle) {
        try {
            ShardingCodec c(cfg, spec, "arr/zarr.json");
            ADD_FAILURE() << "accepted " << cfg.dump();
        } catch (const FormatError& e) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("arr/zarr.json"), std::string::npos) << e.what();
        }
    };
    json good = config_for({4, 5}, false, true, "little");
    json c = good;
    c["index_codecs"] = json::array({{{"name", "bytes"}}, {{"name", "zstd"}}});
    expect_error(c, "index_codecs");
    c["index_codecs"] = json::array(
        {{{"name", "transpose"}, {"configuration", {{"order", {1, 0}}}}}, {{"name", "bytes"}}});
    expect_error(c, "index_codecs");
    c["index_codecs"] = json::array();
    expect_error(c, "index_codecs");
    c = good;
    c.erase("index_codecs");
    expect_error(c, "index_codecs");
    c = good;
    c["chunk_shape"] = json::array({4});
    expect_error(c, "chunk_shape");
    c["chunk_shape"] = json::array({4, 0});
    expect_error(c, "chunk_shape");
    c = good;
    c["index_location"] = "middle";
    expect_error(c, "index_location");
    c = good;
    c.erase("codecs");
    expect_error(c, "codecs");
    c = good;
    c.erase("index_location"); // defaults to end
    EXPECT_EQ(ShardingCodec(c, spec, "t").index_location(), ShardingCodec::IndexLocation::End);
}

TEST(ShardingMalformed, ValidateGrid) {
    const ChunkSpec spec = make_spec({20, 15}, "uint16", 0);
    ShardingCodec codec(config_for({10, 5}, false, true, "little"), spec, "test");
    EXPECT_NO_THROW(codec.validate_grid(ChunkGrid::make_regular({20, 15}, {100, 100}), "g"));
    try {
        codec.validate_grid(ChunkGrid::make_regular({20, 12}, {100, 100}), "g.json");
        FAIL() << "no error";
    } catch (const FormatError& e) {
        EXPECT_NE(std::string(e.what()).find("axis 1"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("12"), std::string::npos) << e.what();
    }
    // Rectilinear: [[20, 3], 15] on axis 0 -> 15 is not a multiple of 10.
    auto ax0 = AxisPartition::from_runs({{20, 3}, {15, 1}});
    ax0.set_length(75);
    auto ax1 = AxisPartition::from_runs({{5, 2}, {10, 4}});
    ax1.set_length(50);
    try {
        codec.validate_grid(ChunkGrid::make_rectilinear({ax0, ax1}), "r.json");
        FAIL() << "no error";
    } catch (const FormatError& e) {
        EXPECT_NE(std::string(e.what()).find("axis 0"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("shard edge 15"), std::string::npos) << e.what();
    }
    auto ok0 = AxisPartition::from_runs({{20, 3}, {10, 1}});
    ok0.set_length(70);
    EXPECT_NO_THROW(codec.validate_grid(ChunkGrid::make_rectilinear({ok0, ax1}), "r.json"));
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
