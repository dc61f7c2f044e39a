// Write-behind (writes with no executor): the caller encodes while one of the
// store's threads stores, the caller stores itself when the queue is full or
// the store has no threads, errors of either side stop the write and surface,
// and Array::write on one thread stores every chunk through it.
#include "array/write_behind.hpp"
#include "zarr3/array.hpp"

#include "test_util.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <gtest/gtest.h>
#include <mutex>
#include <set>
#include <thread>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_array_test_write_behind {

using namespace zarr3;
using nlohmann::json;

namespace {

// A MemoryStore whose run_requests runs on real threads, as FileStore and
// the driver's VSIStore do.
class ThreadedMemoryStore : public MemoryStore {
  public:
    void run_requests(size_t threads, const std::function<void()>& worker) override {
        run_on_threads(threads, worker);
    }
    StoreCapabilities capabilities() const override {
        auto c = MemoryStore::capabilities();
        c.request_threads = true;
        return c;
    }
};

// What a StoreFn saw: keys in order and the thread that stored each.
struct Stored {
    std::mutex mu;
    std::vector<std::string> keys;
    std::vector<std::thread::id> threads;
    void add(const std::string& k) {
        std::lock_guard lk(mu);
        keys.push_back(k);
        threads.push_back(std::this_thread::get_id());
    }
};

// Waits up to 10 s for `cond`; false when it never held.
template <class F> bool wait_for(F cond) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!cond()) {
        if (std::chrono::steady_clock::now() > end) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

} // namespace

TEST(WriteBehind, StoresOnTheStoreThreadWhileTheCallerGoesOn) {
    ThreadedMemoryStore store;
    Stored seen;
    std::atomic<int> produced{0};
    std::atomic<bool> overlapped{false};
    WriteBehind wb(store, [&](const std::string& key, const Bytes*) {
        // "a" is stored only once the caller has produced "b": a caller that
        // stored "a" itself before going on would wait here in vain.
        if (key == "a") overlapped = wait_for([&] { return produced.load() >= 2; });
        seen.add(key);
    });
    wb.run([&] {
        wb.push("a", Bytes{1});
        produced = 1;
        wb.push("b", Bytes{2});
        produced = 2;
        wb.push("c", Bytes{3});
    });
    EXPECT_TRUE(overlapped);
    // Once the caller is done both threads drain the queue, so values of
    // different keys may land in any order (a write pushes each key once).
    auto keys = seen.keys;
    std::sort(keys.begin(), keys.end());
    EXPECT_EQ(keys, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(WriteBehind, StoreWithoutThreadsStoresEverythingOnTheCaller) {
    MemoryStore store; // run_requests: one worker, the caller's thread
    Stored seen;
    WriteBehind wb(store, [&](const std::string& key, const Bytes* v) {
        seen.add(key + (v ? "" : "(erase)"));
    });
    wb.run([&] {
        for (int i = 0; i < 5; ++i)
            wb.push("k" + std::to_string(i), Bytes(100, uint8_t(i)));
        wb.push("gone", std::nullopt);
    });
    EXPECT_EQ(seen.keys, (std::vector<std::string>{"k0", "k1", "k2", "k3", "k4", "gone(erase)"}));
    for (const auto& t : seen.threads)
        EXPECT_EQ(t, std::this_thread::get_id());
}

TEST(WriteBehind, CallerStoresItselfWhenTheQueueIsFull) {
    ThreadedMemoryStore store;
    Stored seen;
    std::atomic<bool> caller_done{false};
    const auto caller = std::this_thread::get_id();
    // The store thread is stuck on its first value until the caller has
    // handed over everything: with at most 10 bytes queued the caller must
    // store the others itself, oldest first.
    WriteBehind wb(
        store,
        [&](const std::string& key, const Bytes*) {
            if (std::this_thread::get_id() != caller)
                (void)wait_for([&] { return caller_done.load(); });
            seen.add(key);
        },
        10);
    wb.run([&] {
        for (int i = 0; i < 6; ++i)
            wb.push("k" + std::to_string(i), Bytes(8, uint8_t(i)));
        caller_done = true;
    });
    ASSERT_EQ(seen.keys.size(), 6u);
    size_t by_caller = 0;
    for (const auto& t : seen.threads)
        by_caller += t == caller;
    EXPECT_GE(by_caller, 4u); // all but the stuck one and at most one queued
    std::vector<std::string> sorted = seen.keys;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, (std::vector<std::string>{"k0", "k1", "k2", "k3", "k4", "k5"}));
}

// Runs 50 pushes of which the store of "k1" fails; returns what was stored.
std::vector<std::string> write_failing_at_k1(Store& store) {
    Stored seen;
    WriteBehind wb(store, [&](const std::string& key, const Bytes*) {
        if (key == "k1") throw Error("k1: disk full");
        seen.add(key);
    });
    try {
        wb.run([&] {
            for (int i = 0; i < 50; ++i)
                wb.push("k" + std::to_string(i), Bytes(8, 1));
        });
        ADD_FAILURE() << "the write did not fail";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("k1: disk full"), std::string::npos) << e.what();
    }
    return seen.keys;
}

