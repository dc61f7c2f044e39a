// Reads that fetch ahead (Store::run_requests, read_ahead): each chunk
// fetched once, requests at once bounded by the store's max_in_flight, shard
// indexes of a window in flight together and then their inner chunks, each
// chunk decoded as its answer arrives, fetched-ahead chunks bounded, absent
// chunks as fill value, errors naming the key, and stores without concurrency
// never fetching ahead.
#include "array/read_ahead.hpp"
#include "zarr3/array.hpp"
#include "zarr3/sharding.hpp"

#include "test_util.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <gtest/gtest.h>
#include <mutex>
#include <set>
#include <thread>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_array_test_read_ahead {

using namespace zarr3;
using nlohmann::json;

namespace {

// A MemoryStore seen as a network store: run_requests on `bound` real
// threads; counts every request by key (in order, with the peak number at
// once), and fails the requests for `failing`.
class FakeNetStore : public Store {
  public:
    FakeNetStore(std::shared_ptr<MemoryStore> inner, size_t bound)
        : inner_(std::move(inner)), bound_(bound) {}
    std::string uri() const override { return inner_->uri(); }
    std::optional<ReadResult> read(const ReadRequest& q) override {
        const char* kinds[] = {"get", "", "size"};
        const std::string kind = q.kind == ReadRequest::Kind::Ranges
                                     ? range_kind(q.ranges)
                                     : kinds[static_cast<int>(q.kind)];
        Request r(*this, q.key, kind);
        return inner_->read(q);
    }
    void put(const std::string& k, ByteView v) override { inner_->put(k, v); }
    void erase(const std::string& k) override { inner_->erase(k); }
    std::vector<std::string> list_dir(const std::string& p) override { return inner_->list_dir(p); }
    StoreCapabilities capabilities() const override { return {.max_in_flight = bound_}; }
    void run_requests(size_t threads, const std::function<void()>& worker) override {
        EXPECT_LE(threads, bound_);
        ++runs;
        run_on_threads(threads, worker);
    }
    void reset() {
        std::lock_guard lk(mu_);
        log.clear();
        peak = 0;
        runs = 0;
    }
    // Requests of `key` (kinds in order: "get", "suffix", "ranges", "size").
    std::vector<std::string> of(const std::string& key) const {
        std::vector<std::string> out;
        for (const auto& [k, kind] : log)
            if (k == key) out.push_back(kind);
        return out;
    }
    std::set<std::string> keys() const {
        std::set<std::string> out;
        for (const auto& e : log)
            out.insert(e.first);
        return out;
    }

    std::vector<std::pair<std::string, std::string>> log; // (key, kind)
    size_t peak = 0;
    std::atomic<int> runs{0};
    std::string failing;
    // Called (outside the lock) as each request starts, with the key.
    std::function<void(const std::string&)> on_request;

