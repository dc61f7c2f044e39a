// Chunk key encodings: "default" (c/0/1 or c.0.1) and "v2" (0.1).
#pragma once

#include "zarr3/common.hpp"

#include <nlohmann/json_fwd.hpp>

namespace zarr3 {

class ChunkKeyEncoding {
  public:
    enum class Kind { Default, V2 };
    ChunkKeyEncoding() = default;
    ChunkKeyEncoding(Kind k, char sep) : kind_(k), sep_(sep) {}
    static ChunkKeyEncoding parse(const nlohmann::json& j, const std::string& where);
    std::string key(const std::vector<uint64_t>& idx) const;
    nlohmann::json to_json() const;
    Kind kind() const { return kind_; }
    char separator() const { return sep_; }

  private:
    Kind kind_ = Kind::Default;
    char sep_ = '/';
};

} // namespace zarr3
