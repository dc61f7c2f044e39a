// Read-only access to Icechunk repositories (on-disk format spec versions 1
// and 2: https://icechunk.io/en/latest/spec/). A repository is a folder or
// object-store prefix held by any Store (the "storage"): `repo` (spec 2) or
// `refs/` + `config.yaml` (spec 1), `snapshots/<id>`, `manifests/<id>`,
// `chunks/<id>`. IcechunkStore presents one snapshot of it as a plain,
// read-only Zarr store, so Array / Group open it unchanged.
#pragma once

#include "zarr3/store.hpp"

#include <array>
#include <optional>

namespace zarr3::icechunk {

// Largest metadata file (repo info, snapshot, manifest) read, stored or
// decompressed; a larger one is refused naming the file.
constexpr uint64_t kMaxFileBytes = 1ull << 30;
// Most snapshots one history walk visits (it stops there); a cycle is an error.
constexpr size_t kMaxHistory = 1'000'000;
// Bytes of decoded manifests and snapshots one Repository (one dataset) keeps
// by default; the process-wide default every new Repository takes (the
// driver's ZARR3_ICECHUNK_CACHE_MB sets it).
constexpr uint64_t kDefaultCacheBytes = 256ull << 20;
void set_default_cache_budget(uint64_t bytes);
uint64_t default_cache_budget();

// ---------------------------------------------------------------- ids
// Crockford base32, upper case, no padding (12 bytes -> 20 characters).
std::string encode_id(ByteView bytes);
// The bytes of a 12-byte id written as 20 base32 characters (either case;
// Crockford's O/I/L aliases accepted); nullopt for anything else.
std::optional<std::array<uint8_t, 12>> decode_id12(const std::string& text);

// ---------------------------------------------------------------- envelope
enum class FileType : uint8_t { Snapshot = 1, Manifest = 2, TransactionLog = 4, RepoInfo = 6 };

// One metadata file, header checked and payload decompressed.
struct Envelope {
    std::string implementation; // the writer's name (trailing spaces removed)
    int spec_version = 0;       // 1 or 2
    FileType type = FileType::Snapshot;
    Bytes payload; // the flatbuffer (not verified yet), in its own aligned buffer
};

// Checks the magic, version, type (must be `expected`) and compression (0
// none, 1 zstd; decompressed size bounded by kMaxFileBytes). FormatError
// naming `where` and the problem otherwise.
Envelope open_envelope(ByteView file, FileType expected, const std::string& where);

// ---------------------------------------------------------------- snapshot
struct ManifestExtent {
    std::string manifest_id;                         // base32
    std::vector<std::pair<uint32_t, uint32_t>> axes; // [from, to) per dimension
    bool contains(const std::vector<uint64_t>& coords) const;
};

struct Node {
    std::string path; // "/" or "/a/b" (validated: no "..", ".", empty segments)
    bool is_array = false;
    std::array<uint8_t, 8> id{}; // node id (keys the manifests' arrays)
    std::string zarr_json;       // the node's zarr.json text
    std::vector<ManifestExtent> manifests;
};

struct Snapshot {
    std::string id;                    // base32
    std::optional<std::string> parent; // spec 1 only (spec 2 keeps parents in the repo info)
    uint64_t flushed_at_us = 0;        // microseconds since 1970-01-01 UTC
    std::string message;
    std::vector<Node> nodes;                         // sorted by path, unique
    const Node* find(const std::string& path) const; // "/a/b"; nullptr when absent
    // Names of the children of `path` ("/" or "/a/b"), sorted; a path that is
    // only the ancestor of nodes counts as a child too. Empty for a path with
    // none. From an index built once (parse_snapshot): a walk of the
    // hierarchy costs the nodes it visits, not the snapshot for each group.
    const std::vector<std::string>& children(const std::string& path) const;
    // Builds that index (parse_snapshot does).
    void index_children();
    // Bytes the snapshot holds in memory (about: paths, zarr.json texts,
    // manifest extents, the children index).
    size_t memory_bytes = 0;

