// Read options the driver applies to every array it opens.
#pragma once

#include "zarr3/array.hpp"

namespace zarr3drv {

// ZARR3_COALESCE_GAP (bytes, default 16384): inner-chunk ranges of a shard
// separated by at most this many bytes are fetched in one request.
// ZARR3_SHARD_INDEX_CACHE_MB (default 64): size of the process-wide cache of
// decoded shard indexes. GDAL_NUM_THREADS: parallel chunk decoding.
zarr3::ReadOptions MakeReadOptions();

// Applies MakeReadOptions() to an opened array.
void ConfigureArray(zarr3::Array& array);

} // namespace zarr3drv
