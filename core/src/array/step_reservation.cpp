// Reservations of appended steps on object storage (step_reservation.hpp).
#include "zarr3/step_reservation.hpp"
#include "zarr3/random_hex.hpp"

#include "zarr3/array_lock.hpp"
#include "zarr3/metadata.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <thread>

namespace zarr3 {

namespace {

constexpr uint64_t kMaxReservationBytes = 64 * 1024;

std::string seconds_text(std::chrono::milliseconds d) {
    return std::to_string(static_cast<double>(d.count()) / 1000.0) + " s";
}

// Whether the reservation `stored` names steps its array already reaches
// past (the holder switched them): false when it cannot tell.
bool covered(Store& store, const Bytes& stored) {
    const auto j = nlohmann::json::parse(stored.begin(), stored.end(), nullptr, false);
    if (!j.is_object() || !j.contains("array") || !j["array"].is_string() || !j.contains("start") ||
        !j["start"].is_number_unsigned() || !j.contains("count") ||
        !j["count"].is_number_unsigned())
        return false;
    const std::string array = j["array"].get<std::string>();
    try {
        validate_key(array.empty() ? "zarr.json" : array);
        const NodeSnapshot now = snapshot_node(store, array);
        if (!now.bytes) return false;
        const std::string where = store.uri() + "/" + join_key(array, "zarr.json");
        const auto node = parse_node_metadata_text(
            std::string_view(reinterpret_cast<const char*>(now.bytes->data()), now.bytes->size()),
            where);
        if (node.type != NodeType::Array || !node.array || node.array->rank() == 0) return false;
        return node.array->shape[0] >= j["start"].get<uint64_t>() + j["count"].get<uint64_t>();
    } catch (const Error&) {
        return false;
    }
}

} // namespace

std::string reservation_key(const std::string& node) {
    return join_key(node, ".zarr3-append");
}

StepReservation::StepReservation(std::shared_ptr<Store> store, std::string key, ReservedStep step,
                                 ReservationTiming timing, std::string owner)
    : store_(std::move(store)), key_(std::move(key)), step_(std::move(step)), timing_(timing),
      owner_(std::move(owner)) {}

Bytes StepReservation::content() const {
    static std::atomic<uint64_t> serial{0}; // each write differs: a renewal changes the version
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
    const nlohmann::json j = {{"array", step_.array},  {"start", step_.start},
                              {"count", step_.count},  {"owner", owner_},
                              {"written_unix_ms", ms}, {"serial", ++serial}};
    const std::string text = j.dump();
    return Bytes(text.begin(), text.end());
}

// put_if over `version` (absent when unknown), then read back: true when
// this writer's content is what is stored.
bool StepReservation::write_over(const ObjectVersion& version, const Bytes& stored) {
    const auto before = std::chrono::steady_clock::now();
    const Bytes mine = content();
    const Precondition condition =
        version.known() ? Precondition::matches(version, stored) : Precondition::absent();
    if (store_->put_if(key_, mine, condition) != PutResult::Written) return false;
    ObjectVersion now_version;
    const auto now = store_->get_fresh(key_, kMaxReservationBytes, now_version);
    if (!now || *now != mine) return false;
    version_ = now_version;
    stored_ = *now;
    written_ = before;
    held_ = true;
    return true;
}

std::unique_ptr<StepReservation> StepReservation::take(std::shared_ptr<Store> store,
                                                       const std::string& node,
                                                       const ReservedStep& step,
                                                       const ReservationTiming& timing) {
    const auto caps = store->capabilities();
    if (caps.locks || !caps.conditional_put || !caps.writable) return nullptr;
    auto r =
        std::make_unique<StepReservation>(store, reservation_key(node), step, timing, random_hex());
    const auto began = std::chrono::steady_clock::now();
    ObjectVersion seen;
    auto seen_since = began;
    int failed_puts = 0;
    for (;;) {
        try {
            if (r->write_over({}, {})) return r;
        } catch (const ConditionsIgnored&) {
            throw;
        } catch (const Error&) {
            // A storage's refusal followed by the holder's release reads as a
            // failed write ("nothing was written"): tried again, a few times.
            if (++failed_puts >= 3) throw;
            std::this_thread::sleep_for(timing.poll);
            continue;
        }
        ObjectVersion version;
        const auto stored = store->get_fresh(r->key_, kMaxReservationBytes, version);
        if (!stored) { // released meanwhile: try again
            std::this_thread::sleep_for(timing.poll / 4);
            continue;
        }
        const auto now = std::chrono::steady_clock::now();
        if (!version.known())
            throw Error(store->uri() + "/" + r->key_ +
                        ": the reservation's version is unknown; cannot take it over safely");
        if (seen != version) {
            seen = version;
            seen_since = now;
        }
        if ((covered(*store, *stored) || now - seen_since >= timing.bound) &&
            r->write_over(version, *stored))
            return r;
        if (now - began >= timing.max_wait)
            throw Error(store->uri() + "/" + r->key_ + ": steps of " + step.array +
                        " are still reserved by another append after waiting " +
                        seconds_text(timing.max_wait) + "; nothing was written");
        std::this_thread::sleep_for(timing.poll);
    }
}

void StepReservation::keep(bool now) {
    if (!held_) throw Error(store_->uri() + "/" + key_ + ": reservation not held");
    if (!now && std::chrono::steady_clock::now() - written_ < timing_.bound / 3) return;
    bool ok = false;
    try {
        ok = write_over(version_, stored_);
    } catch (...) {
        lost_ = true;
        held_ = false;
        throw;
    }
    if (!ok) {
        lost_ = true;
        held_ = false;
        throw Error(store_->uri() + "/" + key_ +
                    ": this append's reservation of its steps was taken over by another writer "
                    "(held longer than the bound of " +
                    seconds_text(timing_.bound) +
                    " without renewal: ZARR3_APPEND_RESERVATION_TIMEOUT); nothing was switched");
    }
}

void StepReservation::release() noexcept {
    if (!held_) return;
    held_ = false;
    // Past the bound another writer may have taken it over: left for it.
    if (std::chrono::steady_clock::now() - written_ >= timing_.bound) return;
    try {
        store_->erase(key_);
    } catch (...) {
    }
}

} // namespace zarr3
