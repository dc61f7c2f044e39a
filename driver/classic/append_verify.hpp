// An append on a store without locks across processes (an object store):
// after its switch, what is stored is read again, past every cache, and the
// append reports success only when its own step is there. Two appends at
// once write the same step's chunks; without conditional writes the last
// writer of each object wins, so the array's zarr.json, the coordinate's
// values and the pixels of the step may each come from either writer.
#pragma once

#include "classic/append_values.hpp"

#include "zarr3/store.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace zarr3drv {

struct AppendedStep {
    std::string array_path, dim; // dim: the coordinate array's path ("" without one)
    uint64_t start = 0, count = 0;
    const zarr3::Bytes* coord_values = nullptr; // this append's values, encoded
};

// How long this append took to write its chunks, and from it how long to
// wait before checking what is stored: an append that checked before this
// one switched may still be writing the same step's objects (twice the
// time, at least 0.25 s, at most 10 s).
class WriteClock {
  public:
    void start() {
        begin_ = std::chrono::steady_clock::now();
        started_ = true;
    }
    bool started() const { return started_; }
    void stop() { took_ = std::chrono::steady_clock::now() - begin_; }
    std::chrono::milliseconds settle() const;

  private:
    std::chrono::steady_clock::time_point begin_{};
    std::chrono::steady_clock::duration took_{};
    bool started_ = false;
};

// After waiting `settle`, what the store (`fresh_store()`, nothing cached)
// holds at `step`: empty when it is this append's step (the array reaches
// past it, the coordinate holds its values and the pixels are the
// source's, converted as `values` says); otherwise a message naming the
// array, the index and what another writer replaced.
std::string StoredStep(const std::function<std::shared_ptr<zarr3::Store>()>& fresh_store,
                       const AppendedStep& step, GDALDataset* src, const AppendValues& values,
                       std::chrono::milliseconds settle);

} // namespace zarr3drv
