// The layout of a copy of a Zarr array (gdal_translate, gdalmdimtranslate, CreateCopy): the
// source's chunk grid cut to the copied range, its sharding and its codecs, over the metadata the
// creation options give.
#pragma once

#include "zarr3/chunk_grid.hpp"
#include "zarr3/metadata.hpp"

#include <cstdint>
#include <vector>

namespace zarr3 {

// [start, end) along one axis.
struct AxisRange {
    uint64_t start = 0;
    uint64_t end = 0;
};

// The partition of the elements [start, end) of `axis` as a copy of that range holds them: a
// regular axis stays regular with its edge; an explicit (rectilinear) axis keeps the edges of the
// chunks the range meets, the first and the last cut to the range. Throws Error for an empty range
// or one past the axis' length.
AxisPartition cut_axis(const AxisPartition& axis, uint64_t start, uint64_t end);
// Every axis of `grid` cut to its range (one per axis); a regular grid stays regular.
ChunkGrid cut_grid(const ChunkGrid& grid, const std::vector<AxisRange>& ranges);

// The parts of a copy's layout that the creation options name (taken from them, not from the
// source).
struct CopyOverrides {
    bool grid = false;     // chunk grid
    bool sharding = false; // sharding_indexed (inner chunk shape, index codecs, index location)
    bool codecs = false;   // the codec chain of a chunk (of an inner chunk when sharded)
};

// The metadata of a copy of the region `ranges` of the array `src`, over `base` (what the creation
// options give for the copy: shape, data type, fill value, names, attributes, key encoding): the
// source's chunk grid cut to the ranges, its sharding and its codec chain, each unless `overrides`
// names it. A part that no longer applies (the region's shape is not base's, another rank, a codec
// that does not take base's data type, an inner chunk that does not divide the cut grid) is base's
// instead; never throws for that.
ArrayMetadata copy_layout(const ArrayMetadata& src, const std::vector<AxisRange>& ranges,
                          const ArrayMetadata& base, CopyOverrides overrides);

// The metadata of a copy of the region `ranges` of `m` as it is (a coordinate array cut with its
// data): m's with the region's shape and m's grid cut to it; its sharding when it still divides the
// cut grid, else the inner codecs alone. Throws Error when the ranges do not fit m's shape.
ArrayMetadata region_metadata(const ArrayMetadata& m, const std::vector<AxisRange>& ranges);

} // namespace zarr3
