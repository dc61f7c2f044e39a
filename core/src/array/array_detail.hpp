// Private parts of Array shared by array*.cpp: the write-back buffer and
// helpers for per-chunk tasks.
#pragma once

#include "grid/selection.hpp"
#include "zarr3/array.hpp"

#include <functional>
#include <map>
#include <mutex>

namespace zarr3 {

// Partial chunks waiting for the rest of their elements, and whole chunks
// from one-chunk writes (a GDAL block at a time) queued to be encoded in
// parallel batches.
struct Array::WriteBuffer {
    struct Entry {
        std::vector<uint64_t> idx;
        Bytes data;
        std::vector<uint8_t> mask; // 1 per element written; empty: complete
        uint64_t covered = 0;
        uint64_t needed = 0; // elements of the chunk inside the array
        uint64_t seq = 0;
        bool complete() const { return mask.empty(); }
    };
    std::map<std::string, Entry> entries;
    uint64_t bytes = 0;
    uint64_t seq = 0;
    uint64_t max_bytes = 512ull << 20;
    size_t complete = 0;         // entries with every element written
    uint64_t complete_bytes = 0; // and their bytes
    // Queued whole chunks are stored once this many wait, or this many bytes
    // (or at any flush or read): enough tasks to keep the encoders busy.
    static constexpr size_t kCompleteBatch = 32;
    static constexpr uint64_t kCompleteBatchBytes = 64ull << 20;
    bool batch_due() const {
        return complete >= kCompleteBatch || complete_bytes >= kCompleteBatchBytes;
    }

    // Adds or removes an entry's share of `bytes` and `complete`.
    void count(const Entry& e, int sign) {
        const uint64_t b = e.data.size() + e.mask.size();
        bytes = sign > 0 ? bytes + b : bytes - b;
        if (!e.complete()) return;
        complete = sign > 0 ? complete + 1 : complete - 1;
        complete_bytes = sign > 0 ? complete_bytes + b : complete_bytes - b;
    }
    // Takes entry `it` out of the buffer.
    Entry take(std::map<std::string, Entry>::iterator it) {
        Entry e = std::move(it->second);
        count(e, -1);
        entries.erase(it);
        return e;
    }
    // Key of the entry buffered first (entries must not be empty); a copy,
    // as storing the entry erases it.
    std::string oldest_key() const {
        auto oldest = entries.begin();
        for (auto it = entries.begin(); it != entries.end(); ++it)
            if (it->second.seq < oldest->second.seq) oldest = it;
        return oldest->first;
    }
    // Removes chunk `key`'s entry, if any.
    void drop(const std::string& key) {
        if (auto it = entries.find(key); it != entries.end()) take(it);
    }

    // Chunks whose last write failed to be stored (key -> the error): their
    // stored value is stale. Reads of them and every flush fail until they
    // are written again, so that no storing error is lost on the way to the
    // caller (a batch, a flush at read or a destructor may be what met it).
    // Own mutex: stores run on several threads, some under write_mu_.
    std::mutex lost_mu;
    std::map<std::string, std::string> lost;
    // The error that left chunk `key` stale ("" = none).
    std::string stale_error(const std::string& key) {
        std::lock_guard lk(lost_mu);
        const auto it = lost.find(key);
        return it == lost.end() ? std::string() : it->second;
    }
};

class ShardingCodec;

namespace array_detail {

// The sharding codec when it is the whole chain (the usual layout), else
// null: whole shards are then encoded straight from the caller's data and
// partly written ones updated inner chunk by inner chunk.
const ShardingCodec* sole_sharding(const CodecChain& c);

// Runs fn(0..n-1) on `ex` (serially without one or for one task).
void run_tasks(const Executor& ex, size_t n, const std::function<void(size_t)>& fn);

// Rethrows the error being handled so that its message names the chunk `desc`.
[[noreturn]] void rethrow_for_chunk(const std::string& desc);

// Whether `region` writes every element of a chunk whose part inside the
// array is `valid` (per axis).
bool covers_chunk(const Region& region, const Shape& valid);

// Number of elements of chunk `idx` inside the array, per axis.
Shape valid_extent(const ArrayMetadata& m, const std::vector<uint64_t>& idx, const Shape& edges);

} // namespace array_detail

} // namespace zarr3
