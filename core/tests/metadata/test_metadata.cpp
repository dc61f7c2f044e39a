// zarr.json parsing: the conformance corpus parses, malformed documents are refused with
// messages naming the file and the member.
#include "test_util.hpp"
#include "zarr3/metadata.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_metadata_test_metadata {

using namespace zarr3;
using nlohmann::json;

namespace {

const char* kBase = R"({
  "zarr_format": 3, "node_type": "array", "shape": [45, 100], "data_type": "uint16",
  "chunk_grid": {"name": "rectilinear",
                 "configuration": {"kind": "inline", "chunk_shapes": [[10, 20, 30], [[40, 3]]]}},
  "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
  "fill_value": 7,
  "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
  "attributes": {"units": "m"},
  "dimension_names": ["y", null]
})";

std::string slurp(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

std::string error_of(const std::string& text, const std::string& where) {
    try {
        const json j = parse_json_text(text, where);
        if (node_type_of(j, where) == NodeType::Array)
            parse_array_metadata(j, where);
        else
            parse_group_metadata(j, where);
    } catch (const FormatError& e) {
        return e.what();
    } catch (const std::exception& e) {
        return std::string("WRONG EXCEPTION TYPE: ") + e.what();
    }
    return "NO EXCEPTION";
}

} // namespace

TEST(Metadata, ParsesBaseAndRoundTrips) {
    const ArrayMetadata m =
        parse_array_metadata(parse_json_text(kBase, "a/zarr.json"), "a/zarr.json");
    EXPECT_EQ(m.shape, (Shape{45, 100}));
    EXPECT_EQ(m.dtype.name, "uint16");
    EXPECT_EQ(m.fill_value, (Bytes{7, 0}));
    EXPECT_EQ(m.grid.grid_shape(), (Shape{3, 3}));
    EXPECT_EQ(m.key_encoding.key({2, 1}), "c/2/1");
    ASSERT_EQ(m.dimension_names.size(), 2u);
    EXPECT_EQ(m.dimension_names[0], std::optional<std::string>("y"));
    EXPECT_EQ(m.dimension_names[1], std::nullopt);
    EXPECT_EQ(m.attributes["units"], "m");
    EXPECT_EQ(m.chunk_spec({2, 1}).shape, (Shape{30, 40}));
    EXPECT_EQ(m.chunk_spec({2, 1}).fill_value, (Bytes{7, 0}));

    const json out = to_json(m);
    EXPECT_EQ(out["zarr_format"], 3);
    EXPECT_EQ(out["node_type"], "array");
    EXPECT_EQ(out["fill_value"], 7);
    EXPECT_EQ(out["chunk_grid"]["configuration"]["chunk_shapes"],
              json::parse("[[10,20,30],[[40,3]]]"));
    EXPECT_EQ(out["dimension_names"], json::parse(R"(["y", null])"));
    EXPECT_FALSE(out.contains("storage_transformers"));
    const ArrayMetadata again = parse_array_metadata(out, "b");
    EXPECT_EQ(to_json(again), out);
}

TEST(Metadata, ConformanceStoresParse) {
    namespace fs = std::filesystem;
    size_t arrays = 0, groups = 0;
    for (const auto& e : fs::recursive_directory_iterator(testutil::conformance_dir())) {
        if (e.path().filename() != "zarr.json") continue;
        const std::string where = e.path().string();
        const json j = parse_json_text(slurp(e.path()), where);
        if (node_type_of(j, where) == NodeType::Array) {
            const ArrayMetadata m = parse_array_metadata(j, where);
            EXPECT_EQ(m.rank(), j["shape"].size()) << where;
            EXPECT_EQ(m.grid.rank(), m.rank()) << where;
            EXPECT_EQ(m.fill_value.size(), m.dtype.size) << where;
            // Serialising and parsing again gives the same document.
            const json out = to_json(m);
            EXPECT_EQ(to_json(parse_array_metadata(out, where)), out) << where;
            EXPECT_EQ(out["chunk_grid"], j["chunk_grid"]) << where;
            EXPECT_EQ(out["fill_value"], j["fill_value"]) << where;
            ++arrays;
        } else {
            const GroupMetadata g = parse_group_metadata(j, where);
            EXPECT_EQ(to_json(g)["attributes"], j["attributes"]) << where;
            ++groups;
        }
    }
    EXPECT_GE(arrays, 20u);
    EXPECT_GE(groups, 10u);
}

