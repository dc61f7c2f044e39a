// Issue 40.1/40.2: an append's values converted into the target's packing
// and nodata (repack.hpp), or refused naming both sides.
#include "test_util.hpp"
#include "zarr3/repack.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_timeseries_test_repack {

using namespace zarr3;

namespace {

const DataType kInt16 = data_type_from_name("int16");

using testutil::error_of;

} // namespace

TEST(Repack, SamePackingAndNodataIsTheIdentity) {
    const Packing p{0.001, 280, -32768};
    EXPECT_TRUE(Repacker(p, p, kInt16, RepackRounding::Exact, "a", "X").identity());
    // A source without nodata keeps its values (as before).
    EXPECT_TRUE(Repacker({0.001, 280, {}}, p, kInt16, RepackRounding::Exact, "a", "X").identity());
}

TEST(Repack, UnpacksAndRepacksExactly) {
    // 285.0 K packed 0.002/270 (raw 7500) into 0.001/280 (raw 5000).
    const Repacker r({0.002, 270, -32768}, {0.001, 280, -9999}, kInt16, RepackRounding::Exact,
                     "s.zarr/t2m", "APPEND_REPACK=NEAREST");
    ASSERT_FALSE(r.identity());
    std::vector<double> v{7500, -32768, 0, -5000};
    r.convert(v.data(), v.size());
    EXPECT_EQ(v, (std::vector<double>{5000, -9999, -10000, -20000}));
}

TEST(Repack, MapsNodataOnly) {
    const Repacker r({1, 0, -32768}, {1, 0, -9999}, kInt16, RepackRounding::Exact, "a", "X");
    std::vector<double> v{-32768, 12, -32767};
    r.convert(v.data(), v.size());
    EXPECT_EQ(v, (std::vector<double>{-9999, 12, -32767}));
    double hit = -9999; // a valid source value equal to the array's nodata
    EXPECT_NE(error_of([&] { r.convert(&hit, 1); }).find("would become the array's nodata"),
              std::string::npos);
}

TEST(Repack, RefusesNamingBothSidesAndTheOption) {
    // 0.001 steps into 0.002 steps: an odd raw value lies between two steps.
    const Repacker exact({0.001, 280, {}}, {0.002, 270, {}}, kInt16, RepackRounding::Exact,
                         "s.zarr/t2m", "APPEND_REPACK=NEAREST");
    double even = 5000, odd = 5001;
    exact.convert(&even, 1);
    EXPECT_EQ(even, 7500);
    const std::string e = error_of([&] { exact.convert(&odd, 1); });
    EXPECT_NE(e.find("s.zarr/t2m: source value 5001"), std::string::npos) << e;
    EXPECT_NE(e.find("scale 0.001, offset 280"), std::string::npos) << e;
    EXPECT_NE(e.find("scale 0.002, offset 270"), std::string::npos) << e;
    EXPECT_NE(e.find("-co APPEND_REPACK=NEAREST"), std::string::npos) << e;
    const Repacker nearest({0.001, 280, {}}, {0.002, 270, {}}, kInt16, RepackRounding::Nearest, "a",
                           "X");
    odd = 5001; // 285.001 K -> raw 7500.5 -> 7500 (half-even) or 7501, within half a step
    nearest.convert(&odd, 1);
    EXPECT_LE(std::fabs(odd * 0.002 + 270 - 285.001), 0.001 + 1e-9);
    // Out of the target's range.
    const Repacker wide({1, 0, {}}, {0.001, 0, {}}, kInt16, RepackRounding::Exact, "a", "X");
    double big = 40;
    EXPECT_NE(error_of([&] { wide.convert(&big, 1); }).find("out of range"), std::string::npos);
    // Source nodata without a target nodata.
    const std::string n = error_of([] {
        Repacker({1, 0, -32768}, {1, 0, {}}, kInt16, RepackRounding::Exact, "a", "X");
    });
    EXPECT_NE(n.find("nodata -32768 has no counterpart"), std::string::npos) << n;
    // 64-bit integers are not converted through doubles.
    EXPECT_THROW(Repacker({2, 0, {}}, {1, 0, {}}, data_type_from_name("int64"),
                          RepackRounding::Exact, "a", "X"),
                 Error);
}

TEST(Repack, FloatTargetsKeepNaN) {
    const Repacker r({0.5, 0, -1}, {1, 0, std::nan("")}, data_type_from_name("float32"),
                     RepackRounding::Exact, "a", "X");
    std::vector<double> v{-1, 3, std::nan("")};
    r.convert(v.data(), v.size());
    EXPECT_TRUE(std::isnan(v[0]));
    EXPECT_EQ(v[1], 1.5);
    EXPECT_TRUE(std::isnan(v[2])); // NaN stays "no value"
}

}  // namespace ut_timeseries_test_repack
