// Codec interfaces and the codec chain (array->array*, array->bytes, bytes->bytes*).
#pragma once

#include "zarr3/common.hpp"
#include "zarr3/dtype.hpp"
#include "zarr3/store.hpp"
#include "zarr3/strided.hpp"

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

namespace zarr3 {

class ChunkGrid;
class ChunkCache;

// The decoded elements of one chunk of a `string` array, C order.
using StringChunk = std::vector<std::string>;

// What a codec sees of one chunk: its shape (full edges), type and fill value.
struct ChunkSpec {
    Shape shape;
    DataType dtype;
    Bytes fill_value; // one element, little-endian
    uint64_t num_elements() const;
    uint64_t num_bytes() const; // checked against kMaxChunkBytes
};

// Where the encoded bytes of one chunk or shard come from: a view of one
// value (a key in a store, or bytes in memory), with the two reads the codecs
// make (zarrs' StoragePartialDecoder plays the same part).
class ByteSource {
  public:
    virtual ~ByteSource() = default;
    virtual std::string describe() const = 0; // for error messages ("<store>/a/c/0/1")
    // Identity for caches of what was decoded from this value (the shard
    // index cache); empty = do not cache.
    virtual std::string cache_key() const { return {}; }
    // The whole value, or nullopt when absent; `version` gets the object's
    // version when known. A value larger than `limit` bytes is refused
    // (FormatError naming it; a store refuses before allocating).
    virtual std::optional<Bytes> read_all(uint64_t limit, ObjectVersion& version) = 0;
    // Byte ranges of the value (none: only whether it is there, and its
    // version); `total` gets the value's size when known for free (see
    // Store::get_ranges_versioned).
    virtual std::optional<std::vector<Bytes>> read_ranges(const std::vector<ByteRange>& r,
                                                          std::optional<uint64_t>& total,
                                                          ObjectVersion& version) = 0;
};

// A thin view of (store, key).
class StoreByteSource : public ByteSource {
  public:
    StoreByteSource(Store& store, std::string key) : store_(store), key_(std::move(key)) {}
    std::string describe() const override;
    std::string cache_key() const override { return store_.uri() + "|" + key_; }
    std::optional<Bytes> read_all(uint64_t limit, ObjectVersion& version) override;
    std::optional<std::vector<Bytes>> read_ranges(const std::vector<ByteRange>& r,
                                                  std::optional<uint64_t>& total,
                                                  ObjectVersion& version) override {
        if (!r.empty()) note_data_request();
        return store_.get_ranges_versioned(key_, r, total, version);
    }
    // Requests for bytes made through any StoreByteSource of this process
    // (not the version probes, which ask for none): a read during which
    // none was made used only what it confirmed at its start.
    static uint64_t data_requests();

  private:
    static void note_data_request();
    Store& store_;
    std::string key_;
};

// A value already in memory (e.g. an inner chunk of a shard, or a shard
// decoded by bytes->bytes codecs).
class MemoryByteSource : public ByteSource {
  public:
    MemoryByteSource(ByteView data, std::string what) : data_(data), what_(std::move(what)) {}
    std::string describe() const override { return what_; }
    std::optional<Bytes> read_all(uint64_t limit, ObjectVersion& version) override;
    std::optional<std::vector<Bytes>> read_ranges(const std::vector<ByteRange>& r,
                                                  std::optional<uint64_t>& total,
                                                  ObjectVersion& version) override;

