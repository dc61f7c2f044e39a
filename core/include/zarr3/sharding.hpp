// sharding_indexed codec: shard index, partial coalesced reads, shard encode.
#pragma once

#include "zarr3/codec.hpp"

#include <list>
#include <map>
#include <mutex>
#include <unordered_map>

namespace zarr3 {

constexpr uint64_t kEmptyEntry = ~0ull;

// Decoded shard index: (offset, nbytes) per inner chunk in C order of the
// chunks-per-shard grid. Entries are validated against the shard size.
struct ShardIndex {
    Shape chunks_per_shard;
    std::vector<uint64_t> entries; // 2 * n_inner values
    // The version of the shard the index was read from: a cached index is
    // used only with data read from that same version.
    ObjectVersion version;
    uint64_t offset(uint64_t i) const { return entries[2 * i]; }
    uint64_t nbytes(uint64_t i) const { return entries[2 * i + 1]; }
    bool empty(uint64_t i) const { return offset(i) == kEmptyEntry && nbytes(i) == kEmptyEntry; }
    uint64_t memory_bytes() const { return entries.size() * 8 + version.token.size() + 64; }
};

// LRU cache of decoded shard indexes, bounded in bytes; one process-wide
// instance (global) serves every sharding codec unless it is given another.
// The sharding codec stores only indexes whose shard version is known, and
// checks each use against the version the data read reports: an index of a
// shard that was rewritten since is dropped and read again. Thread-safe.
class ShardIndexCache {
  public:
    explicit ShardIndexCache(uint64_t max_bytes = 64ull << 20) : max_bytes_(max_bytes) {}
    static ShardIndexCache& global() { return *shared(); }
    static const std::shared_ptr<ShardIndexCache>& shared(); // the process-wide one
    std::shared_ptr<const ShardIndex> get(const std::string& key);
    void put(const std::string& key, std::shared_ptr<const ShardIndex> idx);
    void invalidate(const std::string& key);
    void invalidate_prefix(const std::string& prefix);
    void clear();
    void set_max_bytes(uint64_t b);
    uint64_t bytes() const;

  private:
    void evict_locked();
    mutable std::mutex mu_;
    uint64_t max_bytes_;
    uint64_t bytes_ = 0;
    std::list<std::pair<std::string, std::shared_ptr<const ShardIndex>>> lru_;
    std::unordered_map<std::string, decltype(lru_)::iterator> map_;
};

// sharding_indexed: encode/decode of whole shards (ArrayToBytesCodec), and
// partial reads of one (PartialReadCodec) with the shard index cache it owns.
class ShardingCodec : public ArrayToBytesCodec, public PartialReadCodec {
  public:
    enum class IndexLocation { Start, End };
    ShardingCodec(const nlohmann::json& config, const ChunkSpec& spec, const std::string& where);

    std::string name() const override { return "sharding_indexed"; }
    Bytes encode(ByteView decoded, const ChunkSpec& spec) const override;
    void encode_into(ByteView decoded, const ChunkSpec& spec, Bytes& out) const override;
    // Encodes a whole shard read straight from `shard` (element (i0, i1, ...)
    // at shard.data + sum(i_d * strides[d])), each inner chunk copied out of
    // it once, without a dense copy of the shard. Returns the number of inner
    // chunks stored (0: every element is the fill value).
    uint64_t encode_view(const StridedView& shard, const ChunkSpec& spec, Bytes& out) const;
    // A partly written shard: `written` marks (one byte per element, shard
    // layout) the elements of `decoded` that are new; the others come from
    // `stored`, the shard's current encoded value. Inner chunks with no new
    // element keep their stored bytes as they are; only the others are
    // decoded, merged and encoded again. Returns the number of inner chunks
    // stored (0: the whole shard is fill value). FormatError names `what`.
    struct Update {
        ByteView stored;
        const std::vector<uint8_t>& written;
        std::string what;
    };
    uint64_t encode_update(ByteView decoded, const ChunkSpec& spec, const Update& update,
                           Bytes& out) const;
    void decode(ByteView encoded, const ChunkSpec& spec, uint8_t* out) const override;
    // The index (from the cache, else one suffix or prefix range request),
    // then the coalesced ranges of the inner chunks `region` needs; the
    // whole shard in one request when every inner chunk is (sharding_read.cpp).
    bool read_partial(ByteSource& src, const ChunkSpec& spec, const Region& region,
                      const StridedView& out, const ReadOptions& opt) const override;
    // The index request when the cache has no index for `src`, else the
    // coalesced ranges of the inner chunks needed; the whole shard when every
    // inner chunk is (sharding_plan.cpp).
    std::optional<PlannedRequest> plan_partial(const ByteSource& src, const ChunkSpec& spec,
                                               const Region& region,
                                               const std::vector<int64_t>& out_strides,
                                               const ReadOptions& opt) const override;
    // An index fetched ahead goes into the cache when its version is known
    // (as read_partial would keep it).
    bool absorb_prefetched(const ByteSource& src, const PlannedRequest& request,
                           const BatchAnswer& answer, const ChunkSpec& spec) const override;
    // Every inner chunk `region` needs is in `cache` (sharding_read.cpp).
    bool region_held(const ByteSource& src, const ChunkSpec& spec, const Region& region,
                     ChunkCache& cache) const override;
    // The cache of decoded shard indexes the partial reads use, keyed by
    // ByteSource::cache_key(): the process-wide one unless set; null: no
    // caching. Set before the codec is shared between threads.
    void set_index_cache(std::shared_ptr<ShardIndexCache> cache) {
        index_cache_ = std::move(cache);
    }
    ShardIndexCache* index_cache() const { return index_cache_.get(); }
    void validate_grid(const ChunkGrid& g, const std::string& where) const override;
    uint64_t max_encoded_size(const ChunkSpec& spec) const override;
    nlohmann::json to_json() const override;

