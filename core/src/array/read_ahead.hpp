// Reads that keep many store requests in flight, independent of the decode
// threads: the chunks of a read are fetched by the store's request threads
// (Store::run_requests) and each is decoded on the executor as soon as its
// answers are in, while the following ones download.
#pragma once

#include "zarr3/codec.hpp"

#include <functional>
#include <memory>

namespace zarr3 {

// A chunk's store source that answers the requests fetched ahead for it
// (each answer used once; the whole value only for read_all, byte ranges only
// for the same ranges) and sends any other request to the store.
class PrefetchedSource : public StoreByteSource {
  public:
    PrefetchedSource(Store& store, std::string key) : StoreByteSource(store, std::move(key)) {}
    void add(PlannedRequest request, BatchAnswer answer);
    std::optional<Bytes> read_all(uint64_t limit, ObjectVersion& version) override;
    std::optional<std::vector<Bytes>> read_ranges(const std::vector<ByteRange>& r,
                                                  std::optional<uint64_t>& total,
                                                  ObjectVersion& version) override;
    size_t unused() const; // answers not taken (tests)

  private:
    struct Entry {
        PlannedRequest request;
        BatchAnswer answer;
        bool used = false;
    };
    // The unused answer for the whole value (`whole`) or for `ranges`; null
    // when none. Rethrows the answer's error.
    BatchAnswer* take(bool whole, const std::vector<ByteRange>& ranges);
    std::vector<Entry> entries_;
};

// One chunk of a read: its key, spec and the region wanted from it.
struct ChunkRead {
    std::string key;
    ChunkSpec spec;
    Region region;
};

struct ReadAheadPlan {
    size_t n = 0;         // chunks
    size_t in_flight = 1; // requests at once (the store's max_in_flight)
    const CodecChain* codecs = nullptr;
    const ReadOptions* opt = nullptr;
    std::vector<int64_t> out_strides;
    // Chunk i (may throw: that chunk is then read without fetching ahead).
    std::function<ChunkRead(size_t)> chunk;
    // Decodes chunk i from `src` (runs on the executor); `src` is null when
    // chunk(i) failed: the decode then reads the chunk its own way.
    std::function<void(size_t, ByteSource* src)> decode;
};

// Fetches the chunks in order on up to `in_flight` threads, each sending a
// chunk's first request and, for a shard whose index that fetched, the inner
// chunks the index places; decodes on the executor, in waves of the chunks
// whose answers are in. At most 2 * in_flight chunks are fetched or in flight
// and not yet decoded (the memory bound).
void read_ahead(Store& store, const ReadAheadPlan& plan);

} // namespace zarr3