  private:
    ByteView data_;
    std::string what_;
};

struct ReadOptions {
    Executor executor;                 // empty = serial
    uint64_t coalesce_gap = 16 * 1024; // merge inner-chunk ranges separated by <= this many bytes
    // Decoded chunks kept for later reads (chunk_cache.hpp); null: none.
    // Array::read leaves it out of reads the cache would only be evicted by.
    std::shared_ptr<ChunkCache> chunk_cache;
};

// A store request a chunk read is going to make, known before the read runs,
// so that a reader can fetch it ahead together with other chunks' requests
// (read_ahead, Store::run_requests) and hand the answer to the read (PrefetchedSource).
struct PlannedRequest {
    std::vector<ByteRange> ranges; // empty: the whole value
};

class ArrayToArrayCodec {
  public:
    virtual ~ArrayToArrayCodec() = default;
    virtual std::string name() const = 0;
    virtual ChunkSpec encoded_spec(const ChunkSpec& decoded) const = 0;
    // Encoded axis k is decoded axis order[k] (transpose); identity for
    // codecs that keep the axes.
    virtual std::vector<size_t> encoded_axis_order(size_t rank) const {
        std::vector<size_t> order(rank);
        for (size_t k = 0; k < rank; ++k)
            order[k] = k;
        return order;
    }
    virtual Bytes encode(Bytes data, const ChunkSpec& decoded) const = 0;
    virtual Bytes decode(Bytes data, const ChunkSpec& decoded) const = 0;
    virtual nlohmann::json to_json() const = 0;
};

class ArrayToBytesCodec {
  public:
    virtual ~ArrayToBytesCodec() = default;
    virtual std::string name() const = 0;
    virtual Bytes encode(ByteView decoded, const ChunkSpec& spec) const = 0;
    // The same into `out`, whose capacity is reused (the write path encodes
    // chunk after chunk into one per-thread buffer). `decoded` never aliases
    // `out`.
    virtual void encode_into(ByteView decoded, const ChunkSpec& spec, Bytes& out) const {
        out = encode(decoded, spec);
    }
    // Decodes into `out` (spec.num_bytes() bytes); FormatError on any mismatch.
    virtual void decode(ByteView encoded, const ChunkSpec& spec, uint8_t* out) const = 0;
    // Exact encoded size when it depends only on the spec (bytes codec).
    virtual std::optional<uint64_t> encoded_size(const ChunkSpec&) const { return std::nullopt; }
    // Largest encoded size any valid encoding of `spec` can have; bounds
    // decompression of the bytes->bytes codecs that follow.
    virtual uint64_t max_encoded_size(const ChunkSpec& spec) const {
        return encoded_size(spec).value_or(saturating_bound(spec.num_bytes()));
    }
    // A generous compressed-size bound (worst-case expansion of zstd, gzip,
    // blosc and friends is far below this), saturating at kMaxChunkBytes.
    static uint64_t saturating_bound(uint64_t n) {
        const uint64_t b = n + n / 8 + 4096;
        return b < n || b > kMaxChunkBytes ? kMaxChunkBytes : b;
    }
    // True when encode/decode are plain byte copies for `spec` (bytes codec
    // without byte swapping): the chain may then skip them.
    virtual bool is_plain_copy(const ChunkSpec&) const { return false; }
    // Checks the chunk grid against the codec's constraints (none by default).
    virtual void validate_grid(const ChunkGrid&, const std::string& /*where*/) const {}
    virtual nlohmann::json to_json() const = 0;
};

class BytesToBytesCodec {
  public:
    virtual ~BytesToBytesCodec() = default;
    virtual std::string name() const = 0;
    virtual Bytes encode(ByteView decoded) const = 0;
    // The same into `out`, whose capacity is reused; `decoded` never aliases it.
    virtual void encode_into(ByteView decoded, Bytes& out) const { out = encode(decoded); }
    // `expected` is the exact decoded size when known; a decoder never
    // produces (or allocates) more than `max_size` bytes.
    virtual Bytes decode(ByteView encoded, std::optional<uint64_t> expected,
                         uint64_t max_size) const = 0;
    // Fast path: decodes into `out` when the value decodes to exactly `size`
    // bytes without trouble. Returns false otherwise (`out` may then hold
    // garbage); the caller falls back to decode(), which reports the error.
    virtual bool decode_into(ByteView, uint8_t*, uint64_t) const { return false; }
    // Encoded size as a function of the decoded size, when fixed (crc32c: +4).
    virtual std::optional<uint64_t> encoded_size(uint64_t) const { return std::nullopt; }
    // Largest encoded size for a decoded size of at most `n`.
    virtual uint64_t max_encoded_size(uint64_t n) const {
        if (auto e = encoded_size(n)) return *e;
        return ArrayToBytesCodec::saturating_bound(n);
    }
    virtual nlohmann::json to_json() const = 0;
};

// Array->bytes codecs whose value can be read in parts: sharding_indexed,
// whose shard is read like a key-value store over its value (the index, then
// only the inner chunks a region needs; tensorstore's zarr3_sharding_indexed
// kvstore, zarrs' sharding partial decoder), with the requests planned ahead
// so that read_ahead can fetch them for many shards at once. A codec offers it
// by deriving from it (CodecChain::parse finds it once); what it caches
// between reads (decoded shard indexes) it keeps itself.
class PartialReadCodec {
  public:
    virtual ~PartialReadCodec() = default;
    // Reads `region` of the value behind `src` into `out`; false when the
    // whole value is absent.
    virtual bool read_partial(ByteSource& src, const ChunkSpec& spec, const Region& region,
                              const StridedView& out, const ReadOptions& opt) const = 0;
    // The next store request read_partial of `region` from `src` will make,
    // given what the codec has cached now; nullopt when it makes none or it
    // is not known ahead.
    virtual std::optional<PlannedRequest> plan_partial(const ByteSource& src, const ChunkSpec& spec,
                                                       const Region& region,
                                                       const std::vector<int64_t>& out_strides,
                                                       const ReadOptions& opt) const = 0;
    // Keeps what a planned request fetched ahead where read_partial looks
    // first (a shard index in the codec's cache). True when plan_partial then
    // plans a further request (the inner chunks the index places).
    virtual bool absorb_prefetched(const ByteSource& src, const PlannedRequest& request,
                                   const BatchAnswer& answer, const ChunkSpec& spec) const = 0;
    // Whether `cache` holds every part of `region` decoded (versions not
    // confirmed): a read of it is copies only, not worth threads.
    virtual bool region_held(const ByteSource& src, const ChunkSpec& spec, const Region& region,
                             ChunkCache& cache) const {
        (void)src, (void)spec, (void)region, (void)cache;
        return false;
    }
};

// Array->bytes codecs of variable-length (`string`) chunks: vlen-utf8, and
// sharding_indexed around it. `values` has spec.num_elements() entries;
// decode returns as many or throws FormatError. A codec offers it by deriving
// from it (CodecChain::parse finds it once).
class StringCodec {
  public:
    virtual ~StringCodec() = default;
    virtual Bytes encode_strings(const StringChunk& values, const ChunkSpec& spec) const = 0;
    virtual StringChunk decode_strings(ByteView encoded, const ChunkSpec& spec) const = 0;
};

class CodecChain {
  public:
    CodecChain() = default;
    // Parses a "codecs" list for arrays of `spec` (shape = a typical chunk).
    // A list with no array->bytes codec gets a little-endian bytes codec and a
    // warning appended to `warnings` (stores written by GDAL 3.8-3.10).
    static CodecChain parse(const nlohmann::json& codecs, const ChunkSpec& spec,
                            const std::string& where, std::vector<std::string>* warnings = nullptr);