  private:
    static std::string range_kind(const std::vector<ByteRange>& r) {
        return !r.empty() && std::get_if<RangeSuffix>(&r[0]) ? "suffix" : "ranges";
    }
    // Counts one request while it runs; throws for `failing`.
    struct Request {
        Request(FakeNetStore& s, const std::string& k, const std::string& kind) : s_(s) {
            {
                std::lock_guard lk(s.mu_);
                s.log.emplace_back(k, kind);
                s.peak = std::max(s.peak, ++s.now_);
            }
            if (s.on_request) s.on_request(k);
            if (k == s.failing) {
                done();
                throw Error(s.uri() + "/" + k + ": boom");
            }
        }
        ~Request() {
            if (!ended_) done();
        }
        void done() {
            ended_ = true;
            std::lock_guard lk(s_.mu_);
            --s_.now_;
        }
        FakeNetStore& s_;
        bool ended_ = false;
    };
    std::shared_ptr<MemoryStore> inner_;
    size_t bound_;
    std::mutex mu_;
    size_t now_ = 0;
};

json regular_meta() { // 32x32 uint16 in 4x4 chunks: 64 chunks
    return testutil::regular_square_json(32, 4, "uint16");
}

json sharded_meta() { // 32x32 uint16 in 16x16 shards of 4x4 inner chunks: 4 shards
    json m = regular_meta();
    m["chunk_grid"]["configuration"]["chunk_shape"] = {16, 16};
    const json bytes_le = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
    m["codecs"] = json::array({{{"name", "sharding_indexed"},
                                {"configuration",
                                 {{"chunk_shape", {4, 4}},
                                  {"codecs", json::array({bytes_le})},
                                  {"index_codecs", json::array({bytes_le})},
                                  {"index_location", "end"}}}}});
    return m;
}

std::vector<uint16_t> values() {
    std::vector<uint16_t> v(32 * 32);
    for (size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<uint16_t>(i + 1);
    return v;
}

struct Fixture {
    std::shared_ptr<MemoryStore> mem = std::make_shared<MemoryStore>();
    std::shared_ptr<FakeNetStore> fake;
    std::shared_ptr<Array> array;

    Fixture(const json& meta, size_t bound) {
        auto w = Array::create(mem, "a", parse_array_metadata(meta, "t"));
        const auto v = values();
        w->write(Selection::all({32, 32}), v.data());
        w->flush();
        fake = std::make_shared<FakeNetStore>(mem, bound);
        array = Array::open(fake, "a");
        ShardIndexCache::global().clear(); // the array's codec uses it: none cached yet
        fake->reset();
    }
    std::vector<uint16_t> read(uint64_t r0, uint64_t c0, uint64_t n) const {
        std::vector<uint16_t> out(n * n);
        array->read(Selection{{r0, c0}, {n, n}, {}}, out.data());
        return out;
    }
};

std::vector<uint16_t> expected_window(const std::vector<uint16_t>& all, uint64_t r0, uint64_t c0,
                                      uint64_t n) {
    std::vector<uint16_t> out;
    for (uint64_t r = r0; r < r0 + n; ++r)
        for (uint64_t c = c0; c < c0 + n; ++c)
            out.push_back(all[r * 32 + c]);
    return out;
}

} // namespace

TEST(ReadAhead, EachChunkFetchedOnceWithinTheBound) {
    Fixture f(regular_meta(), 5);
    f.mem->erase("a/c/0/0"); // absent: fill value
    f.mem->erase("a/c/3/5");
    auto want = values();
    for (uint64_t r = 0; r < 4; ++r)
        for (uint64_t c = 0; c < 4; ++c) {
            want[r * 32 + c] = 0;
            want[(12 + r) * 32 + 20 + c] = 0;
        }
    EXPECT_EQ(f.read(0, 0, 32), want);
    EXPECT_EQ(f.fake->runs, 1);
    // 64 chunks, and zarr.json once: a read that returns the fill value
    // checks that the array was not compacted or shrunk since its open.
    EXPECT_EQ(f.fake->keys().size(), 65u);
    for (const auto& key : f.fake->keys())
        EXPECT_EQ(f.fake->of(key), (std::vector<std::string>{"get"})) << key;
    EXPECT_EQ(f.fake->of("a/zarr.json").size(), 1u);
    EXPECT_LE(f.fake->peak, 5u);
    EXPECT_GE(f.fake->peak, 1u);
    // With every chunk present, zarr.json is not asked.
    Fixture full(regular_meta(), 5);
    EXPECT_EQ(full.read(0, 0, 32), values());
    EXPECT_EQ(full.fake->keys().size(), 64u);
}

TEST(ReadAhead, SameValuesAsASerialRead) {
    Fixture f(regular_meta(), 7);
    auto serial = Array::open(f.mem, "a");
    std::vector<uint16_t> want(13 * 13);
    serial->read(Selection{{3, 9}, {13, 13}, {}}, want.data());
    EXPECT_EQ(f.read(3, 9, 13), want);
    EXPECT_EQ(want, expected_window(values(), 3, 9, 13));
    EXPECT_EQ(f.fake->runs, 1);
}

TEST(ReadAhead, ShardIndexesAtOnceThenTheirInnerChunks) {
    Fixture f(sharded_meta(), 8);
    // The four index requests are all in flight together: each waits until
    // the four have started (a read that fetched them one after another
    // would time out here).
    std::mutex mu;
    std::condition_variable cv;
    int started = 0;
    bool together = true;
    f.fake->on_request = [&](const std::string&) {
        std::unique_lock lk(mu);
        if (++started > 4) return;
        cv.notify_all();
        if (!cv.wait_for(lk, std::chrono::seconds(10), [&] { return started >= 4; }))
            together = false;
    };
    // A window inside all four shards, none of them whole (it skips inner
    // chunk row and column 0 of the first shards, 3 of the last).
    EXPECT_EQ(f.read(5, 5, 23), expected_window(values(), 5, 5, 23));
    EXPECT_TRUE(together);
    f.fake->on_request = nullptr;
    EXPECT_EQ(f.fake->keys().size(), 4u);
    for (const auto& key : f.fake->keys()) // its index, then its inner chunks
        EXPECT_EQ(f.fake->of(key), (std::vector<std::string>{"suffix", "ranges"})) << key;
    // Again: the indexes are cached, only the data is fetched.
    f.fake->reset();
    EXPECT_EQ(f.read(5, 5, 23), expected_window(values(), 5, 5, 23));
    for (const auto& key : f.fake->keys())
        EXPECT_EQ(f.fake->of(key), (std::vector<std::string>{"ranges"})) << key;
    // A full read: each shard whole, once.
    f.fake->reset();
    EXPECT_EQ(f.read(0, 0, 32), values());
    EXPECT_EQ(f.fake->keys().size(), 4u);
    for (const auto& key : f.fake->keys())
        EXPECT_EQ(f.fake->of(key), (std::vector<std::string>{"get"})) << key;
}

namespace {
// read_ahead over the fixture's 64 chunks (8 x 8, row-major), each decoded
// whole into its own buffer; `decoded` counts the chunks decoded so far.
struct DirectRead {
    const Fixture& f;
    ReadOptions opt;
    std::atomic<size_t> decoded{0};
    explicit DirectRead(const Fixture& fx) : f(fx) {
        opt.executor = [](size_t n, const std::function<void(size_t)>& task) {
            std::vector<std::thread> pool;
            for (size_t k = 0; k < n; ++k)
                pool.emplace_back(task, k);
            for (auto& t : pool)
                t.join();
        };
    }
    void run() {
        const ArrayMetadata& m = f.array->metadata();
        ReadAheadPlan plan;
        plan.n = 64;
        plan.in_flight = f.fake->max_in_flight();
        plan.codecs = &m.codecs;
        plan.opt = &opt;
        plan.out_strides = {8, 2};
        plan.chunk = [&](size_t i) {
            const std::vector<uint64_t> idx{i / 8, i % 8};
            return ChunkRead{f.array->chunk_key(idx), m.chunk_spec(idx),
                             Region{{0, 0}, {4, 4}, {}}};
        };
        plan.decode = [&](size_t i, ByteSource* src) {
            ASSERT_NE(src, nullptr);
            std::vector<uint16_t> chunk(16);
            StridedView view{reinterpret_cast<uint8_t*>(chunk.data()), {8, 2}};
            const std::vector<uint64_t> idx{i / 8, i % 8};
            ASSERT_TRUE(m.codecs.read_region(*src, m.chunk_spec(idx), Region{{0, 0}, {4, 4}, {}},
                                             view, opt));
            EXPECT_EQ(chunk[0], values()[(i / 8) * 4 * 32 + (i % 8) * 4]);
            ++decoded;
        };
        read_ahead(*f.fake, plan);
    }
};
} // namespace

// A chunk is decoded as soon as its answer is in, while later requests are
// still out: the request for the last chunk waits until a chunk has been
// decoded (it would wait in vain, here 10 s, if decoding started only once
// every answer had arrived).
TEST(ReadAhead, DecodesEachAnswerAsItArrives) {
    Fixture f(regular_meta(), 64);
    DirectRead r(f);
    std::atomic<bool> waited_in_vain{false};
    f.fake->on_request = [&](const std::string& key) {
        if (key != "a/c/7/7") return;
        for (int t = 0; t < 10000 && r.decoded == 0; ++t)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        waited_in_vain = r.decoded == 0;
    };
    r.run();
    EXPECT_FALSE(waited_in_vain);
    EXPECT_EQ(r.decoded, 64u);
}

// At most twice the bound of chunks are fetched and not yet decoded: the
// memory a read holds does not grow with the number of chunks.
TEST(ReadAhead, FetchesAheadAtMostTwiceTheBound) {
    Fixture f(regular_meta(), 3);
    DirectRead r(f);
    std::atomic<size_t> sent{0}, worst{0};
    f.fake->on_request = [&](const std::string&) {
        const size_t ahead = ++sent - r.decoded;
        size_t w = worst.load();
        while (ahead > w && !worst.compare_exchange_weak(w, ahead)) {
        }
    };
    r.run();
    EXPECT_EQ(r.decoded, 64u);
    EXPECT_EQ(sent.load(), 64u);
    EXPECT_LE(worst.load(), 6u);
    EXPECT_GE(worst.load(), 3u);
}

TEST(ReadAhead, AbsentShardIsFillValue) {
    Fixture f(sharded_meta(), 8);
    f.mem->erase("a/c/1/0");
    auto want = values();
    for (uint64_t r = 16; r < 32; ++r)
        for (uint64_t c = 0; c < 16; ++c)
            want[r * 32 + c] = 0;
    EXPECT_EQ(f.read(5, 5, 23), expected_window(want, 5, 5, 23));
    EXPECT_EQ(f.read(0, 0, 32), want);
}

TEST(ReadAhead, ErrorNamesTheChunk) {
    Fixture f(regular_meta(), 4);
    f.fake->failing = "a/c/2/3";
    try {
        f.read(0, 0, 32);
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("a/c/2/3"), std::string::npos) << e.what();
    }
}

