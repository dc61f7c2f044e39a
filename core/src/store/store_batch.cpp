// One request sent ahead of a read (read_ahead), answered through read();
// the threads that stores run their requests on.
#include "zarr3/store.hpp"

#include <system_error>
#include <thread>

namespace zarr3 {

BatchAnswer answer_one(Store& store, const BatchRequest& request) {
    BatchAnswer a;
    try {
        const bool whole = request.ranges.empty();
        auto r = store.read(whole ? ReadRequest::value(request.key)
                                  : ReadRequest::byte_ranges(request.key, request.ranges));
        if (r) {
            if (whole && !r->data.empty() && r->data.front().size() > request.limit)
                throw_too_large(store.uri() + "/" + request.key, r->data.front().size(),
                                request.limit);
            a.total = whole && !r->data.empty() ? std::optional<uint64_t>(r->data.front().size())
                                                : r->total_size;
            a.version = std::move(r->version);
            a.data = std::move(r->data);
        }
    } catch (...) {
        a = BatchAnswer{};
        a.error = std::current_exception();
    }
    return a;
}

void run_on_threads(size_t threads, const std::function<void()>& worker,
                    const std::function<void(const std::function<void()>&)>& wrap) {
    if (threads <= 1) return worker();
    std::mutex mu;
    std::exception_ptr first_error;
    auto guarded = [&] {
        try {
            worker();
        } catch (...) {
            std::lock_guard lk(mu);
            if (!first_error) first_error = std::current_exception();
        }
    };
    std::vector<std::thread> pool;
    pool.reserve(threads - 1);
    try {
        for (size_t t = 1; t < threads; ++t)
            pool.emplace_back([&] { wrap ? wrap(guarded) : guarded(); });
    } catch (const std::system_error&) {
        // No more threads: the ones started and this one do the work.
    }
    guarded(); // this thread takes part with its own settings
    for (auto& t : pool)
        t.join();
    if (first_error) std::rethrow_exception(first_error);
}

void FileStore::run_requests(size_t threads, const std::function<void()>& worker) {
    run_on_threads(threads, worker);
}

} // namespace zarr3
