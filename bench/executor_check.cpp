// Checks zarr3gdal::make_executor (GDAL's thread pool): every index runs once,
// tasks really overlap with GDAL_NUM_THREADS=2, the first exception reaches the
// caller, nested calls from tasks do not deadlock, GDAL_NUM_THREADS=1 is serial.
// Exits non-zero on failure (run by ctest as zarr3_executor_check).
#include "gdal_executor.hpp"

#include "cpl_conv.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <thread>
#include <vector>

namespace {
int failures = 0;
void check(bool ok, const char* what) {
    std::printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
    failures += ok ? 0 : 1;
}
} // namespace

int main() {
    CPLSetConfigOption("GDAL_NUM_THREADS", "1");
    check(!zarr3gdal::make_executor(), "GDAL_NUM_THREADS=1 gives an empty (serial) executor");
    CPLSetConfigOption("GDAL_NUM_THREADS", "ALL_CPUS");
    check(zarr3gdal::resolve_num_threads() >= 1, "ALL_CPUS resolves");
    CPLSetConfigOption("GDAL_NUM_THREADS", "bogus");
    check(zarr3gdal::resolve_num_threads() == 1, "an invalid value counts as 1");

    CPLSetConfigOption("GDAL_NUM_THREADS", "2");
    const auto ex = zarr3gdal::make_executor();
    check(static_cast<bool>(ex), "GDAL_NUM_THREADS=2 gives a pool executor");
    if (!ex) return 1;

    std::vector<std::atomic<int>> hits(1000);
    ex(hits.size(), [&](size_t i) { ++hits[i]; });
    bool once = true;
    for (auto& h : hits)
        once &= h == 1;
    check(once, "every index runs exactly once");

    // Two tasks that each wait for the other: only passes when they overlap.
    std::atomic<int> arrived{0};
    bool overlapped = true;
    ex(2, [&](size_t) {
        ++arrived;
        const auto t0 = std::chrono::steady_clock::now();
        while (arrived < 2)
            if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(10)) {
                overlapped = false;
                return;
            }
    });
    check(overlapped, "two tasks run at the same time");

    bool caught = false;
    try {
        ex(100, [&](size_t i) {
            if (i == 37) throw std::runtime_error("task 37 failed");
        });
    } catch (const std::runtime_error& e) {
        caught = std::string(e.what()) == "task 37 failed";
    }
    check(caught, "a task's exception is rethrown in the caller");

    std::atomic<int> inner{0};
    ex(8, [&](size_t) { ex(16, [&](size_t) { ++inner; }); });
    check(inner == 8 * 16, "nested calls complete (no deadlock)");

    // Many concurrent callers sharing the pool.
    std::atomic<int> total{0};
    std::vector<std::thread> callers;
    for (int t = 0; t < 4; ++t)
        callers.emplace_back([&] {
            for (int r = 0; r < 50; ++r)
                ex(10, [&](size_t) { ++total; });
        });
    for (auto& t : callers)
        t.join();
    check(total == 4 * 50 * 10, "concurrent callers complete");
    return failures ? 1 : 0;
}
