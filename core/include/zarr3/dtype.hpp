// Zarr v3 data types and fill values.
#pragma once

#include "zarr3/common.hpp"

#include <nlohmann/json_fwd.hpp>

namespace zarr3 {

enum class DTypeKind { Bool, Int, UInt, Float, Complex, Raw };

struct DataType {
    std::string name; // canonical v3 name: "int16", "float32", "complex64", "r24", ...
    DTypeKind kind = DTypeKind::Raw;
    uint32_t size = 1; // bytes per element
    uint32_t swap_unit =
        1; // byte-swap unit for the bytes codec (component size for complex, 1 for raw)

    bool operator==(const DataType& o) const { return name == o.name; }
};

// Parses a bare name or {"name": ..., "configuration": ...}. `where` names the
// file/member for errors. Throws FormatError for unknown or malformed types.
DataType parse_data_type(const nlohmann::json& j, const std::string& where);
DataType data_type_from_name(const std::string& name); // throws Error on unknown
nlohmann::json data_type_to_json(const DataType& dt);

// Returns the fill value of one element as little-endian bytes (dt.size bytes).
Bytes parse_fill_value(const nlohmann::json& j, const DataType& dt, const std::string& where);
nlohmann::json fill_value_to_json(ByteView value, const DataType& dt);

// IEEE half <-> single conversions (exact for every half value, round-to-nearest-even back).
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);

} // namespace zarr3
