// Chunk grids: run-length axes against a naive expanded model, JSON forms, resize.
#include "zarr3/chunk_grid.hpp"

#include <chrono>
#include <gtest/gtest.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_array_test_chunk_grid {

using namespace zarr3;
using nlohmann::json;

namespace {

// Naive model: explicit edge list.
struct Naive {
    std::vector<uint64_t> edges;
    uint64_t start(size_t c) const {
        uint64_t s = 0;
        for (size_t i = 0; i < c; ++i)
            s += edges[i];
        return s;
    }
};

void check_against_naive(const AxisPartition& a, const Naive& n) {
    ASSERT_EQ(a.num_chunks(), n.edges.size());
    uint64_t total = 0;
    for (uint64_t e : n.edges)
        total += e;
    ASSERT_EQ(a.extent(), total);
    for (size_t c = 0; c < n.edges.size(); ++c) {
        const uint64_t first = n.start(c), last = first + n.edges[c] - 1;
        EXPECT_EQ(a.chunk_start(c), first) << c;
        EXPECT_EQ(a.chunk_edge(c), n.edges[c]) << c;
        EXPECT_EQ(a.chunk_index(first), c) << first;
        EXPECT_EQ(a.chunk_index(last), c) << last;
    }
    // Every element.
    size_t c = 0;
    for (uint64_t e = 0; e < total; ++e) {
        while (e >= n.start(c) + n.edges[c])
            ++c;
        ASSERT_EQ(a.chunk_index(e), c) << e;
    }
}

ChunkGrid parse(const std::string& text, const Shape& shape) {
    return ChunkGrid::parse(json::parse(text), shape, "g/zarr.json");
}

} // namespace

TEST(AxisPartition, MixedRunsMatchNaiveModel) {
    const auto a = AxisPartition::from_runs({{10, 5}, {5, 1}, {5, 2}, {7, 1}, {1, 3}, {20, 2}});
    Naive n{{10, 10, 10, 10, 10, 5, 5, 5, 7, 1, 1, 1, 20, 20}};
    check_against_naive(a, n);
    EXPECT_EQ(a.runs().size(), 5u); // 5,1 and 5,2 merged
    EXPECT_EQ(a.runs()[1].start_element, 50u);
    EXPECT_EQ(a.runs()[1].start_chunk, 5u);
    EXPECT_EQ(a.runs()[1].count, 3u);
    EXPECT_EQ(a.max_edge(), 20u);
    EXPECT_EQ(a.most_common_edge(), 10u);
    EXPECT_FALSE(a.is_regular());
    EXPECT_THROW(a.chunk_index(a.extent()), Error);
    EXPECT_THROW(a.chunk_start(a.num_chunks()), Error);
}

TEST(AxisPartition, RegularAxis) {
    const auto a = AxisPartition::regular(7, 45);
    EXPECT_TRUE(a.is_regular());
    EXPECT_EQ(a.num_chunks(), 7u);
    EXPECT_EQ(a.extent(), 49u);
    EXPECT_EQ(a.length(), 45u);
    check_against_naive(a, Naive{{7, 7, 7, 7, 7, 7, 7}});
    EXPECT_EQ(a.to_json(), json(7));
    EXPECT_EQ(AxisPartition::regular(5, 0).num_chunks(), 0u);
    EXPECT_EQ(AxisPartition::regular(5, 0).to_json(), json(5));
    EXPECT_EQ(AxisPartition::regular(5, 0).max_edge(), 5u);
    EXPECT_EQ(AxisPartition::regular(5, 10).num_chunks(), 2u);
    EXPECT_THROW(AxisPartition::regular(0, 10), Error);
}

TEST(AxisPartition, MostCommonEdgeTiesGoToLarger) {
    EXPECT_EQ(AxisPartition::from_runs({{3, 2}, {8, 2}}).most_common_edge(), 8u);
    EXPECT_EQ(AxisPartition::from_runs({{3, 3}, {8, 2}}).most_common_edge(), 3u);
    // Non-adjacent runs of the same edge add up.
    EXPECT_EQ(AxisPartition::from_runs({{3, 2}, {8, 3}, {3, 2}}).most_common_edge(), 3u);
}

