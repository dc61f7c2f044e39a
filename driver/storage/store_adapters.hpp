// The driver's store adapters, each a zarr3::ForwardingStore that overrides
// only what it changes (the rest, request threads and object versions among
// it, passes to the inner store): a read-only listing view that skips broken
// nodes, and a store that holds the root zarr.json back until a copy commits.
#pragma once

#include "zarr3/store.hpp"

#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace zarr3drv {

// A read-only view of a store for walking its hierarchy: a node's zarr.json
// that does not parse (not JSON, unknown codec, bad member) reads as absent,
// with one warning naming the file and the problem, so that one broken array
// does not stop the listing of the others.
class ListingStore final : public zarr3::ForwardingStore {
  public:
    using ForwardingStore::ForwardingStore;
    std::optional<zarr3::ReadResult> read(const zarr3::ReadRequest& request) override;
    void put(const std::string& key, zarr3::ByteView) override;
    void erase(const std::string& key) override;
    zarr3::StoreCapabilities capabilities() const override;
    // The zarr.json files skipped, each with its problem.
    std::vector<std::string> skipped() const;

  private:
    // Whether the zarr.json `key` holding `value` parses (warns once if not).
    bool Parses(const std::string& key, const zarr3::Bytes& value);
    mutable std::mutex mu_;
    std::set<std::string> checked_;
    std::vector<std::string> skipped_;
};

std::shared_ptr<ListingStore> MakeListingStore(std::shared_ptr<zarr3::Store> inner);
// The zarr.json files a ListingStore skipped, each with its problem.
std::vector<std::string> SkippedNodes(const ListingStore& store);
std::shared_ptr<zarr3::Store> AsStore(const std::shared_ptr<ListingStore>& store);

// Holds the root zarr.json in memory until commit(): a copy that fails or is
// killed leaves no root zarr.json, so its folder does not open. Reads of the
// held value are answered from memory (no version); the rest is forwarded.
class DeferredRootStore final : public zarr3::ForwardingStore {
  public:
    using ForwardingStore::ForwardingStore;
    std::optional<zarr3::ReadResult> read(const zarr3::ReadRequest& request) override;
    void put(const std::string& key, zarr3::ByteView value) override;
    void erase(const std::string& key) override;
    // Writes the root zarr.json held back; later writes go straight through.
    void commit();

  private:
    static constexpr const char* kRoot = "zarr.json";
    std::optional<zarr3::Bytes> pending(const std::string& key);
    std::mutex mu_;
    std::optional<zarr3::Bytes> root_;
    bool committed_ = false;
};

} // namespace zarr3drv
