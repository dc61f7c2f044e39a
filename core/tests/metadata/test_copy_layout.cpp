// A copy's layout from its source (zarr3/copy_layout.hpp): rectilinear axes cut to a range,
// sharding and codecs kept, each part replaced by the creation options' when named or when it no
// longer applies.
#include "zarr3/builder.hpp"
#include "zarr3/copy_layout.hpp"
#include "zarr3/metadata.hpp"

#include <gtest/gtest.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_metadata_test_copy_layout {

using namespace zarr3;
using nlohmann::json;

namespace {

const DataType kF32 = data_type_from_name("float32");

AxisPartition months() {
    return AxisPartition::from_runs({{31, 1}, {28, 1}, {31, 1}, {30, 1}});
}

// The sample's layout: monthly time chunks, sharded [1,16,32], gzip inside.
ArrayMetadata sample(uint64_t days = 120) {
    return ArrayBuilder({days, 32, 64}, kF32)
        .chunk_shapes_text("[[31,28,31,30],32,64]")
        .sharding(ShardingCodecBuilder({1, 16, 32}))
        .gzip(6)
        .build();
}

// The same with rectilinear rows [16,16]: a cut of them that the inner chunk (16 rows) does not
// divide.
ArrayMetadata sample_rows() {
    return ArrayBuilder({120, 32, 64}, kF32)
        .chunk_shapes_text("[[31,28,31,30],[16,16],64]")
        .sharding(ShardingCodecBuilder({1, 16, 32}))
        .gzip(6)
        .build();
}

ArrayMetadata defaults(const Shape& shape) {
    return ArrayBuilder(shape, kF32).regular_chunk_shape({1, 32, 64}).zstd(3).build();
}

} // namespace

TEST(CopyLayout, CutAxisKeepsInnerEdgesAndCutsTheEnds) {
    EXPECT_EQ(cut_axis(months(), 0, 120).to_json(), json::parse("[31,28,31,30]"));
    EXPECT_EQ(cut_axis(months(), 10, 70).to_json(), json::parse("[21,28,11]"));
    EXPECT_EQ(cut_axis(months(), 31, 59).to_json(), json::parse("[28]"));
    EXPECT_EQ(cut_axis(months(), 40, 41).to_json(), json::parse("[1]"));
    const auto runs = AxisPartition::from_runs({{10, 5}});
    EXPECT_EQ(cut_axis(runs, 15, 45).to_json(), json::parse("[5,[10,2],5]"));
    EXPECT_EQ(cut_axis(runs, 15, 45).length(), 30u);
    const auto reg = cut_axis(AxisPartition::regular(16, 100), 5, 50);
    EXPECT_TRUE(reg.is_regular());
    EXPECT_EQ(reg.most_common_edge(), 16u);
    EXPECT_EQ(reg.length(), 45u);
    EXPECT_THROW(cut_axis(months(), 5, 5), Error);
    EXPECT_THROW(cut_axis(months(), 0, 121), Error);
}

TEST(CopyLayout, CutGridKeepsItsKind) {
    const auto g = cut_grid(sample().grid, {{31, 90}, {0, 32}, {0, 64}});
    EXPECT_EQ(g.kind(), GridKind::Rectilinear);
    EXPECT_EQ(g.axis(0).to_json(), json::parse("[28,31]"));
    const auto r = cut_grid(ChunkGrid::make_regular({4, 8}, {20, 20}), {{2, 10}, {0, 20}});
    EXPECT_EQ(r.kind(), GridKind::Regular);
    EXPECT_EQ(r.axis(0).length(), 8u);
    EXPECT_THROW(cut_grid(r, {{0, 20}}), Error);
}

TEST(CopyLayout, WholeCopyKeepsGridShardingAndCodecs) {
    const auto src = sample();
    const auto m = copy_layout(src, {{0, 120}, {0, 32}, {0, 64}}, defaults(src.shape), {});
    EXPECT_EQ(m.grid.to_json(), src.grid.to_json());
    EXPECT_EQ(m.codecs_json, src.codecs_json);
}