TEST(Metadata, SpecificConformanceValues) {
    const std::string p =
        testutil::conformance_dir() + "/rect_3d_monthly_f32/store.zarr/t2m/zarr.json";
    const ArrayMetadata m = parse_array_metadata(parse_json_text(slurp(p), p), p);
    EXPECT_EQ(m.grid.grid_shape(), (Shape{12, 2, 3}));
    EXPECT_EQ(m.grid.chunk_origin({7, 1, 2}), (Shape{212, 9, 24}));
    EXPECT_EQ(m.grid.chunk_shape({7, 1, 2}), (Shape{31, 9, 12}));
    EXPECT_EQ(m.fill_value, (Bytes{0x00, 0x00, 0xc0, 0x7f}));
    const std::string u = testutil::conformance_dir() + "/dtypes/store.zarr/u64/zarr.json";
    const ArrayMetadata mu = parse_array_metadata(parse_json_text(slurp(u), u), u);
    EXPECT_EQ(mu.fill_value, Bytes(8, 0xff));
}

struct Malformed {
    const char* label;
    std::function<void(json&)> mutate; // applied to kBase
    std::vector<std::string> expect;   // substrings of the message (besides the file name)
};

TEST(Metadata, MalformedRefused) {
    const auto cs = [](json& j) -> json& {
        return j["chunk_grid"]["configuration"]["chunk_shapes"];
    };
    const std::vector<Malformed> cases = {
        {"zero edge", [&](json& j) { cs(j)[0][1] = 0; }, {"chunk_shapes[0][1]", ">= 1"}},
        {"negative edge", [&](json& j) { cs(j)[0][0] = -10; }, {"chunk_shapes[0][0]", ">= 1"}},
        {"rle count 0",
         [&](json& j) { cs(j)[1][0][1] = 0; },
         {"chunk_shapes[1][0][1]", "run count must be >= 1"}},
        {"edges short",
         [&](json& j) { cs(j)[1] = json::parse("[[40,2]]"); },
         {"chunk_shapes[1]", "sum to 80, short of the array length 100"}},
        {"chunk_shapes rank",
         [&](json& j) { cs(j).erase(1); },
         {"chunk_shapes", "one per array axis"}},
        {"regular rank",
         [](json& j) {
             j["chunk_grid"] =
                 json::parse(R"({"name":"regular","configuration":{"chunk_shape":[5,5,5]}})");
         },
         {"chunk_grid.configuration.chunk_shape", "one per array axis"}},
        {"unknown grid",
         [](json& j) { j["chunk_grid"]["name"] = "hexagonal"; },
         {"chunk_grid.name", "hexagonal"}},
        {"missing kind",
         [](json& j) { j["chunk_grid"]["configuration"].erase("kind"); },
         {"chunk_grid.configuration.kind", "missing"}},
        {"kind not inline",
         [](json& j) { j["chunk_grid"]["configuration"]["kind"] = "external"; },
         {"chunk_grid.configuration.kind", "inline"}},
        {"unknown codec",
         [](json& j) {
             j["codecs"].push_back({{"name", "lzma9000"}});
         },
         {"lzma9000"}},
        {"unknown data type",
         [](json& j) { j["data_type"] = "bfloat16"; },
         {"data_type", "\"bfloat16\""}},
        {"bad fill type", [](json& j) { j["fill_value"] = "seven"; }, {"fill_value", "integer"}},
        {"fill out of range",
         [](json& j) { j["fill_value"] = 65536; },
         {"fill_value", "out of range"}},
        {"shape negative",
         [](json& j) { j["shape"][0] = -45; },
         {"shape[0]", "non-negative integer"}},
        {"shape non-integer",
         [](json& j) { j["shape"][1] = 100.5; },
         {"shape[1]", "non-negative integer"}},
        {"sizes overflow",
         [&](json& j) { cs(j)[0] = json::parse("[[9223372036854775808, 4]]"); },
         {"chunk_shapes[0]", "overflows 64 bits"}},
        {"zarr_format 2", [](json& j) { j["zarr_format"] = 2; }, {"zarr_format", "v2"}},
        {"pre-final draft",
         [](json& j) { j["zarr_format"] = "https://purl.org/zarr/spec/protocol/core/3.0"; },
         {"zarr_format", "draft"}},
        {"missing node_type", [](json& j) { j.erase("node_type"); }, {"node_type", "missing"}},
        {"empty codecs", [](json& j) { j["codecs"] = json::array(); }, {"codecs", "non-empty"}},
        {"storage_transformers",
         [](json& j) { j["storage_transformers"] = json::parse(R"([{"name":"x"}])"); },
         {"storage_transformers", "not supported"}},
        {"dimension_names length",
         [](json& j) { j["dimension_names"] = json::parse(R"(["y"])"); },
         {"dimension_names", "one per axis"}},
        {"dimension_names type",
         [](json& j) { j["dimension_names"][1] = 3; },
         {"dimension_names[1]", "string or null"}},
        {"unknown member",
         [](json& j) {
             j["my_extension"] = {{"x", 1}};
         },
         {"my_extension", "must_understand"}},
        {"unknown member must_understand true",
         [](json& j) {
             j["my_extension"] = {{"must_understand", true}};
         },
         {"my_extension"}},
        {"huge chunk",
         [](json& j) {
             j["shape"] = {1048576, 1048576};
             j["data_type"] = "float64";
             j["fill_value"] = 0;
             j["chunk_grid"] = json::parse(
                 R"({"name":"regular","configuration":{"chunk_shape":[1048576,1048576]}})");
         },
         {"chunk_grid", "above the limit"}},
        {"float edge", [&](json& j) { cs(j)[0][0] = 1.5; }, {"chunk_shapes[0][0]", "integer"}},
        {"bad separator",
         [](json& j) { j["chunk_key_encoding"]["configuration"]["separator"] = "-"; },
         {"chunk_key_encoding.configuration.separator"}},
        {"missing fill_value", [](json& j) { j.erase("fill_value"); }, {"fill_value", "missing"}},
        {"missing chunk_key_encoding",
         [](json& j) { j.erase("chunk_key_encoding"); },
         {"chunk_key_encoding", "missing"}},
        {"attributes not object",
         [](json& j) { j["attributes"] = json::array(); },
         {"attributes", "object"}},
        {"node_type bogus", [](json& j) { j["node_type"] = "table"; }, {"node_type", "\"table\""}},
        {"rank too large",
         [](json& j) { j["shape"] = json(std::vector<int>(33, 1)); },
         {"shape", "rank 33"}},
        {"codec not object", [](json& j) { j["codecs"][0] = 5; }, {"codecs[0]"}},
    };
    ASSERT_GE(cases.size(), 25u);
    for (const auto& c : cases) {
        json j = json::parse(kBase);
        c.mutate(j);
        const std::string where = "/data/store.zarr/" + std::string(c.label) + "/zarr.json";
        const std::string msg = error_of(j.dump(), where);
        EXPECT_EQ(msg.rfind(where, 0), 0u) << c.label << ": " << msg;
        for (const auto& s : c.expect)
            EXPECT_NE(msg.find(s), std::string::npos) << c.label << ": " << msg;
    }
}