TEST(AxisPartition, HugeAxisIsInstant) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto g = parse(R"({"name":"rectilinear","configuration":{"kind":"inline",
                             "chunk_shapes":[[[1,1000000000000]]]}})",
                         {1000000000000ull});
    const auto dt = std::chrono::steady_clock::now() - t0;
    EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(dt).count(), 100);
    const AxisPartition& a = g.axis(0);
    EXPECT_EQ(a.runs().size(), 1u);
    EXPECT_EQ(a.num_chunks(), 1000000000000ull);
    EXPECT_EQ(a.chunk_index(0), 0u);
    EXPECT_EQ(a.chunk_index(1), 1u);
    EXPECT_EQ(a.chunk_index(999999999999ull), 999999999999ull);
    EXPECT_EQ(a.chunk_start(999999999999ull), 999999999999ull);
    EXPECT_EQ(g.grid_shape(), Shape{1000000000000ull});
    EXPECT_EQ(g.to_json()["configuration"]["chunk_shapes"], json::parse("[[[1,1000000000000]]]"));
}

TEST(AxisPartition, ToJsonCompaction) {
    EXPECT_EQ(AxisPartition::from_runs({{10, 1}, {10, 1}, {10, 1}, {5, 1}}).to_json(),
              json::parse("[[10,3],5]"));
    EXPECT_EQ(AxisPartition::from_runs({{5, 1}}).to_json(), json::parse("[5]"));
    EXPECT_EQ(AxisPartition::from_runs({{40, 3}}).to_json(), json::parse("[[40,3]]"));
    EXPECT_EQ(AxisPartition::from_runs({{1, 1}, {2, 1}, {2, 1}, {1, 1}}).to_json(),
              json::parse("[1,[2,2],1]"));
    EXPECT_EQ(AxisPartition::regular(12, 30, true).to_json(), json(12));
}

TEST(AxisPartition, AppendMerges) {
    auto a = AxisPartition::from_runs({{1, 10}});
    for (int i = 0; i < 1000; ++i)
        a.append(1);
    EXPECT_EQ(a.runs().size(), 1u);
    EXPECT_EQ(a.num_chunks(), 1010u);
    EXPECT_EQ(a.extent(), 1010u);
    a.append(3, 2);
    EXPECT_EQ(a.runs().size(), 2u);
    EXPECT_EQ(a.chunk_start(1011), 1013u);
    EXPECT_EQ(a.chunk_index(1015), 1011u);
    EXPECT_THROW(a.append(0), Error);
    EXPECT_THROW(a.append(2, 0), Error);
    auto huge = AxisPartition::from_runs({{1ull << 62, 3}});
    EXPECT_THROW(huge.append(1ull << 62), Error);
    EXPECT_EQ(huge.num_chunks(), 3u); // unchanged after the failed append
}

TEST(AxisPartition, SetLength) {
    auto a = AxisPartition::from_runs({{10, 2}, {5, 1}});
    a.set_length(20); // shrinking keeps the edges
    EXPECT_EQ(a.length(), 20u);
    EXPECT_EQ(a.num_chunks(), 3u);
    EXPECT_EQ(a.extent(), 25u);
    a.set_length(25);
    EXPECT_EQ(a.num_chunks(), 3u);
    a.set_length(40); // growing appends one edge covering the new elements
    EXPECT_EQ(a.num_chunks(), 4u);
    EXPECT_EQ(a.chunk_edge(3), 15u);
    EXPECT_EQ(a.extent(), 40u);
    EXPECT_EQ(a.to_json(), json::parse("[[10,2],5,15]"));

    auto r = AxisPartition::regular(10, 25);
    EXPECT_EQ(r.num_chunks(), 3u);
    r.set_length(31);
    EXPECT_EQ(r.num_chunks(), 4u);
    r.set_length(5);
    EXPECT_EQ(r.num_chunks(), 1u);
    r.set_length(0);
    EXPECT_EQ(r.num_chunks(), 0u);
    EXPECT_EQ(r.to_json(), json(10));
    r.set_length(10);
    EXPECT_EQ(r.num_chunks(), 1u);
}

TEST(ChunkGrid, RectilinearOverhangAndPastExtent) {
    // Edges sum to 60 for a length of 45: chunk 2 overhangs, chunk 3 lies wholly past the extent.
    const auto g = parse(R"({"name":"rectilinear","configuration":{"kind":"inline",
                             "chunk_shapes":[[10,20,15,15],[[40,3]]]}})",
                         {45, 100});
    EXPECT_EQ(g.kind(), GridKind::Rectilinear);
    EXPECT_EQ(g.grid_shape(), (Shape{4, 3}));
    EXPECT_EQ(g.axis(0).length(), 45u);
    EXPECT_EQ(g.axis(0).extent(), 60u);
    EXPECT_EQ(g.chunk_shape({2, 2}), (Shape{15, 40}));
    EXPECT_EQ(g.chunk_origin({2, 2}), (Shape{30, 80}));
    EXPECT_EQ(g.chunk_origin({3, 0}), (Shape{45, 0}));
    EXPECT_EQ(g.axis(0).chunk_index(44), 2u);
    EXPECT_THROW(g.chunk_shape({4, 0}), Error);
}