    Bytes encode(ByteView decoded, const ChunkSpec& spec) const;
    // The same into `out`, whose capacity is reused; `decoded` never aliases it.
    void encode_into(ByteView decoded, const ChunkSpec& spec, Bytes& out) const;
    void decode(ByteView encoded, const ChunkSpec& spec, uint8_t* out) const;
    // Reads `region` of the chunk behind `src` into `out`, using partial reads
    // when the chain allows it. Returns false when the value is absent.
    bool read_region(ByteSource& src, const ChunkSpec& spec, const Region& region,
                     const StridedView& out, const ReadOptions& opt) const;
    // The array->bytes codec's partial reads, when the chain allows them (no
    // codec before or after it); nullptr otherwise.
    const PartialReadCodec* partial_reader() const {
        return aa_.empty() && bb_.empty() ? partial_ : nullptr;
    }
    bool supports_partial_read() const { return partial_reader() != nullptr; }
    // The first store request read_region of `region` from `src` makes: the
    // whole value, or the partial reader's plan (nullopt: not known ahead).
    std::optional<PlannedRequest> plan_read(const ByteSource& src, const ChunkSpec& spec,
                                            const Region& region,
                                            const std::vector<int64_t>& out_strides,
                                            const ReadOptions& opt) const;
    // The partial reader's absorb_prefetched (false without one).
    bool absorb_prefetched(const ByteSource& src, const PlannedRequest& request,
                           const BatchAnswer& answer, const ChunkSpec& spec) const;
    // Largest encoded size of a chunk of `spec` (bounds decompression).
    uint64_t max_encoded_size(const ChunkSpec& spec) const;
    // `string` chunks (core/src/vlen.cpp): the array->array codecs (transpose
    // only) reorder the elements, the array->bytes codec (vlen-utf8 or
    // sharding_indexed around it) encodes them, bytes->bytes codecs follow.
    Bytes encode_strings(const StringChunk& values, const ChunkSpec& spec) const;
    StringChunk decode_strings(ByteView encoded, const ChunkSpec& spec) const;
    // Whether the array->bytes codec encodes `string` chunks.
    bool handles_strings() const { return strings_ != nullptr; }
    const ArrayToBytesCodec& array_to_bytes() const { return *ab_; }
    const std::vector<std::shared_ptr<ArrayToArrayCodec>>& array_to_array() const { return aa_; }
    const std::vector<std::shared_ptr<BytesToBytesCodec>>& bytes_to_bytes() const { return bb_; }
    // Checks the grid against the array->bytes codec's constraints, with the
    // grid's axes in the order that codec sees them (after any transpose).
    void validate_grid(const ChunkGrid& g, const std::string& where) const;
    nlohmann::json to_json() const;

