// N-d strided copies between a dense C-order chunk buffer and a caller view.
#pragma once

#include "zarr3/common.hpp"

namespace zarr3 {

// Selection along each axis of a chunk: elements start + k*step, k < count.
struct Region {
    Shape start;
    Shape count;
    std::vector<uint64_t> step; // >= 1; empty means all 1
    size_t rank() const { return start.size(); }
    uint64_t num_elements() const;
};

// Destination (or source) in caller memory: element (i0, i1, ...) of the
// region lives at data + sum(i_k * strides[k]) bytes. Strides may be negative.
struct StridedView {
    uint8_t* data = nullptr;
    std::vector<int64_t> strides;
};

// C-order byte strides of a dense array of `shape` with element size `elem`.
std::vector<int64_t> c_strides(const Shape& shape, size_t elem);

// Copy region of a dense C-order chunk (shape `chunk`) into `out`.
void copy_region_out(const uint8_t* chunk, const Shape& chunk_shape, size_t elem,
                     const Region& region, const StridedView& out);
// Copy from `in` into region of a dense C-order chunk.
void copy_region_in(uint8_t* chunk, const Shape& chunk_shape, size_t elem, const Region& region,
                    const StridedView& in);
// Fill `count` elements of `out` with one element's bytes.
void fill_view(const StridedView& out, const Shape& count, ByteView fill);
// True when `out` is exactly the dense C-order layout of `count` elements.
bool is_c_contiguous(const StridedView& out, const Shape& count, size_t elem);
// Fill a dense buffer with repeated element bytes.
void fill_dense(uint8_t* dst, uint64_t n_elements, ByteView fill);
// True when every element of the dense buffer equals fill.
bool all_equal_to(ByteView data, ByteView fill);

} // namespace zarr3
