// The fixed sharded array fuzz_shard reads, shared with the seed generator.
// Header byte bits: 0 index at start, 1-2 inner codecs (bytes / +gzip /
// +zstd / +crc32c), 3 recompute the index crc32c, 5 array shape 13x16.
#pragma once

#include "zarr3/codec.hpp"

#include <nlohmann/json.hpp>

namespace fuzzshard {

constexpr uint64_t kIndexBytes = 16 * 16 + 4; // 4x4 inner chunks, crc32c

inline nlohmann::json metadata(uint8_t variant) {
    using nlohmann::json;
    json inner = json::array({json{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}});
    switch ((variant >> 1) & 3) {
    case 1:
        inner.push_back(json{{"name", "gzip"}, {"configuration", {{"level", 1}}}});
        break;
    case 2:
        inner.push_back(json{{"name", "zstd"}, {"configuration", {{"level", 1}}}});
        break;
    case 3:
        inner.push_back(json{{"name", "crc32c"}});
        break;
    default:
        break;
    }
    const uint64_t rows = (variant & 0x20) ? 13 : 16;
    return json{
        {"zarr_format", 3},
        {"node_type", "array"},
        {"shape", {rows, 16}},
        {"data_type", "uint16"},
        {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", {16, 16}}}}}},
        {"chunk_key_encoding", {{"name", "default"}, {"configuration", {{"separator", "/"}}}}},
        {"fill_value", 7},
        {"codecs",
         json::array({json{
             {"name", "sharding_indexed"},
             {"configuration",
              {{"chunk_shape", {4, 4}},
               {"codecs", inner},
               {"index_codecs",
                json::array({json{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                             json{{"name", "crc32c"}}})},
               {"index_location", (variant & 1) ? "start" : "end"}}}}})},
        {"attributes", json::object()}};
}

// Rewrites the crc32c of the index so the fuzzer can explore the entries.
inline void fix_index_crc(zarr3::Bytes& shard, bool at_start) {
    if (shard.size() < kIndexBytes) return;
    const size_t off = at_start ? 0 : shard.size() - kIndexBytes;
    const uint32_t c = zarr3::crc32c(zarr3::ByteView(shard.data() + off, kIndexBytes - 4));
    for (int i = 0; i < 4; ++i)
        shard[off + kIndexBytes - 4 + i] = uint8_t(c >> (8 * i));
}

} // namespace fuzzshard
