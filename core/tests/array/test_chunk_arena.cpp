// Memory of the decoded chunks the cache keeps (array/chunk_arena.hpp) and
// the threads' spare buffers for stored chunk bytes (zarr3/spare_bytes.hpp):
// freed memory is reused, slabs are given back when empty, nothing overlaps.
#include "array/chunk_arena.hpp"
#include "zarr3/chunk_cache.hpp"
#include "zarr3/spare_bytes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_array_test_chunk_arena {

using namespace zarr3;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kArena = false; // every buffer from operator new, for AddressSanitizer
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kArena = false;
#else
constexpr bool kArena = true;
#endif
#else
constexpr bool kArena = true;
#endif

TEST(ChunkArena, BuffersOfOneClassShareSlabsWithoutOverlapAndGiveThemBackWhenEmpty) {
    const auto before = chunk_arena::stats();
    constexpr size_t n = 256 << 10; // 8 per 2 MiB slab
    std::vector<std::unique_ptr<ChunkBuffer>> bufs;
    for (int i = 0; i < 20; ++i) {
        bufs.push_back(std::make_unique<ChunkBuffer>(n));
        std::fill_n(bufs.back()->data(), n, static_cast<uint8_t>(i));
    }
    for (int i = 0; i < 20; ++i) // no buffer wrote over another
        EXPECT_TRUE(std::all_of(bufs[i]->data(), bufs[i]->data() + n, [i](uint8_t v) {
            return v == static_cast<uint8_t>(i);
        })) << i;
    std::set<const uint8_t*> starts;
    for (const auto& b : bufs)
        starts.insert(b->data());
    EXPECT_EQ(starts.size(), bufs.size());
    const auto full = chunk_arena::stats();
    if (kArena) {
        EXPECT_EQ(full.slabs - before.slabs, 3u) << "20 buffers of 256 KiB: three 2 MiB slabs";
        EXPECT_EQ(full.in_use - before.in_use, 20 * n);
        EXPECT_EQ(full.mapped - before.mapped, 3 * (size_t(2) << 20));
    }
    bufs.clear();
    const auto after = chunk_arena::stats();
    EXPECT_EQ(after.slabs, before.slabs) << "empty slabs are unmapped";
    EXPECT_EQ(after.mapped, before.mapped);
    EXPECT_EQ(after.in_use, before.in_use);
}

TEST(ChunkArena, AFreedSlotIsTheNextBufferOfItsClass) {
    if (!kArena) GTEST_SKIP() << "AddressSanitizer build: buffers come from operator new";
    auto keep = std::make_unique<ChunkBuffer>(200 << 10); // holds the slab
    auto a = std::make_unique<ChunkBuffer>(200 << 10);
    const uint8_t* where = a->data();
    a.reset();
    auto b = std::make_unique<ChunkBuffer>(210 << 10); // the same class (256 KiB)
    EXPECT_EQ(b->data(), where);
}

TEST(ChunkArena, SmallAndLargeBuffersAndTheirAlignment) {
    const auto before = chunk_arena::stats();
    {
        ChunkBuffer small(1000), large((3 << 20) + 5), odd(1 << 20);
        std::fill_n(small.data(), small.size(), 1);
        std::fill_n(large.data(), large.size(), 2);
        std::fill_n(odd.data(), odd.size(), 3);
        EXPECT_EQ(large.data()[large.size() - 1], 2);
        if (kArena) {
            EXPECT_EQ(reinterpret_cast<uintptr_t>(large.data()) % (2 << 20), 0u)
                << "a large buffer starts on a huge page";
            const auto mid = chunk_arena::stats();
            EXPECT_EQ(mid.in_use - before.in_use, ((3u << 20) + 4096) + (1u << 20))
                << "the small one is not the arena's; the large one is rounded to a page";
        }
    }
    EXPECT_EQ(chunk_arena::stats().mapped, before.mapped);
    ChunkBuffer empty(0);
    (void)empty.data();
}

