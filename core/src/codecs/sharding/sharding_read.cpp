// sharding_indexed: whole-shard decode and partial reads (index, then the
// coalesced byte ranges of the inner chunks a region needs).
#include "codecs/cached_read.hpp"
#include "codecs/sharding/sharding_detail.hpp"
#include "grid/selection.hpp"
#include "store/chunk_bounds.hpp"
#include "zarr3/limits.hpp"
#include "zarr3/spare_bytes.hpp"

#include <algorithm>
#include <numeric>

namespace zarr3 {

namespace detail {

std::vector<InnerTask> plan_inner_reads(const Shape& cps, const Shape& inner,
                                        const Shape& shard_shape, const Region& region,
                                        const std::vector<int64_t>& out_strides, bool* all,
                                        const std::string& what) {
    const size_t rank = cps.size();
    if (region.start.size() != rank || region.count.size() != rank ||
        (!region.step.empty() && region.step.size() != rank) || out_strides.size() != rank)
        throw Error("sharding_indexed read of " + what +
                    ": region rank does not match shard rank " + std::to_string(rank));
    *all = false;
    std::vector<std::vector<AxisPiece>> pieces(rank);
    for (size_t a = 0; a < rank; ++a) {
        const uint64_t s = region.start[a], c = region.count[a];
        const uint64_t t = region.step.empty() ? 1 : region.step[a];
        if (c == 0) return {};
        if (t == 0)
            throw Error("sharding_indexed read of " + what + ": step 0 on axis " +
                        std::to_string(a));
        const uint64_t span = checked_mul(c - 1, t, "region extent");
        if (s >= shard_shape[a] || span >= shard_shape[a] - s)
            throw Error("sharding_indexed read of " + what + ": region leaves the shard on axis " +
                        std::to_string(a));
        pieces[a] = axis_pieces(RegularAxis{inner[a]}, s, c, t);
    }
    bool every = true;
    uint64_t ntasks = 1;
    for (size_t a = 0; a < rank; ++a) {
        every = every && pieces[a].size() == cps[a];
        ntasks *= pieces[a].size(); // <= product(cps), already checked
    }
    *all = every;

    std::vector<InnerTask> tasks;
    tasks.reserve(ntasks);
    std::vector<size_t> pos(rank, 0);
    for (uint64_t n = 0; n < ntasks; ++n) {
        InnerTask t;
        t.sub.start.resize(rank);
        t.sub.count.resize(rank);
        t.sub.step.resize(rank);
        for (size_t a = 0; a < rank; ++a) {
            const AxisPiece& p = pieces[a][pos[a]];
            t.lin = t.lin * cps[a] + p.chunk;
            t.sub.start[a] = p.in_chunk;
            t.sub.count[a] = p.count;
            t.sub.step[a] = region.step.empty() ? 1 : region.step[a];
            t.out_offset += static_cast<int64_t>(p.k0) * out_strides[a];
        }
        tasks.push_back(std::move(t));
        for (size_t a = rank; a-- > 0;) {
            if (++pos[a] < pieces[a].size()) break;
            pos[a] = 0;
        }
    }
    return tasks;
}

std::vector<ByteRange> coalesce_ranges(const std::vector<WantedRange>& wanted, uint64_t gap,
                                       std::vector<std::pair<size_t, uint64_t>>* placement) {
    std::vector<size_t> order(wanted.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return wanted[a].offset < wanted[b].offset; });
    placement->assign(wanted.size(), {0, 0});
    std::vector<ByteRange> out;
    uint64_t cur_end = 0;
    for (size_t i : order) {
        const WantedRange& w = wanted[i];
        const uint64_t end = w.offset + w.nbytes; // validated: no overflow
        if (!out.empty() && (w.offset <= cur_end || w.offset - cur_end <= gap)) {
            auto& r = std::get<RangeFromStart>(out.back());
            cur_end = std::max(cur_end, end);
            r.length = cur_end - r.offset;
        } else {
            out.emplace_back(RangeFromStart{w.offset, w.nbytes});
            cur_end = end;
        }
        (*placement)[i] = {out.size() - 1, w.offset - std::get<RangeFromStart>(out.back()).offset};
    }
    return out;
}

InnerFetch plan_inner_fetch(const ShardIndex& idx, const std::vector<InnerTask>& tasks,
                            uint64_t gap, const std::vector<bool>* skip) {
    InnerFetch f;
    for (size_t i = 0; i < tasks.size(); ++i) {
        const uint64_t lin = tasks[i].lin;
        if (idx.empty(lin) || (skip && !skip->empty() && (*skip)[i])) continue;
        f.wanted.push_back({idx.offset(lin), idx.nbytes(lin)});
        f.wanted_task.push_back(i);
    }
    f.ranges = coalesce_ranges(f.wanted, gap, &f.placement);
    return f;
}

std::vector<bool> cached_inner_mask(const ChunkCache& cache, const std::string& shard_key,
                                    const ShardIndex& idx, const std::vector<InnerTask>& tasks,
                                    uint64_t nbytes) {
    std::vector<bool> mask;
    if (shard_key.empty() || !idx.version.known()) return mask;
    for (size_t i = 0; i < tasks.size(); ++i) {
        const bool held = !idx.empty(tasks[i].lin) &&
                          cache.has(inner_cache_key(shard_key, tasks[i].lin), idx.version, nbytes);
        if (held && mask.empty()) mask.assign(tasks.size(), false);
        if (held) mask[i] = true;
    }
    return mask;
}

} // namespace detail

