// ArrayMetadata layout questions (codec_names, shard_layout, read_block_shape)
// answered from the parsed codec chain, including a transpose before sharding.
#include "zarr3/array.hpp"
#include "zarr3/metadata.hpp"

#include <gtest/gtest.h>
#include <numeric>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_metadata_test_metadata_layout {

using namespace zarr3;
using nlohmann::json;

namespace {

json array_json(const json& shape, const json& grid, const json& codecs) {
    return {{"zarr_format", 3},
            {"node_type", "array"},
            {"shape", shape},
            {"data_type", "uint16"},
            {"chunk_grid", grid},
            {"chunk_key_encoding", {{"name", "default"}, {"configuration", {{"separator", "/"}}}}},
            {"fill_value", 0},
            {"codecs", codecs}};
}

json regular(const json& chunk_shape) {
    return {{"name", "regular"}, {"configuration", {{"chunk_shape", chunk_shape}}}};
}

const json kBytes = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};

json sharding(const json& chunk_shape, const char* location) {
    return {
        {"name", "sharding_indexed"},
        {"configuration",
         {{"chunk_shape", chunk_shape},
          {"codecs", json::array({kBytes, {{"name", "zstd"}, {"configuration", {{"level", 1}}}}})},
          {"index_codecs", json::array({kBytes, {{"name", "crc32c"}}})},
          {"index_location", location}}}};
}

// [24, 12, 36] in [12, 12, 12] shards; transpose order [2, 0, 1] puts array
// axis 2 first, so the sharding codec's [6, 4, 3] inner chunks are [4, 3, 6]
// in array order.
json transposed_sharded_json() {
    return array_json(
        json::array({24, 12, 36}), regular(json::array({12, 12, 12})),
        json::array({{{"name", "transpose"}, {"configuration", {{"order", {2, 0, 1}}}}},
                     sharding(json::array({6, 4, 3}), "end")}));
}

} // namespace

TEST(MetadataLayout, UnshardedRectilinear) {
    const json grid = {
        {"name", "rectilinear"},
        {"configuration",
         {{"kind", "inline"}, {"chunk_shapes", json::parse("[[10,20,30],[[40,3]]]")}}}};
    const json j =
        array_json(json::array({45, 100}), grid,
                   json::array({kBytes, {{"name", "gzip"}, {"configuration", {{"level", 1}}}}}));
    const ArrayMetadata m = parse_array_metadata(j, "u");
    EXPECT_EQ(m.codec_names(), (std::vector<std::string>{"bytes", "gzip"}));
    EXPECT_FALSE(m.shard_layout().has_value());
    // Most common edge per axis; ties go to the larger edge.
    EXPECT_EQ(m.read_block_shape(), (Shape{30, 40}));
}

TEST(MetadataLayout, EmptyAxisReadsInBlocksOfOne) {
    const ArrayMetadata m = parse_array_metadata(
        array_json(json::array({0, 10}), regular(json::array({5, 4})), json::array({kBytes})), "e");
    EXPECT_EQ(m.read_block_shape(), (Shape{1, 4}));
}

TEST(MetadataLayout, MissingArrayToBytesCodecIsNamed) {
    const ArrayMetadata m = parse_array_metadata(
        array_json(json::array({4}), regular(json::array({4})), json::array({"crc32c"})), "w");
    EXPECT_EQ(m.codec_names(), (std::vector<std::string>{"bytes", "crc32c"}));
}

TEST(MetadataLayout, ShardedIndexAtStart) {
    const ArrayMetadata m =
        parse_array_metadata(array_json(json::array({20, 30}), regular(json::array({8, 10})),
                                        json::array({sharding(json::array({4, 5}), "start")})),
                             "s");
    EXPECT_EQ(m.codec_names(), (std::vector<std::string>{"sharding_indexed"}));
    const auto layout = m.shard_layout();
    ASSERT_TRUE(layout.has_value());
    EXPECT_EQ(layout->inner_chunk_shape, (Shape{4, 5}));
    EXPECT_FALSE(layout->index_at_end);
    EXPECT_EQ(layout->inner_codec_names, (std::vector<std::string>{"bytes", "zstd"}));
    EXPECT_EQ(layout->index_codec_names, (std::vector<std::string>{"bytes", "crc32c"}));
    EXPECT_EQ(layout->inner_chunk_shape_json, json::parse("[4,5]"));
    EXPECT_EQ(m.read_block_shape(), (Shape{4, 5}));
}

