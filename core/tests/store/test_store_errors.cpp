// Every error of a storing thread reaches a caller (issue 33 #9 and its
// class): a store that fails after N values, under write-behind, the write
// buffer's batched parallel stores, the flush at a read, flush() and the
// destructor. A chunk whose write failed is never read back old as a success,
// and every later flush fails until it is written again. Named *Concurrent*:
// scripts/tsan.sh runs these under ThreadSanitizer.
#include "zarr3/array.hpp"

#include "test_util.hpp"

#include <atomic>
#include <gtest/gtest.h>
#include <mutex>
#include <thread>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_store_test_store_errors {

using namespace zarr3;
using nlohmann::json;

namespace {

// Stores `budget` more values, then fails every put with "disk full" (as a
// full disk does). Requests run on threads of their own.
class FailingStore : public MemoryStore {
  public:
    void put(const std::string& key, ByteView value) override {
        if (budget.fetch_sub(1) <= 0) throw Error(key + ": disk full");
        MemoryStore::put(key, value);
    }
    void run_requests(size_t threads, const std::function<void()>& worker) override {
        run_on_threads(threads, worker);
    }
    StoreCapabilities capabilities() const override {
        auto c = MemoryStore::capabilities();
        c.request_threads = true;
        return c;
    }
    std::atomic<int> budget{1 << 30};
};

constexpr uint64_t kN = 64, kC = 8; // 8 x 8 chunks of 8 x 8 uint16

Selection chunk_sel(uint64_t cy, uint64_t cx, uint64_t rows = kC) {
    return Selection{{cy * kC, cx * kC}, {rows, kC}, {}};
}

// An array whose every chunk is stored with value 1, over a store that then
// stores `budget` values only.
std::shared_ptr<Array> old_array(const std::shared_ptr<FailingStore>& store, int budget,
                                 bool executor) {
    const json j = testutil::regular_square_json(kN, kC, "uint16");
    auto a = Array::create(store, "a", parse_array_metadata(j, "a/zarr.json"), true);
    const std::vector<uint16_t> old(kN * kN, 1);
    a->write(Selection::all(a->metadata().shape), old.data());
    if (executor) a->set_executor(testutil::thread_executor(4));
    store->budget = budget;
    return a;
}

// Reads chunk (cy, cx): "error" when the read fails, else "new" when all
// `rows` first rows are 2 (the rest 1), "old" when all are 1, else "mixed".
std::string read_chunk(const Array& a, uint64_t cy, uint64_t cx, uint64_t rows = kC) {
    std::vector<uint16_t> v(kC * kC, 0);
    try {
        a.read(chunk_sel(cy, cx), v.data()); // refuses a stale chunk by itself (every view)
    } catch (const Error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("disk full"), std::string::npos) << m;
        EXPECT_NE(m.find("a/c/"), std::string::npos) << m;
        return "error";
    }
    bool is_new = true, is_old = true;
    for (size_t i = 0; i < v.size(); ++i) {
        is_new = is_new && v[i] == (i < rows * kC ? 2 : 1);
        is_old = is_old && v[i] == 1;
    }
    return is_new ? "new" : is_old ? "old" : "mixed";
}

// flush() fails naming the store error (twice: the error stays).
void expect_flush_fails(Array& a) {
    for (int k = 0; k < 2; ++k) {
        try {
            a.flush();
            ADD_FAILURE() << "flush " << k << " succeeded after a chunk was lost";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("disk full"), std::string::npos) << e.what();
        }
    }
}

// Once the store works again, writing every chunk again clears the errors.
void expect_rewrite_heals(const std::shared_ptr<FailingStore>& store, Array& a) {
    store->budget = 1 << 30;
    const std::vector<uint16_t> v(kN * kN, 2);
    a.write(Selection::all(a.metadata().shape), v.data());
    EXPECT_NO_THROW(a.flush());
    for (uint64_t cy = 0; cy < kN / kC; ++cy)
        for (uint64_t cx = 0; cx < kN / kC; ++cx)
            EXPECT_EQ(read_chunk(a, cy, cx), "new") << cy << "," << cx;
}

} // namespace

TEST(ConcurrentStoreErrors, WriteBehindLossFailsLaterReadsAndFlushes) {
    auto store = std::make_shared<FailingStore>();
    auto a = old_array(store, 5, false); // no executor: write-behind
    const std::vector<uint16_t> v(kN * kN, 2);
    EXPECT_THROW(a->write(Selection::all(a->metadata().shape), v.data()), Error);
    int errors = 0;
    for (uint64_t cy = 0; cy < kN / kC; ++cy)
        for (uint64_t cx = 0; cx < kN / kC; ++cx) {
            const std::string got = read_chunk(*a, cy, cx);
            EXPECT_NE(got, "mixed");
            errors += got == "error";
        }
    EXPECT_GE(errors, 1); // the chunk whose store failed is stale
    expect_flush_fails(*a);
    expect_rewrite_heals(store, *a);
}

