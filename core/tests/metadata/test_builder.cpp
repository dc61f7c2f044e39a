// The CHUNK_SHAPES text grammar (ChunkGrid::parse_chunk_shapes) and the typed
// ArrayBuilder / ShardingCodecBuilder: exact documents, validation messages
// naming the part, and a built sharded array written and read back.
#include "zarr3/array.hpp"
#include "zarr3/builder.hpp"

#include <gtest/gtest.h>
#include <numeric>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_metadata_test_builder {

using namespace zarr3;
using nlohmann::json;

namespace {

std::string chunk_shapes_error(const std::string& text, const Shape& shape) {
    try {
        ChunkGrid::parse_chunk_shapes(text, shape, "CS");
    } catch (const FormatError& e) {
        return e.what();
    } catch (const std::exception& e) {
        return std::string("WRONG EXCEPTION TYPE: ") + e.what();
    }
    return "NO EXCEPTION";
}

struct Failure {
    BuildPart part;
    std::string message;
};

Failure build_error(const ArrayBuilder& b) {
    try {
        b.build("t");
    } catch (const BuildError& e) {
        return {e.part(), e.what()};
    }
    ADD_FAILURE() << "no BuildError";
    return {BuildPart::Attributes, ""};
}

DataType u16() {
    return data_type_from_name("uint16");
}

const json kBytesLE = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
const json kKeyEncoding = {{"name", "default"}, {"configuration", {{"separator", "/"}}}};

} // namespace

// ------------------------------------------------------------------ CHUNK_SHAPES text

TEST(ChunkShapesText, ListsRunsAndBareEdgesGiveRectilinear) {
    const ChunkGrid g =
        ChunkGrid::parse_chunk_shapes("[[31,28,31,30],[[64,2],128],256]", {120, 256, 500}, "CS");
    EXPECT_EQ(g.kind(), GridKind::Rectilinear);
    EXPECT_EQ(g.grid_shape(), (Shape{4, 3, 2}));
    EXPECT_EQ(g.chunk_origin({3, 2, 1}), (Shape{90, 128, 256}));
    EXPECT_EQ(g.chunk_shape({1, 1, 1}), (Shape{28, 64, 256}));
    EXPECT_EQ(g.to_json()["configuration"]["chunk_shapes"],
              json::parse("[[31,28,31,30],[[64,2],128],[[256,2]]]"));
}

TEST(ChunkShapesText, AllBareIntegersGiveRegular) {
    const ChunkGrid g = ChunkGrid::parse_chunk_shapes(" [10, 20] ", {45, 100}, "CS");
    EXPECT_EQ(g.kind(), GridKind::Regular);
    EXPECT_EQ(g.grid_shape(), (Shape{5, 5}));
    EXPECT_EQ(g.to_json(), json::parse(R"({"name":"regular",
                                           "configuration":{"chunk_shape":[10,20]}})"));
}

TEST(ChunkShapesText, EmptyListForZeroD) {
    const ChunkGrid g = ChunkGrid::parse_chunk_shapes("[]", {}, "CS");
    EXPECT_EQ(g.rank(), 0u);
    EXPECT_EQ(g.kind(), GridKind::Regular);
    EXPECT_NE(chunk_shapes_error("[1]", {}).find("has 1 entries"), std::string::npos);
}

TEST(ChunkShapesText, PadLeadingGivesMissingLeadingAxesEdgeOne) {
    const ChunkGrid g = ChunkGrid::parse_chunk_shapes("[[10,6],24]", {3, 16, 24}, "CS", true);
    EXPECT_EQ(g.kind(), GridKind::Rectilinear);
    EXPECT_EQ(g.grid_shape(), (Shape{3, 2, 1}));
    EXPECT_EQ(g.chunk_shape({2, 1, 0}), (Shape{1, 6, 24}));
    const ChunkGrid r = ChunkGrid::parse_chunk_shapes("[8,12]", {3, 16, 24}, "CS", true);
    EXPECT_EQ(r.kind(), GridKind::Regular);
    EXPECT_EQ(r.to_json()["configuration"]["chunk_shape"], json::parse("[1,8,12]"));
    // Strict by default (zarr.json's rule); too many or no entries refused either way.
    EXPECT_NE(chunk_shapes_error("[8,12]", {3, 16, 24}).find("one per array axis"),
              std::string::npos);
    for (const char* bad : {"[1,8,12,4]", "[]"}) {
        try {
            ChunkGrid::parse_chunk_shapes(bad, {3, 16, 24}, "CS", true);
            ADD_FAILURE() << bad << " accepted";
        } catch (const FormatError& e) {
            EXPECT_NE(std::string(e.what()).find("1 to 3"), std::string::npos) << e.what();
        }
    }
}