TEST(MetadataLayout, TransposeBeforeShardingMapsInnerShapeToArrayAxes) {
    const ArrayMetadata m = parse_array_metadata(transposed_sharded_json(), "t");
    EXPECT_EQ(m.codec_names(), (std::vector<std::string>{"transpose", "sharding_indexed"}));
    const auto layout = m.shard_layout();
    ASSERT_TRUE(layout.has_value());
    EXPECT_EQ(layout->inner_chunk_shape, (Shape{4, 3, 6}));
    EXPECT_TRUE(layout->index_at_end);
    // As configured: the sharding codec's own axis order.
    EXPECT_EQ(layout->inner_chunk_shape_json, json::parse("[6,4,3]"));
    EXPECT_EQ(m.read_block_shape(), (Shape{4, 3, 6}));
}

TEST(MetadataLayout, TransposeBeforeShardingStoreRoundTrips) {
    auto store = std::make_shared<MemoryStore>();
    const Shape shape{24, 12, 36};
    {
        auto a = Array::create(store, "t", parse_array_metadata(transposed_sharded_json(), "t"));
        std::vector<uint16_t> v(24 * 12 * 36);
        std::iota(v.begin(), v.end(), uint16_t{1});
        a->write(Selection::all(shape), v.data());
        a->flush();
    }
    ASSERT_TRUE(store->get("t/c/1/0/2").has_value());
    const auto reopened = Array::open(store, "t");
    const ArrayMetadata& m = reopened->metadata();
    ASSERT_TRUE(m.shard_layout().has_value());
    EXPECT_EQ(m.shard_layout()->inner_chunk_shape, (Shape{4, 3, 6}));
    // One read block in the last shard holds the values written there.
    const Shape block = m.read_block_shape();
    ASSERT_EQ(block, (Shape{4, 3, 6}));
    const Selection sel{{20, 9, 30}, block, {}};
    std::vector<uint16_t> got(4 * 3 * 6);
    reopened->read(sel, got.data());
    for (uint64_t i = 0; i < 4; ++i)
        for (uint64_t j = 0; j < 3; ++j)
            for (uint64_t k = 0; k < 6; ++k)
                EXPECT_EQ(got[(i * 3 + j) * 6 + k], ((20 + i) * 12 + (9 + j)) * 36 + (30 + k) + 1)
                    << i << "," << j << "," << k;
}

// Non-cubic shards: the grid's [12, 6, 18] shards are [18, 12, 6] for the
// sharding codec after transpose [2, 0, 1]; its [9, 4, 3] inner chunks divide
// them there (though 9 does not divide the grid's first edge 12).
TEST(MetadataLayout, TransposeBeforeShardingChecksTheGridInCodecOrder) {
    const json j =
        array_json(json::array({24, 12, 36}), regular(json::array({12, 6, 18})),
                   json::array({{{"name", "transpose"}, {"configuration", {{"order", {2, 0, 1}}}}},
                                sharding(json::array({9, 4, 3}), "start")}));
    auto store = std::make_shared<MemoryStore>();
    const Shape shape{24, 12, 36};
    std::vector<uint16_t> v(24 * 12 * 36);
    std::iota(v.begin(), v.end(), uint16_t{1});
    {
        auto a = Array::create(store, "t", parse_array_metadata(j, "t"));
        EXPECT_EQ(a->metadata().shard_layout()->inner_chunk_shape, (Shape{4, 3, 9}));
        a->write(Selection::all(shape), v.data());
        a->flush();
    }
    const auto reopened = Array::open(store, "t");
    std::vector<uint16_t> got(v.size());
    reopened->read(Selection::all(shape), got.data());
    EXPECT_EQ(got, v);
    // An inner shape that does not divide the shards as the codec sees them
    // is still refused, naming the axis.
    json bad = j;
    bad["codecs"][1]["configuration"]["chunk_shape"] = json::array({12, 4, 3});
    try {
        parse_array_metadata(bad, "t");
        ADD_FAILURE() << "accepted";
    } catch (const FormatError& e) {
        EXPECT_NE(std::string(e.what()).find("not a multiple of the inner chunk edge 12"),
                  std::string::npos)
            << e.what();
    }
}

}  // namespace ut_metadata_test_metadata_layout
