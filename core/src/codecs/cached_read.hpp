// Chunk reads through the cache of decoded chunks (zarr3/chunk_cache.hpp):
// whole chunks of a codec chain, and inner chunks of a shard.
#pragma once

#include "zarr3/chunk_cache.hpp"
#include "zarr3/codec.hpp"

namespace zarr3 {

// Whether `cache` may hold src's chunk (its version still to be confirmed):
// a read ahead then fetches nothing for it.
bool cached_chunk_held(ChunkCache& cache, const ByteSource& src, const ChunkSpec& spec);

// CodecChain::read_region of a whole-chunk chain through `cache`: a held
// chunk is used once one request for no bytes (a stat on files, one byte over
// HTTP) confirms its version; otherwise the chunk is read, decoded whole,
// kept when its version is known, and copied out (a chunk above the
// decoded-chunk cap is refused before it is read). False when absent. `key`
// is src.cache_key(), not empty.
bool read_region_cached(const CodecChain& codecs, ChunkCache& cache, ByteSource& src,
                        const std::string& key, const ChunkSpec& spec, const Region& region,
                        const StridedView& out);

// The cache key of inner chunk `lin` of the shard keyed `shard_key`.
std::string inner_cache_key(const std::string& shard_key, uint64_t lin);

} // namespace zarr3
