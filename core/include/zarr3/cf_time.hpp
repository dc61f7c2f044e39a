// CF time coordinates ("days since 1970-01-01", proleptic Gregorian): the
// date arithmetic time-series appends and monthly compaction need.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace zarr3 {

// A calendar date and time of day (UTC, proleptic Gregorian).
struct CivilTime {
    int64_t year = 1970;
    unsigned month = 1; // 1..12
    unsigned day = 1;   // 1..31
    double seconds = 0; // seconds since midnight
};

// Parsed "<unit> since <date>[ time]" units (unit: days, hours, minutes,
// seconds and their singular/abbreviated forms).
struct CfTimeUnits {
    double seconds_per_unit = 86400;
    int64_t epoch_day = 0;    // days since 1970-01-01 of the reference date
    double epoch_seconds = 0; // seconds into that day
};

// Days since 1970-01-01 of a date (and the inverse).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d);
CivilTime civil_from_days(int64_t days);

// "YYYY-MM-DD", "YYYY:MM:DD" (TIFF), "YYYYMMDD", each optionally followed by
// "T" or " " and "HH:MM[:SS[.fff]]" and a trailing "Z"; nullopt otherwise.
std::optional<CivilTime> parse_date_time(std::string_view text);
// nullopt unless `units` is "<unit> since <date>".
std::optional<CfTimeUnits> parse_cf_time_units(std::string_view units);

// The coordinate value of `t` in `units`, and the calendar time of a value
// (zarr3::Error for NaN, infinity or a value more than 10^11 days from 1970:
// never a cast of an out-of-range double to an integer).
double cf_value_of(const CfTimeUnits& units, const CivilTime& t);
CivilTime cf_civil_of(const CfTimeUnits& units, double value);

// True when a date `t` of a CF coordinate in `calendar` is the proleptic Gregorian date this file
// computes with: no calendar (CF's default, "standard"), "standard" and "gregorian" from 1582-10-15
// on (before that they are Julian dates), "proleptic_gregorian" always; false for every other
// calendar ("noleap", "360_day", "julian", ...), whose values would map to other dates.
bool cf_calendar_is_gregorian_at(std::string_view calendar, const CivilTime& t);

// "YYYY-MM-DD" (and "THH:MM:SS" when not midnight). zarr3::Error when t.seconds
// is no time of day (NaN, negative, past 24:00:00 + a leap second).
std::string format_civil(const CivilTime& t);

// The int64 equal to `v`; nullopt for NaN, infinities, fractions and values
// outside int64. Every conversion of a computed time value (or any double) to an
// int64 count goes through it: a plain cast of such a value is undefined
// behaviour and gives INT64_MIN (NaT) on x86.
std::optional<int64_t> exact_int64(double v);

} // namespace zarr3
