// Issue 40.5: the real Icechunk (2.2) updates the metadata of an array this
// library appended to and appends to it; this library reads the result
// (scripts/icechunk/check_written.sh runs append_written.mjs between the two
// tests). The append made the grid rectilinear; every chunk_shapes axis is
// written as a list, since Icechunk refuses one written as a bare integer
// ("cannot parse chunk_shapes for rectilinear chunk grid").
#include "icechunk_test_util.hpp"
#include "zarr3/builder.hpp"
#include "zarr3/compact.hpp"
#include "zarr3/icechunk_write.hpp"

#include <cstdlib>
#include <nlohmann/json.hpp>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_icechunk_test_icechunk_append_interop {

using namespace zarr3;
using namespace zarr3::icechunk;

namespace {

// Day d holds d * 100 + its element index (2 x 3 elements a day).
std::vector<float> days(uint64_t first, uint64_t n) {
    std::vector<float> v;
    for (uint64_t d = first; d < first + n; ++d)
        for (int i = 0; i < 6; ++i)
            v.push_back(float(d * 100 + uint64_t(i)));
    return v;
}

} // namespace

TEST(IcechunkAppendInterop, Write) {
    const char* out = std::getenv("ZARR3_ICECHUNK_APPEND_OUT");
    if (!out) GTEST_SKIP() << "ZARR3_ICECHUNK_APPEND_OUT not set";
    auto st = std::make_shared<FileStore>(out);
    create_repository(st);
    auto s = IcechunkSession::open(st);
    const std::string group = R"({"zarr_format":3,"node_type":"group","attributes":{}})";
    s->put("zarr.json", ByteView(reinterpret_cast<const uint8_t*>(group.data()), group.size()));
    ArrayBuilder b({2, 2, 3}, data_type_from_name("float32"));
    const auto m = b.regular_chunk_shape({2, 2, 3})
                       .dimension_names(std::vector<std::string>{"time", "y", "x"})
                       .build("t");
    auto a = Array::create(s, "t", m, true);
    a->write(Selection::all(m.shape), days(0, 2).data());
    s->commit("two days");
    // One day appended: time chunk 2, step 1, so the grid becomes rectilinear.
    auto s2 = IcechunkSession::open(st);
    const auto nm = appended_metadata(Array::open(s2, "t")->metadata(), 0, 1, "t");
    ASSERT_EQ(nm.grid.kind(), GridKind::Rectilinear);
    EXPECT_EQ(nm.grid.to_json()["configuration"]["chunk_shapes"],
              nlohmann::json::parse("[[2,1],[2],[3]]"));
    auto out_a = Array::open(s2, "t", nm);
    out_a->write(Selection{{2, 0, 0}, {1, 2, 3}, {}}, days(2, 1).data());
    out_a->write_metadata();
    s2->commit("day 2 by zarr3");
}

TEST(IcechunkAppendInterop, Check) {
    const char* out = std::getenv("ZARR3_ICECHUNK_APPEND_OUT");
    const char* report = std::getenv("ZARR3_ICECHUNK_APPEND_CHECK");
    if (!out || !report) GTEST_SKIP() << "ZARR3_ICECHUNK_APPEND_CHECK not set";
    auto st = std::make_shared<FileStore>(out);
    auto repo = Repository::open(st);
    EXPECT_EQ(icetest::messages(repo->history(repo->resolve({}))),
              (std::vector<std::string>{"day 3 by icechunk", "day 2 by zarr3", "two days",
                                        "Repository initialized"}));
    auto store = IcechunkStore::open(st, {});
    auto a = Array::open(store, "t");
    EXPECT_EQ(a->metadata().shape, (Shape{4, 2, 3}));
    EXPECT_EQ(a->metadata().grid.to_json()["configuration"]["chunk_shapes"][0],
              nlohmann::json::parse("[2,[1,2]]"));
    EXPECT_EQ(icetest::read_all<float>(store, "t"), days(0, 4));
}

} // namespace ut_icechunk_test_icechunk_append_interop
