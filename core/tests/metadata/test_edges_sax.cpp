// parse_node_metadata_text (one pass, edge lists straight into runs) against
// the DOM path (parse_json_text + parse_array_metadata): same grids, same
// errors with the same messages.
#include "test_util.hpp"
#include "zarr3/metadata.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_metadata_test_edges_sax {

using namespace zarr3;
using nlohmann::json;

namespace {

const std::string kWhere = "s/a/zarr.json";

// An array document whose chunk_grid member is `grid` (raw JSON text).
std::string doc(const std::string& shape, const std::string& grid, const std::string& extra = "") {
    return R"({"zarr_format": 3, "node_type": "array", "shape": )" + shape +
           R"(, "data_type": "uint8", "chunk_grid": )" + grid +
           R"(, "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
               "codecs": [{"name": "bytes"}])" +
           extra + "}";
}

std::string rect(const std::string& shapes) {
    return R"({"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": )" +
           shapes + "}}";
}

// Runs of every axis, as (edge, count) pairs, plus the length.
std::vector<std::vector<uint64_t>> runs_of(const ChunkGrid& g) {
    std::vector<std::vector<uint64_t>> out;
    for (size_t i = 0; i < g.rank(); ++i) {
        std::vector<uint64_t> v{g.axis(i).length(), g.axis(i).is_regular()};
        for (const auto& r : g.axis(i).runs())
            v.insert(v.end(), {r.start_element, r.start_chunk, r.edge, r.count});
        out.push_back(v);
    }
    return out;
}

struct Outcome {
    std::string error; // empty on success
    std::optional<ArrayMetadata> meta;
};

Outcome dom_path(const std::string& text) {
    try {
        const json j = parse_json_text(text, kWhere);
        return {"", parse_array_metadata(j, kWhere)};
    } catch (const FormatError& e) {
        return {e.what(), std::nullopt};
    }
}

Outcome one_pass(const std::string& text) {
    try {
        auto node = parse_node_metadata_text(text, kWhere);
        if (node.type != NodeType::Array || !node.array) return {"NOT AN ARRAY", std::nullopt};
        return {"", std::move(node.array)};
    } catch (const FormatError& e) {
        return {e.what(), std::nullopt};
    }
}

// Both paths agree; returns the one-pass outcome.
Outcome same(const std::string& text) {
    const Outcome a = dom_path(text), b = one_pass(text);
    EXPECT_EQ(a.error, b.error) << text.substr(0, 300);
    EXPECT_EQ(a.meta.has_value(), b.meta.has_value());
    if (a.meta && b.meta) {
        EXPECT_EQ(a.meta->shape, b.meta->shape);
        EXPECT_EQ(a.meta->grid.kind(), b.meta->grid.kind());
        EXPECT_EQ(runs_of(a.meta->grid), runs_of(b.meta->grid)) << text.substr(0, 300);
        EXPECT_EQ(a.meta->grid.to_json(), b.meta->grid.to_json());
        EXPECT_EQ(to_json(*a.meta), to_json(*b.meta));
    }
    return b;
}

std::string bare_list(size_t n, uint64_t base = 1) {
    std::string s = "[";
    for (size_t i = 0; i < n; ++i)
        s += (i ? "," : "") + std::to_string(base + i % 3);
    return s + "]";
}

uint64_t bare_sum(size_t n, uint64_t base = 1) {
    uint64_t t = 0;
    for (size_t i = 0; i < n; ++i)
        t += base + i % 3;
    return t;
}

} // namespace

TEST(EdgesOnePass, LongBareListBecomesRuns) {
    const size_t n = 20000;
    const uint64_t len = bare_sum(n);
    const auto out = same(doc("[" + std::to_string(len) + "]", rect("[" + bare_list(n) + "]")));
    ASSERT_TRUE(out.meta) << out.error;
    const AxisPartition& a = out.meta->grid.axis(0);
    EXPECT_EQ(a.num_chunks(), n);
    EXPECT_EQ(a.runs().size(), n); // 1,2,3,1,2,3: no two equal neighbours
    EXPECT_EQ(a.chunk_start(3), 6u);
    EXPECT_EQ(a.chunk_edge(n - 1), 1 + (n - 1) % 3);
    EXPECT_EQ(a.extent(), len);
}

