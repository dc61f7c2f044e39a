// Bounds on the stored bytes of one chunk, from what its metadata allows
// (issue 33 #11): every read of a stored value whose size the store or the
// server claims is checked against these before anything is allocated.
#pragma once

#include "zarr3/codec.hpp"

namespace zarr3 {

// The most bytes the stored value of a chunk of `spec` may hold when read
// whole: what `codecs` can produce at most for it (bytes: exact; crc32c: +4;
// compressors: their worst case; sharding: index + inner bounds), never more
// than ZARR3_MAX_CHUNK_BYTES (max_decoded_chunk_bytes()).
uint64_t max_stored_chunk_bytes(const CodecChain& codecs, const ChunkSpec& spec);

// src.read_all_bounded(limit) whose refusal also says where `limit` comes
// from (the codecs' bound for a chunk of `spec`, ZARR3_MAX_CHUNK_BYTES).
std::optional<Bytes> read_stored_chunk(ByteSource& src, uint64_t limit, const ChunkSpec& spec,
                                       ObjectVersion& version);

} // namespace zarr3
