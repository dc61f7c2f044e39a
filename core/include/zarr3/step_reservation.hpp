// Reservations of appended steps on stores that check conditions themselves
// (capabilities().conditional_put: object storage) and have no lock across
// processes: before writing any chunk of steps [start, start + count) of an
// array, an append creates the object `<node>/.zarr3-append` with
// put_if(absent); a second append finds it and waits. The holder removes it
// after its switch. A reservation left by a killed writer is taken over
// (put_if on the version read) at once when the reserved array already
// reaches past the reserved steps (the holder switched), else once it stayed
// unchanged for `bound` as measured by the waiting writer's own clock (no
// clock of two hosts is compared). The holder renews it (a conditional
// replacement) at least every third of the bound while it writes and right
// before its switch, so a live holder is never taken over, and a holder whose
// reservation was taken over stops before switching.
#pragma once

#include "zarr3/store.hpp"

#include <chrono>
#include <memory>
#include <string>

namespace zarr3 {

struct ReservedStep {
    std::string
        array; // the array whose steps these are (its zarr.json tells when they are switched)
    uint64_t start = 0, count = 0;
};

struct ReservationTiming {
    std::chrono::milliseconds bound{std::chrono::seconds(120)};
    std::chrono::milliseconds poll{std::chrono::milliseconds(250)};
    // A writer waiting longer than this for live holders gives up (Error).
    std::chrono::milliseconds max_wait{std::chrono::minutes(30)};
};

// The key of `node`'s reservation.
std::string reservation_key(const std::string& node);

class StepReservation {
  public:
    // Takes the reservation of `node` for `step`, waiting as described above.
    // nullptr when the store has locks across processes or no conditional
    // put (the caller keeps its own scheme). ConditionsIgnored when the
    // storage turns out to ignore conditions (nothing written).
    static std::unique_ptr<StepReservation> take(std::shared_ptr<Store> store,
                                                 const std::string& node, const ReservedStep& step,
                                                 const ReservationTiming& timing);
    // Renews it when a third of the bound passed since it was last written
    // (`now`: always). Error naming it when it is no longer this writer's.
    void keep(bool now = false);
    // Removes it when no other writer can have taken it over; errors are
    // swallowed (a reservation left is taken over as above).
    void release() noexcept;
    // Whether a renewal failed: the reserved steps may be another writer's.
    bool lost() const { return lost_; }
    ~StepReservation() { release(); }

    StepReservation(std::shared_ptr<Store> store, std::string key, ReservedStep step,
                    ReservationTiming timing, std::string owner);

  private:
    bool write_over(const ObjectVersion& version, const Bytes& stored);
    Bytes content() const;

    std::shared_ptr<Store> store_;
    std::string key_;
    ReservedStep step_;
    ReservationTiming timing_;
    std::string owner_;
    ObjectVersion version_;
    Bytes stored_;
    std::chrono::steady_clock::time_point written_{};
    bool held_ = false, lost_ = false;
};

} // namespace zarr3