TEST(CopyLayout, OverridesReplaceOnlyThePartTheyName) {
    const auto src = sample();
    const std::vector<AxisRange> all = {{0, 120}, {0, 32}, {0, 64}};
    const auto base = defaults(src.shape);
    auto m = copy_layout(src, all, base, {.codecs = true});
    EXPECT_EQ(m.grid.to_json(), src.grid.to_json());
    ASSERT_TRUE(m.shard_layout());
    EXPECT_EQ(m.shard_layout()->inner_chunk_shape, (Shape{1, 16, 32}));
    EXPECT_EQ(m.shard_layout()->inner_codec_names, (std::vector<std::string>{"bytes", "zstd"}));
    m = copy_layout(src, all, base, {.grid = true});
    EXPECT_EQ(m.grid.to_json(), base.grid.to_json());
    EXPECT_TRUE(m.shard_layout()); // [1,16,32] still divides [1,32,64]
    m = copy_layout(src, all, base, {.sharding = true});
    EXPECT_FALSE(m.shard_layout());
    EXPECT_EQ(m.grid.to_json(), src.grid.to_json());
    EXPECT_EQ(m.codec_names(), (std::vector<std::string>{"bytes", "gzip"}));
}

TEST(CopyLayout, SubsetsCutTheGridAndFallBackWhereItNoLongerApplies) {
    const auto src = sample();
    auto m = copy_layout(src, {{10, 70}, {0, 32}, {0, 64}}, defaults({60, 32, 64}), {});
    EXPECT_EQ(m.grid.axis(0).to_json(), json::parse("[21,28,11]"));
    EXPECT_TRUE(m.shard_layout());
    // A regular axis keeps its edge: the sharding still applies to a spatial window.
    EXPECT_TRUE(
        copy_layout(src, {{0, 120}, {3, 23}, {5, 45}}, defaults({120, 20, 40}), {}).shard_layout());
    // Rectilinear rows cut to [13,7], which the inner chunk (16 rows) does not divide: sharding
    // dropped.
    const auto cut =
        copy_layout(sample_rows(), {{0, 120}, {3, 23}, {5, 45}}, defaults({120, 20, 40}), {});
    EXPECT_FALSE(cut.shard_layout());
    EXPECT_EQ(cut.grid.axis(0).to_json(), json::parse("[31,28,31,30]"));
    EXPECT_EQ(cut.grid.axis(1).to_json(), json::parse("[13,7]"));
    EXPECT_EQ(cut.codec_names(), (std::vector<std::string>{"bytes", "gzip"}));
    // Another rank or a shape that is not the region's: the defaults.
    const auto two = ArrayBuilder({32, 64}, kF32).regular_chunk_shape({32, 64}).build();
    EXPECT_EQ(copy_layout(src, {{0, 32}, {0, 64}}, two, {}).grid.to_json(), two.grid.to_json());
    const auto other = defaults({50, 32, 64});
    EXPECT_EQ(copy_layout(src, {{0, 120}, {0, 32}, {0, 64}}, other, {}).grid.to_json(),
              other.grid.to_json());
}

TEST(CopyLayout, CodecsThatDoNotTakeTheCopysTypeFallBack) {
    const auto src = ArrayBuilder({10, 10}, kF32)
                         .regular_chunk_shape({5, 5})
                         .filter("numcodecs.bitround", {{"keepbits", 8}})
                         .build();
    const auto base =
        ArrayBuilder({10, 10}, data_type_from_name("int16")).regular_chunk_shape({10, 10}).build();
    const auto m = copy_layout(src, {{0, 10}, {0, 10}}, base, {});
    EXPECT_EQ(m.grid.to_json(), src.grid.to_json());
    EXPECT_EQ(m.codec_names(), base.codec_names());
}

TEST(CopyLayout, RegionMetadataKeepsEverythingButTheCutGrid) {
    const auto time = ArrayBuilder({120}, data_type_from_name("int64"))
                          .chunk_shapes_text("[[31,28,31,30]]")
                          .attributes({{"units", "days since 2023-01-01"}})
                          .gzip(6)
                          .build();
    const auto m = region_metadata(time, {{20, 40}});
    EXPECT_EQ(m.shape, (Shape{20}));
    EXPECT_EQ(m.grid.axis(0).to_json(), json::parse("[11,9]"));
    EXPECT_EQ(m.attributes, time.attributes);
    EXPECT_EQ(m.codecs_json, time.codecs_json);
    // An inner chunk that no longer divides the cut grid: the inner codecs alone.
    const auto cut = region_metadata(sample_rows(), {{0, 120}, {3, 23}, {0, 64}});
    EXPECT_FALSE(cut.shard_layout());
    EXPECT_EQ(cut.codec_names(), (std::vector<std::string>{"bytes", "gzip"}));
    EXPECT_THROW(region_metadata(time, {{0, 121}}), Error);
}

} // namespace ut_metadata_test_copy_layout
