// Array::read: hyperslab reads through the chunk grid and codec chain.
#include "array/array_detail.hpp"
#include "array/read_ahead.hpp"

#include "codecs/cached_read.hpp"
#include "zarr3/change_watch.hpp"
#include "zarr3/chunk_cache.hpp"
#include "zarr3/sharding.hpp"

#include <atomic>

namespace zarr3 {

namespace {

// What a read touches: the decoded bytes of its chunks (a shard's inner
// chunks), and whether it reads each of them whole (a read aligned on
// chunks: a copy or a block reader going through the array in order).
struct Touched {
    uint64_t bytes = 0;
    bool aligned = true;
};

Touched touched_by(const ArrayMetadata& meta, const std::vector<ChunkTask>& tasks) {
    const auto* sharding = dynamic_cast<const ShardingCodec*>(&meta.codecs.array_to_bytes());
    Touched out;
    for (const ChunkTask& t : tasks) {
        const Shape edges = meta.grid.chunk_shape(t.idx);
        uint64_t n = meta.dtype.size;
        for (size_t a = 0; a < t.region.rank(); ++a) {
            const uint64_t e = sharding ? sharding->inner_chunk_shape()[a] : edges[a];
            const uint64_t step = t.region.step.empty() ? 1 : t.region.step[a];
            const uint64_t s = t.region.start[a], c = t.region.count[a];
            if (c == 0 || e == 0) return {};
            const uint64_t end = s + (c - 1) * step + 1;
            n *= ((end - 1) / e - s / e + 1) * e;
            const bool reaches_end = meta.grid.axis(a).chunk_start(t.idx[a]) + end == meta.shape[a];
            out.aligned = out.aligned && step == 1 && s % e == 0 && (end % e == 0 || reaches_end);
        }
        out.bytes += n;
    }
    return out;
}

} // namespace

bool Array::read_uses_cache(const Selection& sel, const std::vector<ChunkTask>& tasks) const {
    const ChunkCache* cache = opt_.chunk_cache.get();
    if (!cache) return false;
    // A full read, a read of whole chunks (a copy going through the array)
    // and a read whose chunks would fill much of the cache only evict it:
    // they keep today's path and speed.
    if (sel.count == meta_.shape) return false;
    const Touched t = touched_by(meta_, tasks);
    return !t.aligned && !cache->bypass(t.bytes);
}

bool Array::all_held(const std::vector<ChunkTask>& tasks) const {
    const PartialReadCodec* partial = meta_.codecs.partial_reader();
    for (const ChunkTask& t : tasks) {
        const StoreByteSource src(*store_, chunk_key(t.idx));
        const ChunkSpec spec = meta_.chunk_spec(t.idx);
        const bool held = partial ? partial->region_held(src, spec, t.region, *opt_.chunk_cache)
                                  : cached_chunk_held(*opt_.chunk_cache, src, spec);
        if (!held) return false;
    }
    return true;
}

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
    // Local files' versions: the change events read once for this read.
    std::optional<ChangeWatch::Pass> pass;
    pass.emplace();
    // The cache of decoded chunks unless this read would only evict it.
    ReadOptions uncached;
    const bool cached = read_uses_cache(sel, tasks);
    if (!cached && opt_.chunk_cache) {
        uncached = opt_;
        uncached.chunk_cache.reset();
    }
    const ReadOptions& opt = cached || !opt_.chunk_cache ? opt_ : uncached;
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
            if (meta_.codecs.read_region(src, spec, t.region, view, opt)) {
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
    const uint64_t requests_before = StoreByteSource::data_requests();
    try {
        if (in_flight > 1 && tasks.size() > 1) {
            // A network store: many requests in flight, decoding meanwhile.
            ReadAheadPlan plan;
            plan.n = tasks.size();
            plan.in_flight = in_flight;
            plan.codecs = &meta_.codecs;
            plan.opt = &opt;
            plan.out_strides = ps.strides;
            plan.chunk = [&](size_t i) {
                const ChunkTask& t = tasks[i];
                return ChunkRead{chunk_key(t.idx), meta_.chunk_spec(t.idx), t.region};
            };
            plan.decode = decode;
            read_ahead(*store_, plan);
        } else {
            // Chunks all held decoded are only copied out: no threads.
            const bool copies = cached && opt.executor && all_held(tasks);
            run_tasks(copies ? Executor{} : opt.executor, tasks.size(),
                      [&](size_t i) { decode(i, nullptr); });
        }
    } catch (...) {
        pass.reset();
        check_unchanged(); // a chunk of another layout: say the array changed
        throw;
    }
    // The layout check sees what changed during the read, unless no byte was
    // read from the store meanwhile: every chunk came from the cache as
    // confirmed at the read's start, and the layout is checked as of then too
    // (one poll of the change events per repeated window, not two).
    if (StoreByteSource::data_requests() != requests_before) pass.reset();
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
