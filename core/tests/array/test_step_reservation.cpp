// Reservations of appended steps on object storage (step_reservation.hpp):
// created if absent, waited for while their holder lives (it renews them),
// taken over at once when their steps are switched or once unchanged for the
// bound, never erased by a holder that lost them; zarr.json switched only
// over the version read (switch_metadata_if).
#include "zarr3/array_lock.hpp"
#include "zarr3/builder.hpp"
#include "zarr3/step_reservation.hpp"

#include "test_util.hpp"

#include <gtest/gtest.h>
#include <mutex>
#include <thread>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_array_test_step_reservation {

using namespace zarr3;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// An object store as S3 is one: no lock, the storage checks If-Match /
// If-None-Match: * itself.
class ObjectStoreLike : public MemoryStore {
  public:
    std::unique_ptr<StoreLock> lock(const std::string&) override { return nullptr; }
    StoreCapabilities capabilities() const override {
        return {.locks = false, .conditional_put = true};
    }
    PutResult put_if(const std::string& key, ByteView value,
                     const Precondition& condition) override {
        std::lock_guard lk(mu_);
        const auto now = read(ReadRequest::byte_ranges(key, {}));
        const bool ok = condition.kind == Precondition::Kind::Absent
                            ? !now
                            : now && now->version == condition.version;
        if (!ok) return PutResult::PreconditionFailed;
        put(key, value);
        return PutResult::Written;
    }

  private:
    std::mutex mu_;
};

ReservationTiming timing(std::chrono::milliseconds bound) {
    ReservationTiming t;
    t.bound = bound;
    t.poll = 10ms;
    t.max_wait = 20s;
    return t;
}

// An array "a" of `steps` steps along axis 0.
std::shared_ptr<Array> make_array(const std::shared_ptr<Store>& s, uint64_t steps) {
    const auto meta = ArrayBuilder({steps, 2}, data_type_from_name("float32"))
                          .regular_chunk_shape({1, 2})
                          .build("a");
    return Array::create(s, "a", meta, true);
}

// What a killed writer leaves: its reservation of `start` for array "a".
void leave_reservation(Store& s, uint64_t start) {
    const std::string text = R"({"array":"a","start":)" + std::to_string(start) +
                             R"(,"count":1,"owner":"killed","serial":1})";
    s.put(reservation_key("a"),
          ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

std::string owner_of(Store& s) {
    const auto b = s.get(reservation_key("a"));
    if (!b) return "";
    return nlohmann::json::parse(b->begin(), b->end())["owner"].get<std::string>();
}

} // namespace

TEST(StepReservation, NoneOnStoresWithLocksOrWithoutConditionalPut) {
    auto s = std::make_shared<MemoryStore>(); // locks
    EXPECT_EQ(StepReservation::take(s, "a", {"a", 0, 1}, timing(1s)), nullptr);
    EXPECT_FALSE(s->get(reservation_key("a")));
}

TEST(StepReservation, TakenThenReleased) {
    auto s = std::make_shared<ObjectStoreLike>();
    auto r = StepReservation::take(s, "a", {"a", 3, 1}, timing(10s));
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(reservation_key("a"), "a/.zarr3-append");
    const auto b = s->get(reservation_key("a"));
    ASSERT_TRUE(b);
    const auto j = nlohmann::json::parse(b->begin(), b->end());
    EXPECT_EQ(j["array"], "a");
    EXPECT_EQ(j["start"], 3);
    r->release();
    EXPECT_FALSE(s->get(reservation_key("a")));
}

TEST(StepReservation, KilledWritersReservationTakenOverAfterTheBound) {
    auto s = std::make_shared<ObjectStoreLike>();
    make_array(s, 3);
    leave_reservation(*s, 3); // not switched: the array holds 3 steps
    const auto t0 = Clock::now();
    auto r = StepReservation::take(s, "a", {"a", 3, 1}, timing(300ms));
    const auto took = Clock::now() - t0;
    ASSERT_NE(r, nullptr);
    EXPECT_GE(took, 300ms);
    EXPECT_LT(took, 5s);
    EXPECT_NE(owner_of(*s), "killed");
}

TEST(StepReservation, ReservationOfSwitchedStepsTakenOverAtOnce) {
    auto s = std::make_shared<ObjectStoreLike>();
    make_array(s, 4);
    leave_reservation(*s, 3); // step 3 switched: the array holds 4 steps
    const auto t0 = Clock::now();
    auto r = StepReservation::take(s, "a", {"a", 4, 1}, timing(60s));
    ASSERT_NE(r, nullptr);
    EXPECT_LT(Clock::now() - t0, 5s);
    EXPECT_NE(owner_of(*s), "killed");
}

TEST(StepReservation, LiveHolderRenewsAndIsWaitedFor) {
    auto s = std::make_shared<ObjectStoreLike>();
    make_array(s, 1);
    auto a = StepReservation::take(s, "a", {"a", 1, 1}, timing(300ms));
    ASSERT_NE(a, nullptr);
    const std::string a_owner = owner_of(*s);
    Clock::time_point released{}, b_took{};
    std::thread b([&] {
        auto r = StepReservation::take(s, "a", {"a", 1, 1}, timing(300ms));
        b_took = Clock::now();
        EXPECT_NE(r, nullptr);
    });
    for (int i = 0; i < 12; ++i) { // 1.2 s: four times the bound, renewed all along
        std::this_thread::sleep_for(100ms);
        EXPECT_NO_THROW(a->keep());
        EXPECT_EQ(owner_of(*s), a_owner);
    }
    EXPECT_NO_THROW(a->keep(true));
    released = Clock::now();
    a->release();
    b.join();
    EXPECT_GE(b_took, released);
}

TEST(StepReservation, HolderOverTheBoundLosesItAndLeavesTheNewOnes) {
    auto s = std::make_shared<ObjectStoreLike>();
    make_array(s, 1);
    auto a = StepReservation::take(s, "a", {"a", 1, 1}, timing(200ms));
    ASSERT_NE(a, nullptr);
    auto b = StepReservation::take(s, "a", {"a", 1, 1}, timing(200ms)); // a never renews
    ASSERT_NE(b, nullptr);
    const std::string b_owner = owner_of(*s);
    try {
        a->keep(true);
        FAIL() << "a holder whose reservation was taken over must stop";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("taken over by another writer"), std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("a/.zarr3-append"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(a->lost());
    a->release();
    EXPECT_EQ(owner_of(*s), b_owner);
}

TEST(SwitchMetadataIf, ReplacesOnlyTheZarrJsonRead) {
    auto s = std::make_shared<ObjectStoreLike>();
    make_array(s, 1);
    NodeSnapshot seen;
    auto a = open_array_fresh(s, "a", seen);
    auto grown = a->metadata();
    grown.shape[0] = 2;
    grown.grid.resize(grown.shape);
    auto out = Array::open(s, "a", grown);
    make_array(s, 5); // another writer replaced it meanwhile
    try {
        switch_metadata_if(*out, seen, "append");
        FAIL() << "switched over another writer's zarr.json";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("a/zarr.json: changed by another writer"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_EQ(open_array_fresh(s, "a", seen)->metadata().shape[0], 5u);
    auto again = Array::open(s, "a", [&] {
        auto m = a->metadata();
        m.shape[0] = 6;
        m.grid.resize(m.shape);
        return m;
    }());
    switch_metadata_if(*again, seen, "append"); // `seen` now the 5-step one
    EXPECT_EQ(open_array_fresh(s, "a", seen)->metadata().shape[0], 6u);
}

} // namespace ut_array_test_step_reservation