TEST(ChunkArena, ThreadsTakingAndGivingAtOnceKeepEveryBufferTheirOwn) {
    const auto before = chunk_arena::stats();
    auto work = [](int t) {
        for (int round = 0; round < 50; ++round) {
            std::vector<std::unique_ptr<ChunkBuffer>> mine;
            for (int i = 0; i < 6; ++i) {
                mine.push_back(std::make_unique<ChunkBuffer>(size_t(64 + 64 * (i % 3)) << 10));
                std::fill_n(mine.back()->data(), mine.back()->size(),
                            static_cast<uint8_t>(t * 16 + i));
            }
            for (int i = 0; i < 6; ++i)
                ASSERT_TRUE(
                    std::all_of(mine[i]->data(), mine[i]->data() + mine[i]->size(),
                                [&](uint8_t v) { return v == static_cast<uint8_t>(t * 16 + i); }));
        }
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back(work, t);
    for (auto& th : threads)
        th.join();
    EXPECT_EQ(chunk_arena::stats().mapped, before.mapped);
    EXPECT_EQ(chunk_arena::stats().slabs, before.slabs);
}

TEST(ChunkArena, AForkWhileAnotherThreadAllocatesLeavesTheChildAbleToAllocate) {
    std::atomic<bool> stop{false};
    std::thread busy([&] {
        while (!stop)
            ChunkBuffer b(128 << 10);
    });
    bool ok = true;
    for (int i = 0; i < 20 && ok; ++i) {
        const pid_t pid = ::fork();
        if (pid == 0) {
            ChunkBuffer b(128 << 10); // would wait forever on a lock held at the fork
            b.data()[0] = 1;
            ::_exit(0);
        }
        int status = 0;
        // Bounded: a child stuck on the lock is killed and the test fails.
        for (int t = 0; t < 500 && ::waitpid(pid, &status, WNOHANG) == 0; ++t)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        if (::waitpid(pid, &status, WNOHANG) == 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            ok = false;
        }
        ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    stop = true;
    busy.join();
    EXPECT_TRUE(ok);
}

// The spares are per thread: each case runs on a thread of its own (this one's may hold
// what earlier tests read).
template <class Fn> void on_fresh_thread(Fn fn) {
    std::thread t(fn);
    t.join();
}

TEST(SpareBytes, AGivenBackBufferIsTheNextOneOfItsSizeOrSmaller) {
    on_fresh_thread([] {
        Bytes a = take_spare_bytes(300 << 10);
        ASSERT_EQ(a.size(), size_t(300) << 10);
        const uint8_t* where = a.data();
        keep_spare_bytes(std::move(a));
        Bytes b = take_spare_bytes(250 << 10);
        EXPECT_EQ(b.data(), where) << "a smaller request reuses the spare";
        EXPECT_EQ(b.size(), size_t(250) << 10);
        keep_spare_bytes(std::move(b));
        Bytes c = take_spare_bytes(360 << 10); // within the quarter more reserved
        EXPECT_EQ(c.data(), where);
        Bytes d = take_spare_bytes(2 << 20); // larger than any spare: a fresh one
        EXPECT_NE(d.data(), where);
        EXPECT_EQ(d.size(), size_t(2) << 20);
    });
}

TEST(SpareBytes, AtMostFourAndEightMiBAreKept) {
    on_fresh_thread([] {
        std::vector<const uint8_t*> given;
        for (int i = 0; i < 6; ++i) {
            Bytes b = take_spare_bytes(size_t(1 + i) << 20);
            given.push_back(b.data());
            keep_spare_bytes(std::move(b));
            // Taken again at once: kept buffers are reused, not piled up.
        }
        std::vector<Bytes> taken;
        for (int i = 0; i < 6; ++i)
            taken.push_back(take_spare_bytes(1));
        size_t reused = 0, held = 0;
        for (const auto& b : taken)
            if (std::find(given.begin(), given.end(), b.data()) != given.end()) {
                ++reused;
                held += b.capacity();
            }
        EXPECT_LE(reused, 4u);
        EXPECT_LE(held, size_t(8) << 20);
        EXPECT_GE(reused, 1u);
        Bytes huge = take_spare_bytes(9 << 20);
        const uint8_t* h = huge.data();
        keep_spare_bytes(std::move(huge)); // above 8 MiB: not kept, still the caller's
        EXPECT_EQ(huge.data(), h);
        EXPECT_NE(take_spare_bytes(9 << 20).data(), h);
    });
}

} // namespace ut_array_test_chunk_arena
