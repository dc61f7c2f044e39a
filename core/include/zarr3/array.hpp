// Array and group handles over a Store: open/create, hyperslab read/write,
// resize and append.
#pragma once

#include "zarr3/metadata.hpp"
#include "zarr3/store.hpp"

#include <memory>
#include <mutex>

namespace zarr3 {

struct ChunkTask;

// Per-axis selection: elements start + k*step for k < count. step != 0; a
// negative step walks backwards from start.
struct Selection {
    Shape start;
    Shape count;
    std::vector<int64_t> step; // empty = all 1
    static Selection all(const Shape& shape);
};

struct ReadStats {
    uint64_t chunks_decoded = 0;
    uint64_t chunks_missing = 0;
};

class Array {
  public:
    // Opens `path` ("" = store root) by reading path/zarr.json; NotFound
    // when there is none.
    static std::shared_ptr<Array> open(std::shared_ptr<Store> store, const std::string& path);
    static std::shared_ptr<Array> open(std::shared_ptr<Store> store, const std::string& path,
                                       ArrayMetadata meta);
    // Writes path/zarr.json (refuses to overwrite an existing node unless asked).
    static std::shared_ptr<Array> create(std::shared_ptr<Store> store, const std::string& path,
                                         ArrayMetadata meta, bool overwrite = false);
    ~Array();

    const ArrayMetadata& metadata() const { return meta_; }
    const std::string& path() const { return path_; }
    Store& store() const { return *store_; }
    std::string describe() const; // "<store uri>/<path>" for messages

    void set_read_options(ReadOptions opt) { opt_ = std::move(opt); }
    const ReadOptions& read_options() const { return opt_; }
    void set_executor(Executor ex) { opt_.executor = std::move(ex); }

    // Reads the selection into `out`. `out_strides` are byte strides per axis
    // (empty = dense C order). Elements are the stored type, little-endian.
    void read(const Selection& sel, void* out, const std::vector<int64_t>& out_strides = {},
              ReadStats* stats = nullptr) const;
    // How a write that touches one chunk is stored (with an executor).
    enum class WriteMode {
        Now,     // encoded and stored before write returns (errors surface here)
        Batched, // queued; a batch of such chunks is encoded in parallel when
                 // enough wait, and at flush, read, resize or destruction
                 // (errors surface there): block-at-a-time writers such as
                 // GDAL's IWriteBlock
    };
    // Writes the selection from `in` (same stride convention). Chunks wholly
    // written are encoded and stored directly; partly written chunks are
    // read, merged and rewritten. Chunks holding only the fill value are erased.
    void write(const Selection& sel, const void* in, const std::vector<int64_t>& in_strides = {},
               WriteMode mode = WriteMode::Now);

    // `string` arrays (core/src/array_strings.cpp; read()/write() refuse them):
    // the selected elements as UTF-8 text, dense C order of sel.count; missing
    // chunks read as the fill value. Works over every chunk grid and sharding.
    std::vector<std::string> read_strings(const Selection& sel) const;
    // Writes `values` (dense C order of sel.count, valid UTF-8). Chunks wholly
    // written are encoded and stored; partly written ones are read, merged and
    // rewritten at once (holding the store's lock of that chunk). Chunks
    // holding only the fill value are erased.
    void write_strings(const Selection& sel, const std::vector<std::string>& values);

    // Writes any buffered partial shards. Called by the destructor too.
    // Fails, naming the chunk and the error, while a chunk whose write failed
    // to be stored (in a batch, at a read, in write-behind) is not yet written
    // again: a storing error always reaches a later flush.
    void flush();
    // Throws when `sel` touches such a chunk (its stored value is stale).
    void check_not_stale(const Selection& sel) const;

    // Changes the shape and rewrites zarr.json. Rectilinear axes keep their
    // edges; growing appends one edge covering the new extent unless
    // `append_edges` gives explicit edges per axis for the new part.
    void resize(const Shape& new_shape);
    // Grows axis `axis` by `n` elements with one new chunk edge of `n`
    // (daily-append pattern; runs merge so the JSON stays compact).
    void append_edge(size_t axis, uint64_t n);

    void set_attributes(const nlohmann::json& attrs);
    void write_metadata();

    std::string chunk_key(const std::vector<uint64_t>& idx) const;