TEST(ReadAhead, ShardIndexErrorNamesTheShard) {
    Fixture f(sharded_meta(), 4);
    f.fake->failing = "a/c/1/1";
    try {
        f.read(5, 5, 23);
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("a/c/1/1"), std::string::npos) << e.what();
    }
}

TEST(ReadAhead, StoreWithoutConcurrencyNeverFetchesAhead) {
    Fixture f(sharded_meta(), 1);
    EXPECT_EQ(f.read(5, 5, 23), expected_window(values(), 5, 5, 23));
    EXPECT_EQ(f.fake->runs, 0);
    EXPECT_FALSE(f.fake->keys().empty());
}

TEST(StoreRequests, AnswerOneKeepsValueRangesAbsenceAndErrors) {
    MemoryStore s;
    s.put("k", Bytes{1, 2, 3, 4});
    std::vector<BatchAnswer> answers;
    for (const BatchRequest& r :
         {BatchRequest{"k", {}, kMaxChunkBytes}, BatchRequest{"missing", {}, kMaxChunkBytes},
          BatchRequest{"k", {RangeSuffix{2}}, kMaxChunkBytes}, BatchRequest{"k", {}, 3}})
        answers.push_back(answer_one(s, r));
    ASSERT_TRUE(answers[0].data);
    EXPECT_EQ(answers[0].data->at(0), (Bytes{1, 2, 3, 4}));
    EXPECT_TRUE(answers[0].version.known());
    EXPECT_FALSE(answers[1].data);
    EXPECT_FALSE(answers[1].error);
    ASSERT_TRUE(answers[2].data);
    EXPECT_EQ(answers[2].data->at(0), (Bytes{3, 4}));
    EXPECT_TRUE(answers[3].error); // above its limit
}

TEST(StoreRequests, DefaultRunsTheWorkerOnceOnTheCallersThread) {
    MemoryStore s;
    int calls = 0;
    std::thread::id where;
    s.run_requests(8, [&] {
        ++calls;
        where = std::this_thread::get_id();
    });
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(where, std::this_thread::get_id());
}

}  // namespace ut_array_test_read_ahead
