// numpy.datetime64 / numpy.timedelta64: unit strings and ISO 8601 text.
#include "mapping/temporal.hpp"

#include <cstdio>
#include <cstring>

namespace zarr3drv {
namespace {

struct UnitInfo {
    const char* unit;
    const char* words;  // CF-style unit name
    int64_t per_second; // units in one second (fractions); 0 for coarser units
    int64_t seconds;    // seconds in one unit (coarser than a second); 0 otherwise
    int digits;         // fraction digits
};

const UnitInfo kUnits[] = {
    {"W", "weeks", 0, 7 * 86400, 0},
    {"D", "days", 0, 86400, 0},
    {"h", "hours", 0, 3600, 0},
    {"m", "minutes", 0, 60, 0},
    {"s", "seconds", 0, 1, 0},
    {"ms", "milliseconds", 1000, 0, 3},
    {"us", "microseconds", 1000000, 0, 6},
    {"ns", "nanoseconds", 1000000000, 0, 9},
};

const UnitInfo* Find(const std::string& u) {
    for (const auto& i : kUnits)
        if (u == i.unit) return &i;
    return nullptr;
}

// Civil date from days since 1970-01-01 (proleptic Gregorian; H. Hinnant's algorithm).
void CivilFromDays(int64_t z, int64_t& y, unsigned& m, unsigned& d) {
    z += 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const auto doe = static_cast<unsigned>(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    y = static_cast<int64_t>(yoe) + era * 400;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    d = doy - (153 * mp + 2) / 5 + 1;
    m = mp < 10 ? mp + 3 : mp - 9;
    if (m <= 2) ++y;
}

int64_t FloorDiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}

std::string DateTimeText(int64_t v, const zarr3::DataType& dt) {
    const std::string& u = dt.time_unit;
    const UnitInfo* info = Find(u);
    // Out of int64 range (or of the calendar below): the raw count.
    int64_t count = 0;
    if (__builtin_mul_overflow(v, static_cast<int64_t>(dt.time_scale), &count))
        return std::to_string(v);
    char buf[96];
    if (u == "Y" || u == "M") {
        int64_t mo = count;
        if (u == "Y" && __builtin_mul_overflow(count, int64_t{12}, &mo)) return std::to_string(v);
        if (mo > (int64_t{1} << 40) || mo < -(int64_t{1} << 40)) return std::to_string(v);
        const int64_t y = 1970 + FloorDiv(mo, 12);
        std::snprintf(buf, sizeof buf, "%04lld-%02lld-01T00:00:00", static_cast<long long>(y),
                      static_cast<long long>(mo - FloorDiv(mo, 12) * 12 + 1));
        return buf;
    }
    if (!info) return std::to_string(v); // generic, ps, fs, as: the raw count
    int64_t secs = 0, frac = 0;
    if (info->seconds) {
        if (__builtin_mul_overflow(count, info->seconds, &secs)) return std::to_string(v);
    } else {
        secs = count / info->per_second;
        frac = count % info->per_second;
        if (frac < 0) {
            frac += info->per_second;
            --secs;
        }
    }
    if (secs > (int64_t{1} << 52) || secs < -(int64_t{1} << 52)) return std::to_string(v);
    const int64_t s = secs;
    const int64_t days = FloorDiv(s, 86400), sod = s - days * 86400;
    int64_t y;
    unsigned m, d;
    CivilFromDays(days, y, m, d);
    int n = std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lld",
                          static_cast<long long>(y), m, d, static_cast<long long>(sod / 3600),
                          static_cast<long long>(sod / 60 % 60), static_cast<long long>(sod % 60));
    if (frac != 0 && n > 0)
        std::snprintf(buf + n, sizeof buf - static_cast<size_t>(n), ".%0*lld", info->digits,
                      static_cast<long long>(frac));
    return buf;
}

} // namespace

std::string TemporalUnit(const zarr3::DataType& dt) {
    if (!dt.is_temporal()) return {};
    const UnitInfo* info = Find(dt.time_unit);
    std::string words = info ? info->words : dt.time_unit;
    if (dt.time_unit == "Y") words = "years";
    if (dt.time_unit == "M") words = "months";
    if (dt.time_scale != 1) words = std::to_string(dt.time_scale) + " " + words;
    return dt.is_datetime() ? words + " since 1970-01-01T00:00:00" : words;
}

std::string TemporalText(int64_t v, const zarr3::DataType& dt) {
    if (v == zarr3::kNaT) return "NaT";
    if (dt.is_datetime()) return DateTimeText(v, dt);
    std::string u =
        dt.time_scale == 1 ? dt.time_unit : std::to_string(dt.time_scale) + dt.time_unit;
    return std::to_string(v) + " " + u;
}

std::optional<std::vector<int64_t>> TemporalCoordinateCounts(const zarr3::Array& a,
                                                             uint64_t max_elements) {
    const auto& m = a.metadata();
    if (!m.dtype.is_temporal() || m.rank() != 1 || m.shape[0] > max_elements) return std::nullopt;
    std::vector<int64_t> raw(static_cast<size_t>(m.shape[0]));
    if (!raw.empty())
        a.read(zarr3::Selection::all(m.shape), reinterpret_cast<uint8_t*>(raw.data()));
    return raw;
}

std::vector<std::string> TemporalCoordinateText(const std::vector<int64_t>& counts,
                                                const zarr3::DataType& dt) {
    std::vector<std::string> out;
    out.reserve(counts.size());
    for (int64_t v : counts)
        out.push_back(TemporalText(v, dt));
    return out;
}

} // namespace zarr3drv
