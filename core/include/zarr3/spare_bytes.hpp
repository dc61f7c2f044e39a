// A thread's spare buffers for the stored bytes of chunks (and the byte
// ranges of shards): read, decoded, then given back for the next ones. A fresh buffer of 256 KiB
// costs 64 page faults and a zero fill; on a virtual machine that was more than the decode (a third
// of the page faults of 200 pan windows).
#pragma once

#include "zarr3/common.hpp"

namespace zarr3 {

// A buffer of `n` bytes whose contents are unspecified: the smallest of this
// thread's spares that holds n, a fresh one otherwise.
Bytes take_spare_bytes(size_t n);
// Keeps `b` among this thread's spares (at most 4, 8 MiB in all; the larger
// ones are kept).
void keep_spare_bytes(Bytes&& b);

} // namespace zarr3
