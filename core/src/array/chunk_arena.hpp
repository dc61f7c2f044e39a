// Memory for the decoded chunks the cache keeps (ChunkBuffer).
//
// A fresh page costs a fault the first time it is written; on a virtual
// machine a fault per 4 KiB costs more than decoding the chunk (measured on
// the CI machine: 1.3 ms to fault in 256 KiB, 0.28 ms to read and decode it).
// Buffers of 64 KiB to 1 MiB are carved from 2 MiB slabs aligned to 2 MiB and
// advised for transparent huge pages (one fault per 2 MiB where the kernel
// allows it, 4 KiB pages otherwise), in size classes of 64 KiB; a freed
// buffer is reused by the next one of its class, and a slab is unmapped when
// its last buffer goes. Larger buffers get their own mapping, advised the
// same way; smaller ones, and every buffer under AddressSanitizer (which must
// see each allocation), come from operator new.
#pragma once

#include <cstddef>
#include <cstdint>

namespace zarr3::chunk_arena {

// `n` bytes, not zeroed; throws std::bad_alloc.
uint8_t* allocate(size_t n);
// Gives back a buffer of allocate(n).
void release(uint8_t* p, size_t n) noexcept;

struct Stats {
    uint64_t mapped = 0; // bytes of slabs and own mappings
    uint64_t in_use = 0; // bytes of the buffers handed out from them (rounded to their class)
    size_t slabs = 0;
};
Stats stats();

} // namespace zarr3::chunk_arena
