// Private JSON helpers shared by the metadata parsers (dtype, chunk grid, metadata).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace zarr3::detail {

// The value of a JSON integer >= 0 (however nlohmann stored it), or nullopt for
// anything else: negatives, floats (even integral ones), numbers beyond 64 bits.
inline std::optional<uint64_t> json_uint(const nlohmann::json& j) {
    if (j.is_number_unsigned()) return j.get<uint64_t>();
    if (j.is_number_integer() && j.get<int64_t>() >= 0)
        return static_cast<uint64_t>(j.get<int64_t>());
    return std::nullopt;
}

// JSON text shortened for error messages.
inline std::string dump_short(const nlohmann::json& j) {
    std::string s = j.dump();
    if (s.size() > 80) s = s.substr(0, 77) + "...";
    return s;
}

// FormatError "<where>: <member>: <msg>".
[[noreturn]] void fail_member(const std::string& where, const std::string& member,
                              const std::string& msg);

} // namespace zarr3::detail