ByteRange ShardingCodec::index_range(const Prepared& prep) const {
    const uint64_t isz = prep.index_size;
    return location_ == IndexLocation::End ? ByteRange{RangeSuffix{isz}}
                                           : ByteRange{RangeFromStart{0, isz}};
}

namespace {

// The decoded inner chunks a partial read takes from, and puts into, the
// cache of decoded chunks (ReadOptions::chunk_cache).
struct InnerCache {
    ChunkCache* cache = nullptr;                          // null: no caching
    std::string shard_key;                                // ByteSource::cache_key() of the shard
    ObjectVersion version;                                // of the shard the data come from
    uint64_t epoch = 0;                                   // write epoch taken before the read
    std::vector<std::shared_ptr<const ChunkBuffer>> held; // per task; null: decode it
};

// Decodes inner chunk `encoded` whole into a new buffer kept in `c`, and
// copies the region of `t` out of it.
void decode_into_cache(const CodecChain& inner, const ChunkSpec& ispec, ByteView encoded,
                       const detail::InnerTask& t, const StridedView& sub, InnerCache& c,
                       const std::string& what) {
    auto decoded = std::make_shared<ChunkBuffer>(ispec.num_bytes());
    try {
        inner.decode(encoded, ispec, decoded->data());
    } catch (const FormatError& e) {
        throw FormatError(what + ": " + e.what());
    }
    copy_region_out(decoded->data(), ispec.shape, ispec.dtype.size, t.sub, sub);
    c.cache->put(inner_cache_key(c.shard_key, t.lin), c.version, c.epoch, std::move(decoded));
}

// Decodes the planned inner chunks; data[i] is the encoded inner chunk of
// tasks[i], or nullopt when its index entry is empty (fill value) or when
// `cache` holds it decoded.
void decode_tasks(const CodecChain& inner, const ChunkSpec& ispec, const Shape& cps,
                  const std::vector<detail::InnerTask>& tasks,
                  const std::vector<std::optional<ByteView>>& data, const StridedView& out,
                  const ReadOptions& opt, const std::string& what, InnerCache* cache = nullptr) {
    ReadOptions inner_opt;
    inner_opt.coalesce_gap = opt.coalesce_gap;
    const bool caching = cache && cache->cache && cache->version.known();
    auto run = [&](size_t i) {
        const detail::InnerTask& t = tasks[i];
        StridedView sub{out.data + t.out_offset, out.strides};
        if (caching && !cache->held.empty() && cache->held[i]) {
            copy_region_out(cache->held[i]->data(), ispec.shape, ispec.dtype.size, t.sub, sub);
            return;
        }
        if (data[i]) {
            const std::string name = what + " " + detail::inner_chunk_name(cps, t.lin);
            if (caching) {
                cache->cache->count_miss();
                return decode_into_cache(inner, ispec, *data[i], t, sub, *cache, name);
            }
            MemoryByteSource ms(*data[i], name);
            if (inner.read_region(ms, ispec, t.sub, sub, inner_opt)) return;
        }
        fill_view(sub, t.sub.count, ispec.fill_value);
    };
    // Inner chunks held decoded are only copied: threads pay off when at
    // least two are decoded.
    size_t to_decode = 0;
    for (size_t i = 0; i < tasks.size() && to_decode < 2; ++i)
        to_decode += data[i] && !(caching && !cache->held.empty() && cache->held[i]);
    if (opt.executor && to_decode > 1)
        opt.executor(tasks.size(), run);
    else
        for (size_t i = 0; i < tasks.size(); ++i)
            run(i);
}

} // namespace