TEST(ChunkGrid, BareIntegerAxes) {
    const auto g = parse(R"({"name":"rectilinear","configuration":{"kind":"inline",
                             "chunk_shapes":[7,[[3,2],4]]}})",
                         {45, 10});
    EXPECT_EQ(g.grid_shape(), (Shape{7, 3}));
    EXPECT_TRUE(g.axis(0).is_regular());
    EXPECT_EQ(g.chunk_origin({6, 2}), (Shape{42, 6}));
    // Read as a bare integer, written as a list (issue 40.5: the real Icechunk refuses bare axes).
    EXPECT_EQ(g.to_json(), json::parse(R"({"name":"rectilinear","configuration":{"kind":"inline",
                                            "chunk_shapes":[[[7,7]],[[3,2],4]]}})"));
    auto g2 = g;
    g2.resize({100, 20});
    EXPECT_EQ(g2.grid_shape(), (Shape{15, 4}));
    EXPECT_EQ(g2.chunk_shape({0, 3}), (Shape{7, 10}));
}

TEST(ChunkGrid, RegularAndZeroD) {
    const auto g =
        parse(R"({"name":"regular","configuration":{"chunk_shape":[60,50]}})", {120, 101});
    EXPECT_EQ(g.kind(), GridKind::Regular);
    EXPECT_EQ(g.grid_shape(), (Shape{2, 3}));
    EXPECT_EQ(g.chunk_shape({1, 2}), (Shape{60, 50}));
    EXPECT_EQ(g.to_json(),
              json::parse(R"({"name":"regular","configuration":{"chunk_shape":[60,50]}})"));
    const auto s = parse(R"({"name":"regular","configuration":{"chunk_shape":[]}})", {});
    EXPECT_EQ(s.rank(), 0u);
    EXPECT_EQ(s.grid_shape(), Shape{});
    EXPECT_EQ(s.chunk_shape({}), Shape{});
    const auto e = parse(R"({"name":"regular","configuration":{"chunk_shape":[5,5]}})", {0, 10});
    EXPECT_EQ(e.grid_shape(), (Shape{0, 2}));
    EXPECT_EQ(e.to_json()["configuration"]["chunk_shape"], json::parse("[5,5]"));
    const auto m = ChunkGrid::make_regular({4, 4}, {10, 3});
    EXPECT_EQ(m.grid_shape(), (Shape{3, 1}));
    EXPECT_THROW(ChunkGrid::make_regular({4}, {10, 3}), Error);
}

TEST(ChunkGrid, RectangularDraft) {
    const auto g = parse(
        R"({"name":"rectangular","configuration":{"chunk_shape":[[5,5,5,15],10]}})", {30, 25});
    EXPECT_EQ(g.kind(), GridKind::Rectilinear);
    EXPECT_EQ(g.grid_shape(), (Shape{4, 3}));
    EXPECT_EQ(g.chunk_origin({3, 2}), (Shape{15, 20}));
    // Written back in the rectilinear form.
    EXPECT_EQ(g.to_json()["name"], "rectilinear");
    EXPECT_EQ(g.to_json()["configuration"]["chunk_shapes"], json::parse("[[[5,3],15],[[10,3]]]"));
    EXPECT_THROW(parse(R"({"name":"rectangular","configuration":{"chunk_shape":[[[5,3],15],10]}})",
                       {30, 25}),
                 FormatError);
}

