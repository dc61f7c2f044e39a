// Private to the value codecs (scale_offset, cast_value): one element of a numeric
// data type as a number, and back, with the rounding and out-of-range rules of
// cast_value.
#pragma once

#include "zarr3/dtype.hpp"

#include <string>

namespace zarr3::codecs {

__extension__ typedef __int128 Int128;

// An element's value: floats as double, integers exactly.
struct Num {
    bool is_float = false;
    double f = 0;
    Int128 i = 0;
    double as_double() const { return is_float ? f : static_cast<double>(i); }
};

enum class Rounding { NearestEven, TowardsZero, TowardsPositive, TowardsNegative, NearestAway };
enum class OutOfRange { Error, Clamp, Wrap };

// True for int8..int64, uint8..uint64 and float16/32/64 (not temporal types).
bool is_numeric(const DataType& dt);
Num load_num(const DataType& dt, const uint8_t* p);
// Stores `v` as `dt`; `what` names the codec for the error raised when the value
// does not fit (or is NaN for an integer type) and `oor` is Error.
void store_num(const DataType& dt, Num v, uint8_t* p, Rounding r, OutOfRange oor,
               const std::string& what);

} // namespace zarr3::codecs
