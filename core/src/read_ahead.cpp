// read_ahead: batched fetches ahead of the decode threads (read_ahead.hpp).
#include "read_ahead.hpp"

#include <algorithm>
#include <exception>
#include <thread>

namespace zarr3 {

namespace {

bool same_ranges(const std::vector<ByteRange>& a, const std::vector<ByteRange>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (a[i].index() != b[i].index() || range_length(a[i]) != range_length(b[i])) return false;
        const auto* fa = std::get_if<RangeFromStart>(&a[i]);
        if (fa && fa->offset != std::get<RangeFromStart>(b[i]).offset) return false;
    }
    return true;
}

} // namespace

void PrefetchedSource::add(PlannedRequest request, BatchAnswer answer) {
    entries_.push_back({std::move(request), std::move(answer), false});
}

size_t PrefetchedSource::unused() const {
    size_t n = 0;
    for (const auto& e : entries_)
        n += e.used ? 0 : 1;
    return n;
}

BatchAnswer* PrefetchedSource::take(bool whole, const std::vector<ByteRange>& ranges) {
    for (auto& e : entries_) {
        if (e.used || e.request.ranges.empty() != whole) continue;
        if (!whole && !same_ranges(e.request.ranges, ranges)) continue;
        e.used = true;
        if (e.answer.error) std::rethrow_exception(e.answer.error);
        return &e.answer;
    }
    return nullptr;
}

std::optional<Bytes> PrefetchedSource::read_all() {
    ObjectVersion ignored;
    return read_all_versioned(ignored);
}

std::optional<Bytes> PrefetchedSource::read_all_versioned(ObjectVersion& version) {
    BatchAnswer* a = take(true, {});
    if (!a) return StoreByteSource::read_all_versioned(version);
    version = a->version;
    if (!a->data || a->data->size() != 1) return std::nullopt;
    return std::move(a->data->front());
}

std::optional<std::vector<Bytes>> PrefetchedSource::read_ranges(const std::vector<ByteRange>& r) {
    std::optional<uint64_t> total;
    ObjectVersion ignored;
    return read_ranges_versioned(r, total, ignored);
}

std::optional<std::vector<Bytes>>
PrefetchedSource::read_ranges_sized(const std::vector<ByteRange>& r,
                                    std::optional<uint64_t>& total) {
    ObjectVersion ignored;
    return read_ranges_versioned(r, total, ignored);
}

std::optional<std::vector<Bytes>>
PrefetchedSource::read_ranges_versioned(const std::vector<ByteRange>& r,
                                        std::optional<uint64_t>& total, ObjectVersion& version) {
    BatchAnswer* a = r.empty() ? nullptr : take(false, r);
    if (!a) return StoreByteSource::read_ranges_versioned(r, total, version);
    total = a->total;
    version = a->version;
    return std::move(a->data);
}

namespace {

struct Batch {
    size_t begin = 0, end = 0;
    std::vector<std::unique_ptr<PrefetchedSource>> sources; // [i - begin]
};

struct Pending {
    std::vector<BatchRequest> requests;
    std::vector<PlannedRequest> planned;
    std::vector<size_t> chunk; // index into the batch
};

// Plans chunk i's next request into `p`; false when there is none.
bool plan_one(const ReadAheadPlan& plan, const ChunkRead& c, PrefetchedSource& src, size_t k,
              Pending& p) {
    const std::string cache_key = plan.opt->index_cache ? src.cache_key() : std::string();
    auto req = plan.codecs->plan_read(c.spec, c.region, plan.out_strides, *plan.opt, cache_key,
                                      src.describe());
    if (!req) return false;
    p.requests.push_back(BatchRequest{c.key, req->ranges, kMaxChunkBytes});
    p.planned.push_back(std::move(*req));
    p.chunk.push_back(k);
    return true;
}

Batch fetch_batch(Store& store, const ReadAheadPlan& plan, size_t begin, size_t end) {
    Batch b{begin, end, {}};
    std::vector<std::optional<ChunkRead>> chunks(end - begin);
    Pending first;
    for (size_t i = begin; i < end; ++i) {
        const size_t k = i - begin;
        try {
            chunks[k] = plan.chunk(i);
            b.sources.push_back(std::make_unique<PrefetchedSource>(store, chunks[k]->key));
            plan_one(plan, *chunks[k], *b.sources[k], k, first);
        } catch (const std::exception&) {
            // The decode step meets the same error and reports it.
            if (b.sources.size() == k) b.sources.push_back(nullptr);
            chunks[k].reset();
        }
    }
    auto answers = store.get_batch(first.requests);
    // Shards whose index just arrived: their inner chunks, in a second batch.
    Pending second;
    for (size_t j = 0; j < answers.size(); ++j) {
        const size_t k = first.chunk[j];
        const ChunkRead& c = *chunks[k];
        PrefetchedSource& src = *b.sources[k];
        const std::string cache_key = plan.opt->index_cache ? src.cache_key() : std::string();
        try {
            if (plan.codecs->absorb_prefetched(first.planned[j], answers[j], c.spec, *plan.opt,
                                               cache_key, src.describe()))
                plan_one(plan, c, src, k, second);
        } catch (const std::exception&) {
            // Read without the second request; errors are reported there.
        }
        src.add(std::move(first.planned[j]), std::move(answers[j]));
    }
    if (!second.requests.empty()) {
        auto more = store.get_batch(second.requests);
        for (size_t j = 0; j < more.size(); ++j)
            b.sources[second.chunk[j]]->add(std::move(second.planned[j]), std::move(more[j]));
    }
    return b;
}

void decode_batch(const ReadAheadPlan& plan, Batch& b) {
    const Executor& ex = plan.opt->executor;
    auto one = [&](size_t k) {
        const size_t i = b.begin + k;
        plan.decode(i, b.sources[k].get()); // null: its chunk() failed
        b.sources[k].reset();               // frees the fetched bytes
    };
    const size_t n = b.end - b.begin;
    if (ex && n > 1)
        ex(n, one);
    else
        for (size_t k = 0; k < n; ++k)
            one(k);
}

} // namespace

void read_ahead(Store& store, const ReadAheadPlan& plan) {
    const size_t batch = std::max<size_t>(plan.batch, 1);
    if (plan.n == 0) return;
    Batch cur = fetch_batch(store, plan, 0, std::min(plan.n, batch));
    while (true) {
        const size_t next_begin = cur.end;
        if (next_begin >= plan.n) {
            decode_batch(plan, cur);
            return;
        }
        // Decoding on a helper thread, fetching on this one: the requests go
        // out from the caller's thread (its thread-local GDAL configuration).
        std::exception_ptr decode_error;
        std::thread decoder([&] {
            try {
                decode_batch(plan, cur);
            } catch (...) {
                decode_error = std::current_exception();
            }
        });
        Batch next;
        std::exception_ptr fetch_error;
        try {
            next = fetch_batch(store, plan, next_begin, std::min(plan.n, next_begin + batch));
        } catch (...) {
            fetch_error = std::current_exception();
        }
        decoder.join();
        if (decode_error) std::rethrow_exception(decode_error);
        if (fetch_error) std::rethrow_exception(fetch_error);
        cur = std::move(next);
    }
}

} // namespace zarr3
