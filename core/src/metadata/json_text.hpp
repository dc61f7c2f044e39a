// Private: zarr.json text parsing shared by metadata.cpp and chunk_grid.cpp
// (nesting limit, error wording, and the one-pass array parse that keeps long
// rectilinear edge lists out of the DOM).
#pragma once

#include "zarr3/chunk_grid.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace zarr3::detail {

// Axes of chunk_grid.configuration.chunk_shapes (top level of the document)
// whose lists held only positive bare integers: parsed straight into runs and
// left as empty lists in the DOM. Keyed by axis index.
struct EdgeLists {
    std::map<size_t, AxisPartition> axes;
    bool seen = false; // a chunk_shapes list was met (the DOM is not the plain document)
};

// Parses JSON text (size and nesting limits, FormatError naming `where` and
// the byte). With `edges`, bare-integer edge lists go to `edges` instead of
// the DOM; anything else in a list (pairs, floats, negatives, zero, overflow,
// garbage) keeps the whole list in the DOM, exactly as written.
nlohmann::json parse_json(std::string_view text, const std::string& where, EdgeLists* edges);

// ChunkGrid::parse, taking the lists kept out of the DOM from `edges`.
ChunkGrid parse_chunk_grid(const nlohmann::json& j, const Shape& shape, const std::string& where,
                           EdgeLists* edges);

} // namespace zarr3::detail
