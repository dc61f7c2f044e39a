// read_ahead: batched fetches ahead of the decode threads (read_ahead.hpp).
#include "array/read_ahead.hpp"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
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

std::optional<Bytes> PrefetchedSource::read_all(uint64_t limit, ObjectVersion& version) {
    BatchAnswer* a = take(true, {});
    if (!a) return StoreByteSource::read_all(limit, version);
    version = a->version;
    if (!a->data || a->data->size() != 1) return std::nullopt;
    if (a->data->front().size() > limit)
        throw_too_large(describe(), a->data->front().size(), limit);
    return std::move(a->data->front());
}

std::optional<std::vector<Bytes>> PrefetchedSource::read_ranges(const std::vector<ByteRange>& r,
                                                                std::optional<uint64_t>& total,
                                                                ObjectVersion& version) {
    BatchAnswer* a = r.empty() ? nullptr : take(false, r);
    if (!a) return StoreByteSource::read_ranges(r, total, version);
    total = a->total;
    version = a->version;
    return std::move(a->data);
}

namespace {

// The state a read shares between its fetch threads (Store::run_requests) and
// its decoding thread: chunks are fetched in order, at most `window` of them
// fetched or in flight and not yet decoded; each one is decoded as soon as
// its answers are in.
class Stream {
  public:
    Stream(Store& store, const ReadAheadPlan& plan, size_t window)
        : store_(store), plan_(plan), window_(window), sources_(plan.n) {}

    // A fetch thread: takes the next chunk while the window has room.
    void fetch_loop() {
        try {
            while (true) {
                size_t i = 0;
                {
                    std::unique_lock lk(mu_);
                    room_.wait(lk, [&] { return stop_ || next_ >= plan_.n || open_ < window_; });
                    if (stop_ || next_ >= plan_.n) return;
                    i = next_++;
                    ++open_;
                }
                auto src = fetch(i);
                std::lock_guard lk(mu_);
                sources_[i] = std::move(src);
                ready_.push_back(i);
                arrived_.notify_one();
            }
        } catch (...) {
            fail(std::current_exception());
        }
    }

    // The decoding thread: each wave is every chunk whose answers are in,
    // decoded on the executor; returns when all n are decoded.
    void decode_loop() {
        size_t done = 0;
        try {
            while (done < plan_.n) {
                std::vector<size_t> wave;
                {
                    std::unique_lock lk(mu_);
                    arrived_.wait(lk, [&] { return fetch_error_ || !ready_.empty(); });
                    if (fetch_error_) return;
                    wave.swap(ready_);
                }
                decode_wave(wave);
                done += wave.size();
                std::lock_guard lk(mu_);
                open_ -= wave.size();
                room_.notify_all();
            }
        } catch (...) {
            std::lock_guard lk(mu_);
            stop_ = true; // the fetch threads end after their current chunk
            room_.notify_all();
            throw;
        }
    }

    std::exception_ptr fetch_error() const { return fetch_error_; }

    // Ends the read with `e` (the fetch threads could not run).
    void fail(std::exception_ptr e) {
        std::lock_guard lk(mu_);
        if (!fetch_error_) fetch_error_ = std::move(e);
        stop_ = true;
        arrived_.notify_all();
        room_.notify_all();
    }

  private:
    // Chunk i's first request and, for a shard whose index it fetched, the
    // inner chunks that index places, sent from this thread one after the
    // other. Null when chunk(i) failed: the decode reports that error.
    std::unique_ptr<PrefetchedSource> fetch(size_t i) {
        std::optional<ChunkRead> c;
        std::unique_ptr<PrefetchedSource> src;
        try {
            c = plan_.chunk(i);
            src = std::make_unique<PrefetchedSource>(store_, c->key);
        } catch (const std::exception&) {
            return nullptr;
        }
        for (int step = 0; step < 2; ++step) {
            std::optional<PlannedRequest> req;
            try {
                req = plan_.codecs->plan_read(*src, c->spec, c->region, plan_.out_strides,
                                              *plan_.opt);
            } catch (const std::exception&) {
                break; // read without fetching ahead; errors are reported there
            }
            if (!req) break;
            BatchAnswer a = answer_one(store_, BatchRequest{c->key, req->ranges, kMaxChunkBytes});
            bool more = false;
            try {
                more = plan_.codecs->absorb_prefetched(*src, *req, a, c->spec);
            } catch (const std::exception&) {
                // The decode meets the same error and reports it.
            }
            src->add(std::move(*req), std::move(a));
            if (!more) break;
        }
        return src;
    }

    void decode_wave(const std::vector<size_t>& wave) {
        auto one = [&](size_t k) {
            const size_t i = wave[k];
            plan_.decode(i, sources_[i].get()); // null: its chunk() failed
            sources_[i].reset();                // frees the fetched bytes
        };
        const Executor& ex = plan_.opt->executor;
        if (ex && wave.size() > 1)
            ex(wave.size(), one);
        else
            for (size_t k = 0; k < wave.size(); ++k)
                one(k);
    }

    Store& store_;
    const ReadAheadPlan& plan_;
    const size_t window_;
    std::mutex mu_;
    std::condition_variable room_, arrived_;
    size_t next_ = 0, open_ = 0;
    bool stop_ = false;
    std::exception_ptr fetch_error_;
    std::vector<size_t> ready_;
    std::vector<std::unique_ptr<PrefetchedSource>> sources_; // guarded by mu_ until ready
};

} // namespace

void read_ahead(Store& store, const ReadAheadPlan& plan) {
    if (plan.n == 0) return;
    const size_t in_flight = std::max<size_t>(plan.in_flight, 1);
    Stream stream(store, plan, 2 * in_flight);
    // Decoding on a helper thread, fetching on the caller's: the requests go
    // out with its thread-local configuration (Store::run_requests).
    std::exception_ptr decode_error;
    std::thread decoder([&] {
        try {
            stream.decode_loop();
        } catch (...) {
            decode_error = std::current_exception();
        }
    });
    try {
        store.run_requests(std::min(in_flight, plan.n), [&] { stream.fetch_loop(); });
        stream.fetch_loop(); // whatever the store's threads left (none, normally)
    } catch (...) {
        stream.fail(std::current_exception());
    }
    decoder.join();
    if (decode_error) std::rethrow_exception(decode_error);
    if (auto e = stream.fetch_error()) std::rethrow_exception(e);
}

} // namespace zarr3