    const Shape& inner_chunk_shape() const { return inner_shape_; }
    const CodecChain& inner_codecs() const { return inner_; }
    uint64_t index_size(const Shape& chunks_per_shard) const; // encoded bytes of the index

    IndexLocation index_location() const { return location_; }

    // Everything shape-dependent about shards of one shape, worked out once
    // per distinct shape (tensorstore's Prepare(decoded_shape)): rectilinear
    // grids have few distinct shard shapes.
    struct Prepared {
        Shape chunks_per_shard;
        uint64_t inner_chunks = 0; // product of chunks_per_shard
        uint64_t index_size = 0;   // encoded bytes of the index
        ChunkSpec inner_spec;      // one inner chunk
        ChunkSpec index_spec;      // the decoded index, chunks_per_shard + [2] uint64
    };
    // The prepared state for shards of `shard` (FormatError naming `where`
    // unless every inner edge divides the shard edge). Thread-safe.
    std::shared_ptr<const Prepared> prepare(const ChunkSpec& shard, const std::string& where) const;
    // Chunks per shard for a shard of `shard_shape`; FormatError (naming
    // `where`) unless every inner edge divides the shard edge.
    Shape chunks_per_shard(const Shape& shard_shape, const std::string& where) const;
    // Decodes and validates an encoded index (index_size bytes). When
    // `shard_size` is known every entry must lie in the data region; otherwise
    // only the bounds that do not need it are checked (the store refuses
    // ranges past the end). FormatError names `what` and the inner chunk.
    std::shared_ptr<ShardIndex> parse_index(ByteView encoded, const Shape& chunks_per_shard,
                                            std::optional<uint64_t> shard_size,
                                            const std::string& what) const;

    // The index's byte range in a shard of `prep`'s shape.
    ByteRange index_range(const Prepared& prep) const;

  protected:
    struct Encoder; // the steps of encode_into/encode_update (sharding_encode.cpp)
    Shape inner_shape_;
    CodecChain inner_;
    IndexLocation location_ = IndexLocation::End;

  private:
    struct PartialRead; // the steps of read_partial (sharding_read.cpp)
    ChunkSpec inner_spec(const ChunkSpec& shard) const;
    ChunkSpec index_spec(const Shape& chunks_per_shard) const;
    bool read_from_whole(ByteView shard, const ChunkSpec& spec, const Region& region,
                         const StridedView& out, const ReadOptions& opt, const std::string& what,
                         const std::string& cache_key, const ObjectVersion& version) const;

    CodecChain index_codecs_;
    std::shared_ptr<ShardIndexCache> index_cache_ = ShardIndexCache::shared();
    static constexpr size_t kMaxPrepared = 256; // distinct shard shapes kept
    mutable std::mutex prepared_mu_;
    mutable std::map<Shape, std::shared_ptr<const Prepared>> prepared_;
};

// sharding_indexed around vlen-utf8 (the codec registry makes this one for
// `string` arrays; their inner codecs must end in vlen-utf8): `string`
// shards, whole (inner chunks holding only the fill value are not stored) or
// by region (sharding_strings.cpp, sharding_encode.cpp).
class StringShardingCodec final : public ShardingCodec, public StringCodec {
  public:
    using ShardingCodec::ShardingCodec;
    Bytes encode_strings(const StringChunk& values, const ChunkSpec& spec) const override;
    StringChunk decode_strings(ByteView encoded, const ChunkSpec& spec) const override;
    // The elements of `region` of the `string` shard behind `src`: its index,
    // then only the inner chunks the region needs (each refused before
    // reading when its index entry claims more than the inner codecs can
    // produce; at most ZARR3_MAX_CHUNK_BYTES of stored bytes fetched at once).
    // Region element k goes to out[view_offset + sum(k_d * view_strides[d])].
    // The text kept from one shard is bounded by ZARR3_MAX_CHUNK_BYTES
    // (counted in bytes). False when the shard is absent.
    bool read_strings_region(ByteSource& src, const ChunkSpec& spec, const Region& region,
                             std::vector<std::string>& out, int64_t view_offset,
                             const std::vector<int64_t>& view_strides) const;
};

} // namespace zarr3
