// libFuzzer target (issue 33 #10, #11): one fuzzed shard of a `string` array
// (16 elements, inner chunks of 4, vlen-utf8 with or without zstd, index at
// the start or the end), read whole and through random windows, under a small
// decoded-chunk cap (64 KiB) so that the text budget is reached; optionally
// through a store that claims a fuzzed size for the shard (as a sparse file or
// an HTTP HEAD would).
// Invariants: no read allocates from a claimed size (every whole-value read
// of the shard goes through get_bounded_versioned with a limit <= the cap,
// and a claim above the limit is refused); a window read succeeds and agrees
// with the whole read whenever the whole read succeeded.
//
// Input: [variant u8][claim u32 (KiB)][seed u8] shard bytes.
#include "fuzz_util.hpp"

#include "zarr3/array.hpp"
#include "zarr3/limits.hpp"
#include "zarr3/sharding.hpp"

#include <cstdio>

using namespace zarr3;
using fuzzutil::Rng;

namespace {

constexpr uint64_t kCap = 64 << 10;

std::optional<uint64_t> cap_source(Limit which) {
    if (which == Limit::DecodedChunkBytes) return kCap;
    return std::nullopt;
}

// Claims `claim` bytes for "c/0" (size, range totals, bounded gets); an
// unbounded whole read of it is a finding.
class ClaimingStore : public MemoryStore {
  public:
    explicit ClaimingStore(uint64_t claim) : claim_(claim) {}
    std::optional<ReadResult> read(const ReadRequest& r) override {
        // MemoryStore::read, not size(): size() goes through this read again.
        if (r.key != "c/0" || !MemoryStore::read(ReadRequest::size_of(r.key)))
            return MemoryStore::read(r);
        if (r.kind == ReadRequest::Kind::Size) return ReadResult{{}, claim_, {}};
        if (r.kind == ReadRequest::Kind::Value) {
            FUZZ_CHECK(r.limit.has_value()); // unbounded whole read of the shard
            FUZZ_CHECK(*r.limit <= kCap);
            if (claim_ > *r.limit) throw_too_large(r.key, claim_, *r.limit);
            return MemoryStore::read(r);
        }
        auto out = MemoryStore::read(r);
        if (out) out->total_size = claim_;
        return out;
    }

  private:
    uint64_t claim_;
};

nlohmann::json metadata(uint8_t variant) {
    using nlohmann::json;
    json inner = json::array({{{"name", "vlen-utf8"}}});
    if (variant & 2) inner.push_back({{"name", "zstd"}, {"configuration", {{"level", 1}}}});
    return {{"zarr_format", 3},
            {"node_type", "array"},
            {"shape", {16}},
            {"data_type", "string"},
            {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", {16}}}}}},
            {"chunk_key_encoding", {{"name", "default"}}},
            {"fill_value", ""},
            {"codecs",
             json::array(
                 {{{"name", "sharding_indexed"},
                   {"configuration",
                    {{"chunk_shape", {4}},
                     {"codecs", inner},
                     {"index_codecs", json::array({{{"name", "bytes"},
                                                    {"configuration", {{"endian", "little"}}}}})},
                     {"index_location", (variant & 1) ? "start" : "end"}}}}})}};
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const bool installed = (set_limit_source(&cap_source), true);
    (void)installed;
    fuzzutil::Reader in(data, size);
    const uint8_t variant = in.u8();
    const uint64_t claim = uint64_t(in.u32()) << 10;
    const uint8_t seed = in.u8();
    const std::string_view body = in.rest();

    std::shared_ptr<MemoryStore> store;
    if (variant & 4)
        store = std::make_shared<ClaimingStore>(claim);
    else
        store = std::make_shared<MemoryStore>();
    const std::string meta = metadata(variant).dump();
    store->put("zarr.json", ByteView(reinterpret_cast<const uint8_t*>(meta.data()), meta.size()));
    store->put("c/0", ByteView(reinterpret_cast<const uint8_t*>(body.data()), body.size()));
    auto arr = Array::open(store, "");

    std::vector<std::string> full;
    bool full_ok = true;
    try {
        full = arr->read_strings(Selection::all({16}));
        FUZZ_CHECK(full.size() == 16);
    } catch (const Error&) {
        full_ok = false;
    }
    // A partial write merges the stored shard decoded whole: bounded too.
    if (seed & 1) {
        try {
            arr->write_strings(Selection{{3}, {1}, {1}}, {"w"});
        } catch (const Error&) {
        }
        store->put("c/0", ByteView(reinterpret_cast<const uint8_t*>(body.data()), body.size()));
    }

    Rng rng(fuzzutil::hash_bytes(data, size));
    for (int w = 0; w < 6; ++w) {
        const int64_t step = (rng.next() & 3) == 0 ? -1 : 1 + int64_t(rng.below(3));
        const uint64_t start = rng.below(16);
        const uint64_t room = step > 0 ? (15 - start) / uint64_t(step) : start;
        const Selection sel{{start}, {rng.below(room + 2)}, {step}};
        std::vector<std::string> got;
        try {
            got = arr->read_strings(sel);
        } catch (const Error& e) {
            if (full_ok) {
                fprintf(stderr, "window read failed although the full read succeeded: %s\n",
                        e.what());
                __builtin_trap();
            }
            continue;
        }
        if (!full_ok) continue;
        FUZZ_CHECK(got.size() == sel.count[0]);
        for (uint64_t k = 0; k < sel.count[0]; ++k)
            FUZZ_CHECK(got[k] == full[size_t(int64_t(start) + int64_t(k) * step)]);
    }
    return 0;
}
