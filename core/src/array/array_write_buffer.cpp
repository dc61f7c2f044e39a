// The write-back buffer of partly written chunks: merged with the stored
// chunk and rewritten when complete, flushed, or evicted.
#include "array/array_detail.hpp"
#include "array/scratch.hpp"
#include "zarr3/sharding.hpp"

#include <atomic>
#include <cstring>

namespace zarr3 {

using array_detail::rethrow_for_chunk;
using array_detail::run_tasks;
using array_detail::sole_sharding;
using array_detail::valid_extent;

const ShardingCodec* array_detail::sole_sharding(const CodecChain& c) {
    if (!c.array_to_array().empty() || !c.bytes_to_bytes().empty()) return nullptr;
    return dynamic_cast<const ShardingCodec*>(&c.array_to_bytes());
}

namespace {
// Marks the region in a one-byte-per-element mask; returns newly marked count.
uint64_t mark_region(std::vector<uint8_t>& mask, const Shape& chunk_shape, const Region& r) {
    const size_t rank = r.rank();
    if (rank == 0) {
        const uint64_t n = mask[0] ? 0 : 1;
        mask[0] = 1;
        return n;
    }
    const auto cs = c_strides(chunk_shape, 1);
    std::vector<uint64_t> idx(rank, 0);
    uint64_t fresh = 0;
    while (true) {
        int64_t off = 0;
        for (size_t d = 0; d < rank; ++d)
            off += static_cast<int64_t>(r.start[d] + idx[d] * r.step[d]) * cs[d];
        if (!mask[static_cast<size_t>(off)]) {
            mask[static_cast<size_t>(off)] = 1;
            ++fresh;
        }
        size_t d = rank;
        while (d > 0) {
            --d;
            if (++idx[d] < r.count[d]) break;
            idx[d] = 0;
            if (d == 0) return fresh;
        }
    }
}
} // namespace

void Array::buffer_partial(const std::string& key, const ChunkTask& t, const ChunkSpec& spec,
                           const Shape& valid, const StridedView& view, bool queue) {
    std::unique_lock lk(write_mu_);
    auto it = wbuf_->entries.find(key);
    if (it == wbuf_->entries.end()) {
        WriteBuffer::Entry e;
        e.idx = t.idx;
        e.data.resize(spec.num_bytes());
        fill_dense(e.data.data(), spec.num_elements(), meta_.fill_value);
        e.mask.assign(spec.num_elements(), 0);
        e.needed = 1;
        for (auto v : valid)
            e.needed *= v;
        wbuf_->count(e, +1);
        it = wbuf_->entries.emplace(key, std::move(e)).first;
    }
    auto& e = it->second;
    e.seq = ++wbuf_->seq;
    copy_region_in(e.data.data(), spec.shape, meta_.dtype.size, t.region, view);
    if (e.complete()) return; // a queued whole chunk, updated in place
    e.covered += mark_region(e.mask, spec.shape, t.region);
    if (e.covered < e.needed) return;
    if (queue) { // complete: stored with the next batch
        wbuf_->count(e, -1);
        e.mask = {};
        wbuf_->count(e, +1);
        return;
    }
    // Complete: store it outside the lock.
    WriteBuffer::Entry done = wbuf_->take(it);
    lk.unlock();
    store_chunk(key, done.data, spec);
}

void Array::queue_complete(const std::string& key, const std::vector<uint64_t>& idx,
                           const Bytes& data) {
    std::lock_guard lk(write_mu_);
    wbuf_->drop(key);
    WriteBuffer::Entry e;
    e.idx = idx;
    e.data = data;
    e.seq = ++wbuf_->seq;
    wbuf_->count(e, +1);
    wbuf_->entries.emplace(key, std::move(e));
}

void Array::flush_entry_locked(const std::string& key) const {
    auto it = wbuf_->entries.find(key);
    if (it == wbuf_->entries.end()) return;
    WriteBuffer::Entry e = wbuf_->take(it);
    store_entry(key, e.idx, e.data, e.mask);
}

void Array::store_entry(const std::string& key, const std::vector<uint64_t>& idx, Bytes& data,
                        const std::vector<uint8_t>& mask) const {
    const ChunkSpec spec = meta_.chunk_spec(idx);
    try {
        // Other writers of this store (processes on this host) wait while
        // this shard is read, merged and rewritten: their inner chunks survive.
        if (mask.empty()) { // every element written: nothing to merge
            store_chunk(key, data, spec);
            return;
        }
        const auto held = store_->lock(key);
        // Merged with a stale stored value (an earlier write of the chunk was
        // lost), the chunk stays stale: only a whole rewrite makes it current.
        const std::string stale = wbuf_->stale_error(key);
        const auto keep_stale = [&] {
            if (!stale.empty()) note_lost(key, stale);
        };
        if (auto existing = store_->get(key)) {
            if (const auto* sharding = sole_sharding(meta_.codecs)) {
                // Only the inner chunks holding new elements are encoded again.
                ScratchLease enc;
                const ShardingCodec::Update upd{*existing, mask, store_->uri() + "/" + key};
                const bool any = sharding->encode_update(data, spec, upd, enc.get()) != 0;
                store_encoded(key, any ? &enc.get() : nullptr);
                return keep_stale();
            }
            Bytes old(spec.num_bytes());
            meta_.codecs.decode(*existing, spec, old.data());
            const size_t elem = meta_.dtype.size;
            for (size_t i = 0; i < mask.size(); ++i)
                if (!mask[i]) std::memcpy(data.data() + i * elem, old.data() + i * elem, elem);
        }
        store_chunk(key, data, spec);
        keep_stale();
    } catch (const std::exception& e) { // the entry is gone: merging may fail before storing
        note_lost(key, e.what());
        rethrow_for_chunk(store_->uri() + "/" + key);
    } catch (...) {
        note_lost(key, "unknown error");
        rethrow_for_chunk(store_->uri() + "/" + key);
    }
}

void Array::flush_locked(bool complete_only) const {
    // The chunks leave the buffer and are merged, encoded and stored in
    // parallel (one task per key). When one fails, the chunks no task
    // started go back to the buffer, as a serial flush would leave them.
    std::vector<std::pair<std::string, WriteBuffer::Entry>> pending;
    for (auto it = wbuf_->entries.begin(); it != wbuf_->entries.end();) {
        auto next = std::next(it);
        if (!complete_only || it->second.complete()) {
            std::string key = it->first;
            pending.emplace_back(std::move(key), wbuf_->take(it));
        }
        it = next;
    }
    std::vector<std::atomic<bool>> started(pending.size());
    try {
        run_tasks(opt_.executor, pending.size(), [&](size_t i) {
            started[i] = true;
            auto& [key, e] = pending[i];
            store_entry(key, e.idx, e.data, e.mask);
        });
    } catch (...) {
        for (size_t i = 0; i < pending.size(); ++i)
            if (!started[i]) {
                wbuf_->count(pending[i].second, +1);
                wbuf_->entries.emplace(std::move(pending[i].first), std::move(pending[i].second));
            }
        throw;
    }
}

void Array::flush() {
    {
        std::lock_guard lk(write_mu_);
        flush_locked();
    }
    std::lock_guard lk(wbuf_->lost_mu);
    if (wbuf_->lost.empty()) return;
    const auto& [key, error] = *wbuf_->lost.begin();
    throw Error(describe() + ": " + std::to_string(wbuf_->lost.size()) +
                " chunk(s) written earlier were not stored (first " + store_->uri() + "/" + key +
                ": " + error + "); their stored values are stale until written again");
}

} // namespace zarr3