  private:
    Array(std::shared_ptr<Store> store, std::string path, ArrayMetadata meta);
    // Encodes and stores one chunk (erases it when all fill value). Const:
    // the store and the write-back buffer are held by pointer, and storing
    // buffered chunks leaves the array's values as they are (a const read
    // flushes them first).
    void store_chunk(const std::string& key, const Bytes& data, const ChunkSpec& spec) const;
    // Stores encoded chunk `enc` under `key` (erases it when null), then drops
    // what caches hold of it: the one place where a chunk changes in the store.
    void store_encoded(const std::string& key, const Bytes* enc) const;
    // Records (or, after a store, clears) chunk `key` as stale.
    void note_lost(const std::string& key, const std::string& error) const;
    void note_stored(const std::string& key) const;
    // The same for a `string` chunk.
    void store_string_chunk(const std::string& key, const StringChunk& values,
                            const ChunkSpec& spec) const;
    // Error unless the array's data type is (`strings`) or is not `string`.
    void require_kind(bool strings, const char* what) const;
    // Whether a read of `sel` (chunks `tasks`) goes through the cache of
    // decoded chunks (ReadOptions::chunk_cache): not a full read, nor one
    // reading every chunk it touches whole, nor one whose chunks would fill
    // more than a quarter of it (ChunkCache::bypass).
    bool read_uses_cache(const Selection& sel, const std::vector<ChunkTask>& tasks) const;
    // Whether the cache holds every (whole, unsharded) chunk of `tasks`
    // decoded, their versions still to be confirmed.
    bool all_held(const std::vector<ChunkTask>& tasks) const;
    // Drops cached shard indexes of `key` after it was written or erased.
    void invalidate_cached(const std::string& key) const;
    // Buffers a partial chunk write; `queue` keeps the chunk in the buffer
    // when it becomes complete (stored by the next batch) instead of storing it.
    void buffer_partial(const std::string& key, const struct ChunkTask& t, const ChunkSpec& spec,
                        const Shape& valid, const StridedView& view, bool queue);
    // Queues whole chunk `data` for a batch.
    void queue_complete(const std::string& key, const std::vector<uint64_t>& idx,
                        const Bytes& data);
    // Merges buffered chunk `key` with the stored one and stores it; the
    // caller holds write_mu_.
    void flush_entry_locked(const std::string& key) const;
    // Stores buffered chunks (only the complete ones with `complete_only`)
    // as parallel tasks.
    void flush_locked(bool complete_only = false) const;
    // Merges chunk `idx` (elements marked in `mask`; empty: all) with the
    // stored one and stores it: an entry taken out of the buffer (no lock).
    void store_entry(const std::string& key, const std::vector<uint64_t>& idx, Bytes& data,
                     const std::vector<uint8_t>& mask) const;
    std::shared_ptr<Store> store_;
    std::string path_;
    ArrayMetadata meta_;
    ReadOptions opt_;
    struct WriteBuffer;
    std::unique_ptr<WriteBuffer> wbuf_;
    mutable std::mutex write_mu_;
    // Error "array <path> changed since it was opened (...); reopen it" when
    // the array's zarr.json now lays chunks out otherwise than meta_ does
    // (array_open.cpp). Remembers a hash of the bytes last found compatible.
    // `fresh`: zarr.json as stored now, past the store's caches (a request
    // on network stores); otherwise as the store gives it (local stores
    // revalidate what they keep).
    void check_unchanged(bool fresh = true) const;
    // meta_ = the array's zarr.json as stored now (kept when not stored yet);
    // called under lock_array by every metadata write (array_open.cpp).
    void reload_stored_metadata();
    mutable std::mutex check_mu_;
    mutable std::optional<size_t> compatible_hash_;
    // The stored version of zarr.json last found compatible (a read that
    // sees it unchanged skips copying and hashing the text).
    mutable ObjectVersion compatible_version_;
};

class Group {
  public:
    // NotFound when path/zarr.json is absent.
    static std::shared_ptr<Group> open(std::shared_ptr<Store> store, const std::string& path);
    static std::shared_ptr<Group>
    create(std::shared_ptr<Store> store, const std::string& path,
           const nlohmann::json& attributes = nlohmann::json::object());
    const GroupMetadata& metadata() const { return meta_; }
    const std::string& path() const { return path_; }
    std::shared_ptr<Store> store() const { return store_; }

    // Child names by kind: from consolidated metadata when present, else by
    // listing the store and reading each child's zarr.json.
    std::vector<std::string> array_names() const;
    std::vector<std::string> group_names() const;
    std::shared_ptr<Array> open_array(const std::string& name) const;
    std::shared_ptr<Group> open_group(const std::string& name) const;
    void set_attributes(const nlohmann::json& attrs);

  private:
    Group(std::shared_ptr<Store> s, std::string p, GroupMetadata m)
        : store_(std::move(s)), path_(std::move(p)), meta_(std::move(m)) {}
    void scan_children() const;
    std::shared_ptr<Store> store_;
    std::string path_;
    GroupMetadata meta_;
    mutable bool scanned_ = false;
    mutable std::vector<std::string> arrays_, groups_;
    mutable std::map<std::string, nlohmann::json> child_meta_;
};

// Reads and parses path/zarr.json, naming the file on errors; nullopt when absent.
std::optional<nlohmann::json> read_node_json(Store& store, const std::string& path);

} // namespace zarr3