bool ShardingCodec::read_from_whole(ByteView shard, const ChunkSpec& spec, const Region& region,
                                    const StridedView& out, const ReadOptions& opt,
                                    const std::string& what, const std::string& cache_key,
                                    const ObjectVersion& version) const {
    const auto prep = prepare(spec, what);
    const Shape& cps = prep->chunks_per_shard;
    bool all = false;
    const auto tasks =
        detail::plan_inner_reads(cps, inner_shape_, spec.shape, region, out.strides, &all, what);
    const uint64_t isz = prep->index_size;
    if (shard.size() < isz)
        throw FormatError("shard " + what + " is truncated: " + std::to_string(shard.size()) +
                          " bytes, smaller than its " + std::to_string(isz) + "-byte index");
    const ByteView enc_index =
        location_ == IndexLocation::Start ? shard.first(isz) : shard.last(isz);
    auto idx = parse_index(enc_index, cps, shard.size(), what);
    idx->version = version;
    if (!cache_key.empty() && index_cache_) {
        if (version.known())
            index_cache_->put(cache_key, idx);
        else
            index_cache_->invalidate(cache_key); // nothing to revalidate it with
    }

    std::vector<std::optional<ByteView>> data(tasks.size());
    for (size_t i = 0; i < tasks.size(); ++i) {
        const uint64_t lin = tasks[i].lin;
        if (!idx->empty(lin)) data[i] = shard.subspan(idx->offset(lin), idx->nbytes(lin));
    }
    decode_tasks(inner_, prep->inner_spec, cps, tasks, data, out, opt, what);
    return true;
}

void ShardingCodec::decode(ByteView encoded, const ChunkSpec& spec, uint8_t* out) const {
    Region full;
    full.start.assign(spec.shape.size(), 0);
    full.count = spec.shape;
    const StridedView view{out, c_strides(spec.shape, spec.dtype.size)};
    read_from_whole(encoded, spec, full, view, ReadOptions{}, "shard", std::string(),
                    ObjectVersion{});
}

namespace {

// How often a partial read starts again because the shard's index and data
// came from different versions (a writer replacing the shard meanwhile)
// before it reads the whole shard in one request instead: one request sees
// one version (an open file keeps its contents across a rename; one HTTP
// GET is one object), so a reader always finishes however busy the writer.
constexpr int kMaxVersionRetries = 2;

enum class Attempt { Done, Absent, Changed };

} // namespace

// One partial read of a shard (ShardingCodec::read_partial), in steps.
struct ShardingCodec::PartialRead {
    const ShardingCodec& codec;
    ByteSource& src;
    const ChunkSpec& spec;
    const Region& region;
    const StridedView& out;
    const ReadOptions& opt;
    std::string what;
    std::shared_ptr<const Prepared> prep;
    const Shape& cps; // prep->chunks_per_shard
    bool all = false; // set by plan_inner_reads (declared before `tasks`)
    std::vector<detail::InnerTask> tasks;
    ShardIndexCache* cache; // the codec's; null = no caching
    std::string key;        // index cache key; empty = no caching
    ChunkCache* chunks;     // decoded inner chunks (opt.chunk_cache); null = none
    std::string chunks_key; // the shard's key in it
    uint64_t epoch;         // its write epoch before anything is read

    PartialRead(const ShardingCodec& c, ByteSource& s, const ChunkSpec& sp, const Region& r,
                const StridedView& o, const ReadOptions& op)
        : codec(c), src(s), spec(sp), region(r), out(o), opt(op), what(s.describe()),
          prep(c.prepare(sp, what)), cps(prep->chunks_per_shard),
          tasks(detail::plan_inner_reads(cps, c.inner_shape_, sp.shape, r, o.strides, &all, what)),
          cache(c.index_cache()), key(cache ? s.cache_key() : std::string()),
          chunks(op.chunk_cache.get()), chunks_key(chunks ? s.cache_key() : std::string()),
          epoch(chunks_key.empty() ? 0 : ChunkCache::write_epoch(chunks_key)) {
        if (chunks_key.empty()) chunks = nullptr;
    }

    // The decoded inner chunks the cache holds for `idx`'s version.
    InnerCache inner_cache(const ShardIndex& idx) const {
        InnerCache c{chunks, chunks_key, idx.version, epoch, {}};
        if (!chunks || !idx.version.known()) return c;
        const uint64_t n = prep->inner_spec.num_bytes();
        for (size_t i = 0; i < tasks.size(); ++i) {
            if (idx.empty(tasks[i].lin)) continue;
            auto held = chunks->get(inner_cache_key(chunks_key, tasks[i].lin), idx.version, n);
            if (!held) continue;
            if (c.held.empty()) c.held.resize(tasks.size());
            c.held[i] = std::move(held);
        }
        return c;
    }

