#include "array/write_behind.hpp"

#include <thread>

namespace zarr3 {

namespace {
constexpr size_t kSpareBuffers = 8;
constexpr size_t kSpareMaxBytes = size_t(16) << 20;
constexpr size_t kMaxQueued = 256; // values (erases hold no bytes)
} // namespace

WriteBehind::WriteBehind(Store& store, StoreFn store_one, size_t max_bytes)
    : store_(store), store_one_(std::move(store_one)), max_bytes_(max_bytes),
      threaded_(store.has_request_threads()) {}

void WriteBehind::run(const std::function<void()>& produce) {
    const auto caller = std::this_thread::get_id();
    store_.run_requests(2, [&] {
        Item it;
        if (std::this_thread::get_id() == caller) {
            try {
                produce();
            } catch (...) {
                fail(std::current_exception());
            }
            {
                std::lock_guard lk(mu_);
                producing_ = false;
            }
            cv_.notify_all();
            // What is still queued is stored by both threads.
        }
        while (pop(it, true))
            store(it);
    });
    if (error_) std::rethrow_exception(error_);
}

Bytes WriteBehind::buffer() {
    std::lock_guard lk(mu_);
    if (spare_.empty()) return {};
    Bytes b = std::move(spare_.back());
    spare_.pop_back();
    b.clear();
    return b;
}

void WriteBehind::push(std::string key, std::optional<Bytes> value) {
    if (!threaded_) {
        // No store thread: stored at once, as a write without write-behind.
        Item it{std::move(key), std::move(value)};
        store(it);
        if (error_) std::rethrow_exception(error_);
        return;
    }
    {
        std::lock_guard lk(mu_);
        if (error_) std::rethrow_exception(error_);
        queued_bytes_ += value ? value->size() : 0;
        queue_.push_back(Item{std::move(key), std::move(value)});
    }
    cv_.notify_one();
    // The store thread is behind: this thread stores the oldest values until
    // the queue is within its bound again.
    Item it;
    for (;;) {
        {
            std::lock_guard lk(mu_);
            if (queued_bytes_ <= max_bytes_ && queue_.size() <= kMaxQueued) break;
        }
        if (!pop(it, false)) break;
        store(it);
    }
    std::lock_guard lk(mu_);
    if (error_) std::rethrow_exception(error_);
}

bool WriteBehind::pop(Item& out, bool wait) {
    std::unique_lock lk(mu_);
    if (wait) cv_.wait(lk, [&] { return error_ || !queue_.empty() || !producing_; });
    if (error_ || queue_.empty()) return false;
    out = std::move(queue_.front());
    queue_.pop_front();
    queued_bytes_ -= out.value ? out.value->size() : 0;
    return true;
}

void WriteBehind::store(Item& it) {
    try {
        store_one_(it.key, it.value ? &*it.value : nullptr);
    } catch (...) {
        fail(std::current_exception());
        return;
    }
    if (it.value) recycle(std::move(*it.value));
}

void WriteBehind::recycle(Bytes b) {
    if (b.capacity() == 0 || b.capacity() > kSpareMaxBytes) return;
    std::lock_guard lk(mu_);
    if (spare_.size() < kSpareBuffers) spare_.push_back(std::move(b));
}

void WriteBehind::fail(std::exception_ptr e) {
    {
        std::lock_guard lk(mu_);
        if (!error_) error_ = std::move(e);
        queue_.clear();
        queued_bytes_ = 0;
    }
    cv_.notify_all();
}

} // namespace zarr3