  private:
    std::map<std::string, std::vector<std::string>> children_;
};

// Parses and verifies a snapshot file. FormatError naming `where`.
Snapshot parse_snapshot(ByteView file, const std::string& where);

// ---------------------------------------------------------------- manifest
struct ChunkRef {
    enum class Kind { Inline, Native, Virtual };
    Kind kind = Kind::Inline;
    Bytes inline_data;          // Inline
    std::string chunk_id;       // Native: base32 id of chunks/<id>
    std::string location;       // Virtual: the URL
    uint64_t offset = 0;        // Native, Virtual
    uint64_t length = 0;        // Native, Virtual
    std::string etag;           // Virtual: checksum of the object (empty: none)
    uint32_t last_modified = 0; // Virtual: seconds since 1970 (0: none)
    std::string manifest_id;    // the manifest it was found in (for errors)
};

// A verified manifest file. Lookups are binary searches over the
// flatbuffer (the sort order is checked when the file is opened).
class Manifest {
  public:
    // FormatError naming `where` for a bad or unsorted file.
    Manifest(ByteView file, const std::string& where);
    ~Manifest();
    Manifest(const Manifest&) = delete;
    Manifest& operator=(const Manifest&) = delete;
    const std::string& id() const { return id_; }
    // The reference of the array `node` at `coords`; nullopt when absent.
    std::optional<ChunkRef> find(const std::array<uint8_t, 8>& node,
                                 const std::vector<uint64_t>& coords) const;
    // Coordinates of every chunk of `node` present in this manifest.
    std::vector<std::vector<uint64_t>> coords_of(const std::array<uint8_t, 8>& node) const;
    size_t ref_count() const { return refs_; }
    // Bytes the decoded manifest holds in memory.
    size_t memory_bytes() const;

  private:
    std::string where_, id_;
    Bytes buf_;
    Bytes dictionary_; // zstd dictionary of compressed locations
    uint8_t location_compression_ = 1;
    size_t refs_ = 0;
};

// ---------------------------------------------------------------- repository
struct Ref {
    std::string name;
    std::string snapshot; // base32 id
};

struct HistoryEntry {
    std::string id;
    std::optional<std::string> parent;
    uint64_t flushed_at_us = 0;
    std::string message;
    std::vector<std::string> branches; // names pointing here
    std::vector<std::string> tags;
};

// Which snapshot to present: at most one of branch, tag, snapshot; as_of
// (ISO 8601: "2024-05-01", "2024-05-01T12:00:00Z", "...+02:00", fractions
// allowed; no zone = UTC) picks the latest snapshot of the branch (default
// main) at or before that time. All empty: branch main.
struct VersionSpec {
    std::string branch, tag, snapshot, as_of;
};

// Microseconds since 1970-01-01 UTC of an ISO 8601 time; Error naming
// `what` when it is not one.
uint64_t parse_iso_time(const std::string& text, const std::string& what);
// "2024-05-01T12:00:00.123456Z"
std::string format_iso_time(uint64_t us);

class Repository {
  public:
    // Reads `repo` (spec 2) or, when absent, `refs/` (spec 1). Error naming
    // the storage when it holds neither.
    static std::shared_ptr<Repository> open(std::shared_ptr<Store> storage);
    // The same with the `repo` file (spec 2) as the caller already read it
    // from `storage`: no second read of it.
    static std::shared_ptr<Repository> open(std::shared_ptr<Store> storage, Bytes repo_file);

    int spec_version() const { return spec_; }
    const std::vector<Ref>& branches() const { return branches_; } // sorted by name
    const std::vector<Ref>& tags() const { return tags_; }         // deleted ones left out
    const std::shared_ptr<Store>& storage() const { return storage_; }
    // URL prefixes of the virtual chunk containers the repository's
    // configuration declares (spec 2: the repo file's config; spec 1: the
    // url_prefix lines of config.yaml). Core follows none of them: a
    // VirtualResolver decides, and should allow only these and the ones the
    // user allows.
    const std::vector<std::string>& virtual_chunk_containers() const { return containers_; }

    // The snapshot id `v` selects. Error listing the valid names for an
    // unknown branch or tag, and for an unknown or malformed snapshot id.
    std::string resolve(const VersionSpec& v);
    // `id` and its ancestors, newest first (at most `limit`). Error on a
    // cycle or a missing parent.
    std::vector<HistoryEntry> history(const std::string& id, size_t limit = kMaxHistory);
    // The snapshot file `snapshots/<id>` (kept under the cache budget).
    std::shared_ptr<const Snapshot> snapshot(const std::string& id);
    // The manifest file `manifests/<id>`, kept under the cache budget;
    // `*read` tells whether it was read from the storage (not kept).
    std::shared_ptr<const Manifest> manifest(const std::string& id, bool* read = nullptr);
    // Decoded manifests and snapshots are kept under ONE byte budget (least
    // recently used dropped first; ids are immutable, so a dropped one is read
    // again when needed): memory is bounded whatever the number of arrays and
    // of snapshots a history walk visits. One larger than the budget is kept
    // alone, and dropped before the next one is read (one at a time).
    void set_cache_budget(uint64_t bytes);
    uint64_t cache_budget() const;
    uint64_t cached_bytes() const; // what is kept now
    // Human description of what `v` selected ("branch main", "tag x" ...).
    static std::string describe(const VersionSpec& v);