TEST(ConcurrentStoreErrors, BatchedBlocksAreNeverReadBackOldAsSuccess) {
    auto store = std::make_shared<FailingStore>();
    auto a = old_array(store, 10, true);
    const std::vector<uint16_t> block(kC * kC, 2);
    int failed_calls = 0;
    for (uint64_t cy = 0; cy < kN / kC; ++cy)
        for (uint64_t cx = 0; cx < kN / kC; ++cx) {
            try {
                a->write(chunk_sel(cy, cx), block.data(), {}, Array::WriteMode::Batched);
            } catch (const Error&) {
                ++failed_calls; // the batch this block completed failed
            }
        }
    EXPECT_GE(failed_calls, 1);
    expect_flush_fails(*a);
    for (uint64_t cy = 0; cy < kN / kC; ++cy)
        for (uint64_t cx = 0; cx < kN / kC; ++cx) {
            const std::string got = read_chunk(*a, cy, cx);
            EXPECT_TRUE(got == "new" || got == "error") << cy << "," << cx << ": " << got;
        }
    expect_rewrite_heals(store, *a);
}

TEST(ConcurrentStoreErrors, FlushAtReadFailsTheReadAndStays) {
    auto store = std::make_shared<FailingStore>();
    auto a = old_array(store, 3, true);
    const std::vector<uint16_t> block(kC * kC, 2);
    for (uint64_t cx = 0; cx < 8; ++cx) // fewer than a batch: all still queued
        a->write(chunk_sel(0, cx), block.data(), {}, Array::WriteMode::Batched);
    std::vector<uint16_t> row(kC * kN);
    EXPECT_THROW(a->read(Selection{{0, 0}, {kC, kN}, {}}, row.data()), Error);
    int errors = 0;
    for (uint64_t cx = 0; cx < 8; ++cx) {
        const std::string got = read_chunk(*a, 0, cx);
        EXPECT_TRUE(got == "new" || got == "error") << cx << ": " << got;
        errors += got == "error";
    }
    EXPECT_EQ(errors, 5); // 3 stored, 5 lost: each read of them fails
    expect_flush_fails(*a);
    expect_rewrite_heals(store, *a);
}

TEST(ConcurrentStoreErrors, BufferedPartialChunksFailEveryFlush) {
    for (const bool executor : {false, true}) {
        auto store = std::make_shared<FailingStore>();
        auto a = old_array(store, 2, executor);
        const std::vector<uint16_t> half(kC / 2 * kC, 2);
        for (uint64_t cx = 0; cx < 8; ++cx) // half chunks: buffered, merged at flush
            a->write(chunk_sel(0, cx, kC / 2), half.data());
        expect_flush_fails(*a);
        // A serial flush stops at its first failure and keeps the chunks it
        // did not start: later flushes try them (and a read flushes all).
        for (int k = 0; k < 8; ++k)
            EXPECT_THROW(a->flush(), Error);
        int errors = 0;
        for (uint64_t cx = 0; cx < 8; ++cx) {
            const std::string got = read_chunk(*a, 0, cx, kC / 2);
            EXPECT_TRUE(got == "new" || got == "error") << cx << ": " << got;
            errors += got == "error";
        }
        EXPECT_EQ(errors, 6) << executor;
        expect_rewrite_heals(store, *a);
    }
}

TEST(ConcurrentStoreErrors, DestructorNeverThrowsAndKeepsChunksWhole) {
    // A destructor cannot report: owners flush() first (the driver does at
    // FlushCache and close). What it could not store keeps its old value.
    auto store = std::make_shared<FailingStore>();
    {
        auto a = old_array(store, 2, true);
        const std::vector<uint16_t> half(kC / 2 * kC, 2);
        for (uint64_t cx = 0; cx < 8; ++cx)
            a->write(chunk_sel(0, cx, kC / 2), half.data());
    }
    store->budget = 1 << 30;
    auto b = Array::open(store, "a");
    int stored = 0;
    for (uint64_t cx = 0; cx < 8; ++cx) {
        const std::string got = read_chunk(*b, 0, cx, kC / 2);
        EXPECT_TRUE(got == "new" || got == "old") << cx << ": " << got;
        stored += got == "new";
    }
    EXPECT_EQ(stored, 2);
}

TEST(ConcurrentStoreErrors, OnlyAWholeRewriteMakesALostChunkCurrent) {
    auto store = std::make_shared<FailingStore>();
    auto a = old_array(store, 0, false);
    const std::vector<uint16_t> block(kC * kC, 2);
    EXPECT_THROW(a->write(chunk_sel(0, 0), block.data()), Error);
    store->budget = 1 << 30;
    // Merged with the stale stored chunk, half a chunk leaves it stale.
    a->write(chunk_sel(0, 0, kC / 2), block.data());
    expect_flush_fails(*a);
    EXPECT_EQ(read_chunk(*a, 0, 0), "error");
    a->write(chunk_sel(0, 0), block.data());
    EXPECT_NO_THROW(a->flush());
    EXPECT_EQ(read_chunk(*a, 0, 0), "new");
}

}  // namespace ut_store_test_store_errors
