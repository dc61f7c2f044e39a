// Planning of hyperslab requests: which chunks a selection touches, and the
// region and caller-buffer offset of each.
#pragma once

#include "zarr3/array.hpp"
#include "zarr3/chunk_grid.hpp"
#include "zarr3/strided.hpp"

namespace zarr3 {

// An ascending selection (steps >= 1) with the caller view adjusted for any
// negative steps of the original request.
struct PlannedSelection {
    Shape start, count;
    std::vector<uint64_t> step;
    std::vector<int64_t> strides; // caller byte strides, sign-adjusted
    int64_t base_offset = 0;      // byte offset of the first (lowest-index) element
    bool empty = false;
};

PlannedSelection plan_selection(const Selection& sel, const Shape& shape,
                                const std::vector<int64_t>& strides, size_t elem,
                                const std::string& where);

struct AxisPiece {
    uint64_t chunk;    // chunk index along the axis
    uint64_t k0;       // first selection index inside the chunk
    uint64_t count;    // selected elements inside the chunk
    uint64_t in_chunk; // offset of the first one inside the chunk
};

std::vector<AxisPiece> axis_pieces(const AxisPartition& axis, uint64_t start, uint64_t count,
                                   uint64_t step);

struct ChunkTask {
    std::vector<uint64_t> idx;
    Region region;
    int64_t view_offset; // bytes from the caller's base pointer
};

std::vector<ChunkTask> plan_chunk_tasks(const ChunkGrid& grid, const PlannedSelection& ps);

} // namespace zarr3
