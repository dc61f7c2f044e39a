// Array::resize and Array::append_edge.
#include "array/array_detail.hpp"
#include "zarr3/array_lock.hpp"

namespace zarr3 {

void Array::resize(const Shape& new_shape) {
    if (new_shape.size() != meta_.rank())
        throw Error(describe() + ": resize to a shape of another rank");
    flush();
    // From the grid as stored now (another writer may have appended since
    // this handle read it), under the array's write lock.
    const auto lock = lock_array(*store_, path_);
    reload_stored_metadata();
    const ArrayMetadata old = meta_;
    meta_.grid.resize(new_shape);
    meta_.shape = new_shape;
    // Regular grids: drop chunks that no longer intersect the array, so that
    // growing again later shows fill values, not stale data.
    if (meta_.grid.kind() == GridKind::Regular && meta_.rank() > 0) {
        const Shape og = old.grid.grid_shape(), ng = meta_.grid.grid_shape();
        bool shrunk = false;
        for (size_t d = 0; d < og.size(); ++d)
            shrunk |= ng[d] < og[d];
        if (shrunk) {
            std::vector<uint64_t> idx(og.size(), 0);
            bool any = true;
            for (auto n : og)
                any &= n > 0;
            while (any) {
                bool outside = false;
                for (size_t d = 0; d < idx.size(); ++d)
                    outside |= idx[d] >= ng[d];
                if (outside) store_encoded(chunk_key(idx), nullptr);
                size_t d = idx.size();
                while (d > 0) {
                    --d;
                    if (++idx[d] < og[d]) break;
                    idx[d] = 0;
                    if (d == 0) any = false;
                }
            }
        }
    }
    write_metadata();
}

void Array::append_edge(size_t axis, uint64_t n) {
    if (axis >= meta_.rank()) throw Error(describe() + ": append on a missing axis");
    if (meta_.grid.kind() != GridKind::Rectilinear)
        throw Error(describe() + ": append_edge needs a rectilinear chunk grid");
    flush();
    const auto lock = lock_array(*store_, path_);
    reload_stored_metadata();
    AxisPartition& ax = meta_.grid.axis(axis);
    if (ax.extent() != meta_.shape[axis])
        throw Error(describe() + ": axis " + std::to_string(axis) +
                    " has edges past its length; use resize");
    const uint64_t len = checked_add(meta_.shape[axis], n, "axis length");
    ax.append(n);
    ax.set_length(len);
    meta_.shape[axis] = len;
    write_metadata();
}

} // namespace zarr3