    void forget_index() const {
        if (!key.empty()) cache->invalidate(key);
    }

    // The most a shard read in one request may hold: the decoded-chunk cap
    // (a shard may hold unused bytes between its inner chunks, so its
    // codecs' bound does not bound it). A shard whose codecs may produce more
    // than the cap is read by index and ranges instead.
    uint64_t whole_bound() const { return max_decoded_chunk_bytes(); }
    bool whole_allowed() const { return codec.max_encoded_size(spec) <= max_decoded_chunk_bytes(); }

    // One request for the whole shard, index included; false when absent.
    bool read_whole() const {
        ObjectVersion version;
        auto whole = read_stored_chunk(src, whole_bound(), spec, version);
        if (!whole) {
            forget_index();
            return false;
        }
        return codec.read_from_whole(*whole, spec, region, out, opt, what, key, version);
    }

    // A cached index of this shard's layout, or nullptr.
    std::shared_ptr<const ShardIndex> cached_index() const {
        auto idx = cache->get(key);
        if (idx && idx->chunks_per_shard != cps) idx.reset();
        return idx;
    }

    // The index from the store (one range request); nullptr when absent.
    // Cached only when the store tells its version.
    std::shared_ptr<const ShardIndex> fetch_index() const {
        std::optional<uint64_t> shard_size;
        ObjectVersion version;
        auto got = src.read_ranges({codec.index_range(*prep)}, shard_size, version);
        if (!got) return nullptr;
        if (got->size() != 1)
            throw FormatError("shard " + what + ": store returned " + std::to_string(got->size()) +
                              " ranges for 1 requested");
        // Entries are bounds-checked against the shard size when the store
        // reports it with the range (files, HTTP); otherwise against the data
        // region start, and the store refuses ranges past the end.
        auto parsed = codec.parse_index((*got)[0], cps, shard_size, what);
        parsed->version = std::move(version);
        if (!key.empty()) {
            if (parsed->version.known())
                cache->put(key, parsed);
            else
                cache->invalidate(key);
        }
        return parsed;
    }

    // The coalesced ranges of the inner chunks `idx` places; `fetched` gets
    // their bytes (Changed: from another version than the index, or, for a
    // cached index, a version that cannot be confirmed).
    Attempt fetch_data(const ShardIndex& idx, bool cached, const std::vector<ByteRange>& ranges,
                       std::vector<Bytes>& fetched) const {
        // With no data to read, a cached index is confirmed by asking for no
        // bytes (one stat on files).
        if (ranges.empty() && !cached) return Attempt::Done;
        std::optional<uint64_t> total;
        ObjectVersion version;
        auto got = src.read_ranges(ranges, total, version);
        if (!got) return Attempt::Absent;
        if (versions_differ(idx.version, version) || (cached && !version.known()))
            return Attempt::Changed;
        if (got->size() != ranges.size())
            throw FormatError("shard " + what + ": store returned " + std::to_string(got->size()) +
                              " ranges for " + std::to_string(ranges.size()) + " requested");
        for (size_t r = 0; r < ranges.size(); ++r) {
            const auto& fs = std::get<RangeFromStart>(ranges[r]);
            if ((*got)[r].size() != fs.length)
                throw FormatError("shard " + what + " is truncated: range at offset " +
                                  std::to_string(fs.offset) + " returned " +
                                  std::to_string((*got)[r].size()) + " of " +
                                  std::to_string(fs.length) + " bytes");
        }
        fetched = std::move(*got);
        return Attempt::Done;
    }

    // Refuses, before any data request, an index entry claiming more bytes
    // than the inner codecs can produce for one inner chunk.
    void check_inner_sizes(const ShardIndex& idx) const {
        const uint64_t bound = max_stored_chunk_bytes(codec.inner_, prep->inner_spec);
        for (const auto& t : tasks)
            if (!idx.empty(t.lin) && idx.nbytes(t.lin) > bound)
                throw FormatError("shard " + what + ": index entry of " +
                                  detail::inner_chunk_name(cps, t.lin) + " claims " +
                                  std::to_string(idx.nbytes(t.lin)) + " bytes, more than the " +
                                  std::to_string(bound) +
                                  " bytes its codecs can produce (at most the decoded-chunk "
                                  "limit, ZARR3_MAX_CHUNK_BYTES); refused before reading");
    }

