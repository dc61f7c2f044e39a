// Reservations of an append's steps (append_reserve.hpp).
#include "classic/append_reserve.hpp"

#include "cpl_conv.h"
#include "cpl_error.h"

#include <algorithm>

namespace zarr3drv {

namespace {

// ZARR3_APPEND_RESERVATION_TIMEOUT (seconds): how long a reservation left
// unchanged is respected before another append takes it over.
zarr3::ReservationTiming TimingFromConfig() {
    zarr3::ReservationTiming timing;
    if (const char* v = CPLGetConfigOption("ZARR3_APPEND_RESERVATION_TIMEOUT", nullptr)) {
        const double seconds = CPLAtof(v);
        if (!(seconds > 0) || seconds > 1e6)
            throw zarr3::Error(std::string("ZARR3_APPEND_RESERVATION_TIMEOUT=") + v +
                               ": expected a number of seconds above 0");
        timing.bound = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
        timing.poll = std::min(timing.poll, timing.bound / 4);
    }
    return timing;
}

} // namespace

Reservations Reserve(const std::function<std::shared_ptr<zarr3::Store>()>& fresh,
                     const std::shared_ptr<zarr3::Store>& store, const SeenNode& array,
                     const SeenNode& coord, uint64_t start, uint64_t n) {
    Reservations r;
    const zarr3::ReservedStep step{array.path, start, n};
    const auto timing = TimingFromConfig();
    try {
        r.array = zarr3::StepReservation::take(store, array.path, step, timing);
        if (r.array && !coord.path.empty())
            r.coord = zarr3::StepReservation::take(store, coord.path, step, timing);
    } catch (const zarr3::ConditionsIgnored& e) {
        CPLDebug("Zarr3", "%s: the append keeps its unconditional scheme", e.what());
        return {};
    }
    if (!r.active()) return r;
    zarr3::test_pause_point("append-reserved");
    const auto now_store = fresh();
    for (const SeenNode* node : {&array, &coord}) {
        if (node->path.empty()) continue;
        const auto now = zarr3::snapshot_node(*now_store, node->path);
        if (now.bytes != node->seen.bytes ||
            zarr3::versions_differ(now.version, node->seen.version))
            throw StepMoved(now_store->uri() + "/" + node->path +
                            "/zarr.json: another append switched it while this one waited for "
                            "its reservation");
    }
    return r;
}

} // namespace zarr3drv