TEST(Metadata, TruncatedAndInvalidJson) {
    const std::string text = kBase;
    const std::string msg = error_of(text.substr(0, text.size() / 2), "t/zarr.json");
    EXPECT_EQ(msg.rfind("t/zarr.json: invalid JSON at byte ", 0), 0u) << msg;
    EXPECT_NE(error_of("{\"zarr_format\": 3,}", "u").find("invalid JSON"), std::string::npos);
    EXPECT_NE(error_of("", "e").find("invalid JSON"), std::string::npos);
    EXPECT_NE(error_of(std::string(100000, '['), "deep").find("nesting deeper"), std::string::npos);
    EXPECT_NE(error_of("[1,2]", "arr").find("arr: expected a JSON object"), std::string::npos);
}

TEST(Metadata, MustUnderstandFalseKept) {
    json j = json::parse(kBase);
    j["my_extension"] = {{"must_understand", false}, {"value", 42}};
    const ArrayMetadata m = parse_array_metadata(j, "w");
    EXPECT_EQ(m.extra_members["my_extension"]["value"], 42);
    EXPECT_EQ(to_json(m)["my_extension"]["value"], 42);
}

TEST(Metadata, StorageTransformersEmptyAndNoDimensionNames) {
    json j = json::parse(kBase);
    j["storage_transformers"] = json::array();
    j.erase("dimension_names");
    j.erase("attributes");
    const ArrayMetadata m = parse_array_metadata(j, "w");
    EXPECT_TRUE(m.dimension_names.empty());
    const json out = to_json(m);
    EXPECT_FALSE(out.contains("dimension_names"));
    EXPECT_EQ(out["attributes"], json::object());
}

