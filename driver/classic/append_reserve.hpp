// Appends on object storage that checks conditions (a store with
// capabilities().conditional_put and no lock across processes): the steps
// are reserved before any chunk is written (zarr3/step_reservation.hpp), and
// an append that finds them switched by another once it holds the
// reservation runs again on the new length (StepMoved).
#pragma once

#include "zarr3/array_lock.hpp"
#include "zarr3/step_reservation.hpp"

#include <functional>
#include <memory>
#include <string>

namespace zarr3drv {

// Another append switched the steps this one read before it wrote anything:
// it runs again on the new length.
class StepMoved : public zarr3::Error {
  public:
    using Error::Error;
};

// How many times an append runs again after StepMoved.
constexpr int kMaxAppendAttempts = 16;

// The reservations of an append: its array's, then its coordinate's.
struct Reservations {
    std::unique_ptr<zarr3::StepReservation> array, coord;
    bool active() const { return array != nullptr; }
    bool lost() const { return (array && array->lost()) || (coord && coord->lost()); }
    void keep(bool now = false) {
        if (array) array->keep(now);
        if (coord) coord->keep(now);
    }
    void release() {
        if (coord) coord->release();
        if (array) array->release();
    }
};

// A node as the append read it ("" path: none).
struct SeenNode {
    std::string path;
    zarr3::NodeSnapshot seen;
};

// Reserves steps [start, start + n) of `array` and `coord` (when it has a
// path), then checks that neither zarr.json changed since it was read
// through `fresh()` (StepMoved otherwise). Empty where the store cannot
// reserve (no conditional put, a lock across processes, or a storage found
// to ignore conditions): the caller keeps its unconditional scheme.
// ZARR3_APPEND_RESERVATION_TIMEOUT (seconds, default 120) sets the bound.
Reservations Reserve(const std::function<std::shared_ptr<zarr3::Store>()>& fresh,
                     const std::shared_ptr<zarr3::Store>& store, const SeenNode& array,
                     const SeenNode& coord, uint64_t start, uint64_t n);

} // namespace zarr3drv
