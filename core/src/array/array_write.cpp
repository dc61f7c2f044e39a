// Array::write: whole chunks are encoded and stored at once, partial ones go
// to the write-back buffer (array_write_buffer.cpp).
#include "array/array_detail.hpp"

#include "array/scratch.hpp"
#include "array/write_behind.hpp"
#include "zarr3/chunk_cache.hpp"
#include "zarr3/sharding.hpp"

namespace zarr3 {

using array_detail::rethrow_for_chunk;
using array_detail::run_tasks;
using array_detail::valid_extent;

namespace {
// Encodes whole chunk `data` into `enc`; false (nothing encoded: the chunk is
// erased) when every element is the fill value.
bool encode_unless_fill(const ArrayMetadata& m, const Bytes& data, const ChunkSpec& spec,
                        Bytes& enc) {
    if (all_equal_to(data, m.fill_value)) return false;
    m.codecs.encode_into(data, spec, enc);
    return true;
}
} // namespace

void Array::store_chunk(const std::string& key, const Bytes& data, const ChunkSpec& spec) const {
    ScratchLease enc;
    store_encoded(key, encode_unless_fill(meta_, data, spec, enc.get()) ? &enc.get() : nullptr);
}

void Array::store_encoded(const std::string& key, const Bytes* enc) const {
    try {
        enc ? store_->put(key, *enc) : store_->erase(key);
    } catch (const std::exception& e) {
        note_lost(key, e.what());
        invalidate_cached(key);
        throw;
    }
    invalidate_cached(key);
    note_stored(key);
}

void Array::note_lost(const std::string& key, const std::string& error) const {
    std::lock_guard lk(wbuf_->lost_mu);
    wbuf_->lost.emplace(key, error); // the first error of the chunk is kept
}

void Array::note_stored(const std::string& key) const {
    std::lock_guard lk(wbuf_->lost_mu);
    if (!wbuf_->lost.empty()) wbuf_->lost.erase(key);
}

void Array::check_not_stale(const Selection& sel) const {
    std::lock_guard lk(wbuf_->lost_mu);
    if (wbuf_->lost.empty()) return;
    const PlannedSelection ps = plan_selection(sel, meta_.shape, {}, meta_.dtype.size, describe());
    for (const ChunkTask& t : plan_chunk_tasks(meta_.grid, ps)) {
        const std::string key = chunk_key(t.idx);
        if (auto it = wbuf_->lost.find(key); it != wbuf_->lost.end())
            throw Error(store_->uri() + "/" + key + ": an earlier write of this chunk was not " +
                        "stored (" + it->second + "); its stored value is stale until it is " +
                        "written again");
    }
}

void Array::invalidate_cached(const std::string& key) const {
    const std::string ck = store_->uri() + "|" + key;
    ChunkCache::note_write(key); // decoded chunks of it, in every cache of the process
    ShardIndexCache::global().invalidate(ck);
    const auto* sharding = dynamic_cast<const ShardingCodec*>(&meta_.codecs.array_to_bytes());
    if (ShardIndexCache* own = sharding ? sharding->index_cache() : nullptr;
        own && own != &ShardIndexCache::global())
        own->invalidate(ck);
}

void Array::write(const Selection& sel, const void* in, const std::vector<int64_t>& in_strides,
                  WriteMode mode) {
    if (!store_->writable()) throw Error(describe() + ": store is opened read-only");
    require_kind(false, "write");
    const size_t elem = meta_.dtype.size;
    const PlannedSelection ps = plan_selection(sel, meta_.shape, in_strides, elem, describe());
    const std::vector<ChunkTask> tasks = plan_chunk_tasks(meta_.grid, ps);
    const uint8_t* base = static_cast<const uint8_t*>(in);
    // A write of one chunk (GDAL's block-at-a-time writes) cannot encode in
    // parallel by itself: its chunk is queued and a batch is encoded at once.
    const bool queue =
        mode == WriteMode::Batched && tasks.size() == 1 && static_cast<bool>(opt_.executor);
    const ShardingCodec* sharding = array_detail::sole_sharding(meta_.codecs);
    // Encodes a whole chunk into `enc`; false when it is all fill value (erased).
    using Encode = std::function<bool(Bytes & enc)>;
    // Stores chunk `key` as `encode` gives it.
    using Sink = std::function<void(const std::string& key, const Encode& encode)>;
    auto drop_buffered = [&](const std::string& key) { // the whole chunk replaces it
        std::lock_guard lk(write_mu_);
        wbuf_->drop(key);
    };
    auto each = [&](size_t i, const Sink& sink) {
        const ChunkTask& t = tasks[i];
        const std::string key = chunk_key(t.idx);
        try {
            const ChunkSpec spec = meta_.chunk_spec(t.idx);
            const Shape valid = valid_extent(meta_, t.idx, spec.shape);
            StridedView view{const_cast<uint8_t*>(base) + t.view_offset, ps.strides};
            if (!array_detail::covers_chunk(t.region, valid))
                return buffer_partial(key, t, spec, valid, view, queue);
            const bool overhang = valid != spec.shape; // edge chunk: past the array's end
            if (sharding && !overhang && !queue) { // inner chunks straight from the caller's data
                drop_buffered(key);
                return sink(key,
                            [&](Bytes& enc) { return sharding->encode_view(view, spec, enc) > 0; });
            }
            ScratchLease lease;
            Bytes& buf = lease.get();
            buf.resize(spec.num_bytes());
            if (overhang) fill_dense(buf.data(), spec.num_elements(), meta_.fill_value);
            copy_region_in(buf.data(), spec.shape, elem, t.region, view);
            if (queue) return queue_complete(key, t.idx, buf);
            drop_buffered(key);
            sink(key, [&](Bytes& enc) { return encode_unless_fill(meta_, buf, spec, enc); });
        } catch (...) {
            rethrow_for_chunk(store_->uri() + "/" + key);
        }
    };
    if (!opt_.executor && tasks.size() > 1) {
        // One thread encodes; the store's writes follow on another meanwhile.
        WriteBehind behind(*store_, [&](const std::string& key, const Bytes* value) {
            try {
                store_encoded(key, value);
            } catch (...) {
                rethrow_for_chunk(store_->uri() + "/" + key);
            }
        });
        behind.run([&] {
            for (size_t i = 0; i < tasks.size(); ++i)
                each(i, [&](const std::string& key, const Encode& encode) {
                    Bytes enc = behind.buffer();
                    if (encode(enc)) return behind.push(key, std::move(enc));
                    behind.recycle(std::move(enc));
                    behind.push(key, std::nullopt);
                });
        });
    } else {
        const Sink direct = [&](const std::string& key, const Encode& encode) {
            ScratchLease enc;
            store_encoded(key, encode(enc.get()) ? &enc.get() : nullptr);
        };
        run_tasks(opt_.executor, tasks.size(), [&](size_t i) { each(i, direct); });
    }
    std::lock_guard lk(write_mu_);
    if (wbuf_->batch_due()) flush_locked(true);
    while (wbuf_->bytes > wbuf_->max_bytes && !wbuf_->entries.empty())
        flush_entry_locked(wbuf_->oldest_key());
}

} // namespace zarr3
