// Time values never overflow into NaT or wrap (issue 33, point 16 and the "also seen"
// CF time item): a double converted to an int64 count is checked first (NaN,
// infinities, fractions and values past int64 are refused, never cast), and a
// calendar time whose seconds are not a time of day is an error, not a cast.
#include "zarr3/cf_time.hpp"
#include "zarr3/common.hpp"
#include "zarr3/dtype.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_timeseries_test_time_overflow {

using namespace zarr3;

TEST(TimeOverflow, ExactInt64KeepsEveryRepresentableValue) {
    EXPECT_EQ(exact_int64(0.0), int64_t{0});
    EXPECT_EQ(exact_int64(-42.0), int64_t{-42});
    // The largest double below 2^63, and -2^63 itself (the NaT bit pattern, a value).
    EXPECT_EQ(exact_int64(9223372036854774784.0), int64_t{9223372036854774784});
    EXPECT_EQ(exact_int64(-9223372036854775808.0), std::numeric_limits<int64_t>::min());
    // 922337203685477579 (the largest timedelta64[10ms] of issue 33 #16) has no
    // double; its nearest double is an exact integer that still fits.
    EXPECT_EQ(exact_int64(922337203685477579.0), int64_t{922337203685477632});
}

TEST(TimeOverflow, ExactInt64RefusesWhatNoInt64Holds) {
    const double bad[] = {std::nan(""),
                          std::numeric_limits<double>::infinity(),
                          -std::numeric_limits<double>::infinity(),
                          9223372036854775808.0, // 2^63: one past int64 max
                          -9223372036854777856.0,
                          1e30,
                          -1e300,
                          0.5,
                          -1.25};
    for (double v : bad)
        EXPECT_FALSE(exact_int64(v).has_value()) << v;
}

// A cast of 1e30 or NaN to int64 gives INT64_MIN on x86, the NaT pattern: the check
// exists so no caller can turn an out-of-range value into "missing".
TEST(TimeOverflow, ExactInt64NeverYieldsNaTForALargeValue) {
    for (double v : {1e19, -1e19, 9.3e18})
        EXPECT_NE(exact_int64(v).value_or(0), kNaT) << v;
}

TEST(TimeOverflow, FormatCivilRefusesSecondsThatAreNoTimeOfDay) {
    for (double s : {std::nan(""), std::numeric_limits<double>::infinity(), -1.0, 1e300, 90000.0}) {
        CivilTime t{1970, 1, 1, s};
        try {
            const std::string text = format_civil(t);
            ADD_FAILURE() << "no error for seconds " << s << ": " << text;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("time of day"), std::string::npos) << e.what();
        }
    }
    EXPECT_EQ(format_civil(CivilTime{2024, 3, 1, 30.0}), "2024-03-01T00:00:30");
    EXPECT_EQ(format_civil(CivilTime{2024, 3, 1, 0.0}), "2024-03-01");
    // A leap second (23:59:60) is a time of day.
    EXPECT_EQ(format_civil(CivilTime{2016, 12, 31, 86400.0}), "2016-12-31T24:00:00");
}

}  // namespace ut_timeseries_test_time_overflow