TEST(ChunkGrid, ErrorsNameTheMember) {
    const auto msg = [](const std::string& text, const Shape& shape) -> std::string {
        try {
            parse(text, shape);
        } catch (const FormatError& e) {
            return e.what();
        }
        return "NO EXCEPTION";
    };
    const std::string rect =
        R"({"name":"rectilinear","configuration":{"kind":"inline","chunk_shapes":)";
    struct Case {
        std::string text;
        Shape shape;
        std::string expect;
    } cases[] = {
        {rect + "[[10,20],[0,5]]}}", {30, 5}, "chunk_shapes[1][0]: chunk edge must be >= 1"},
        {rect + "[[10,20],[-5,5]]}}", {30, 5}, "chunk_shapes[1][0]"},
        {rect + "[[10,20],[[5,0]]]}}", {30, 5}, "chunk_shapes[1][0][1]: run count must be >= 1"},
        {rect + "[[10,20],[[5,2,1]]]}}", {30, 5}, "chunk_shapes[1][0]"},
        {rect + "[[10,20],[1.5]]}}", {30, 5}, "chunk_shapes[1][0]: expected an integer"},
        {rect + "[[10,20],[30, 10]]}}",
         {30, 45},
         "edges of axis 1 sum to 40, short of the array length 45"},
        {rect + "[[10,20]]}}", {30, 5}, "chunk_shapes: has 1 entries"},
        {rect + "[[10,20],0]}}", {30, 5}, "chunk_shapes[1]"},
        {rect + "[[10,20],\"5\"]}}", {30, 5}, "chunk_shapes[1]"},
        {rect + "[[[9223372036854775808,4]],[5]]}}",
         {30, 5},
         "chunk_shapes[0]: chunk grid extent overflows 64 bits"},
        {rect + "[[100000000000000000000],[5]]}}",
         {30, 5},
         "chunk_shapes[0][0]: expected an integer"},
        {R"({"name":"rectilinear","configuration":{"chunk_shapes":[[5]]}})",
         {5},
         "chunk_grid.configuration.kind: missing"},
        {R"({"name":"rectilinear","configuration":{"kind":"file","chunk_shapes":[[5]]}})",
         {5},
         "chunk_grid.configuration.kind: expected \"inline\""},
        {R"({"name":"rectilinear","configuration":{"kind":"inline","chunk_shapes":[[5]],"x":1}})",
         {5},
         "chunk_grid.configuration.x: unexpected member"},
        {R"({"name":"rectilinear","configuration":{"kind":"inline"}})",
         {5},
         "chunk_shapes: missing"},
        {R"({"name":"regular","configuration":{"chunk_shape":[5]}})",
         {5, 5},
         "chunk_grid.configuration.chunk_shape: has 1 entries"},
        {R"({"name":"regular","configuration":{"chunk_shape":[5,0]}})",
         {5, 5},
         "chunk_shape[1]: chunk edge must be >= 1"},
        {R"({"name":"regular","configuration":{"chunk_shape":[5,2.0]}})", {5, 5}, "chunk_shape[1]"},
        {R"({"name":"regular","configuration":{}})", {5}, "chunk_shape: missing"},
        {R"({"name":"regular"})", {5}, "chunk_grid.configuration: expected an object"},
        {R"("regular")", {5}, "chunk_grid: \"regular\" needs a configuration"},
        {R"({"name":"hexagonal","configuration":{}})",
         {5},
         "chunk_grid.name: unsupported chunk grid \"hexagonal\""},
        {R"([1,2])", {5}, "chunk_grid: expected an object"},
    };
    for (const auto& c : cases) {
        const std::string m = msg(c.text, c.shape);
        EXPECT_NE(m.find("g/zarr.json: "), std::string::npos) << c.text << " -> " << m;
        EXPECT_NE(m.find(c.expect), std::string::npos) << c.text << " -> " << m;
    }
}

TEST(AxisPartition, FromRunsErrors) {
    EXPECT_THROW(AxisPartition::from_runs({{5, 0}}, "w"), Error);
    EXPECT_THROW(AxisPartition::from_runs({{0, 1}}, "w"), Error);
    try {
        AxisPartition::from_runs({{5, 2}, {3, 0}}, "my axis");
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("my axis: run count must be >= 1"), std::string::npos);
    }
    EXPECT_THROW(AxisPartition::from_runs({{1ull << 63, 4}}), Error);
    EXPECT_THROW(AxisPartition::from_runs({{1, ~0ull}, {1, 1}}), Error);
}

// A rectilinear grid's serialised form parses back to the same partition, except an axis of length
// 0: it is written as one listed chunk (zarr-python refuses an empty list, Icechunk a bare edge),
// so it comes back with one chunk past its end and still no element. fuzz_rectilinear met this case
// (`[[2,3,[4,1000]],3,[100]]` over shape [4005,0,100]); its round-trip check allows exactly this.
TEST(ChunkGridJson, RectilinearRoundTripListsAnEmptyAxisAsOneChunk) {
    const json j = {
        {"name", "rectilinear"},
        {"configuration",
         {{"kind", "inline"}, {"chunk_shapes", json::parse("[[2,3,[4,1000]],3,[100]]")}}}};
    const Shape shape{4005, 0, 100};
    const ChunkGrid g = ChunkGrid::parse(j, shape, "t/zarr.json");
    EXPECT_EQ(g.grid_shape(), (Shape{1002, 0, 1}));
    const ChunkGrid g2 = ChunkGrid::parse(g.to_json(), shape, "t/roundtrip");
    EXPECT_EQ(g2.grid_shape(), (Shape{1002, 1, 1}));
    for (size_t i = 0; i < g.rank(); ++i)
        EXPECT_EQ(g2.axis(i).length(), g.axis(i).length()) << i;
    EXPECT_EQ(g2.axis(0).extent(), g.axis(0).extent());
    EXPECT_EQ(g2.axis(2).extent(), g.axis(2).extent());
}

} // namespace ut_array_test_chunk_grid
