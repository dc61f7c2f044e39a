// Run-time limits that bound the work and memory a hostile store can cause.
// Process-wide. A host (the GDAL driver) may install a LimitSource that
// supplies its own values (e.g. from configuration options); without one, or
// where it returns nullopt, the defaults below apply.
#pragma once

#include "zarr3/common.hpp"

#include <optional>
#include <string>

namespace zarr3 {

enum class Limit {
    JsonNodes,         // values (objects, lists, scalars) in one JSON document
    DecodedChunkBytes, // bytes of one decoded chunk (or shard decoded whole)
};

// Defaults: 4 million JSON values (a DOM of a few hundred MB at most; a
// zarr.json of consolidated metadata for ~100,000 arrays fits), and 1 GiB per
// decoded chunk.
constexpr uint64_t kDefaultMaxJsonNodes = 4'000'000;
constexpr uint64_t kDefaultMaxDecodedChunkBytes = 1ull << 30;

// Returns the host's value of a limit, or nullopt for the default. Called on
// each check (cheap calls only); must be thread-safe.
using LimitSource = std::optional<uint64_t> (*)(Limit);
void set_limit_source(LimitSource source); // nullptr = defaults

// Values in force: the source's (0 means "no limit" is not accepted: 0 and
// values out of range fall back to the default; the chunk cap is at most
// kMaxChunkBytes).
uint64_t max_json_nodes();
uint64_t max_decoded_chunk_bytes();

// FormatError naming `what` (the chunk) when a decoded chunk of `n` bytes
// (shape `shape`) is above max_decoded_chunk_bytes(); call before allocating.
void check_decoded_chunk_size(uint64_t n, const Shape& shape, const std::string& what);

} // namespace zarr3
