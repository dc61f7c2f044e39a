// The step values a source states for its bands (append_steps.hpp).
#include "classic/append_steps.hpp"

#include "zarr3/cf_time.hpp"
#include "zarr3/common.hpp"

#include <cpl_string.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace zarr3drv {

namespace {

std::string SourceName(GDALDataset* src) {
    const char* d = src->GetDescription();
    return d && *d ? d : "the source";
}

// The source's extra netCDF dimensions ("{time,level}" -> time, level).
std::vector<std::string> ExtraDims(GDALDataset* src) {
    std::vector<std::string> out;
    const char* extra = src->GetMetadataItem("NETCDF_DIM_EXTRA");
    if (!extra) return out;
    const CPLStringList parts(
        CSLTokenizeString2(extra, "{},", CSLT_STRIPLEADSPACES | CSLT_STRIPENDSPACES));
    for (int i = 0; i < parts.size(); ++i)
        if (*parts[i]) out.emplace_back(parts[i]);
    return out;
}

std::string Item(GDALDataset* src, const std::string& key) {
    const char* v = src->GetMetadataItem(key.c_str());
    return v ? v : "";
}

// The source's dimension holding the steps: `dim` itself when the source has it, else its one
// extra dimension with CF time units; "" when none.
std::string SourceDim(GDALDataset* src, const std::string& dim) {
    const auto dims = ExtraDims(src);
    for (const auto& d : dims)
        if (d == dim) return d;
    std::string found;
    for (const auto& d : dims)
        if (zarr3::parse_cf_time_units(Item(src, d + "#units"))) {
            if (!found.empty()) return ""; // two time dimensions: which one is ambiguous
            found = d;
        }
    return found;
}

double NumberOf(const char* text, const std::string& where) {
    char* end = nullptr;
    const double v = CPLStrtod(text, &end);
    while (end && *end == ' ')
        ++end;
    if (!*text || !end || *end != 0 || !std::isfinite(v))
        throw zarr3::Error(where + ": \"" + text + "\" is not a number");
    return v;
}

// The date of `v` in `units`, refused when the calendar's dates are not Gregorian ones or the
// time is not a whole second (the stored coordinate would not be the source's time).
std::string DateText(double v, const zarr3::CfTimeUnits& units, const SourceSteps& s,
                     const std::string& where) {
    const auto t = zarr3::cf_civil_of(units, v);
    if (!zarr3::cf_calendar_is_gregorian_at(s.calendar, t))
        throw zarr3::Error(where + ": calendar \"" + s.calendar +
                           "\" (its dates are not the proleptic Gregorian ones the coordinate "
                           "stores): give the dates with -co APPEND_COORD");
    if (std::fabs(t.seconds - std::round(t.seconds)) > 1e-6)
        throw zarr3::Error(where + ": " + CPLSPrintf("%.17g", v) + " " + s.units +
                           " is not a whole second: give the values with -co APPEND_COORD");
    return zarr3::format_civil(t);
}

std::optional<SourceSteps> NetcdfSteps(GDALDataset* src, const std::string& dim) {
    const std::string sdim = SourceDim(src, dim);
    if (sdim.empty()) return std::nullopt;
    SourceSteps s;
    s.item = "NETCDF_DIM_" + sdim;
    s.units = Item(src, sdim + "#units");
    s.calendar = Item(src, sdim + "#calendar");
    const auto units = zarr3::parse_cf_time_units(s.units);
    for (int b = 1; b <= src->GetRasterCount(); ++b) {
        const char* v = src->GetRasterBand(b)->GetMetadataItem(s.item.c_str());
        if (!v) return std::nullopt;
        const std::string where = SourceName(src) + ", band " + std::to_string(b) + " " + s.item;
        s.values.push_back(NumberOf(v, where));
        s.texts.push_back(units ? DateText(s.values.back(), *units, s, where) : std::string(v));
    }
    return s;
}

std::optional<SourceSteps> GribSteps(GDALDataset* src) {
    SourceSteps s;
    s.item = "GRIB_VALID_TIME";
    s.units = "seconds since 1970-01-01";
    const auto units = zarr3::parse_cf_time_units(s.units);
    for (int b = 1; b <= src->GetRasterCount(); ++b) {
        const char* v = src->GetRasterBand(b)->GetMetadataItem(s.item.c_str());
        if (!v) return std::nullopt;
        // "1672531200", or "  1672531200 sec UTC" as older GDAL writes it.
        std::string text(v);
        if (const auto p = text.find(" sec"); p != std::string::npos) text.resize(p);
        const std::string where = SourceName(src) + ", band " + std::to_string(b) + " " + s.item;
        s.values.push_back(NumberOf(CPLString(text).Trim().c_str(), where));
        s.texts.push_back(DateText(s.values.back(), *units, s, where));
    }
    return s;
}

} // namespace

// `v` as one little-endian element of `dt`. An integer type takes only an
// integral value in its range: checked before any cast (a cast of 1e30 or NaN
// is undefined behaviour and gives INT64_MIN, numpy's NaT, on x86).
zarr3::Bytes EncodeCoordinate(double v, const zarr3::DataType& dt, const std::string& where) {
    zarr3::Bytes b(dt.size);
    auto put = [&](auto x) { std::memcpy(b.data(), &x, sizeof x); };
    auto in = [&](auto lo, auto hi) {
        const auto i = zarr3::exact_int64(v);
        return i && *i >= static_cast<int64_t>(lo) && *i <= static_cast<int64_t>(hi);
    };
    constexpr double kTwo64 = 18446744073709551616.0; // exact; uint64 values are below
    if (dt.name == "float64")
        put(v);
    else if (dt.name == "float32" && !(std::fabs(v) > std::numeric_limits<float>::max()))
        put(static_cast<float>(v));
    else if (dt.name == "int64" && zarr3::exact_int64(v))
        put(*zarr3::exact_int64(v));
    else if (dt.name == "int32" && in(INT32_MIN, INT32_MAX))
        put(static_cast<int32_t>(v));
    else if (dt.name == "uint32" && in(0, UINT32_MAX))
        put(static_cast<uint32_t>(v));
    else if (dt.name == "uint64" && v >= 0 && v < kTwo64 && std::trunc(v) == v)
        put(static_cast<uint64_t>(v));
    else
        throw zarr3::Error(where + ": the value " + CPLSPrintf("%.17g", v) +
                           " cannot be stored as " + dt.name +
                           " (not an integer, or out of its range)");
    return b;
}

// `v` read back from one little-endian element of `dt` (the types EncodeCoordinate
// writes; NaN for others).
double DecodeCoordinate(const uint8_t* p, const zarr3::DataType& dt) {
    auto get = [&](auto x) {
        std::memcpy(&x, p, sizeof x);
        return static_cast<double>(x);
    };
    if (dt.name == "float64") return get(double{});
    if (dt.name == "float32") return get(float{});
    if (dt.name == "int64") return get(int64_t{});
    if (dt.name == "int32") return get(int32_t{});
    if (dt.name == "uint32") return get(uint32_t{});
    if (dt.name == "uint64") return get(uint64_t{});
    return std::numeric_limits<double>::quiet_NaN();
}

std::optional<SourceSteps> SourceStepValues(GDALDataset* src, const std::string& dim) {
    if (!src || src->GetRasterCount() < 1) return std::nullopt;
    if (auto s = NetcdfSteps(src, dim)) return s;
    return GribSteps(src);
}

} // namespace zarr3drv
