// Private to dtype.cpp (and its tests): the data types from zarr-extensions that
// take a configuration or a non-numeric fill value: numpy.datetime64,
// numpy.timedelta64, fixed_length_utf32, null_terminated_bytes, string; and the names of
// types known but not supported, for messages that say so.
#pragma once

#include "zarr3/dtype.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace zarr3::detail {

// The extension type `name` with `config` (null when absent); nullopt when
// `name` is not one of them. FormatError naming `where` for a bad configuration.
std::optional<DataType> parse_extension_type(const std::string& name, const nlohmann::json& config,
                                             const std::string& where);
// {"name", "configuration"} of an extension type; nullopt for a core type.
std::optional<nlohmann::json> extension_type_to_json(const DataType& dt);
// Appends the fill value of an extension type (true) or returns false for a core type.
bool parse_extension_fill(const nlohmann::json& j, const DataType& dt, Bytes& out,
                          const std::string& where);
std::optional<nlohmann::json> extension_fill_to_json(ByteView value, const DataType& dt);
// Why a data type zarr-python or zarrs may write is not read here ("" when unknown).
std::string unsupported_type_note(const std::string& name);

} // namespace zarr3::detail
