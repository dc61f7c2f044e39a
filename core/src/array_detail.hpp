// Private parts of Array shared by array*.cpp: the write-back buffer and
// helpers for per-chunk tasks.
#pragma once

#include "selection.hpp"
#include "zarr3/array.hpp"

#include <functional>
#include <map>

namespace zarr3 {

// Partial chunks waiting for the rest of their elements.
struct Array::WriteBuffer {
    struct Entry {
        std::vector<uint64_t> idx;
        Bytes data;
        std::vector<uint8_t> mask; // 1 per element written
        uint64_t covered = 0;
        uint64_t needed = 0; // elements of the chunk inside the array
        uint64_t seq = 0;
    };
    std::map<std::string, Entry> entries;
    uint64_t bytes = 0;
    uint64_t seq = 0;
    uint64_t max_bytes = 512ull << 20;
};

namespace array_detail {

// Runs fn(0..n-1) on `ex` (serially without one or for one task).
void run_tasks(const Executor& ex, size_t n, const std::function<void(size_t)>& fn);

// Rethrows the error being handled so that its message names the chunk `desc`.
[[noreturn]] void rethrow_for_chunk(const std::string& desc);

// Whether `region` writes every element of a chunk whose part inside the
// array is `valid` (per axis).
bool covers_chunk(const Region& region, const Shape& valid);

// Number of elements of chunk `idx` inside the array, per axis.
Shape valid_extent(const ArrayMetadata& m, const std::vector<uint64_t>& idx, const Shape& edges);

} // namespace array_detail

} // namespace zarr3