    // Reads and decodes the inner chunks with `idx`.
    Attempt read_with(const ShardIndex& idx, bool cached) const {
        check_inner_sizes(idx);
        InnerCache held = inner_cache(idx);
        std::vector<bool> skip(held.held.size());
        for (size_t i = 0; i < held.held.size(); ++i)
            skip[i] = held.held[i] != nullptr;
        const detail::InnerFetch f = detail::plan_inner_fetch(idx, tasks, opt.coalesce_gap, &skip);
        std::vector<Bytes> fetched;
        if (const Attempt a = fetch_data(idx, cached, f.ranges, fetched); a != Attempt::Done)
            return a;
        std::vector<std::optional<ByteView>> data(tasks.size());
        for (size_t w = 0; w < f.wanted.size(); ++w) {
            const auto [r, off] = f.placement[w];
            data[f.wanted_task[w]] = ByteView(fetched[r]).subspan(off, f.wanted[w].nbytes);
        }
        decode_tasks(codec.inner_, prep->inner_spec, cps, tasks, data, out, opt, what, &held);
        for (Bytes& b : fetched)
            keep_spare_bytes(std::move(b));
        return Attempt::Done;
    }

    // Whether the shard's version now differs from the one `idx` came from
    // (a request for no bytes: one stat on files).
    bool shard_changed_since(const ShardIndex& idx) const {
        if (!idx.version.known()) return false;
        try {
            std::optional<uint64_t> total;
            ObjectVersion now;
            return !src.read_ranges({}, total, now) || now != idx.version;
        } catch (const Error&) {
            return false; // the first error is the one to report
        }
    }

    // A cached index is tried first; when the shard changed since, or its
    // data fails to decode with it, the entry is dropped and the read starts
    // again from the store. Fresh index and data from different versions
    // (a writer replaced the shard between the two requests): read again, a
    // bounded number of times, then the whole shard in one request.
    bool run() const {
        bool use_cache = !key.empty();
        int changes = 0;
        for (;;) {
            std::shared_ptr<const ShardIndex> idx = use_cache ? cached_index() : nullptr;
            const bool cached = idx != nullptr;
            if (!idx) {
                idx = fetch_index();
                if (!idx) {
                    forget_index();
                    return false;
                }
            }
            Attempt a;
            try {
                a = read_with(*idx, cached);
            } catch (const ObjectChanged&) {
                a = Attempt::Changed;
            } catch (const Error&) {
                if (!cached) {
                    // A fresh index: the shard may have been replaced before
                    // the data request (which then refused a range past its end).
                    if (!shard_changed_since(*idx)) throw;
                    a = Attempt::Changed;
                } else {
                    // Possibly a stale index: drop it and read once from the store.
                    cache->invalidate(key);
                    use_cache = false;
                    continue;
                }
            }
            if (a == Attempt::Done) return true;
            forget_index();
            if (a == Attempt::Absent) return false;
            if (cached) {
                use_cache = false; // a stale cached index: not counted as a race
                continue;
            }
            if (++changes >= kMaxVersionRetries) {
                if (whole_allowed()) return read_whole();
                throw ObjectChanged("shard " + what + " changed during each of " +
                                    std::to_string(changes) +
                                    " reads and is too large to read in one request");
            }
        }
    }
};

bool ShardingCodec::region_held(const ByteSource& src, const ChunkSpec& spec, const Region& region,
                                ChunkCache& cache) const {
    const std::string key = src.cache_key();
    if (key.empty()) return false;
    const std::string what = src.describe();
    const auto prep = prepare(spec, what);
    bool all = false;
    const auto tasks =
        detail::plan_inner_reads(prep->chunks_per_shard, inner_shape_, spec.shape, region,
                                 c_strides(region.count, spec.dtype.size), &all, what);
    const uint64_t n = prep->inner_spec.num_bytes();
    for (const auto& t : tasks)
        if (!cache.holds(inner_cache_key(key, t.lin), n)) return false;
    return true;
}

bool ShardingCodec::read_partial(ByteSource& src, const ChunkSpec& spec, const Region& region,
                                 const StridedView& out, const ReadOptions& opt) const {
    const PartialRead read(*this, src, spec, region, out, opt);
    if (read.tasks.empty()) return true; // empty selection: nothing to read
    // Every inner chunk needed: one request for the whole shard, unless the
    // shard may hold more than the decoded-chunk cap, or the inner chunks go
    // through the cache of decoded chunks (index and ranges: those it holds
    // are not fetched).
    if (read.all && read.whole_allowed() && !read.chunks) return read.read_whole();
    return read.run();
}

} // namespace zarr3
