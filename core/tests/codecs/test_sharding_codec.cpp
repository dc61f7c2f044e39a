// sharding_indexed encode/decode: round trips (index location, checksum,
// endianness, nested sharding, strided output views) and malformed shards
// (bad index entries, truncation, configuration and grid errors).
#include "zarr3/chunk_grid.hpp"
#include "zarr3/counting_store.hpp"
#include "zarr3/dtype.hpp"
#include "zarr3/sharding.hpp"
#include "zarr3/store.hpp"

#include "codecs/codec_test_util.hpp"
#include "test_util.hpp"

#include <cstring>
#include <gtest/gtest.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_codecs_test_sharding_codec {

using namespace zarr3;
using nlohmann::json;

namespace {

ChunkSpec make_spec(const Shape& shape, const std::string& dt, const json& fill) {
    ChunkSpec s;
    s.shape = shape;
    s.dtype = data_type_from_name(dt);
    s.fill_value = parse_fill_value(fill, s.dtype, "test fill_value");
    return s;
}

// Message of the FormatError `f` throws ("NO ERROR" if none); any other
// exception fails the test.
template <class F> std::string format_error(F&& f) {
    const std::string e = codectest::error_of(std::forward<F>(f));
    EXPECT_EQ(e.rfind("NOT A FormatError", 0), std::string::npos) << e;
    return e;
}

} // namespace

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

TEST(ShardingRoundTrip, EncodeViewReadsStridedSourcesLikeADenseShard) {
    // encode_view encodes the same bytes as encode() of a dense copy, whether
    // the shard sits inside a wider buffer, is stored transposed, or upside
    // down (negative row stride); an all-fill view stores nothing.
    const ChunkSpec spec = make_spec({8, 15}, "uint16", 7);
    ShardingCodec codec(config_for({4, 5}, false, true, "little"), spec, "test");
    const Bytes dense = test_shard_data();
    const Bytes want = codec.encode(dense, spec);
    auto at = [&](uint64_t i, uint64_t j) {
        uint16_t v;
        std::memcpy(&v, dense.data() + (i * 15 + j) * 2, 2);
        return v;
    };
    std::vector<uint16_t> wide(12 * 20, 9), transposed(15 * 8), flipped(8 * 15);
    for (uint64_t i = 0; i < 8; ++i)
        for (uint64_t j = 0; j < 15; ++j) {
            wide[(i + 2) * 20 + (j + 3)] = at(i, j);
            transposed[j * 8 + i] = at(i, j);
            flipped[(7 - i) * 15 + j] = at(i, j);
        }
    auto bytes = [](std::vector<uint16_t>& v, size_t first) {
        return reinterpret_cast<uint8_t*>(v.data() + first);
    };
    const std::vector<std::pair<const char*, StridedView>> views = {
        {"inside a wider buffer", {bytes(wide, 2 * 20 + 3), {40, 2}}},
        {"transposed", {bytes(transposed, 0), {2, 16}}},
        {"rows reversed", {bytes(flipped, 7 * 15), {-30, 2}}},
    };
    for (const auto& [what, view] : views) {
        SCOPED_TRACE(what);
        Bytes got;
        EXPECT_EQ(codec.encode_view(view, spec, got), 4u);
        EXPECT_TRUE(got == want);
    }
    std::vector<uint16_t> fill(8 * 15, 7);
    Bytes got;
    EXPECT_EQ(codec.encode_view({bytes(fill, 0), {30, 2}}, spec, got), 0u);
    EXPECT_THROW(codec.encode_view({bytes(fill, 0), {2}}, spec, got), Error) << "rank mismatch";
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

TEST(ShardingPrepared, OncePerDistinctShardShape) {
    const ChunkSpec spec = make_spec({8, 15}, "uint16", 7);
    ShardingCodec codec(config_for({4, 5}, false, true, "little"), spec, "test");
    const auto a = codec.prepare(spec, "t");
    EXPECT_EQ(a->chunks_per_shard, (Shape{2, 3}));
    EXPECT_EQ(a->inner_chunks, 6u);
    EXPECT_EQ(a->index_size, 6 * 16 + 4u); // crc32c after the entries
    EXPECT_EQ(a->inner_spec.shape, (Shape{4, 5}));
    EXPECT_EQ(a->inner_spec.fill_value, spec.fill_value);
    EXPECT_EQ(a->index_spec.shape, (Shape{2, 3, 2}));
    EXPECT_EQ(codec.prepare(spec, "t"), a); // the same state, not a recomputation
    const auto b = codec.prepare(make_spec({4, 10}, "uint16", 7), "t");
    EXPECT_NE(b, a);
    EXPECT_EQ(b->chunks_per_shard, (Shape{1, 2}));
    EXPECT_EQ(codec.prepare(make_spec({4, 10}, "uint16", 7), "t"), b);
    // Another fill value (another array): its own state, right inner spec.
    const auto c = codec.prepare(make_spec({8, 15}, "uint16", 9), "t");
    EXPECT_EQ(c->inner_spec.fill_value, make_spec({8, 15}, "uint16", 9).fill_value);
    try {
        codec.prepare(make_spec({5, 8}, "uint16", 7), "shard c/1/0");
        ADD_FAILURE() << "a shard the inner chunks do not divide was prepared";
    } catch (const FormatError& e) {
        EXPECT_NE(std::string(e.what()).find("shard c/1/0"), std::string::npos) << e.what();
    }
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
                                   testutil::view_of(out, {6, 5}), opt));
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
        return format_error([&] { codec.decode(enc, spec, out.data()); });
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
    const std::string e = format_error([&] {
        b.codec.read_partial(src, b.spec, Region{{0, 0}, {2, 2}, {}},
                             testutil::view_of(out, {2, 2}), ReadOptions{});
    });
    EXPECT_NE(e.find("checksum mismatch"), std::string::npos) << e;
    EXPECT_NE(e.find("x/c/0"), std::string::npos) << e;
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
                                          testutil::view_of(out, {1, 1}), ReadOptions{}),
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
                                          testutil::view_of(out, {1, 1}), ReadOptions{}),
                     FormatError);
    }
}

