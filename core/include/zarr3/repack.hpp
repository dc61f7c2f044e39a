// What stored values mean (CF packing and nodata) and the exact conversion of
// an append's source values into the target array's representation.
#pragma once

#include "zarr3/dtype.hpp"

#include <optional>
#include <string>

namespace zarr3 {

// A band's representation: value = raw * scale + offset; `nodata` a raw value
// meaning "no value" (none when absent).
struct Packing {
    double scale = 1.0, offset = 0.0;
    std::optional<double> nodata;
};

// How a value the target's packing cannot hold exactly is treated: refused
// (Exact), or rounded to the nearest raw value of the target (Nearest: an
// error of at most half the target's scale).
enum class RepackRounding { Exact, Nearest };

// Converts raw values of `from` into raw values of `to` stored as `target`:
// unpacked with `from`, repacked with `to`; `from`'s nodata becomes `to`'s.
// Error naming `where`, both packings and the problem: `from` has nodata and
// `to` none (its nodata pixels would become data); a value outside `target`'s
// range; a value that lands on `to`'s nodata (it would become nodata); with
// Exact, a value between two raw values of the target (the message names
// `nearest_option`, which rounds). 64-bit integer targets convert only when
// the conversion is the identity (doubles hold 53 bits).
class Repacker {
  public:
    Repacker(Packing from, Packing to, const DataType& target, RepackRounding rounding,
             std::string where, std::string nearest_option);
    // Nothing to convert: same scale and offset, and the same nodata (or the
    // source has none). The values are then stored as they are.
    bool identity() const { return identity_; }
    // Converts `n` raw values in place (identity: unchanged).
    void convert(double* v, size_t n) const;
    // "scale 0.002, offset 270, nodata -32768" for messages.
    static std::string describe(const Packing& p);

  private:
    double convert_one(double v) const;
    [[noreturn]] void fail(double v, const std::string& why) const;

    Packing from_, to_;
    DataType target_;
    RepackRounding rounding_;
    std::string where_, option_;
    bool identity_ = false, integer_ = false;
    double lo_ = 0, hi_ = 0; // the target's range
};

} // namespace zarr3
