// Private helpers of the sharding_indexed codec (sharding*.cpp).
#pragma once

#include "zarr3/chunk_cache.hpp"
#include "zarr3/sharding.hpp"

namespace zarr3::detail {

// "inner chunk (i,j)" for linear inner-chunk index `lin` (C order over cps).
std::string inner_chunk_name(const Shape& cps, uint64_t lin);

// One inner chunk touched by a region read: the part of the region inside it
// (in inner-chunk coordinates) and where that part starts in the output.
struct InnerTask {
    uint64_t lin = 0;       // linear inner-chunk index (C order)
    Region sub;             // selection inside the inner chunk
    int64_t out_offset = 0; // byte offset of sub's first element in the output view
};

// Inner chunks holding at least one selected element of `region` (a selection
// inside a shard of `shard_shape`), in C order. Sets *all when every inner
// chunk of the shard is needed. Throws Error when the region leaves the shard.
std::vector<InnerTask> plan_inner_reads(const Shape& cps, const Shape& inner,
                                        const Shape& shard_shape, const Region& region,
                                        const std::vector<int64_t>& out_strides, bool* all,
                                        const std::string& what);

// Wanted byte range of one inner chunk.
struct WantedRange {
    uint64_t offset = 0;
    uint64_t nbytes = 0;
};
// Sorts and merges `wanted` into ranges; ranges whose gap is <= `gap` (or that
// overlap) become one. placement[i] = (merged range index, offset inside it).
std::vector<ByteRange> coalesce_ranges(const std::vector<WantedRange>& wanted, uint64_t gap,
                                       std::vector<std::pair<size_t, uint64_t>>* placement);

// The requests for the inner chunks of `tasks` that `idx` places (empty
// entries are fill value): coalesced ranges and where each chunk lies in them.
struct InnerFetch {
    std::vector<WantedRange> wanted;
    std::vector<size_t> wanted_task; // tasks index of wanted[w]
    std::vector<std::pair<size_t, uint64_t>> placement;
    std::vector<ByteRange> ranges;
};
// Tasks marked in `skip` (when given) are left out: their decoded chunks
// are cached.
InnerFetch plan_inner_fetch(const ShardIndex& idx, const std::vector<InnerTask>& tasks,
                            uint64_t gap, const std::vector<bool>* skip = nullptr);

// Which of `tasks` have their decoded inner chunk (of `nbytes`) in `cache`
// for the shard keyed `shard_key` at `idx`'s version; empty when none.
std::vector<bool> cached_inner_mask(const ChunkCache& cache, const std::string& shard_key,
                                    const ShardIndex& idx, const std::vector<InnerTask>& tasks,
                                    uint64_t nbytes);

} // namespace zarr3::detail
