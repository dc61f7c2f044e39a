// Reads through the cache of decoded chunks (cached_read.hpp).
#include "codecs/cached_read.hpp"

#include "store/chunk_bounds.hpp"
#include "zarr3/limits.hpp"
#include "zarr3/spare_bytes.hpp"

namespace zarr3 {

bool cached_chunk_held(ChunkCache& cache, const ByteSource& src, const ChunkSpec& spec) {
    const std::string key = src.cache_key();
    return !key.empty() && cache.holds(key, spec.num_bytes());
}

std::string inner_cache_key(const std::string& shard_key, uint64_t lin) {
    return shard_key + "#" + std::to_string(lin);
}

bool read_region_cached(const CodecChain& codecs, ChunkCache& cache, ByteSource& src,
                        const std::string& key, const ChunkSpec& spec, const Region& region,
                        const StridedView& out) {
    const uint64_t n = spec.num_bytes();
    const size_t elem = spec.dtype.size;
    // Taken before anything is read: a write meanwhile makes the entry stale.
    const uint64_t epoch = ChunkCache::write_epoch(key);
    if (const auto held = cache.peek(key, n)) {
        std::optional<uint64_t> total;
        ObjectVersion now;
        if (!src.read_ranges({}, total, now)) {
            cache.invalidate(key);
            return false; // erased since
        }
        if (now.known() && now == held->version) {
            cache.count_hit();
            copy_region_out(held->data->data(), spec.shape, elem, region, out);
            return true;
        }
        cache.invalidate(key);
    }
    cache.count_miss();
    check_decoded_chunk_size(n, spec.shape, src.describe());
    ObjectVersion version;
    auto data = read_stored_chunk(src, max_stored_chunk_bytes(codecs, spec), spec, version);
    if (!data) return false;
    auto decoded = std::make_shared<ChunkBuffer>(n);
    try {
        codecs.decode(*data, spec, decoded->data());
        keep_spare_bytes(std::move(*data));
    } catch (const FormatError& e) {
        throw FormatError(src.describe() + ": " + e.what());
    }
    copy_region_out(decoded->data(), spec.shape, elem, region, out);
    cache.put(key, version, epoch, std::move(decoded));
    return true;
}

} // namespace zarr3
