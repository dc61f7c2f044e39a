// Write-behind for writes that encode on one thread (no executor): the caller
// encodes chunk after chunk while one of the store's threads stores the
// encoded values, so that file creation and network transfers overlap the
// codec instead of following it.
#pragma once

#include "zarr3/store.hpp"

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>

namespace zarr3 {

class WriteBehind {
  public:
    // Stores one value: `value` null means erase `key`. Called on one of the
    // store's threads, or on the caller's when the queue is full or the store
    // has no threads of its own (Store::has_request_threads: then each value
    // is stored as it is pushed).
    using StoreFn = std::function<void(const std::string& key, const Bytes* value)>;

    // At most `max_bytes` of encoded values wait at once; beyond that the
    // producing thread stores the oldest itself.
    WriteBehind(Store& store, StoreFn store_one, size_t max_bytes = size_t(32) << 20);

    // Runs produce() on the caller's thread, storing what it push()es
    // meanwhile, and returns once everything is stored. Rethrows the first
    // error of either side; after an error nothing more is stored.
    void run(const std::function<void()>& produce);

    // A buffer for the next encoded value (recycled from stored ones).
    Bytes buffer();
    // Gives back a buffer that holds nothing to store (an all-fill chunk).
    void recycle(Bytes b);
    // Hands one encoded value (or an erase, value nullopt) to the store thread.
    void push(std::string key, std::optional<Bytes> value);

  private:
    struct Item {
        std::string key;
        std::optional<Bytes> value;
    };
    bool pop(Item& out, bool wait);
    void store(Item& it);
    void fail(std::exception_ptr e);

    Store& store_;
    StoreFn store_one_;
    size_t max_bytes_;
    bool threaded_; // the store runs requests on threads of its own
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<Item> queue_;
    std::vector<Bytes> spare_;
    size_t queued_bytes_ = 0;
    bool producing_ = true;
    std::exception_ptr error_;
};

} // namespace zarr3
