// One request sent ahead of a read (read_ahead), answered through the
// single-key calls.
#include "zarr3/store.hpp"

namespace zarr3 {

BatchAnswer answer_one(Store& store, const BatchRequest& request) {
    BatchAnswer a;
    try {
        if (request.ranges.empty()) {
            auto v = store.get_versioned(request.key, a.version);
            if (v) {
                if (v->size() > request.limit)
                    throw_too_large(store.uri() + "/" + request.key, v->size(), request.limit);
                a.total = v->size();
                a.data.emplace();
                a.data->push_back(std::move(*v));
            }
        } else {
            a.data = store.get_ranges_versioned(request.key, request.ranges, a.total, a.version);
        }
    } catch (...) {
        a = BatchAnswer{};
        a.error = std::current_exception();
    }
    return a;
}

} // namespace zarr3
