// CF time conversions refuse values no date can hold (issue 33, "also seen"):
// NaN, infinities and doubles past int64 must raise zarr3::Error before any
// cast to an integer (a cast would be undefined behaviour, seen by UBSan).
#include "zarr3/cf_time.hpp"
#include "zarr3/common.hpp"
#include "zarr3/compact.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_timeseries_test_cf_time_range {

using namespace zarr3;

namespace {

CfTimeUnits days_since_1970() {
    auto u = parse_cf_time_units("days since 1970-01-01");
    EXPECT_TRUE(u.has_value());
    return u.value_or(CfTimeUnits{});
}

} // namespace

TEST(CfTimeRange, ValidValuesConvert) {
    const auto u = days_since_1970();
    const CivilTime t = cf_civil_of(u, 31.5);
    EXPECT_EQ(t.year, 1970);
    EXPECT_EQ(t.month, 2u);
    EXPECT_EQ(t.day, 1u);
    EXPECT_DOUBLE_EQ(t.seconds, 43200.0);
    // Far but representable: year ~ 2.7 million.
    EXPECT_GT(cf_civil_of(u, 1e9).year, 2000000);
    EXPECT_LT(cf_civil_of(u, -1e9).year, -2000000);
}

TEST(CfTimeRange, NonFiniteAndHugeValuesAreErrors) {
    const auto u = days_since_1970();
    const double bad[] = {std::nan(""),
                          std::numeric_limits<double>::infinity(),
                          -std::numeric_limits<double>::infinity(),
                          1e300,
                          -1e300,
                          1e19,
                          2e11};
    for (double v : bad) {
        try {
            cf_civil_of(u, v);
            ADD_FAILURE() << "no error for " << v;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("not a date"), std::string::npos) << e.what();
        }
    }
}

TEST(CfTimeRange, HugeSecondsUnitsAreErrors) {
    auto u = parse_cf_time_units("seconds since 2000-01-01T00:00:00");
    ASSERT_TRUE(u);
    EXPECT_THROW(cf_civil_of(*u, 9.3e18), Error); // past int64 seconds
    EXPECT_EQ(cf_civil_of(*u, 86400.0).day, 2u);
}

// The monthly compaction plan (the conversion's caller) reports the error
// instead of computing months from a cast NaN.
TEST(CfTimeRange, MonthlyPlanRefusesNaN) {
    const auto u = days_since_1970();
    EXPECT_THROW(plan_monthly_edges(std::vector<double>{0, 1, std::nan("")}, u), Error);
    EXPECT_EQ(plan_monthly_edges(std::vector<double>{0, 1, 40}, u).num_chunks(), 2u);
}

}  // namespace ut_timeseries_test_cf_time_range
