// ISO 8601 times <-> microseconds since 1970-01-01 UTC (Icechunk's clock).
#include "zarr3/cf_time.hpp"
#include "zarr3/icechunk.hpp"

#include <cstdio>

namespace zarr3::icechunk {
namespace {

struct Cursor {
    const std::string& s;
    size_t i = 0;
    bool at(char c) const { return i < s.size() && s[i] == c; }
    bool digits(size_t n, int& out) {
        out = 0;
        for (size_t k = 0; k < n; ++k, ++i) {
            if (i >= s.size() || s[i] < '0' || s[i] > '9') return false;
            out = out * 10 + (s[i] - '0');
        }
        return true;
    }
};

bool leap(int y) {
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

} // namespace

uint64_t parse_iso_time(const std::string& text, const std::string& what) {
    auto bad = [&]() -> Error {
        return Error(what + ": '" + text +
                     "' is not an ISO 8601 time (YYYY-MM-DD[THH:MM[:SS[.ffffff]]][Z|+HH:MM])");
    };
    Cursor c{text};
    int y, mo, d, h = 0, mi = 0, s = 0, tz = 0;
    int64_t frac_us = 0;
    if (!c.digits(4, y) || !c.at('-') || !(++c.i, c.digits(2, mo)) || !c.at('-') ||
        !(++c.i, c.digits(2, d)))
        throw bad();
    static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (mo < 1 || mo > 12 || d < 1 || d > kDays[mo - 1] + (mo == 2 && leap(y))) throw bad();
    if (c.at('T') || c.at('t') || c.at(' ')) {
        ++c.i;
        if (!c.digits(2, h) || !c.at(':') || !(++c.i, c.digits(2, mi))) throw bad();
        if (c.at(':') && !(++c.i, c.digits(2, s))) throw bad();
        if (c.at('.') || c.at(',')) {
            ++c.i;
            int64_t scale = 100000;
            size_t n = 0;
            for (; c.i < text.size() && text[c.i] >= '0' && text[c.i] <= '9'; ++c.i, ++n) {
                frac_us += (text[c.i] - '0') * scale;
                scale /= 10;
            }
            if (n == 0) throw bad();
        }
        if (h > 23 || mi > 59 || s > 60) throw bad();
    }
    if (c.at('Z') || c.at('z')) {
        ++c.i;
    } else if (c.at('+') || c.at('-')) {
        const int sign = c.at('-') ? -1 : 1;
        int th, tm;
        ++c.i;
        if (!c.digits(2, th)) throw bad();
        if (c.at(':')) ++c.i;
        if (!c.digits(2, tm) || th > 23 || tm > 59) throw bad();
        tz = sign * (th * 60 + tm);
    }
    if (c.i != text.size()) throw bad();
    const int64_t secs = days_from_civil(y, unsigned(mo), unsigned(d)) * 86400 + h * 3600 +
                         mi * 60 + s - int64_t(tz) * 60;
    if (secs < 0) throw Error(what + ": '" + text + "' is before 1970");
    return uint64_t(secs) * 1000000u + uint64_t(frac_us);
}

std::string format_iso_time(uint64_t us) {
    const int64_t secs = int64_t(us / 1000000u);
    int64_t z = secs / 86400 + 719468;
    const int64_t era = z / 146097;
    const auto doe = static_cast<unsigned>(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    const unsigned d = doy - (153 * mp + 2) / 5 + 1;
    const unsigned m = mp < 10 ? mp + 3 : mp - 9;
    const int64_t y = int64_t(yoe) + era * 400 + (m <= 2);
    const int64_t rem = secs % 86400;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lld.%06lluZ", (long long)y, m,
                  d, (long long)(rem / 3600), (long long)(rem / 60 % 60), (long long)(rem % 60),
                  (unsigned long long)(us % 1000000u));
    return buf;
}

} // namespace zarr3::icechunk
