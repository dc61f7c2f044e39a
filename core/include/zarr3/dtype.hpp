// Zarr v3 data types and fill values.
#pragma once

#include "zarr3/common.hpp"

#include <nlohmann/json_fwd.hpp>
#include <string_view>

namespace zarr3 {

// Utf32: fixed_length_utf32 (UTF-32 code points, zero-padded); NullTerminatedBytes:
// null_terminated_bytes. numpy.datetime64 / numpy.timedelta64 are Int (int64
// storage) with `time_unit` set. String: `string` (variable-length UTF-8, the
// vlen-utf8 codec); its elements have no fixed size (size 0): it is read and
// written with Array::read_strings / write_strings, and its fill value bytes
// are the UTF-8 text of the fill string.
enum class DTypeKind { Bool, Int, UInt, Float, Complex, Raw, Utf32, NullTerminatedBytes, String };

struct DataType {
    std::string name; // canonical v3 name: "int16", "float32", "complex64", "r24", ...
    DTypeKind kind = DTypeKind::Raw;
    uint32_t size = 1; // bytes per element
    uint32_t swap_unit =
        1; // byte-swap unit for the bytes codec (component size for complex, 1 for raw)
    // numpy.datetime64 / numpy.timedelta64 only: unit ("s", "ms", "D", ... or "generic") and
    // scale factor (1..2^31-1); one stored unit is scale_factor x unit. Empty otherwise.
    std::string time_unit;
    uint32_t time_scale = 0;

    bool is_temporal() const { return !time_unit.empty(); }
    bool is_datetime() const { return is_temporal() && name.find("datetime") != std::string::npos; }
    // Variable-length elements (data type `string`).
    bool is_variable() const { return kind == DTypeKind::String; }
    bool operator==(const DataType& o) const {
        return name == o.name && size == o.size && time_unit == o.time_unit &&
               time_scale == o.time_scale;
    }
};

// The int64 value standing for NaT ("not a time") in datetime64 / timedelta64.
constexpr int64_t kNaT = INT64_MIN;

// Parses a bare name or {"name": ..., "configuration": ...}. `where` names the
// file/member for errors. Throws FormatError for unknown or malformed types.
DataType parse_data_type(const nlohmann::json& j, const std::string& where);
DataType data_type_from_name(const std::string& name); // throws Error on unknown
nlohmann::json data_type_to_json(const DataType& dt);

// Returns the fill value of one element as little-endian bytes (dt.size bytes; for
// `string` the UTF-8 bytes of the text).
Bytes parse_fill_value(const nlohmann::json& j, const DataType& dt, const std::string& where);
nlohmann::json fill_value_to_json(ByteView value, const DataType& dt);

// fixed_length_utf32 element (UTF-32 LE code points, zero-padded) <-> UTF-8 text. Decoding
// stops at the first zero code point; invalid code points (surrogates, past U+10FFFF)
// throw FormatError naming the code point. Encoding throws
// Error when the text is not valid UTF-8 or has more characters than fit in `nbytes`.
std::string utf32_to_utf8(const uint8_t* p, size_t nbytes);
void utf8_to_utf32(const std::string& text, uint8_t* out, size_t nbytes);
// Offset of the first byte that is not part of valid UTF-8 in `text` (overlong forms and
// surrogates are invalid), or npos when all of it is valid.
size_t invalid_utf8_at(std::string_view text);

// Explicit mantissa bits of a floating-point type (float16 10, float32 23, float64 52); 0 for
// any other type.
unsigned mantissa_bits(const DataType& dt);

// IEEE half <-> single conversions (exact for every half value, round-to-nearest-even back).
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);

} // namespace zarr3
