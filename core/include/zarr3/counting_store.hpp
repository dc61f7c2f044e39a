// A store adapter that counts and logs requests (tests and benchmarks).
#pragma once

#include "zarr3/store.hpp"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace zarr3 {

// Wraps a store and counts requests. Everything else (locks, request threads,
// capabilities) is forwarded; the workers' requests come through this store
// and are counted.
class CountingStore : public ForwardingStore {
  public:
    explicit CountingStore(std::shared_ptr<Store> inner) : ForwardingStore(std::move(inner)) {}
    // Whole values count as gets, byte ranges as range calls, sizes as sizes.
    std::optional<ReadResult> read(const ReadRequest& request) override;
    void put(const std::string& key, ByteView value) override;
    void erase(const std::string& key) override;
    std::vector<std::string> list_dir(const std::string& prefix) override;

    struct Counts {
        uint64_t gets = 0;        // whole-value gets
        uint64_t range_calls = 0; // get_ranges calls
        uint64_t ranges = 0;      // ranges requested in total
        uint64_t bytes = 0;       // bytes returned
        uint64_t sizes = 0;
        uint64_t puts = 0;
        uint64_t lists = 0;
    };
    Counts counts() const;
    void reset();
    std::vector<std::string> log() const; // "get key", "ranges key off+len,...", ...

  private:
    void count_ranges(const std::string& key, const std::vector<ByteRange>& ranges,
                      const std::optional<ReadResult>& got);
    mutable std::mutex mu_;
    Counts c_;
    std::vector<std::string> log_;
};

} // namespace zarr3
