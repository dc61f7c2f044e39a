// CF time units and proleptic Gregorian date arithmetic (cf_time.hpp).
#include "zarr3/cf_time.hpp"

#include "zarr3/common.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>

namespace zarr3 {

namespace {
// Days either side of 1970 a CF time value may reach (about +-270 million
// years): days_from_civil/civil_from_days stay far from int64 overflow.
constexpr double kMaxCfDays = 1e11;
} // namespace

// Howard Hinnant's days_from_civil / civil_from_days.
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

CivilTime civil_from_days(int64_t z) {
    z += 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const auto doe = static_cast<unsigned>(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    CivilTime t;
    t.day = doy - (153 * mp + 2) / 5 + 1;
    t.month = mp < 10 ? mp + 3 : mp - 9;
    t.year = static_cast<int64_t>(yoe) + era * 400 + (t.month <= 2);
    return t;
}

namespace {

// Reads `n` digits at `p` (advancing it); false when there are fewer.
bool digits(std::string_view s, size_t& p, size_t n, int64_t& out) {
    out = 0;
    for (size_t k = 0; k < n; ++k, ++p) {
        if (p >= s.size() || !std::isdigit(static_cast<unsigned char>(s[p]))) return false;
        out = out * 10 + (s[p] - '0');
    }
    return true;
}

bool parse_clock(std::string_view s, size_t& p, double& seconds) {
    int64_t h = 0, mi = 0, sec = 0;
    if (!digits(s, p, 2, h) || p >= s.size() || s[p++] != ':' || !digits(s, p, 2, mi)) return false;
    double frac = 0;
    if (p < s.size() && s[p] == ':') {
        ++p;
        if (!digits(s, p, 2, sec)) return false;
        if (p < s.size() && s[p] == '.') {
            double scale = 0.1;
            for (++p; p < s.size() && std::isdigit(static_cast<unsigned char>(s[p])); ++p) {
                frac += (s[p] - '0') * scale;
                scale /= 10;
            }
        }
    }
    if (h > 24 || mi > 59 || sec > 60) return false;
    seconds = static_cast<double>(h * 3600 + mi * 60 + sec) + frac;
    return true;
}

} // namespace

std::optional<CivilTime> parse_date_time(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    size_t p = 0;
    int64_t y = 0, m = 0, d = 0;
    if (!digits(s, p, 4, y)) return std::nullopt;
    const bool compact = p < s.size() && std::isdigit(static_cast<unsigned char>(s[p]));
    const char sep = compact ? 0 : (p < s.size() ? s[p] : 0);
    if (!compact && sep != '-' && sep != ':') return std::nullopt;
    if (!compact) ++p;
    if (!digits(s, p, 2, m)) return std::nullopt;
    if (!compact && (p >= s.size() || s[p++] != sep)) return std::nullopt;
    if (!digits(s, p, 2, d)) return std::nullopt;
    if (m < 1 || m > 12 || d < 1 || d > 31) return std::nullopt;
    CivilTime t{y, static_cast<unsigned>(m), static_cast<unsigned>(d), 0};
    if (civil_from_days(days_from_civil(y, t.month, t.day)).day != t.day) return std::nullopt;
    if (p < s.size() && (s[p] == 'T' || s[p] == ' ')) {
        ++p;
        if (!parse_clock(s, p, t.seconds)) return std::nullopt;
    }
    if (p < s.size() && s[p] == 'Z') ++p;
    if (p != s.size()) return std::nullopt;
    return t;
}

std::optional<CfTimeUnits> parse_cf_time_units(std::string_view u) {
    const size_t since = u.find(" since ");
    if (since == std::string_view::npos) return std::nullopt;
    std::string unit(u.substr(0, since));
    for (auto& c : unit)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    CfTimeUnits out;
    if (unit == "days" || unit == "day" || unit == "d")
        out.seconds_per_unit = 86400;
    else if (unit == "hours" || unit == "hour" || unit == "h")
        out.seconds_per_unit = 3600;
    else if (unit == "minutes" || unit == "minute" || unit == "min")
        out.seconds_per_unit = 60;
    else if (unit == "seconds" || unit == "second" || unit == "s")
        out.seconds_per_unit = 1;
    else
        return std::nullopt;
    std::string_view ref = u.substr(since + 7);
    // "1970-01-01 00:00:00 UTC" / "+00:00": drop a UTC zone.
    for (std::string_view zone : {" UTC", " utc", "+00:00", " +00:00"})
        if (ref.size() > zone.size() && ref.substr(ref.size() - zone.size()) == zone)
            ref.remove_suffix(zone.size());
    auto t = parse_date_time(ref);
    if (!t) return std::nullopt;
    out.epoch_day = days_from_civil(t->year, t->month, t->day);
    out.epoch_seconds = t->seconds;
    return out;
}

double cf_value_of(const CfTimeUnits& u, const CivilTime& t) {
    const double days = static_cast<double>(days_from_civil(t.year, t.month, t.day) - u.epoch_day);
    return (days * 86400.0 + t.seconds - u.epoch_seconds) / u.seconds_per_unit;
}

CivilTime cf_civil_of(const CfTimeUnits& u, double value) {
    const double secs = value * u.seconds_per_unit + u.epoch_seconds;
    const double day = std::floor(secs / 86400.0);
    // Checked before any conversion to an integer (NaN and values past int64
    // are undefined behaviour to cast): beyond the calendar range, an error.
    if (!std::isfinite(day) || std::fabs(day) > kMaxCfDays ||
        std::fabs(static_cast<double>(u.epoch_day)) > kMaxCfDays) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.17g", value);
        throw Error(std::string("time value ") + buf +
                    " is not a date (NaN, infinite or more than 10^11 days from the epoch)");
    }
    CivilTime t = civil_from_days(u.epoch_day + static_cast<int64_t>(day));
    t.seconds = secs - day * 86400.0;
    return t;
}

bool cf_calendar_is_gregorian_at(std::string_view calendar, const CivilTime& t) {
    std::string c(calendar);
    for (auto& ch : c)
        ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (c == "proleptic_gregorian") return true;
    if (!c.empty() && c != "standard" && c != "gregorian") return false;
    return days_from_civil(t.year, t.month, t.day) >= days_from_civil(1582, 10, 15);
}

std::string format_civil(const CivilTime& t) {
    char buf[64];
    // Checked before the cast (NaN or a huge value would be undefined behaviour).
    if (!(t.seconds >= 0 && t.seconds < 86400.5)) {
        std::snprintf(buf, sizeof buf, "%.17g", t.seconds);
        throw Error(std::string("calendar time: ") + buf +
                    " seconds since midnight is no time of day (0 to 86400)");
    }
    const auto s = static_cast<long>(std::llround(t.seconds));
    if (s == 0)
        std::snprintf(buf, sizeof buf, "%04lld-%02u-%02u", static_cast<long long>(t.year), t.month,
                      t.day);
    else
        std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02ld:%02ld:%02ld",
                      static_cast<long long>(t.year), t.month, t.day, s / 3600, s / 60 % 60,
                      s % 60);
    return buf;
}

std::optional<int64_t> exact_int64(double v) {
    // [-2^63, 2^63): both bounds are exact doubles; NaN fails both comparisons.
    constexpr double kTwo63 = 9223372036854775808.0;
    if (!(v >= -kTwo63 && v < kTwo63) || std::trunc(v) != v) return std::nullopt;
    return static_cast<int64_t>(v);
}

} // namespace zarr3