TEST(ChunkShapesText, SameGrammarAsRectilinearChunkShapes) {
    const char* entries = "[[[73,5]],[9,9],36]";
    const Shape shape{365, 18, 36};
    const json grid = {
        {"name", "rectilinear"},
        {"configuration", {{"kind", "inline"}, {"chunk_shapes", json::parse(entries)}}}};
    EXPECT_EQ(ChunkGrid::parse_chunk_shapes(entries, shape, "CS").to_json(),
              ChunkGrid::parse(grid, shape, "zarr.json").to_json());
}

TEST(ChunkShapesText, MalformedRefusedNamingAxis) {
    struct Case {
        const char* text;
        Shape shape;
        std::vector<std::string> expect;
    };
    const std::vector<Case> cases = {
        {"[[10,10],20", {50, 20}, {"CS: invalid JSON", "one entry per array axis"}},
        {"{\"a\": 1}", {50, 20}, {"CS: expected a JSON list"}},
        {"[[10,5],20]", {50, 20}, {"CS: axis[0]", "sum to 15, short of the array length 50"}},
        {"[0,20]", {50, 20}, {"CS: axis[0]", ">= 1"}},
        {"[20]", {50, 20}, {"has 1 entries", "(2 axes)"}},
        {"[2.5,20]", {50, 20}, {"axis[0]", "expected an integer"}},
        {"[[[10,0]],20]", {50, 20}, {"axis[0][0][1]", "run count must be >= 1"}},
        {"[[10,[1,2,3]],20]", {50, 20}, {"axis[0][1]", "[edge, count] pair"}},
        {"[-3,20]", {50, 20}, {"axis[0]", ">= 1"}},
        {"[\"ten\",20]", {50, 20}, {"axis[0]", "expected an integer or a list"}},
    };
    for (const auto& c : cases) {
        const std::string msg = chunk_shapes_error(c.text, c.shape);
        for (const auto& s : c.expect)
            EXPECT_NE(msg.find(s), std::string::npos) << c.text << " -> " << msg;
    }
}

// ------------------------------------------------------------------ ArrayBuilder

