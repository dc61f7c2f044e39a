// Unpacking and repacking an append's values (repack.hpp).
#include "zarr3/repack.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace zarr3 {

namespace {

// The shortest text that reads back as v ("280", "0.002").
std::string num(double v) {
    char b[64];
    const auto r = std::to_chars(b, b + sizeof b, v);
    return std::string(b, r.ptr);
}

bool same_nodata(const std::optional<double>& a, const std::optional<double>& b) {
    if (!a || !b) return !a && !b;
    return *a == *b || (std::isnan(*a) && std::isnan(*b));
}

// The range of an integer or float data type; false for other types.
bool type_range(const DataType& dt, double& lo, double& hi, bool& integer) {
    integer = dt.kind == DTypeKind::Int || dt.kind == DTypeKind::UInt;
    if (dt.kind == DTypeKind::Float) {
        hi = dt.size == 4   ? std::numeric_limits<float>::max()
             : dt.size == 8 ? std::numeric_limits<double>::max()
                            : 65504.0;
        lo = -hi;
        return true;
    }
    if (!integer || dt.size > 8 || dt.is_temporal()) return false;
    const double bits = 8.0 * dt.size;
    if (dt.kind == DTypeKind::Int) {
        lo = -std::ldexp(1.0, static_cast<int>(bits) - 1);
        hi = std::ldexp(1.0, static_cast<int>(bits) - 1) - 1;
    } else {
        lo = 0;
        hi = std::ldexp(1.0, static_cast<int>(bits)) - 1;
    }
    return true;
}

} // namespace

std::string Repacker::describe(const Packing& p) {
    return "scale " + num(p.scale) + ", offset " + num(p.offset) + ", nodata " +
           (p.nodata ? num(*p.nodata) : std::string("none"));
}

Repacker::Repacker(Packing from, Packing to, const DataType& target, RepackRounding rounding,
                   std::string where, std::string nearest_option)
    : from_(from), to_(to), target_(target), rounding_(rounding), where_(std::move(where)),
      option_(std::move(nearest_option)) {
    const bool same_packing = from.scale == to.scale && from.offset == to.offset;
    identity_ = same_packing && (!from.nodata || same_nodata(from.nodata, to.nodata));
    if (identity_) return;
    if (from.nodata && !to.nodata)
        throw Error(where_ + ": the source's nodata " + num(*from.nodata) +
                    " has no counterpart: the array has no nodata, so those pixels would "
                    "become data (source " +
                    describe(from) + "; array " + describe(to) + ")");
    if (!(std::isfinite(from.scale) && std::isfinite(from.offset) && from.scale != 0 &&
          std::isfinite(to.scale) && std::isfinite(to.offset) && to.scale != 0))
        throw Error(where_ + ": cannot convert between source " + describe(from) + " and array " +
                    describe(to) + " (a scale is 0 or not finite)");
    if (!type_range(target, lo_, hi_, integer_) || (integer_ && target.size == 8))
        throw Error(where_ + ": the source's values (" + describe(from) +
                    ") differ in meaning from the array's (" + describe(to) +
                    ") and cannot be converted into " + target.name +
                    "; convert the source first (gdal_translate -a_scale -a_offset -a_nodata)");
}

void Repacker::fail(double v, const std::string& why) const {
    throw Error(where_ + ": source value " + num(v) + " (source " + describe(from_) +
                ") cannot be stored in the array (" + describe(to_) + ", " + target_.name +
                "): " + why + "; nothing was appended");
}

double Repacker::convert_one(double v) const {
    if (from_.nodata && (v == *from_.nodata || (std::isnan(v) && std::isnan(*from_.nodata))))
        return *to_.nodata;
    if (std::isnan(v)) {
        if (integer_) fail(v, "NaN has no integer representation");
        return v;
    }
    double r = (v * from_.scale + from_.offset - to_.offset) / to_.scale;
    if (integer_) {
        const double n = std::nearbyint(r);
        const double tol = 1e-9 * std::max(1.0, std::fabs(r));
        if (std::fabs(r - n) > tol && rounding_ == RepackRounding::Exact)
            fail(v, "its value " + num(v * from_.scale + from_.offset) +
                        " lies between two steps of the array's packing (raw " + num(r) +
                        "); -co " + option_ + " rounds to the nearest step");
        r = n;
    }
    if (!(r >= lo_ && r <= hi_)) fail(v, "raw value " + num(r) + " is out of range");
    if (same_nodata(to_.nodata, r)) fail(v, "it would become the array's nodata");
    return r;
}

void Repacker::convert(double* v, size_t n) const {
    if (identity_) return;
    for (size_t i = 0; i < n; ++i)
        v[i] = convert_one(v[i]);
}

} // namespace zarr3