TEST(ShardingMalformed, TruncatedShard) {
    for (bool start : {false, true}) {
        Broken b(true, start);
        Bytes small(b.enc.begin(), b.enc.begin() + 50);
        Bytes out(b.spec.num_bytes());
        const std::string e = format_error([&] { b.codec.decode(small, b.spec, out.data()); });
        EXPECT_NE(e.find("truncated"), std::string::npos) << e;
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
        const std::string e = format_error([&] { ShardingCodec c(cfg, spec, "arr/zarr.json"); });
        EXPECT_NE(e.find(needle), std::string::npos) << cfg.dump() << ": " << e;
        EXPECT_NE(e.find("arr/zarr.json"), std::string::npos) << cfg.dump() << ": " << e;
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
    std::string e = format_error([&] {
        codec.validate_grid(ChunkGrid::make_regular({20, 12}, {100, 100}), "g.json");
    });
    EXPECT_NE(e.find("axis 1"), std::string::npos) << e;
    EXPECT_NE(e.find("12"), std::string::npos) << e;
    // Rectilinear: [[20, 3], 15] on axis 0 -> 15 is not a multiple of 10.
    auto ax0 = AxisPartition::from_runs({{20, 3}, {15, 1}});
    ax0.set_length(75);
    auto ax1 = AxisPartition::from_runs({{5, 2}, {10, 4}});
    ax1.set_length(50);
    e = format_error([&] {
        codec.validate_grid(ChunkGrid::make_rectilinear({ax0, ax1}), "r.json");
    });
    EXPECT_NE(e.find("axis 0"), std::string::npos) << e;
    EXPECT_NE(e.find("shard edge 15"), std::string::npos) << e;
    auto ok0 = AxisPartition::from_runs({{20, 3}, {10, 1}});
    ok0.set_length(70);
    EXPECT_NO_THROW(codec.validate_grid(ChunkGrid::make_rectilinear({ok0, ax1}), "r.json"));
}

}  // namespace ut_codecs_test_sharding_codec
