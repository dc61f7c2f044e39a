// Element-by-element walks for `string` chunks (std::string elements cannot go
// through the byte copies of strided.hpp): which element of a dense C-order
// chunk each element of a region is, and where it goes in a caller's vector.
#pragma once

#include "zarr3/strided.hpp"

namespace zarr3 {

// Calls fn(chunk_element, view_element) for every element of `r` (a selection
// inside a dense C-order chunk of `chunk_shape`) in C order. The view element
// of region index (k0, k1, ...) is view_offset + sum(k_d * view_strides[d]),
// in elements (strides may be negative).
template <class Fn>
void for_each_region_element(const Shape& chunk_shape, const Region& r, int64_t view_offset,
                             const std::vector<int64_t>& view_strides, Fn&& fn) {
    const size_t rank = r.rank();
    if (rank == 0) {
        fn(uint64_t{0}, view_offset);
        return;
    }
    for (const uint64_t c : r.count)
        if (c == 0) return;
    const std::vector<int64_t> cs = c_strides(chunk_shape, 1);
    std::vector<uint64_t> k(rank, 0);
    while (true) {
        int64_t src = 0, dst = view_offset;
        for (size_t d = 0; d < rank; ++d) {
            const uint64_t step = r.step.empty() ? 1 : r.step[d];
            src += static_cast<int64_t>(r.start[d] + k[d] * step) * cs[d];
            dst += static_cast<int64_t>(k[d]) * view_strides[d];
        }
        fn(static_cast<uint64_t>(src), dst);
        size_t d = rank;
        while (d > 0) {
            --d;
            if (++k[d] < r.count[d]) break;
            k[d] = 0;
            if (d == 0) return;
        }
    }
}

} // namespace zarr3
