// Updating a stored shard (the write-back of partly written shards): only the
// inner chunks that hold new elements are encoded again; the others keep
// their stored bytes exactly. The stored shards here are written with a zstd
// checksum and updated by a chain without one, so a re-encoded inner chunk
// is told apart from a kept one by its bytes.
#include "zarr3/array.hpp"
#include "zarr3/dtype.hpp"
#include "zarr3/sharding.hpp"
#include "zarr3/store.hpp"

#include <gtest/gtest.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_codecs_test_shard_update {

using namespace zarr3;
using nlohmann::json;

namespace {

json sharding_config(bool checksum) {
    return {{"chunk_shape", {32, 32}},
            {"codecs", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                    {{"name", "zstd"},
                                     {"configuration", {{"level", 3}, {"checksum", checksum}}}}})},
            {"index_codecs",
             json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                          {{"name", "crc32c"}}})},
            {"index_location", "end"}};
}

// zarr.json of a uint16 array of `shape` in 64x64 shards (sharding_config).
json sharded_array_json(const Shape& shape, bool checksum) {
    return {{"zarr_format", 3},
            {"node_type", "array"},
            {"shape", shape},
            {"data_type", "uint16"},
            {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", {64, 64}}}}}},
            {"chunk_key_encoding", {{"name", "default"}}},
            {"fill_value", 0},
            {"codecs", json::array({{{"name", "sharding_indexed"},
                                     {"configuration", sharding_config(checksum)}}})}};
}

ChunkSpec shard_spec() {
    ChunkSpec s;
    s.shape = {64, 64};
    s.dtype = data_type_from_name("uint16");
    s.fill_value = parse_fill_value(json(0), s.dtype, "test fill_value");
    return s;
}

std::vector<uint16_t> pattern() {
    std::vector<uint16_t> v(64 * 64);
    for (size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<uint16_t>(1 + (i * 7919) % 5003);
    return v;
}

ByteView bytes_of(const std::vector<uint16_t>& v) {
    return {reinterpret_cast<const uint8_t*>(v.data()), v.size() * 2};
}

// Encoded bytes of each of the 2x2 inner chunks of an end-indexed shard
// (empty for an absent one).
std::vector<Bytes> inner_bytes(const ShardingCodec& c, const Bytes& shard) {
    const uint64_t isz = c.index_size({2, 2});
    const auto idx = c.parse_index(ByteView(shard).last(isz), {2, 2}, shard.size(), "test");
    std::vector<Bytes> out(4);
    for (uint64_t i = 0; i < 4; ++i)
        if (!idx->empty(i))
            out[i].assign(shard.begin() + static_cast<long>(idx->offset(i)),
                          shard.begin() + static_cast<long>(idx->offset(i) + idx->nbytes(i)));
    return out;
}

struct Update {
    std::vector<uint16_t> decoded = std::vector<uint16_t>(64 * 64, 0); // fill where not written
    std::vector<uint8_t> written = std::vector<uint8_t>(64 * 64, 0);
    void set(size_t r, size_t c, uint16_t v) {
        decoded[r * 64 + c] = v;
        written[r * 64 + c] = 1;
    }
};

} // namespace

TEST(ShardUpdate, UntouchedInnerChunksKeepTheirStoredBytes) {
    const ChunkSpec spec = shard_spec();
    const ShardingCodec with_sum(sharding_config(true), spec, "test");
    const ShardingCodec without(sharding_config(false), spec, "test");
    const auto data = pattern();
    const Bytes stored = with_sum.encode(bytes_of(data), spec);
    // A few new elements in inner chunk 0 (rows 0-31, columns 0-31) only.
    Update u;
    auto expected = data;
    for (size_t c = 0; c < 8; ++c) {
        u.set(3, c, 60000);
        expected[3 * 64 + c] = 60000;
    }
    Bytes out;
    const uint64_t n =
        without.encode_update(bytes_of(u.decoded), spec, {stored, u.written, "mem/a/c/0/0"}, out);
    EXPECT_EQ(n, 4u);
    std::vector<uint16_t> got(64 * 64);
    without.decode(out, spec, reinterpret_cast<uint8_t*>(got.data()));
    EXPECT_EQ(got, expected);

    const auto before = inner_bytes(with_sum, stored);
    const auto after = inner_bytes(without, out);
    const auto all_new = inner_bytes(without, without.encode(bytes_of(expected), spec));
    for (size_t i = 1; i < 4; ++i) {
        EXPECT_EQ(after[i], before[i]) << "inner chunk " << i << " was encoded again";
        EXPECT_NE(after[i], all_new[i]) << "test cannot tell kept from re-encoded bytes";
    }
    EXPECT_EQ(after[0], all_new[0]); // the changed one: encoded by the current chain
}

TEST(ShardUpdate, UnwrittenElementsOfAnAbsentInnerChunkAreFill) {
    const ChunkSpec spec = shard_spec();
    const ShardingCodec codec(sharding_config(false), spec, "test");
    // Stored: only inner chunk 3 (rows 32-63, columns 32-63) holds data.
    std::vector<uint16_t> data(64 * 64, 0);
    data[40 * 64 + 40] = 9;
    const Bytes stored = codec.encode(bytes_of(data), spec);
    Update u;
    u.set(1, 1, 5); // inner chunk 0, absent in the stored shard
    Bytes out;
    EXPECT_EQ(codec.encode_update(bytes_of(u.decoded), spec, {stored, u.written, "t"}, out), 2u);
    std::vector<uint16_t> got(64 * 64);
    codec.decode(out, spec, reinterpret_cast<uint8_t*>(got.data()));
    data[1 * 64 + 1] = 5;
    EXPECT_EQ(got, data);
}

TEST(ShardUpdate, OverwritingEveryValueWithFillLeavesNoInnerChunk) {
    const ChunkSpec spec = shard_spec();
    const ShardingCodec codec(sharding_config(false), spec, "test");
    std::vector<uint16_t> data(64 * 64, 0);
    data[0] = 4;
    const Bytes stored = codec.encode(bytes_of(data), spec);
    Update u;
    u.set(0, 0, 0);
    Bytes out;
    EXPECT_EQ(codec.encode_update(bytes_of(u.decoded), spec, {stored, u.written, "t"}, out), 0u);
}

TEST(ShardUpdate, CorruptStoredShardNamesIt) {
    const ChunkSpec spec = shard_spec();
    const ShardingCodec codec(sharding_config(false), spec, "test");
    Bytes stored = codec.encode(bytes_of(pattern()), spec);
    stored.back() ^= 0xff; // the index checksum
    Update u;
    u.set(0, 0, 1);
    Bytes out;
    try {
        codec.encode_update(bytes_of(u.decoded), spec, {stored, u.written, "mem/a/c/0/0"}, out);
        FAIL() << "no error";
    } catch (const FormatError& e) {
        EXPECT_NE(std::string(e.what()).find("mem/a/c/0/0"), std::string::npos) << e.what();
    }
    Bytes tiny(3);
    EXPECT_THROW(
        codec.encode_update(bytes_of(u.decoded), spec, {tiny, u.written, "mem/a/c/0/0"}, out),
        FormatError);
}

// Through Array: a partly written shard merged at flush keeps the stored
// bytes of the inner chunks it does not touch.
TEST(ShardUpdate, ArrayFlushReencodesOnlyTouchedInnerChunks) {
    auto store = std::make_shared<MemoryStore>();
    json meta = sharded_array_json({64, 64}, true);
    const auto data = pattern();
    Array::create(store, "a", parse_array_metadata(meta, "a/zarr.json"))
        ->write(Selection::all({64, 64}), data.data());
    const Bytes stored = *store->get("a/c/0/0");
    meta["codecs"][0]["configuration"] = sharding_config(false);
    auto a = Array::create(store, "a", parse_array_metadata(meta, "a/zarr.json"), true);
    const uint16_t v = 777;
    a->write(Selection{{40, 10}, {1, 1}, {1, 1}}, &v); // inner chunk 2
    a->flush();
    const Bytes updated = *store->get("a/c/0/0");
    const ShardingCodec codec(sharding_config(false), shard_spec(), "test");
    const auto before = inner_bytes(codec, stored);
    const auto after = inner_bytes(codec, updated);
    EXPECT_EQ(after[0], before[0]);
    EXPECT_EQ(after[1], before[1]);
    EXPECT_NE(after[2], before[2]);
    EXPECT_EQ(after[3], before[3]);
    std::vector<uint16_t> got(64 * 64);
    Array::open(store, "a")->read(Selection::all({64, 64}), got.data());
    auto expected = data;
    expected[40 * 64 + 10] = 777;
    EXPECT_EQ(got, expected);
}

// Whole shards written from a strided (here transposed) caller buffer are
// encoded straight from it: the same bytes as a dense copy of each shard,
// edge shards padded with fill, all-fill shards erased; on one thread (the
// write-behind path) and on an executor alike.
TEST(ShardUpdate, WholeShardsFromATransposedBufferMatchDenseEncoding) {
    const uint64_t H = 100, W = 150; // shards 64x64: edge shards overhang
    const json meta = sharded_array_json({H, W}, false);
    std::vector<uint16_t> rows(H * W), cols(H * W); // C order, and its transpose
    for (uint64_t i = 0; i < H; ++i)
        for (uint64_t j = 0; j < W; ++j) {
            const bool fill = i < 64 && j >= 64 && j < 128; // shard (0, 1)
            rows[i * W + j] = fill ? 0 : static_cast<uint16_t>(1 + (i * 7919 + j * 31) % 5003);
            cols[j * H + i] = rows[i * W + j];
        }
    const ShardingCodec codec(sharding_config(false), shard_spec(), "test");
    std::vector<uint16_t> shard00(64 * 64);
    for (uint64_t i = 0; i < 64; ++i)
        for (uint64_t j = 0; j < 64; ++j)
            shard00[i * 64 + j] = rows[i * W + j];
    const Bytes want00 = codec.encode(bytes_of(shard00), shard_spec());
    for (bool executor : {false, true}) {
        SCOPED_TRACE(executor ? "executor" : "one thread");
        auto store = std::make_shared<MemoryStore>();
        auto a = Array::create(store, "a", parse_array_metadata(meta, "a/zarr.json"));
        if (executor)
            a->set_executor([](size_t n, const std::function<void(size_t)>& task) {
                for (size_t i = n; i-- > 0;) // in reverse: order must not matter
                    task(i);
            });
        std::vector<uint16_t> ones(H * W, 1);
        a->write(Selection::all({H, W}), ones.data()); // every shard stored
        a->write(Selection::all({H, W}), cols.data(), {2, 2 * static_cast<int64_t>(H)});
        EXPECT_FALSE(store->get("a/c/0/1").has_value()) << "all-fill shard erased";
        ASSERT_TRUE(store->get("a/c/0/0").has_value());
        EXPECT_TRUE(*store->get("a/c/0/0") == want00);
        std::vector<uint16_t> back(H * W, 9);
        Array::open(store, "a")->read(Selection::all({H, W}), back.data());
        EXPECT_EQ(back, rows);
    }
}

}  // namespace ut_codecs_test_shard_update