TEST(EdgesOnePass, RepeatedEdgesMergeIntoOneRun) {
    std::string list = "[";
    for (int i = 0; i < 1000; ++i)
        list += std::string(i ? "," : "") + "7";
    list += "]";
    const auto out = same(doc("[7000, 5]", rect("[" + list + ", 5]")));
    ASSERT_TRUE(out.meta) << out.error;
    ASSERT_EQ(out.meta->grid.axis(0).runs().size(), 1u);
    EXPECT_EQ(out.meta->grid.axis(0).runs()[0].count, 1000u);
    EXPECT_EQ(out.meta->grid.to_json()["configuration"]["chunk_shapes"][0],
              json::parse("[[7, 1000]]"));
}

TEST(EdgesOnePass, MixedBareAndPairsMatchTheDomPath) {
    for (const char* shapes :
         {"[[10, [20, 3], 5, 5, [5, 2], 1]]", "[[[1, 1000000000000]]]", "[[3, 3, [3, 4]]]",
          "[[[4, 2], 4, 4]]", "[4, [2, 2]]", "[[2, 2], 4]", "[[[2, 2]], [1, [1, 3]]]"}) {
        const json shapes_j = json::parse(shapes);
        uint64_t len0 = 0;
        const json& a0 = shapes_j[0];
        if (a0.is_number())
            len0 = 8;
        else
            for (const auto& e : a0)
                len0 +=
                    e.is_array() ? e[0].get<uint64_t>() * e[1].get<uint64_t>() : e.get<uint64_t>();
        const std::string shape = shapes_j.size() == 1 ? "[" + std::to_string(len0) + "]"
                                                       : "[" + std::to_string(len0) + ", 4]";
        const auto out = same(doc(shape, rect(shapes)));
        EXPECT_TRUE(out.meta) << shapes << ": " << out.error;
    }
    // The [[1, 10^12]] axis stays one run.
    const auto big = same(doc("[1000000000000]", rect("[[[1, 1000000000000]]]")));
    ASSERT_TRUE(big.meta);
    EXPECT_EQ(big.meta->grid.axis(0).runs().size(), 1u);
    EXPECT_EQ(big.meta->grid.axis(0).num_chunks(), 1000000000000ull);
}

TEST(EdgesOnePass, ErrorsAfterManyBareEdgesNameTheSameMember) {
    const std::string many = bare_list(5000);
    const std::string len = "[" + std::to_string(bare_sum(5000) + 100) + ", 10]";
    struct Case {
        std::string bad;
        std::string expect;
    } cases[] = {
        {"0", "chunk_shapes[0][5000]: chunk edge must be >= 1"},
        {"-3", "chunk_shapes[0][5000]"},
        {"2.0", "chunk_shapes[0][5000]: expected an integer"},
        {"\"5\"", "chunk_shapes[0][5000]"},
        {"null", "chunk_shapes[0][5000]"},
        {"{\"a\": [1]}", "chunk_shapes[0][5000]"},
        {"[[1, 2]]", "chunk_shapes[0][5000]"},
        {"[5, 0]", "chunk_shapes[0][5000][1]: run count must be >= 1"},
        {"[5, 2, 1]", "chunk_shapes[0][5000]: expected an [edge, count] pair"},
        {"18446744073709551615", "chunk_shapes[0]: chunk grid extent overflows 64 bits"},
        {"100000000000000000000", "chunk_shapes[0][5000]: expected an integer"},
    };
    for (const auto& c : cases) {
        const std::string list = many.substr(0, many.size() - 1) + ", " + c.bad + ", 100]";
        const auto out = same(doc(len, rect("[" + list + ", 10]")));
        EXPECT_FALSE(out.meta) << c.bad;
        EXPECT_NE(out.error.find(kWhere + ": "), std::string::npos) << out.error;
        EXPECT_NE(out.error.find(c.expect), std::string::npos) << c.bad << " -> " << out.error;
    }
    // A list that falls short of the length, and an empty one.
    auto out = same(doc("[100000]", rect("[" + many + "]")));
    EXPECT_NE(out.error.find("chunk_shapes[0]: edges of axis 0 sum to " +
                             std::to_string(bare_sum(5000)) + ", short of the array length"),
              std::string::npos)
        << out.error;
    out = same(doc("[5]", rect("[[]]")));
    EXPECT_NE(out.error.find("sum to 0, short of the array length 5"), std::string::npos)
        << out.error;
    out = same(doc("[0]", rect("[[]]")));
    EXPECT_TRUE(out.meta) << out.error;
}