  private:
    // Undoes the bytes->bytes codecs of `encoded`, whose array->bytes codec
    // sees chunks of spec `inner`; the result is `encoded` or lives in `holder`.
    ByteView undo_bytes_to_bytes(ByteView encoded, const ChunkSpec& inner, Bytes& holder) const;
    std::vector<std::shared_ptr<ArrayToArrayCodec>> aa_;
    std::shared_ptr<ArrayToBytesCodec> ab_;
    std::vector<std::shared_ptr<BytesToBytesCodec>> bb_;
    // What ab_ offers besides encode/decode, found once by parse (ab_ keeps
    // them alive; copies of the chain share ab_).
    const PartialReadCodec* partial_ = nullptr;
    const StringCodec* strings_ = nullptr;
};

// Codec registry (codecs/registry.cpp). Each factory gets the codec's
// "configuration" (null when absent) and the spec it will see.
std::shared_ptr<ArrayToArrayCodec> make_array_to_array(const std::string& name,
                                                       const nlohmann::json& config,
                                                       const ChunkSpec& spec,
                                                       const std::string& where);
std::shared_ptr<ArrayToBytesCodec> make_array_to_bytes(const std::string& name,
                                                       const nlohmann::json& config,
                                                       const ChunkSpec& spec,
                                                       const std::string& where);
std::shared_ptr<BytesToBytesCodec> make_bytes_to_bytes(const std::string& name,
                                                       const nlohmann::json& config,
                                                       const std::string& where);
enum class CodecKind { ArrayToArray, ArrayToBytes, BytesToBytes, Unknown };
CodecKind codec_kind(const std::string& name);

// CRC-32C (Castagnoli) of data.
uint32_t crc32c(ByteView data, uint32_t seed = 0);

} // namespace zarr3
