// Run-time limits against hostile stores (see zarr3/limits.hpp).
#include "zarr3/limits.hpp"

#include <atomic>

namespace zarr3 {
namespace {

std::atomic<LimitSource> g_source{nullptr};

uint64_t value_of(Limit which, uint64_t def, uint64_t max) {
    const LimitSource s = g_source.load(std::memory_order_acquire);
    if (!s) return def;
    const std::optional<uint64_t> v = s(which);
    return v && *v > 0 && *v <= max ? *v : def;
}

} // namespace

void set_limit_source(LimitSource source) {
    g_source.store(source, std::memory_order_release);
}

uint64_t max_json_nodes() {
    return value_of(Limit::JsonNodes, kDefaultMaxJsonNodes, UINT64_MAX);
}

uint64_t max_decoded_chunk_bytes() {
    return value_of(Limit::DecodedChunkBytes, kDefaultMaxDecodedChunkBytes, kMaxChunkBytes);
}

void check_decoded_chunk_size(uint64_t n, const Shape& shape, const std::string& what) {
    const uint64_t cap = max_decoded_chunk_bytes();
    if (n <= cap) return;
    throw FormatError(what + ": the chunk decodes to " + std::to_string(n) + " bytes (shape " +
                      shape_text(shape) + "), above the decoded-chunk limit of " +
                      std::to_string(cap) +
                      " bytes (ZARR3_MAX_CHUNK_BYTES); refused before allocating");
}

} // namespace zarr3