TEST(EdgesOnePass, OnlyTheTopLevelChunkShapesAreCollected) {
    // Edge lists elsewhere (attributes, an ignorable member, the draft
    // "rectangular" grid) stay in the DOM as written.
    const std::string list = bare_list(300);
    const std::string len = std::to_string(bare_sum(300));
    auto out = same(doc("[" + len + "]", rect("[" + list + "]"),
                        R"(, "attributes": {"chunk_grid": {"configuration": {"chunk_shapes": [)" +
                            list + "]}}}"));
    ASSERT_TRUE(out.meta) << out.error;
    EXPECT_EQ(out.meta->attributes["chunk_grid"]["configuration"]["chunk_shapes"][0].size(), 300u);
    out = same(doc("[" + len + "]",
                   R"({"name": "rectangular", "configuration": {"chunk_shape": [)" + list + "]}}"));
    ASSERT_TRUE(out.meta) << out.error;
    EXPECT_EQ(out.meta->grid.axis(0).num_chunks(), 300u);
    // A regular grid given a list: the message shows the list as written.
    out = same(doc("[10]", R"({"name": "regular", "configuration": {"chunk_shape": [[1, 2]]}})"));
    EXPECT_NE(out.error.find("[1,2]"), std::string::npos) << out.error;
}

TEST(EdgesOnePass, DuplicateKeysKeepTheLastAsTheDomDoes) {
    const std::string first = rect("[" + bare_list(50) + "]");
    const std::string second = rect("[[5, 5]]");
    const std::string text = R"({"zarr_format": 3, "node_type": "array", "shape": [10],
        "data_type": "uint8", "chunk_grid": )" +
                             first + R"(, "chunk_grid": )" + second +
                             R"(, "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
        "codecs": [{"name": "bytes"}]})";
    const auto out = same(text);
    ASSERT_TRUE(out.meta) << out.error;
    EXPECT_EQ(out.meta->grid.axis(0).num_chunks(), 2u);
    // Duplicate chunk_shapes inside one configuration.
    const std::string dup = R"({"name": "rectilinear", "configuration": {"kind": "inline",
        "chunk_shapes": [[1, 2, 3]], "chunk_shapes": [[4, 4, 2]]}})";
    const auto out2 = same(doc("[10]", dup));
    ASSERT_TRUE(out2.meta) << out2.error;
    EXPECT_EQ(out2.meta->grid.axis(0).chunk_edge(0), 4u);
}

TEST(EdgesOnePass, GroupsComeBackAsWritten) {
    const std::string text =
        R"({"zarr_format": 3, "node_type": "group", "attributes": {"a": [1, 2, 3]},
            "chunk_grid": {"must_understand": false,
                           "configuration": {"chunk_shapes": [[1, 2, 3]]}}})";
    const auto node = parse_node_metadata_text(text, kWhere);
    EXPECT_EQ(node.type, NodeType::Group);
    EXPECT_FALSE(node.array);
    EXPECT_EQ(node.group, json::parse(text));
    EXPECT_EQ(parse_group_metadata(node.group, kWhere).extra_members["chunk_grid"], json::parse(R"(
        {"must_understand": false, "configuration": {"chunk_shapes": [[1, 2, 3]]}})"));
}

TEST(EdgesOnePass, MalformedTextGivesTheSameErrors) {
    const std::string good = doc("[6]", rect("[[1, 2, 3]]"));
    for (const std::string& text :
         {good.substr(0, good.size() - 1), good.substr(0, 120), std::string("[1, 2"),
          std::string(600, '[') + std::string(600, ']'),
          doc("[6]", rect("[[1, 2, " + std::string(600, '[') + std::string(600, ']') + "]]")),
          std::string("{\"zarr_format\": 3, \"node_type\": \"array\"}"), good + "x"}) {
        const Outcome a = dom_path(text), b = one_pass(text);
        EXPECT_FALSE(a.error.empty()) << text.substr(0, 80);
        EXPECT_EQ(a.error, b.error) << text.substr(0, 80);
    }
}

TEST(EdgesOnePass, ConformanceCorpusParsesTheSame) {
    size_t arrays = 0;
    for (const auto& e :
         std::filesystem::recursive_directory_iterator(testutil::conformance_dir())) {
        if (e.path().filename() != "zarr.json") continue;
        std::ifstream f(e.path(), std::ios::binary);
        std::stringstream ss;
        ss << f.rdbuf();
        const std::string text = ss.str();
        const json j = json::parse(text, nullptr, false);
        if (j.is_discarded() || !j.is_object() || j.value("node_type", "") != "array") continue;
        same(text);
        ++arrays;
    }
    EXPECT_GT(arrays, 5u);
}

}  // namespace ut_metadata_test_edges_sax
