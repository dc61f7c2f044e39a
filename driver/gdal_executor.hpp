// A zarr3::Executor running chunk tasks on GDAL's global worker thread pool.
#pragma once

#include "zarr3/common.hpp"

namespace zarr3gdal {

// Number of threads `value` asks for (null: the GDAL_NUM_THREADS config option): an integer,
// or ALL_CPUS (also the default when the option is unset). Anything else counts as 1.
int resolve_num_threads(const char* value = nullptr);

// An executor for zarr3::Array::set_executor. It runs at most
// resolve_num_threads() tasks at a time: the calling thread plus jobs on
// GDAL's global thread pool (GDALGetGlobalThreadPool). Returns an empty
// Executor (serial) when GDAL_NUM_THREADS resolves to 1 or the pool is not
// available. The first exception a task throws is rethrown in the caller
// once the running tasks have stopped (no further tasks start after it).
// Safe to call from a pool thread: calls made inside one of its own tasks run
// serially, and the caller never waits for a job the pool has not started,
// so it cannot deadlock on a busy pool.
// `num_threads`: as for resolve_num_threads (the NUM_THREADS creation option, or null).
zarr3::Executor make_executor(const char* num_threads = nullptr);

} // namespace zarr3gdal
