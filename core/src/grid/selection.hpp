// Planning of hyperslab requests: which chunks a selection touches, and the
// region and caller-buffer offset of each.
#pragma once

#include "zarr3/array.hpp"
#include "zarr3/chunk_grid.hpp"
#include "zarr3/strided.hpp"

#include <algorithm>

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

// The chunks along one axis holding elements start + k*step (k < count),
// in order, each with its part of the selection. `Axis` answers
// chunk_index(e), chunk_start(c) and chunk_edge(c): an AxisPartition (the
// array's chunk grid) or a RegularAxis (inner chunks of a shard).
template <class Axis>
std::vector<AxisPiece> axis_pieces(const Axis& axis, uint64_t start, uint64_t count,
                                   uint64_t step) {
    std::vector<AxisPiece> out;
    uint64_t k = 0;
    while (k < count) {
        const uint64_t e = start + k * step;
        const uint64_t c = axis.chunk_index(e);
        const uint64_t cs = axis.chunk_start(c);
        const uint64_t cend = cs + axis.chunk_edge(c); // exclusive
        // last k with start + k*step < cend
        const uint64_t k_hi = std::min(count - 1, (cend - 1 - start) / step);
        out.push_back({c, k, k_hi - k + 1, e - cs});
        k = k_hi + 1;
    }
    return out;
}

// Chunks of one edge along an axis (the inner chunks of a shard).
struct RegularAxis {
    uint64_t edge;
    uint64_t chunk_index(uint64_t e) const { return e / edge; }
    uint64_t chunk_start(uint64_t c) const { return c * edge; }
    uint64_t chunk_edge(uint64_t) const { return edge; }
};

struct ChunkTask {
    std::vector<uint64_t> idx;
    Region region;
    int64_t view_offset; // bytes from the caller's base pointer
};

std::vector<ChunkTask> plan_chunk_tasks(const ChunkGrid& grid, const PlannedSelection& ps);

} // namespace zarr3