TEST(Metadata, Groups) {
    const json j = json::parse(R"({"zarr_format":3,"node_type":"group","attributes":{"title":"t"},
        "consolidated_metadata":{"kind":"inline","must_understand":false,
            "metadata":{"a":{"zarr_format":3,"node_type":"group"},"a/b":{"zarr_format":3,"node_type":"group"}}}})");
    const GroupMetadata g = parse_group_metadata(j, "g");
    EXPECT_EQ(g.attributes["title"], "t");
    ASSERT_TRUE(g.consolidated.has_value());
    EXPECT_EQ(g.consolidated->size(), 2u);
    EXPECT_EQ(g.consolidated->at("a/b")["node_type"], "group");
    const json out = to_json(g);
    EXPECT_EQ(out["consolidated_metadata"]["metadata"]["a"]["node_type"], "group");
    EXPECT_EQ(out["consolidated_metadata"]["must_understand"], false);
    EXPECT_EQ(to_json(parse_group_metadata(out, "g2")), out);
    EXPECT_FALSE(parse_group_metadata(json::parse(R"({"zarr_format":3,"node_type":"group",
        "consolidated_metadata":null})"),
                                      "g")
                     .consolidated.has_value());
    EXPECT_NE(
        error_of(
            R"({"zarr_format":3,"node_type":"group","consolidated_metadata":{"kind":"x","metadata":{}}})",
            "grp")
            .find("grp: consolidated_metadata.kind"),
        std::string::npos);
    EXPECT_NE(error_of(R"({"zarr_format":3,"node_type":"group","foo":1})", "grp").find("grp: foo"),
              std::string::npos);
    EXPECT_THROW(parse_array_metadata(j, "g"), FormatError);
    EXPECT_THROW(parse_group_metadata(json::parse(kBase), "a"), FormatError);
}

namespace {
TEST(Metadata, MissingCodecsAsGdal310WritesReadsLittleEndianWithWarning) {
    auto j = json::parse(R"({"zarr_format": 3, "node_type": "array", "shape": [2, 2],
        "data_type": "int16", "fill_value": 0,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 2]}},
        "chunk_key_encoding": {"name": "default"}})");
    const auto m = parse_array_metadata(j, "gdal310.zarr/a/zarr.json");
    EXPECT_EQ(m.codecs.array_to_bytes().name(), "bytes");
    ASSERT_FALSE(m.warnings.empty());
    EXPECT_NE(m.warnings[0].find("no codecs member"), std::string::npos);
}
} // namespace

}  // namespace ut_metadata_test_metadata
