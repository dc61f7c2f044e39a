// Shared by the benchmark data generator (gen_data.cpp) and the kernels
// (kernels.cpp): array size and names, the synthetic field, the 1M-edge list
// and a plain std::thread executor for core-only runs.
#pragma once

#include "zarr3/common.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace bench {

constexpr uint64_t kN = 4096; // every 2-D array is kN x kN float32
inline const char* const kArrays[] = {"regular_zstd", "rect_zstd", "sharded_zstd", "regular_gzip",
                                      "regular_blosc"};
constexpr uint64_t kEdges = 1000000; // edges of edges_1m

// A smooth field plus noise, quantised to 1/64 so that zstd gets ~2-3x.
inline std::vector<float> make_field() {
    std::vector<float> v(kN * kN);
    std::mt19937 rng(42);
    std::normal_distribution<float> noise(0.f, 0.6f);
    for (uint64_t y = 0; y < kN; ++y)
        for (uint64_t x = 0; x < kN; ++x) {
            const double fx = double(x), fy = double(y);
            double f = 280.0 + 15.0 * std::sin(fx / 410.0) * std::cos(fy / 290.0) +
                       4.0 * std::sin((fx + 2 * fy) / 97.0) + 0.002 * fy;
            f += noise(rng);
            v[y * kN + x] = float(std::round(f * 64.0) / 64.0);
        }
    return v;
}

// Edge i of edges_1m: 1..15, never equal to its neighbour (no runs).
inline uint64_t edge_at(uint64_t i) {
    return 1 + (i * 7919) % 13 + (i % 2);
}

// Core executor: `threads` std::threads (0: one per hardware thread); the
// first exception thrown by a task is rethrown.
inline zarr3::Executor thread_executor(size_t threads = 0) {
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    if (threads <= 1) return {};
    return [threads](size_t n, const std::function<void(size_t)>& task) {
        std::atomic<size_t> next{0};
        std::exception_ptr err;
        std::mutex mu;
        auto loop = [&] {
            for (size_t i; (i = next++) < n;) {
                try {
                    task(i);
                } catch (...) {
                    std::lock_guard lk(mu);
                    if (!err) err = std::current_exception();
                }
            }
        };
        std::vector<std::thread> ts;
        for (size_t t = 1; t < std::min(threads, n); ++t)
            ts.emplace_back(loop);
        loop();
        for (auto& t : ts)
            t.join();
        if (err) std::rethrow_exception(err);
    };
}

} // namespace bench
