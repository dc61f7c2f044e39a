// N-d strided copies between dense C-order chunk buffers and caller views.
#include "zarr3/strided.hpp"

#include <cstring>

namespace zarr3 {

uint64_t Region::num_elements() const {
    uint64_t n = 1;
    for (auto c : count)
        n *= c;
    return n;
}

std::vector<int64_t> c_strides(const Shape& shape, size_t elem) {
    std::vector<int64_t> s(shape.size());
    int64_t acc = static_cast<int64_t>(elem);
    for (size_t i = shape.size(); i-- > 0;) {
        s[i] = acc;
        acc *= static_cast<int64_t>(shape[i]);
    }
    return s;
}

namespace {

// Walks every row (all axes but the last) of a region, calling
// fn(chunk_offset_bytes, view_offset_bytes) for the first element of each row.
template <class Fn>
void for_each_row(const Shape& chunk_shape, size_t elem, const Region& r,
                  const std::vector<int64_t>& view_strides, Fn&& fn) {
    const size_t rank = r.rank();
    if (rank == 0) {
        fn(int64_t{0}, int64_t{0});
        return;
    }
    for (auto c : r.count)
        if (c == 0) return;
    const auto cs = c_strides(chunk_shape, elem);
    std::vector<int64_t> step_bytes(rank);
    for (size_t d = 0; d < rank; ++d) {
        const uint64_t st = r.step.empty() ? 1 : r.step[d];
        step_bytes[d] = cs[d] * static_cast<int64_t>(st);
    }
    int64_t coff = 0;
    for (size_t d = 0; d < rank; ++d)
        coff += static_cast<int64_t>(r.start[d]) * cs[d];
    int64_t voff = 0;
    std::vector<uint64_t> idx(rank, 0);
    const size_t outer = rank - 1;
    while (true) {
        fn(coff, voff);
        // increment the outer index (axes 0..rank-2)
        size_t d = outer;
        while (d > 0) {
            --d;
            if (++idx[d] < r.count[d]) {
                coff += step_bytes[d];
                voff += view_strides[d];
                break;
            }
            coff -= step_bytes[d] * static_cast<int64_t>(r.count[d] - 1);
            voff -= view_strides[d] * static_cast<int64_t>(r.count[d] - 1);
            idx[d] = 0;
            if (d == 0) return;
        }
        if (outer == 0) return;
    }
}

template <bool Out>
void copy_rows(uint8_t* chunk, const Shape& chunk_shape, size_t elem, const Region& r,
               const StridedView& v) {
    const size_t rank = r.rank();
    if (rank == 0) {
        if (Out)
            std::memcpy(v.data, chunk, elem);
        else
            std::memcpy(chunk, v.data, elem);
        return;
    }
    const uint64_t n = r.count[rank - 1];
    const uint64_t st = r.step.empty() ? 1 : r.step[rank - 1];
    const int64_t vstride = v.strides[rank - 1];
    const int64_t cstep = static_cast<int64_t>(st * elem);
    const bool contiguous = st == 1 && vstride == static_cast<int64_t>(elem);
    for_each_row(chunk_shape, elem, r, v.strides, [&](int64_t coff, int64_t voff) {
        uint8_t* c = chunk + coff;
        uint8_t* p = v.data + voff;
        if (contiguous) {
            if (Out)
                std::memcpy(p, c, n * elem);
            else
                std::memcpy(c, p, n * elem);
            return;
        }
        for (uint64_t k = 0; k < n; ++k) {
            if (Out)
                std::memcpy(p, c, elem);
            else
                std::memcpy(c, p, elem);
            c += cstep;
            p += vstride;
        }
    });
}

} // namespace

void copy_region_out(const uint8_t* chunk, const Shape& chunk_shape, size_t elem,
                     const Region& region, const StridedView& out) {
    copy_rows<true>(const_cast<uint8_t*>(chunk), chunk_shape, elem, region, out);
}

void copy_region_in(uint8_t* chunk, const Shape& chunk_shape, size_t elem, const Region& region,
                    const StridedView& in) {
    copy_rows<false>(chunk, chunk_shape, elem, region, in);
}

void fill_view(const StridedView& out, const Shape& count, ByteView fill) {
    const size_t elem = fill.size();
    const size_t rank = count.size();
    if (rank == 0) {
        std::memcpy(out.data, fill.data(), elem);
        return;
    }
    for (auto c : count)
        if (c == 0) return;
    Region r;
    r.start.assign(rank, 0);
    r.count = count;
    // Walk rows using a fake chunk of the region's own shape.
    const uint64_t n = count[rank - 1];
    const int64_t vstride = out.strides[rank - 1];
    for_each_row(count, elem, r, out.strides, [&](int64_t, int64_t voff) {
        uint8_t* p = out.data + voff;
        for (uint64_t k = 0; k < n; ++k) {
            std::memcpy(p, fill.data(), elem);
            p += vstride;
        }
    });
}

bool is_c_contiguous(const StridedView& out, const Shape& count, size_t elem) {
    int64_t acc = static_cast<int64_t>(elem);
    for (size_t i = count.size(); i-- > 0;) {
        if (count[i] != 1 && out.strides[i] != acc) return false;
        acc *= static_cast<int64_t>(count[i]);
    }
    return true;
}

void fill_dense(uint8_t* dst, uint64_t n_elements, ByteView fill) {
    const size_t elem = fill.size();
    if (n_elements == 0) return;
    bool all_zero = true;
    for (auto b : fill)
        all_zero &= (b == 0);
    if (all_zero) {
        std::memset(dst, 0, n_elements * elem);
        return;
    }
    std::memcpy(dst, fill.data(), elem);
    uint64_t done = 1;
    while (done < n_elements) {
        const uint64_t n = std::min(done, n_elements - done);
        std::memcpy(dst + done * elem, dst, n * elem);
        done += n;
    }
}

bool all_equal_to(ByteView data, ByteView fill) {
    const size_t elem = fill.size();
    if (elem == 0 || data.size() % elem != 0) return false;
    const size_t n = data.size() / elem;
    if (n == 0) return true;
    // compare the first element, then the buffer with itself shifted by one element
    if (std::memcmp(data.data(), fill.data(), elem) != 0) return false;
    return std::memcmp(data.data(), data.data() + elem, data.size() - elem) == 0;
}

} // namespace zarr3
