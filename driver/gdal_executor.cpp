// zarr3gdal::make_executor: chunk tasks on GDAL's global worker thread pool.
#include "gdal_executor.hpp"

#include "cpl_conv.h"
#include "cpl_multiproc.h"
#include "cpl_string.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>

#include "gdal_compat.hpp" // CPLWorkerThreadPool
// Exported by libgdal (gcore) in every version we support, declared in no
// installed header.
CPLWorkerThreadPool* GDALGetGlobalThreadPool(int nThreads);

namespace zarr3gdal {

namespace {

constexpr int kMaxThreads = 1024;

// True while this thread runs tasks for one of our executors.
thread_local bool t_in_task = false;

struct State {
    const std::function<void(size_t)>* task = nullptr; // valid until `closed`
    size_t n = 0;
    std::atomic<size_t> next{0};
    std::atomic<bool> failed{false};
    std::mutex mu;
    std::condition_variable cv;
    bool closed = false; // the caller returned (or is returning): late jobs do nothing
    int active = 0;      // pool jobs inside run_loop
    std::exception_ptr error;
};

void run_loop(State& s) {
    const bool was_in_task = t_in_task;
    t_in_task = true;
    while (!s.failed.load(std::memory_order_relaxed)) {
        const size_t i = s.next.fetch_add(1);
        if (i >= s.n) break;
        try {
            (*s.task)(i);
        } catch (...) {
            std::lock_guard lk(s.mu);
            if (!s.error) s.error = std::current_exception();
            s.failed = true;
        }
    }
    t_in_task = was_in_task;
}

void pool_job(void* p) {
    std::unique_ptr<std::shared_ptr<State>> holder(static_cast<std::shared_ptr<State>*>(p));
    State& s = **holder;
    {
        std::lock_guard lk(s.mu);
        if (s.closed) return;
        ++s.active;
    }
    run_loop(s);
    std::lock_guard lk(s.mu);
    if (--s.active == 0) s.cv.notify_all();
}

void run_on_pool(CPLWorkerThreadPool* pool, int threads, size_t n,
                 const std::function<void(size_t)>& task) {
    if (n == 0) return;
    if (n == 1 || t_in_task) { // nested call from one of our tasks: stay serial
        for (size_t i = 0; i < n; ++i)
            task(i);
        return;
    }
    auto state = std::make_shared<State>();
    state->task = &task;
    state->n = n;
    const size_t helpers = std::min<size_t>(static_cast<size_t>(threads - 1), n - 1);
    for (size_t k = 0; k < helpers; ++k) {
        auto* arg = new std::shared_ptr<State>(state);
        if (!pool->SubmitJob(pool_job, arg)) {
            delete arg;
            break; // the caller does the rest
        }
    }
    run_loop(*state);
    std::unique_lock lk(state->mu);
    state->closed = true;
    state->cv.wait(lk, [&] { return state->active == 0; });
    if (state->error) std::rethrow_exception(state->error);
}

} // namespace

int resolve_num_threads(const char* value) {
    const char* v = value ? value : CPLGetConfigOption("GDAL_NUM_THREADS", "ALL_CPUS");
    if (EQUAL(v, "ALL_CPUS")) return std::clamp(CPLGetNumCPUs(), 1, kMaxThreads);
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (end == v || *end != '\0' || n < 1) return 1;
    return static_cast<int>(std::min<long>(n, kMaxThreads));
}

zarr3::Executor make_executor(const char* num_threads) {
    const int threads = resolve_num_threads(num_threads);
    if (threads <= 1) return {};
    CPLWorkerThreadPool* pool = GDALGetGlobalThreadPool(threads - 1);
    if (!pool) return {};
    return [pool, threads](size_t n, const std::function<void(size_t)>& task) {
        run_on_pool(pool, threads, n, task);
    };
}

} // namespace zarr3gdal
