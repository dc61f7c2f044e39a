// Private: array metadata checks shared by parse_array_metadata (metadata.cpp)
// and ArrayBuilder::build (builder.cpp), so a built array passes exactly the
// checks a parsed one does.
#pragma once

#include "zarr3/metadata.hpp"

#include <string>

namespace zarr3::detail {

// The largest chunk (shard) must stay decodable (at most kMaxChunkBytes):
// FormatError naming `where` and chunk_grid.
void check_largest_chunk(const ArrayMetadata& m, const std::string& where);

// Sets m.codecs_json (entries normalised to objects) and m.codecs from a
// non-empty "codecs" list, for chunks of m.grid, and checks the grid against
// the codecs (sharding divisibility). Needs m.shape, dtype, grid, fill_value.
void set_codecs(ArrayMetadata& m, const nlohmann::json& codecs, const std::string& where);

} // namespace zarr3::detail
