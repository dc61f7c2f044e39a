// Array::read: hyperslab reads through the chunk grid and codec chain.
#include "array/array_detail.hpp"
#include "array/read_ahead.hpp"

#include <atomic>

namespace zarr3 {

using array_detail::rethrow_for_chunk;
using array_detail::run_tasks;
using array_detail::valid_extent;

void Array::read(const Selection& sel, void* out, const std::vector<int64_t>& out_strides,
                 ReadStats* stats) const {
    require_kind(false, "read");
    {
        // A read sees every value written before it: buffered partial
        // chunks are stored first (flush_locked leaves the array's values
        // as they are, hence const).
        std::lock_guard lk(write_mu_);
        if (!wbuf_->entries.empty()) flush_locked();
    }
    // A chunk whose last write was not stored would read back old: an error
    // (every view, classic and multidimensional, reads through here).
    check_not_stale(sel);
    const size_t elem = meta_.dtype.size;
    const PlannedSelection ps = plan_selection(sel, meta_.shape, out_strides, elem, describe());
    const std::vector<ChunkTask> tasks = plan_chunk_tasks(meta_.grid, ps);
    std::atomic<uint64_t> decoded{0}, missing{0};
    uint8_t* base = static_cast<uint8_t*>(out);
    auto decode = [&](size_t i, ByteSource* fetched) {
        const ChunkTask& t = tasks[i];
        const std::string key = chunk_key(t.idx);
        StridedView view{base + t.view_offset, ps.strides};
        try {
            const ChunkSpec spec = meta_.chunk_spec(t.idx);
            StoreByteSource own(*store_, key);
            ByteSource& src = fetched ? *fetched : own;
            if (meta_.codecs.read_region(src, spec, t.region, view, opt_)) {
                ++decoded;
            } else {
                fill_view(view, t.region.count, meta_.fill_value);
                ++missing;
            }
        } catch (...) {
            rethrow_for_chunk(store_->uri() + "/" + key);
        }
    };
    const size_t in_flight = store_->max_in_flight();
    try {
        if (in_flight > 1 && tasks.size() > 1) {
            // A network store: many requests in flight, decoding meanwhile.
            ReadAheadPlan plan;
            plan.n = tasks.size();
            plan.in_flight = in_flight;
            plan.codecs = &meta_.codecs;
            plan.opt = &opt_;
            plan.out_strides = ps.strides;
            plan.chunk = [&](size_t i) {
                const ChunkTask& t = tasks[i];
                return ChunkRead{chunk_key(t.idx), meta_.chunk_spec(t.idx), t.region};
            };
            plan.decode = decode;
            read_ahead(*store_, plan);
        } else {
            run_tasks(opt_.executor, tasks.size(), [&](size_t i) { decode(i, nullptr); });
        }
    } catch (...) {
        check_unchanged(); // a chunk of another layout: say the array changed
        throw;
    }
    // After the chunks: a compaction or a shrink since the open is an
    // error, never the fill value or chunks of another grid. A read that
    // found a chunk absent asks for zarr.json as stored now (one request on
    // network stores, only for reads that return the fill value); others
    // ask the store as it is (local stores: a stat where zarr.json is kept).
    if (missing > 0)
        check_unchanged(true);
    else if (in_flight <= 1)
        check_unchanged(false);
    if (stats) {
        stats->chunks_decoded += decoded;
        stats->chunks_missing += missing;
    }
}

} // namespace zarr3