TEST(WriteBehind, StoreErrorStopsTheWriteAndSurfaces) {
    MemoryStore one_thread;
    EXPECT_EQ(write_failing_at_k1(one_thread), std::vector<std::string>{"k0"});
    // With a store thread the other thread may store what it had taken
    // while the failure was being recorded; the error still surfaces.
    ThreadedMemoryStore threaded;
    const auto keys = write_failing_at_k1(threaded);
    EXPECT_EQ(std::count(keys.begin(), keys.end(), "k1"), 0);
}

TEST(WriteBehind, CallerErrorSurfacesAfterTheStoreThreadStops) {
    ThreadedMemoryStore store;
    Stored seen;
    WriteBehind wb(store, [&](const std::string& key, const Bytes*) { seen.add(key); });
    EXPECT_THROW(wb.run([&] {
        wb.push("a", Bytes{1});
        throw Error("encoding failed");
    }),
                 Error);
    EXPECT_LE(seen.keys.size(), 1u);
}

TEST(WriteBehind, BuffersOfStoredValuesAreReused) {
    ThreadedMemoryStore store;
    std::atomic<int> stored{0};
    WriteBehind wb(store, [&](const std::string&, const Bytes*) { ++stored; });
    std::set<const uint8_t*> handed;
    int reused = 0;
    wb.run([&] {
        for (int i = 0; i < 3; ++i) {
            // The store thread gives the buffer back just after storing it:
            // ask until it is there (the first round has none to give).
            Bytes b;
            ASSERT_TRUE(wait_for([&] {
                b = wb.buffer();
                return i == 0 || b.capacity() >= 4096;
            }));
            reused += i > 0 && handed.count(b.data()) > 0;
            b.assign(4096, uint8_t(i));
            handed.insert(b.data());
            wb.push("k", std::move(b));
            ASSERT_TRUE(wait_for([&] { return stored.load() == i + 1; }));
        }
    });
    EXPECT_EQ(reused, 2);
}

TEST(WriteBehind, ABufferGivenBackIsHandedOutAgain) {
    // An all-fill chunk is pushed as an erase: its buffer goes back to the
    // spares instead of being dropped.
    ThreadedMemoryStore store;
    WriteBehind wb(store, [](const std::string&, const Bytes*) {});
    wb.run([&] {
        Bytes b = wb.buffer();
        b.assign(4096, 1);
        const uint8_t* p = b.data();
        wb.recycle(std::move(b));
        wb.push("k", std::nullopt);
        const Bytes again = wb.buffer();
        EXPECT_EQ(again.data(), p);
        EXPECT_TRUE(again.empty());
        EXPECT_GE(again.capacity(), 4096u);
    });
}

TEST(WriteBehind, ArrayWriteOnOneThreadStoresOnTwoThreads) {
    // The first put waits until a second one has started: stores made one
    // after another on the encoding thread would wait in vain.
    struct Recording : ThreadedMemoryStore {
        std::atomic<bool> armed{false};
        std::atomic<int> started{0};
        std::atomic<bool> overlapped{false};
        void put(const std::string& key, ByteView value) override {
            if (armed && started.fetch_add(1) == 0)
                overlapped = wait_for([&] { return started.load() >= 2; });
            MemoryStore::put(key, value);
        }
    };
    auto store = std::make_shared<Recording>();
    const json j = testutil::regular_square_json(
        64, 16, "uint16",
        json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                     {{"name", "zstd"}, {"configuration", {{"level", 3}}}}}));
    auto a = Array::create(store, "a", parse_array_metadata(j, "a/zarr.json"), true);
    std::vector<uint16_t> v(64 * 64);
    for (size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<uint16_t>(i % 4096 == 17 ? 0 : i + 1);
    std::fill(v.begin(), v.begin() + 16 * 64, 0); // first chunk row: fill value, erased
    store->armed = true;
    a->write(Selection::all(a->metadata().shape), v.data());
    EXPECT_TRUE(store->overlapped);
    EXPECT_FALSE(store->get("a/c/0/0").has_value());
    std::vector<uint16_t> back(v.size(), 7);
    a->read(Selection::all(a->metadata().shape), back.data());
    EXPECT_EQ(back, v);
}

TEST(WriteBehind, ArrayWriteNamesTheChunkWhoseStoreFailed) {
    struct Failing : ThreadedMemoryStore {
        void put(const std::string& key, ByteView value) override {
            if (key == "a/c/2/1") throw Error("no space left on device");
            MemoryStore::put(key, value);
        }
    };
    auto store = std::make_shared<Failing>();
    const json j = testutil::regular_square_json(64, 16, "uint8");
    auto a = Array::create(store, "a", parse_array_metadata(j, "a/zarr.json"), true);
    std::vector<uint8_t> v(64 * 64, 5);
    try {
        a->write(Selection::all(a->metadata().shape), v.data());
        FAIL() << "the write did not fail";
    } catch (const Error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("c/2/1"), std::string::npos) << m;
        EXPECT_NE(m.find("no space left on device"), std::string::npos) << m;
    }
}

}  // namespace ut_array_test_write_behind
