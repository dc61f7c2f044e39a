// Chunk key encodings: "default" (c/0/1 or c.0.1) and "v2" (0.1).
#pragma once

#include "zarr3/common.hpp"

#include <nlohmann/json_fwd.hpp>

#include <optional>

namespace zarr3 {

class ChunkKeyEncoding {
  public:
    enum class Kind { Default, V2 };
    ChunkKeyEncoding() = default;
    ChunkKeyEncoding(Kind k, char sep) : kind_(k), sep_(sep) {}
    static ChunkKeyEncoding parse(const nlohmann::json& j, const std::string& where);
    std::string key(const std::vector<uint64_t>& idx) const;
    // The chunk coordinates `key` (relative to the array) names under this
    // encoding, or nullopt when it is not the canonical key of a chunk of an
    // `ndim`-dimensional array (key(coords(k)) == k).
    std::optional<std::vector<uint64_t>> coords(const std::string& key, size_t ndim) const;
    nlohmann::json to_json() const;
    Kind kind() const { return kind_; }
    char separator() const { return sep_; }

  private:
    Kind kind_ = Kind::Default;
    char sep_ = '/';
};

} // namespace zarr3
