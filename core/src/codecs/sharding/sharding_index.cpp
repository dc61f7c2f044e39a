// sharding_indexed: decoding and validating a shard index.
#include "zarr3/sharding.hpp"

#include "codecs/sharding/sharding_detail.hpp"

#include <cstring>

namespace zarr3 {

namespace detail {

std::string inner_chunk_name(const Shape& cps, uint64_t lin) {
    std::vector<uint64_t> c(cps.size());
    for (size_t a = cps.size(); a-- > 0;) {
        c[a] = lin % cps[a];
        lin /= cps[a];
    }
    std::string s = "inner chunk (";
    for (size_t a = 0; a < c.size(); ++a)
        s += (a ? "," : "") + std::to_string(c[a]);
    return s + ")";
}

} // namespace detail

std::shared_ptr<ShardIndex> ShardingCodec::parse_index(ByteView encoded, const Shape& cps,
                                                       std::optional<uint64_t> shard_size,
                                                       const std::string& what) const {
    const uint64_t n = checked_product(cps, "number of inner chunks per shard");
    const uint64_t isz = index_size(cps);
    if (encoded.size() != isz)
        throw FormatError("shard " + what + " is truncated: its index needs " +
                          std::to_string(isz) + " bytes, got " + std::to_string(encoded.size()));
    if (shard_size && *shard_size < isz)
        throw FormatError("shard " + what + " is truncated: " + std::to_string(*shard_size) +
                          " bytes, smaller than its " + std::to_string(isz) + "-byte index");
    const uint64_t raw_size = n * 16;
    if (!index_codecs_.bytes_to_bytes().empty()) {
        // Only crc32c is accepted after the bytes codec (checked at parse time).
        uint32_t stored = 0;
        std::memcpy(&stored, encoded.data() + raw_size, 4);
        if (crc32c(encoded.first(raw_size)) != stored)
            throw FormatError("shard index checksum mismatch in " + what);
    }
    auto idx = std::make_shared<ShardIndex>();
    idx->chunks_per_shard = cps;
    idx->entries.resize(2 * n);
    index_codecs_.array_to_bytes().decode(encoded.first(raw_size), index_spec(cps),
                                          reinterpret_cast<uint8_t*>(idx->entries.data()));

    // Data region of the shard: [lo, hi); hi unknown when the size is.
    const uint64_t lo = location_ == IndexLocation::Start ? isz : 0;
    std::optional<uint64_t> hi;
    if (shard_size) hi = location_ == IndexLocation::Start ? *shard_size : *shard_size - isz;
    for (uint64_t i = 0; i < n; ++i) {
        const uint64_t off = idx->offset(i), nb = idx->nbytes(i);
        if (off == kEmptyEntry && nb == kEmptyEntry) continue;
        auto bad = [&](const std::string& why) {
            return FormatError("shard " + what + ": index entry of " +
                               detail::inner_chunk_name(cps, i) + " (offset " +
                               std::to_string(off) + ", nbytes " + std::to_string(nb) + ") " + why);
        };
        if (off == kEmptyEntry || nb == kEmptyEntry)
            throw bad("is half empty (both must be 2^64-1)");
        if (nb > kMaxChunkBytes) throw bad("is larger than the supported maximum chunk size");
        if (off > ~0ull - nb) throw bad("overflows");
        if (off < lo) throw bad("points into the shard index");
        if (hi && off + nb > *hi)
            throw bad("reaches past the end of the data region (" + std::to_string(*hi) +
                      " bytes)");
    }
    return idx;
}

} // namespace zarr3
