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
class ShardIndexCache;

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

// Where the encoded bytes of one chunk or shard come from.
class ByteSource {
  public:
    virtual ~ByteSource() = default;
    virtual std::string describe() const = 0; // for error messages ("<store>/a/c/0/1")
    virtual std::optional<Bytes> read_all() = 0;
    virtual std::optional<std::vector<Bytes>> read_ranges(const std::vector<ByteRange>& r) = 0;
    virtual std::optional<uint64_t> size() = 0;
    // read_ranges that also reports the total size when known for free.
    virtual std::optional<std::vector<Bytes>> read_ranges_sized(const std::vector<ByteRange>& r,
                                                                std::optional<uint64_t>& total) {
        total.reset();
        return read_ranges(r);
    }
    // Identity for the shard index cache; empty = do not cache.
    virtual std::string cache_key() const { return {}; }
    // read_all / read_ranges_sized that also report the version of the
    // object the bytes came from (see Store::get_ranges_versioned).
    virtual std::optional<Bytes> read_all_versioned(ObjectVersion& version) {
        version = {};
        return read_all();
    }
    virtual std::optional<std::vector<Bytes>> read_ranges_versioned(const std::vector<ByteRange>& r,
                                                                    std::optional<uint64_t>& total,
                                                                    ObjectVersion& version) {
        version = {};
        return read_ranges_sized(r, total);
    }
    // read_all_versioned of a value that may hold at most `limit` bytes (what
    // the codecs can produce for the chunk): FormatError naming the value,
    // its size and `limit` when larger. A store source passes `limit` to the
    // store, which refuses before allocating (codec_chain.cpp).
    std::optional<Bytes> read_all_bounded(uint64_t limit, ObjectVersion& version);

  protected:
    // The most a store source's read_all / read_all_versioned may allocate;
    // read_all_bounded sets it for the duration of its call.
    uint64_t read_limit_ = kMaxChunkBytes;
};

class StoreByteSource : public ByteSource {
  public:
    StoreByteSource(Store& store, std::string key) : store_(store), key_(std::move(key)) {}
    std::string describe() const override;
    std::optional<Bytes> read_all() override {
        ObjectVersion ignored;
        return store_.get_bounded_versioned(key_, read_limit_, ignored);
    }
    std::optional<std::vector<Bytes>> read_ranges(const std::vector<ByteRange>& r) override {
        return store_.get_ranges(key_, r);
    }
    std::optional<uint64_t> size() override { return store_.size(key_); }
    std::optional<std::vector<Bytes>> read_ranges_sized(const std::vector<ByteRange>& r,
                                                        std::optional<uint64_t>& total) override {
        return store_.get_ranges_sized(key_, r, total);
    }
    std::string cache_key() const override { return store_.uri() + "|" + key_; }
    std::optional<Bytes> read_all_versioned(ObjectVersion& version) override {
        return store_.get_bounded_versioned(key_, read_limit_, version);
    }
    std::optional<std::vector<Bytes>> read_ranges_versioned(const std::vector<ByteRange>& r,
                                                            std::optional<uint64_t>& total,
                                                            ObjectVersion& version) override {
        return store_.get_ranges_versioned(key_, r, total, version);
    }

  private:
    Store& store_;
    std::string key_;
};

// A value already in memory (e.g. an inner chunk of a shard, or a shard
// decoded by bytes->bytes codecs).
class MemoryByteSource : public ByteSource {
  public:
    MemoryByteSource(ByteView data, std::string what) : data_(data), what_(std::move(what)) {}
    std::string describe() const override { return what_; }
    std::optional<Bytes> read_all() override { return Bytes(data_.begin(), data_.end()); }
    std::optional<std::vector<Bytes>> read_ranges(const std::vector<ByteRange>& r) override;
    std::optional<uint64_t> size() override { return data_.size(); }
    std::optional<std::vector<Bytes>> read_ranges_sized(const std::vector<ByteRange>& r,
                                                        std::optional<uint64_t>& total) override {
        total = data_.size();
        return read_ranges(r);
    }

  private:
    ByteView data_;
    std::string what_;
};

struct ReadOptions {
    Executor executor;                 // empty = serial
    uint64_t coalesce_gap = 16 * 1024; // merge inner-chunk ranges separated by <= this many bytes
    ShardIndexCache* index_cache = nullptr; // null = no caching
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
    // Partial reads (sharding): read `region` of the chunk behind `src` into
    // `out`; returns false when the whole value is absent.
    virtual bool supports_partial_read() const { return false; }
    virtual bool read_partial(ByteSource& src, const ChunkSpec& spec, const Region& region,
                              const StridedView& out, const ReadOptions& opt) const;
    // For codecs with partial reads: the next store request read_partial of
    // `region` will make, given what `opt.index_cache` holds now under
    // `cache_key`; nullopt when it makes none or it is not known ahead.
    virtual std::optional<PlannedRequest>
    plan_partial(const ChunkSpec& /*spec*/, const Region& /*region*/,
                 const std::vector<int64_t>& /*out_strides*/, const ReadOptions& /*opt*/,
                 const std::string& /*cache_key*/, const std::string& /*what*/) const {
        return std::nullopt;
    }
    // Keeps what a planned request fetched ahead where read_partial looks
    // first (a shard index into opt.index_cache). True when plan_partial
    // then plans a further request (the inner chunks the index places).
    virtual bool absorb_prefetched(const PlannedRequest& /*request*/, const BatchAnswer& /*answer*/,
                                   const ChunkSpec& /*spec*/, const ReadOptions& /*opt*/,
                                   const std::string& /*cache_key*/,
                                   const std::string& /*what*/) const {
        return false;
    }
    // Checks the chunk grid against codec constraints (sharding divisibility).
    virtual void validate_grid(const ChunkGrid&, const std::string& /*where*/) const {}
    virtual nlohmann::json to_json() const = 0;
    // Variable-length (`string`) chunks: vlen-utf8, and sharding_indexed around it.
    // `values` has spec.num_elements() entries; decode returns as many or throws
    // FormatError. The defaults refuse.
    virtual bool handles_strings() const { return false; }
    virtual Bytes encode_strings(const StringChunk& values, const ChunkSpec& spec) const;
    virtual StringChunk decode_strings(ByteView encoded, const ChunkSpec& spec) const;
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
    bool supports_partial_read() const;
    // The first store request read_region of `region` makes: the whole value,
    // or the array->bytes codec's plan_partial (nullopt: not known ahead).
    std::optional<PlannedRequest> plan_read(const ChunkSpec& spec, const Region& region,
                                            const std::vector<int64_t>& out_strides,
                                            const ReadOptions& opt, const std::string& cache_key,
                                            const std::string& what) const;
    // The array->bytes codec's absorb_prefetched (partial reads only).
    bool absorb_prefetched(const PlannedRequest& request, const BatchAnswer& answer,
                           const ChunkSpec& spec, const ReadOptions& opt,
                           const std::string& cache_key, const std::string& what) const;
    // Largest encoded size of a chunk of `spec` (bounds decompression).
    uint64_t max_encoded_size(const ChunkSpec& spec) const;
    // `string` chunks (core/src/vlen.cpp): the array->array codecs (transpose
    // only) reorder the elements, the array->bytes codec (vlen-utf8 or
    // sharding_indexed around it) encodes them, bytes->bytes codecs follow.
    Bytes encode_strings(const StringChunk& values, const ChunkSpec& spec) const;
    StringChunk decode_strings(ByteView encoded, const ChunkSpec& spec) const;
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
