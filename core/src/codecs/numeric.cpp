// One element of a numeric data type as a number and back (scale_offset, cast_value).
#include "codecs/numeric.hpp"

#include <cmath>
#include <cstring>
#include <limits>

namespace zarr3::codecs {
namespace {

uint64_t get_le(const uint8_t* p, uint32_t n) {
    uint64_t v = 0;
    std::memcpy(&v, p, n); // little-endian host (common.hpp)
    return v;
}

Int128 int_min(const DataType& dt) {
    return dt.kind == DTypeKind::UInt ? 0 : -(Int128{1} << (8 * dt.size - 1));
}
Int128 int_max(const DataType& dt) {
    return dt.kind == DTypeKind::UInt ? (Int128{1} << (8 * dt.size)) - 1
                                      : (Int128{1} << (8 * dt.size - 1)) - 1;
}

double round_with(double d, Rounding r) {
    switch (r) {
    case Rounding::NearestEven:
        return std::nearbyint(d); // default environment: ties to even
    case Rounding::TowardsZero:
        return std::trunc(d);
    case Rounding::TowardsPositive:
        return std::ceil(d);
    case Rounding::TowardsNegative:
        return std::floor(d);
    case Rounding::NearestAway:
        return std::round(d);
    }
    return d;
}

[[noreturn]] void out_of_range(const std::string& what, const std::string& value,
                               const DataType& dt) {
    throw FormatError(what + ": value " + value + " is out of range for " + dt.name);
}

void store_int(const DataType& dt, Int128 i, uint8_t* p) {
    const auto u = static_cast<uint64_t>(i);
    std::memcpy(p, &u, dt.size);
}

// Integer target.
void store_integer(const DataType& dt, Num v, uint8_t* p, Rounding r, OutOfRange oor,
                   const std::string& what) {
    const Int128 lo = int_min(dt), hi = int_max(dt);
    Int128 i = 0;
    if (v.is_float) {
        if (std::isnan(v.f)) throw FormatError(what + ": NaN cannot be stored as " + dt.name);
        const double d = round_with(v.f, r);
        const double lim = std::ldexp(1.0, 100);
        if (std::isinf(d) || std::fabs(d) >= lim) {
            if (oor == OutOfRange::Clamp) {
                store_int(dt, d < 0 ? lo : hi, p);
                return;
            }
            out_of_range(what, std::to_string(v.f), dt);
        }
        i = static_cast<Int128>(d);
    } else {
        i = v.i;
    }
    if (i < lo || i > hi) {
        if (oor == OutOfRange::Error) out_of_range(what, std::to_string(v.as_double()), dt);
        if (oor == OutOfRange::Clamp) {
            i = i < lo ? lo : hi;
        } else { // wrap: two's complement modulo 2^bits
            const Int128 mod = Int128{1} << (8 * dt.size);
            i %= mod;
            if (i < 0) i += mod;
            if (i > hi) i -= mod;
        }
    }
    store_int(dt, i, p);
}

} // namespace

bool is_numeric(const DataType& dt) {
    return !dt.is_temporal() &&
           (dt.kind == DTypeKind::Int || dt.kind == DTypeKind::UInt || dt.kind == DTypeKind::Float);
}

Num load_num(const DataType& dt, const uint8_t* p) {
    Num n;
    const uint64_t u = get_le(p, dt.size);
    if (dt.kind == DTypeKind::Float) {
        n.is_float = true;
        n.f = dt.size == 2   ? half_to_float(static_cast<uint16_t>(u))
              : dt.size == 4 ? std::bit_cast<float>(static_cast<uint32_t>(u))
                             : std::bit_cast<double>(u);
    } else if (dt.kind == DTypeKind::UInt) {
        n.i = u;
    } else {
        const unsigned bits = 8 * dt.size;
        n.i = bits == 64 ? static_cast<int64_t>(u)
                         : static_cast<int64_t>(u << (64 - bits)) >> (64 - bits);
    }
    return n;
}

void store_num(const DataType& dt, Num v, uint8_t* p, Rounding r, OutOfRange oor,
               const std::string& what) {
    if (dt.kind != DTypeKind::Float) {
        store_integer(dt, v, p, r, oor, what);
        return;
    }
    const double d = v.as_double();
    const double maxv = dt.size == 2   ? 65504.0
                        : dt.size == 4 ? double(std::numeric_limits<float>::max())
                                       : std::numeric_limits<double>::max();
    double c = d;
    if (std::isfinite(d) && std::fabs(d) > maxv) {
        // Rounds to infinity in the target (beyond max + half an ulp) is out of range.
        const bool to_inf = dt.size == 2   ? std::isinf(half_to_float(float_to_half(float(d))))
                            : dt.size == 4 ? std::isinf(static_cast<float>(d))
                                           : false;
        if (to_inf) {
            if (oor == OutOfRange::Error || oor == OutOfRange::Wrap)
                out_of_range(what, std::to_string(d), dt);
            c = d < 0 ? -maxv : maxv;
        }
    }
    if (dt.size == 8) {
        std::memcpy(p, &c, 8);
    } else if (dt.size == 4) {
        const float f = static_cast<float>(c);
        std::memcpy(p, &f, 4);
    } else {
        // Through float: a double -> float -> half double rounding is possible; exact for the
        // values float16 arrays hold.
        const uint16_t h = float_to_half(static_cast<float>(c));
        std::memcpy(p, &h, 2);
    }
}

} // namespace zarr3::codecs
