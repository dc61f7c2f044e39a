// What compact_array (compact.cpp) and compact_array_into (compact_into.cpp)
// share: which chunks of the new grid hold what an old chunk holds.
#pragma once

#include "zarr3/compact.hpp"

#include <optional>

namespace zarr3::compact_detail {

// The index of the old chunk (grid of `om`) with the same origin and edges
// as chunk `idx` of `nm` (the same grid but along `axis`): its stored bytes
// are the new chunk's. nullopt when no old chunk covers exactly that.
std::optional<std::vector<uint64_t>> same_old_chunk(const ArrayMetadata& om,
                                                    const ArrayMetadata& nm, size_t axis,
                                                    const std::vector<uint64_t>& idx);

// Whether every chunk of `nm` along `axis` is the old chunk of the same index.
bool edges_unchanged(const ArrayMetadata& om, const ArrayMetadata& nm, size_t axis);

// The counts and axes of a compaction from `om` to `nm`; `unchanged` (and
// every chunk kept) when the edges are already these.
CompactResult start_result(const ArrayMetadata& om, const ArrayMetadata& nm, size_t axis);

} // namespace zarr3::compact_detail
