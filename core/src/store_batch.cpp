// Batches of store requests (Store::get_batch): the serial default and the
// counting wrapper's forwarding.
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

std::vector<BatchAnswer> run_batch_serially(Store& store,
                                            const std::vector<BatchRequest>& requests) {
    std::vector<BatchAnswer> out;
    out.reserve(requests.size());
    for (const auto& r : requests)
        out.push_back(answer_one(store, r));
    return out;
}

std::vector<BatchAnswer> Store::get_batch(const std::vector<BatchRequest>& requests) {
    return run_batch_serially(*this, requests);
}

std::vector<BatchAnswer> CountingStore::get_batch(const std::vector<BatchRequest>& requests) {
    auto out = inner_->get_batch(requests);
    std::lock_guard lk(mu_);
    ++c_.batches;
    for (size_t i = 0; i < requests.size(); ++i) {
        const BatchRequest& r = requests[i];
        if (r.ranges.empty()) {
            ++c_.gets;
            log_.push_back("get " + r.key);
        } else {
            ++c_.range_calls;
            c_.ranges += r.ranges.size();
            std::string line = "ranges " + r.key;
            for (const auto& br : r.ranges)
                line += " " + range_text(br);
            log_.push_back(line);
        }
        if (out[i].data)
            for (const auto& b : *out[i].data)
                c_.bytes += b.size();
    }
    return out;
}

} // namespace zarr3