TEST(ArrayBuilder, RegularZstdDocument) {
    const ArrayMetadata m =
        ArrayBuilder({100, 80}, u16()).regular_chunk_shape({32, 40}).zstd(3).build();
    const json expected = {
        {"zarr_format", 3},
        {"node_type", "array"},
        {"shape", {100, 80}},
        {"data_type", "uint16"},
        {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", {32, 40}}}}}},
        {"chunk_key_encoding", kKeyEncoding},
        {"fill_value", 0},
        {"codecs",
         json::array({kBytesLE,
                      {{"name", "zstd"}, {"configuration", {{"level", 3}, {"checksum", false}}}}})},
        {"attributes", json::object()}};
    EXPECT_EQ(to_json(m), expected);
    EXPECT_EQ(m.codecs_json, expected["codecs"]);
    EXPECT_EQ(m.codec_names(), (std::vector<std::string>{"bytes", "zstd"}));
    EXPECT_EQ(to_json(parse_array_metadata(to_json(m), "again")), expected);
}

TEST(ArrayBuilder, FiltersComeFirstInsideTheShard) {
    const json bitround = {{"name", "numcodecs.bitround"}, {"configuration", {{"keepbits", 7}}}};
    const json zstd = {{"name", "zstd"}, {"configuration", {{"level", 3}, {"checksum", false}}}};
    const DataType f32 = data_type_from_name("float32");
    const json plain = to_json(ArrayBuilder({40, 40}, f32)
                                   .regular_chunk_shape({20, 20})
                                   .zstd(3)
                                   .filter("numcodecs.bitround", {{"keepbits", 7}})
                                   .build())["codecs"];
    EXPECT_EQ(plain, json::array({bitround, kBytesLE, zstd}));
    const json sharded = to_json(ArrayBuilder({40, 40}, f32)
                                     .regular_chunk_shape({20, 20})
                                     .sharding(ShardingCodecBuilder({10, 10}))
                                     .filter("numcodecs.bitround", {{"keepbits", 7}})
                                     .build())["codecs"];
    ASSERT_EQ(sharded.size(), 1u);
    EXPECT_EQ(sharded[0]["configuration"]["codecs"], json::array({bitround, kBytesLE}));
    // A filter the data type cannot take is a codec error naming it.
    const Failure f = build_error(ArrayBuilder({4}, u16())
                                      .regular_chunk_shape({4})
                                      .filter("numcodecs.bitround", {{"keepbits", 3}}));
    EXPECT_EQ(f.part, BuildPart::Codecs);
    EXPECT_NE(f.message.find("numcodecs.bitround"), std::string::npos) << f.message;
}

TEST(ArrayBuilder, ShardedRectilinearFromText) {
    const ArrayMetadata m = ArrayBuilder({80, 90}, u16())
                                .chunk_shapes_text("[[32,32,16],[[30,3]]]")
                                .sharding(ShardingCodecBuilder({16, 15}))
                                .gzip(6)
                                .dimension_names(std::vector<std::string>{"y", "x"})
                                .attributes({{"units", "m"}})
                                .fill_value({0x34, 0x12})
                                .build();
    const json doc = to_json(m);
    EXPECT_EQ(doc["chunk_grid"]["configuration"]["chunk_shapes"],
              json::parse("[[[32,2],16],[[30,3]]]"));
    const json expected_codecs = json::array(
        {{{"name", "sharding_indexed"},
          {"configuration",
           {{"chunk_shape", {16, 15}},
            {"codecs",
             json::array({kBytesLE, {{"name", "gzip"}, {"configuration", {{"level", 6}}}}})},
            {"index_codecs", json::array({kBytesLE, {{"name", "crc32c"}}})},
            {"index_location", "end"}}}}});
    EXPECT_EQ(doc["codecs"], expected_codecs);
    EXPECT_EQ(doc["fill_value"], 0x1234);
    EXPECT_EQ(doc["dimension_names"], json::parse(R"(["y","x"])"));
    EXPECT_EQ(doc["attributes"], json::parse(R"({"units":"m"})"));
    const auto layout = m.shard_layout();
    ASSERT_TRUE(layout.has_value());
    EXPECT_EQ(layout->inner_chunk_shape, (Shape{16, 15}));
    EXPECT_EQ(layout->inner_codec_names, (std::vector<std::string>{"bytes", "gzip"}));
}

TEST(ArrayBuilder, ShardIndexAtStartWithoutCrc) {
    const ArrayMetadata m =
        ArrayBuilder({8, 8}, u16())
            .regular_chunk_shape({8, 8})
            .sharding(ShardingCodecBuilder({4, 4}).index_at_end(false).index_crc32c(false))
            .build();
    const auto layout = m.shard_layout();
    ASSERT_TRUE(layout.has_value());
    EXPECT_FALSE(layout->index_at_end);
    EXPECT_EQ(layout->index_codec_names, (std::vector<std::string>{"bytes"}));
}

TEST(ArrayBuilder, BloscTypesizeDefaultsToElementSizeAndBigEndian) {
    const ArrayMetadata m = ArrayBuilder({10}, data_type_from_name("complex64"))
                                .regular_chunk_shape({5})
                                .bytes_endian("big")
                                .blosc("zstd", 5, "shuffle")
                                .crc32c()
                                .build();
    const json codecs = to_json(m)["codecs"];
    ASSERT_EQ(codecs.size(), 3u);
    EXPECT_EQ(codecs[0]["configuration"]["endian"], "big");
    EXPECT_EQ(codecs[1]["configuration"]["typesize"], 4); // one float32 component
    EXPECT_EQ(codecs[1]["configuration"]["cname"], "zstd");
    EXPECT_EQ(codecs[2], json::parse(R"({"name":"crc32c"})"));
}

TEST(ArrayBuilder, PartitionsAndNullFill) {
    const ArrayMetadata m = ArrayBuilder({25, 4}, u16())
                                .chunk_partitions({AxisPartition::from_runs({{10, 2}, {5, 1}}),
                                                   AxisPartition::regular(4, 4, true)})
                                .fill_value_null()
                                .build();
    EXPECT_EQ(m.grid.kind(), GridKind::Rectilinear);
    EXPECT_EQ(m.grid.grid_shape(), (Shape{3, 1}));
    EXPECT_TRUE(m.fill_value_null);
    EXPECT_EQ(m.fill_value, (Bytes{0, 0}));
    EXPECT_TRUE(to_json(m)["fill_value"].is_null());
    EXPECT_EQ(to_json(m)["chunk_grid"]["configuration"]["chunk_shapes"],
              json::parse("[[[10,2],5],[4]]"));
}

TEST(ArrayBuilder, ZeroDArray) {
    const ArrayMetadata m = ArrayBuilder({}, u16()).build();
    EXPECT_EQ(m.rank(), 0u);
    EXPECT_EQ(to_json(m)["chunk_grid"]["configuration"]["chunk_shape"], json::array());
    EXPECT_EQ(build_error(ArrayBuilder({}, u16()).sharding(ShardingCodecBuilder(Shape{}))).message,
              "a 0-d array cannot be sharded");
}

TEST(ArrayBuilder, ErrorsNameThePart) {
    struct Case {
        const char* label;
        ArrayBuilder builder;
        BuildPart part;
        std::string expect;
    };
    const auto base = [] { return ArrayBuilder({50, 20}, u16()); };
    std::vector<Case> cases;
    cases.push_back({"no grid", base(), BuildPart::ChunkGrid, "no chunk grid"});
    cases.push_back({"text", base().chunk_shapes_text("[[10,5],20]"), BuildPart::ChunkGrid,
                     "chunk shapes: axis[0]: edges of axis 0 sum to 15"});
    cases.push_back({"regular rank", base().regular_chunk_shape({10}), BuildPart::ChunkGrid,
                     "chunk shape rank 1 differs from array rank 2"});
    cases.push_back({"partition short",
                     base().chunk_partitions(
                         {AxisPartition::from_runs({{10, 4}}), AxisPartition::regular(20, 20)}),
                     BuildPart::ChunkGrid, "the edges of axis 0 sum to 40, less than"});
    cases.push_back({"too large",
                     ArrayBuilder({1u << 20, 1u << 20}, data_type_from_name("float64"))
                         .regular_chunk_shape({1u << 20, 1u << 20}),
                     BuildPart::ChunkGrid, "above the limit"});
    cases.push_back({"shard divides",
                     base().regular_chunk_shape({20, 20}).sharding(ShardingCodecBuilder({7, 7})),
                     BuildPart::Sharding,
                     "the inner chunk edge 7 of axis 0 does not divide the shard edge 20"});
    cases.push_back(
        {"rect shard divides",
         base().chunk_shapes_text("[[32,16,2],20]").sharding(ShardingCodecBuilder({16, 10})),
         BuildPart::Sharding, "edge 16 of axis 0 does not divide the shard edge 2"});
    cases.push_back({"inner rank",
                     base().regular_chunk_shape({10, 10}).sharding(ShardingCodecBuilder({5})),
                     BuildPart::Sharding, "the inner chunk shape has 1 axes"});
    cases.push_back({"inner zero",
                     base().regular_chunk_shape({10, 10}).sharding(ShardingCodecBuilder({5, 0})),
                     BuildPart::Sharding, "inner chunk edges must be >= 1"});
    cases.push_back({"fill size", base().regular_chunk_shape({10, 10}).fill_value({1}),
                     BuildPart::FillValue, "fill value: expected 2 bytes for uint16"});
    cases.push_back(
        {"names",
         base().regular_chunk_shape({10, 10}).dimension_names(std::vector<std::string>{"x"}),
         BuildPart::DimensionNames, "dimension names: expected 2, got 1"});
    cases.push_back({"attributes", base().regular_chunk_shape({10, 10}).attributes(json::array()),
                     BuildPart::Attributes, "attributes: expected an object"});
    cases.push_back({"codec config", base().regular_chunk_shape({10, 10}).gzip(42),
                     BuildPart::Codecs, "t codecs[1]"});
    cases.push_back({"codec name", base().regular_chunk_shape({10, 10}).compressor("lzma"),
                     BuildPart::Codecs, "unknown codec \"lzma\""});
    for (const auto& c : cases) {
        const Failure f = build_error(c.builder);
        EXPECT_EQ(static_cast<int>(f.part), static_cast<int>(c.part))
            << c.label << ": " << f.message;
        EXPECT_NE(f.message.find(c.expect), std::string::npos) << c.label << ": " << f.message;
    }
}

TEST(ArrayBuilder, BuiltShardedArrayWritesAndReads) {
    auto store = std::make_shared<MemoryStore>();
    const ArrayMetadata m = ArrayBuilder({12, 10}, u16())
                                .chunk_shapes_text("[[8,4],10]")
                                .sharding(ShardingCodecBuilder({4, 5}))
                                .zstd(1)
                                .build();
    {
        auto a = Array::create(store, "a", m);
        std::vector<uint16_t> v(120);
        std::iota(v.begin(), v.end(), uint16_t{100});
        a->write(Selection::all({12, 10}), v.data());
        a->flush();
    }
    EXPECT_TRUE(store->get("a/c/0/0").has_value());
    EXPECT_TRUE(store->get("a/c/1/0").has_value());
    const auto back = Array::open(store, "a");
    EXPECT_EQ(to_json(back->metadata()), to_json(m));
    std::vector<uint16_t> got(120);
    back->read(Selection::all({12, 10}), got.data());
    for (size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(got[i], 100 + i) << i;
}

}  // namespace ut_metadata_test_builder