  private:
    Repository();
    void load_v2(const Bytes& file);
    void load_v1();
    std::optional<HistoryEntry> info_of(const std::string& id);
    std::string resolve_ref(const std::vector<Ref>& refs, const std::string& name,
                            const char* kind) const;

    std::shared_ptr<Store> storage_;
    int spec_ = 0;
    std::vector<Ref> branches_, tags_;
    std::vector<std::string> containers_;
    std::vector<HistoryEntry> infos_;          // spec 2: every snapshot (from the repo file)
    std::map<std::string, size_t> info_index_; // id -> infos_ index
    struct Cache;
    std::shared_ptr<Cache> cache_;
};

// ---------------------------------------------------------------- virtual chunks
struct VirtualRef {
    std::string location; // URL as the manifest holds it
    uint64_t offset = 0;  // of the chunk in that object
    uint64_t length = 0;
    std::string etag;           // empty: no ETag recorded
    uint32_t last_modified = 0; // 0: none recorded
};

// Follows virtual references. Implementations decide which URLs are
// allowed, and must fail when the object's ETag / last-modified differ
// from the ones recorded. The default refuses every reference.
class VirtualResolver {
  public:
    virtual ~VirtualResolver() = default;
    // `ranges` lie within [offset, offset + length) of the object at
    // ref.location; returns their bytes. `chunk_key` names the chunk for
    // errors.
    virtual std::vector<Bytes> read(const VirtualRef& ref,
                                    const std::vector<RangeFromStart>& ranges,
                                    const std::string& chunk_key);
};

// ---------------------------------------------------------------- the store
// One snapshot of a repository as a read-only Zarr store: "zarr.json" and
// "<path>/zarr.json" from the snapshot's nodes, chunk keys ("<path>/c/0/1",
// per the array's chunk_key_encoding) resolved through the manifests (each
// loaded only when a chunk inside its extents is read, kept under the
// repository's cache budget), native chunks
// read as byte ranges of `chunks/<id>` in the storage, virtual ones through
// the resolver, absent ones reported absent (the fill value).
class IcechunkStore : public Store {
  public:
    IcechunkStore(std::shared_ptr<Repository> repo, const std::string& snapshot_id,
                  std::shared_ptr<VirtualResolver> resolver = nullptr);
    ~IcechunkStore() override;
    // Repository::open + resolve.
    static std::shared_ptr<IcechunkStore> open(std::shared_ptr<Store> storage,
                                               const VersionSpec& version = {},
                                               std::shared_ptr<VirtualResolver> resolver = nullptr);

    const Snapshot& snapshot() const { return *snap_; }
    const std::shared_ptr<Repository>& repository() const { return repo_; }
    // How many manifest files were read so far (again after the cache dropped one).
    size_t manifests_loaded() const;
    // Snapshot entries the listings (list_dir) examined so far: the work of
    // a hierarchy walk, linear in the nodes it visits.
    uint64_t listing_work() const;

    // "<storage uri>@<snapshot id>"
    std::string uri() const override;
    // One read primitive: metadata from the snapshot, chunks through the
    // manifests (inline bytes, a byte range of chunks/<id>, a virtual object).
    // Versions: the snapshot id (metadata, inline chunks), the chunk file id
    // and span (native), the recorded ETag / last-modified (virtual; unknown
    // without one). A Value read's limit is checked against the manifest's
    // length before anything is read.
    std::optional<ReadResult> read(const ReadRequest& request) override;
    std::vector<std::string> list_dir(const std::string& prefix) override;
    void put(const std::string& key, ByteView value) override;
    void erase(const std::string& key) override;
    void run_requests(size_t threads, const std::function<void()>& worker) override;
    // Read-only; request threads and requests in flight of the storage.
    StoreCapabilities capabilities() const override;

  private:
    std::optional<uint64_t> size_of(const std::string& key);
    [[noreturn]] void too_large(const std::string& key, uint64_t n, uint64_t limit);
    struct Impl;
    std::shared_ptr<Repository> repo_;
    std::shared_ptr<const Snapshot> snap_;
    std::unique_ptr<Impl> impl_;
};

} // namespace zarr3::icechunk
