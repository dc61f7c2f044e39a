// Read options the driver applies to every array it opens.
#pragma once

#include "zarr3/array.hpp"
#include "zarr3/chunk_cache.hpp"

namespace zarr3drv {

// ZARR3_COALESCE_GAP (bytes, default 16384): inner-chunk ranges of a shard
// separated by at most this many bytes are fetched in one request.
// ZARR3_SHARD_INDEX_CACHE_MB (default 64): size of the process-wide cache of
// decoded shard indexes. GDAL_NUM_THREADS: parallel chunk decoding.
zarr3::ReadOptions MakeReadOptions();

// Applies MakeReadOptions() to an opened array, with the cache of decoded
// chunks of its dataset (DatasetChunkCache).
void ConfigureArray(zarr3::Array& array);

// The cache of decoded chunks of the dataset whose arrays live in `store`:
// one per opened dataset (the store an open builds, StoreToOpen, under its
// adapters), shared by its classic view, overviews, coordinate arrays and
// multidimensional arrays. Bounded by ZARR3_CHUNK_CACHE_MB when set, else a
// quarter of GDAL_CACHEMAX (GDALGetCacheMax64). Null when
// ZARR3_CHUNK_CACHE=NO (or a bound of 0).
std::shared_ptr<zarr3::ChunkCache> DatasetChunkCache(zarr3::Store& store);

// The bound DatasetChunkCache gives a new cache (0: none).
uint64_t ChunkCacheBound();

} // namespace zarr3drv
