// Key/value storage under a store root. Keys are "/"-separated relative paths
// ("a/zarr.json", "a/c/0/1"); implementations must refuse keys that would
// escape the root (see validate_key).
#pragma once

#include "zarr3/common.hpp"

#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace zarr3 {

// A byte range of a value: `length` bytes from `offset`, or the last
// `length` bytes (a suffix: the start depends on the value's size).
struct RangeFromStart {
    uint64_t offset = 0;
    uint64_t length = 0;
};
struct RangeSuffix {
    uint64_t length = 0;
};
using ByteRange = std::variant<RangeFromStart, RangeSuffix>;

inline uint64_t range_length(const ByteRange& r) {
    // get_if rather than std::visit: GCC 12 with ASan flags the visit's other
    // alternative as maybe-uninitialized on a temporary range.
    if (const auto* s = std::get_if<RangeSuffix>(&r)) return s->length;
    return std::get_if<RangeFromStart>(&r)->length;
}
inline bool is_suffix(const ByteRange& r) {
    return std::holds_alternative<RangeSuffix>(r);
}
// "off+len" or "-len" (the last len bytes).
std::string range_text(const ByteRange& r);

// Thrown where a value that must exist is absent (Array::open, Group::open
// without a zarr.json). Store reads report absence as nullopt instead; this
// lets callers tell "no such node" from a read that failed.
class NotFound : public Error {
  public:
    using Error::Error;
};

// Thrown by put_if (and the helpers over it) when the store found that its
// storage ignores the conditions it sends (a probe it writes before its first
// conditional write): nothing was written. A caller with another way to write
// (an append keeping its unconditional scheme) may take it.
class ConditionsIgnored : public Error {
  public:
    using Error::Error;
};

// Identity of the stored version a value was read from: a token that
// changes whenever the value may have changed (local files: device, inode,
// size, mtime and ctime in ns; HTTP: ETag or Last-Modified plus size;
// MemoryStore: a per-put counter). Empty when the store cannot tell; caches
// never keep what they cannot revalidate.
struct ObjectVersion {
    std::string token;
    bool known() const { return !token.empty(); }
    bool operator==(const ObjectVersion&) const = default;
};

// Both known and different: the object changed between two reads.
inline bool versions_differ(const ObjectVersion& a, const ObjectVersion& b) {
    return a.known() && b.known() && a.token != b.token;
}

// Thrown when one read saw two versions of an object (it changed while
// being read: a writer replaced it between two requests of one read).
class ObjectChanged : public Error {
  public:
    using Error::Error;
};

// An exclusive advisory lock on one key, held while the object is alive.
class StoreLock {
  public:
    virtual ~StoreLock() = default;
};

// One request sent ahead of a read (read_ahead): the whole value, up to
// `limit` bytes (`ranges` empty), or byte ranges of it.
struct BatchRequest {
    std::string key;
    std::vector<ByteRange> ranges; // empty: the whole value
    uint64_t limit = kMaxChunkBytes;
};

// The answer to one BatchRequest: what get_versioned / get_ranges_versioned
// would have returned (the whole value as the one element of `data`), or the
// error they would have thrown.
struct BatchAnswer {
    std::optional<std::vector<Bytes>> data; // nullopt: absent
    std::optional<uint64_t> total;
    ObjectVersion version;
    std::exception_ptr error;
};

// What one read asks for (Store::read). Build it with value(), byte_ranges()
// or size_of().
struct ReadRequest {
    enum class Kind {
        Value,  // the whole value
        Ranges, // byte ranges of it (none: only its version and, where known, size)
        Size,   // only its size (ReadResult::total_size), no bytes
    };
    Kind kind = Kind::Value;
    std::string key;
    std::vector<ByteRange> ranges; // Kind::Ranges
    // Kind::Value: a larger value is refused with FormatError naming the key,
    // its size and the limit, BEFORE allocating by the stores that learn the
    // size first (files: fstat; HTTP: the answer's headers). nullopt: the
    // store's own cap (files, VSI: max_decoded_chunk_bytes(); memory: none).
    std::optional<uint64_t> limit;
    // What is stored now, past every cache of the store and below it (a
    // remote store's kept metadata, GDAL's /vsicurl/ cache): for the checks
    // that another writer changed a value. Stores whose caches are
    // revalidated on every read (local files) may ignore it.
    bool fresh = false;

    static ReadRequest value(std::string key, std::optional<uint64_t> limit = std::nullopt) {
        return ReadRequest{Kind::Value, std::move(key), {}, limit};
    }
    static ReadRequest byte_ranges(std::string key, std::vector<ByteRange> ranges) {
        return ReadRequest{Kind::Ranges, std::move(key), std::move(ranges), std::nullopt};
    }
    static ReadRequest size_of(std::string key) {
        return ReadRequest{Kind::Size, std::move(key), {}, std::nullopt};
    }
};

// What a read found (Store::read returns nullopt when the key is absent).
struct ReadResult {
    // Kind::Value: one element, the value; Kind::Ranges: one per range, in
    // order; Kind::Size: none.
    std::vector<Bytes> data;
    // The value's size: always for Kind::Size; otherwise when the store
    // learnt it with the read without an extra request (a file's fstat, an
    // HTTP Content-Range).
    std::optional<uint64_t> total_size;
    // The version everything in `data` was read from (all ranges of one read
    // come from one version: ObjectChanged when the store saw it change);
    // empty when the store cannot tell.
    ObjectVersion version;
};

// What a store can do; forwarded unchanged by adapters unless they change it.
struct StoreCapabilities {
    bool writable = true;
    bool listable = true; // list_dir gives the children (false: it may give none)
    // run_requests runs workers on threads of its own (a writer can then
    // store while the caller encodes: WriteBehind).
    bool request_threads = false;
    // How many requests a reader keeps in flight at once (run_requests); 1
    // when the store gains nothing from concurrency (memory, local files).
    size_t max_in_flight = 1;
    // lock() gives a lock shared by every writer of this store on this host
    // (processes and threads): compare_and_swap is made atomic with it.
    // False where lock() gives none (object stores).
    bool locks = false;
    // put_if is checked by the storage itself, atomically against every
    // writer anywhere, at no extra request (object stores' If-Match /
    // If-None-Match: *). Stores with `locks` check it under their lock.
    bool conditional_put = false;
};

// The condition of a conditional write (Store::put_if): the key is absent,
// or its stored version is `version` (a token read from this store). Stores
// that check it under their lock compare the stored bytes with `value` when
// it is given (some file systems' versions are too coarse: /vsimem/ keeps
// seconds), the version otherwise.
struct Precondition {
    enum class Kind { Absent, Matches };
    Kind kind = Kind::Absent;
    ObjectVersion version;      // Kind::Matches
    std::optional<Bytes> value; // Kind::Matches: the value read with `version`
    static Precondition absent() { return {}; }
    static Precondition matches(ObjectVersion v, std::optional<Bytes> read = std::nullopt) {
        return {Kind::Matches, std::move(v), std::move(read)};
    }
};

// What a conditional write did.
enum class PutResult { Written, PreconditionFailed };

// A key/value store: nine virtual functions (read, put, put_if, erase,
// list_dir, lock, run_requests, uri, capabilities); everything else is a non-virtual
// helper over read() and capabilities(). Adapters derive from
// ForwardingStore and override only what they change.
class Store {
  public:
    virtual ~Store() = default;

    // ---- the interface
    // Identity of the store for caches and error messages (a path or URL).
    virtual std::string uri() const = 0;
    // The one read primitive: nullopt when the key is absent. A range
    // reaching past the end is a FormatError naming the key.
    virtual std::optional<ReadResult> read(const ReadRequest& request) = 0;
    // Atomic: a reader sees the old value or the new one, never a mix.
    virtual void put(const std::string& key, ByteView value) = 0;
    // Conditional write: `value` is stored at `key` only while `condition`
    // holds (absent, or the stored version is the one given), atomically
    // against every other put_if of the key; PreconditionFailed, writing
    // nothing, otherwise. The default checks it under lock(key) with a fresh
    // read of the version; object stores send it to the storage
    // (capabilities().conditional_put). Error naming the store and key when
    // the store can do neither (no lock, no conditional write), or when a
    // Matches condition has an unknown version, rather than risking a lost
    // update.
    virtual PutResult put_if(const std::string& key, ByteView value, const Precondition& condition);
    virtual void erase(const std::string& key) = 0;
    // Names of the immediate children of a "directory" prefix ("" = root).
    virtual std::vector<std::string> list_dir(const std::string& prefix) = 0;
    // Exclusive lock on `key` shared by every writer of this store on this
    // host (processes and threads), held across a read-modify-write of the
    // value (a partial shard update). nullptr where the store has no locks
    // (memory, object stores: there the last writer of a value wins).
    virtual std::unique_ptr<StoreLock> lock(const std::string& key) {
        (void)key;
        return nullptr;
    }
    // Runs `worker` on up to `threads` threads at once, the caller's among
    // them, and returns when every one has returned. Each sees the caller's
    // per-thread settings of the store (a network store's credentials and
    // options) and sends its requests through read() (answer_one). The
    // default runs `worker` once, on the caller's thread.
    virtual void run_requests(size_t threads, const std::function<void()>& worker) {
        (void)threads;
        worker();
    }
    virtual StoreCapabilities capabilities() const { return {}; }

    // ---- helpers over read() and capabilities()
    // Whole value (the store's own cap); nullopt when absent.
    std::optional<Bytes> get(const std::string& key);
    // get() that also reports the version the value was read from.
    std::optional<Bytes> get_versioned(const std::string& key, ObjectVersion& version);
    // Whole value if it holds at most `limit` bytes; nullopt when absent;
    // FormatError naming the key when larger (ReadRequest::limit).
    std::optional<Bytes> get_bounded(const std::string& key, uint64_t limit);
    // get_bounded_versioned() of what is stored now (ReadRequest::fresh).
    std::optional<Bytes> get_fresh(const std::string& key, uint64_t limit, ObjectVersion& version);
    std::optional<Bytes> get_bounded_versioned(const std::string& key, uint64_t limit,
                                               ObjectVersion& version);
    // Several ranges of one value; nullopt when absent.
    std::optional<std::vector<Bytes>> get_ranges(const std::string& key,
                                                 const std::vector<ByteRange>& ranges);
    // get_ranges that also reports the value's total size when the store
    // learns it without an extra request; `total` stays empty otherwise.
    std::optional<std::vector<Bytes>> get_ranges_sized(const std::string& key,
                                                       const std::vector<ByteRange>& ranges,
                                                       std::optional<uint64_t>& total);
    // get_ranges_sized() whose ranges all come from one version of the value,
    // reported in `version` (empty when the store cannot tell).
    std::optional<std::vector<Bytes>> get_ranges_versioned(const std::string& key,
                                                           const std::vector<ByteRange>& ranges,
                                                           std::optional<uint64_t>& total,
                                                           ObjectVersion& version);
    std::optional<uint64_t> size(const std::string& key);
    size_t max_in_flight() const { return capabilities().max_in_flight; }
    bool has_request_threads() const { return capabilities().request_threads; }
    bool writable() const { return capabilities().writable; }
    // put_if (and compare_and_swap over it) is atomic against the store's
    // other writers: a lock shared by them, or the storage's own check.
    bool can_compare_and_swap() const {
        const auto c = capabilities();
        return c.writable && (c.locks || c.conditional_put);
    }
    // Conditional replacement: writes `value` at `key` only while the stored
    // value equals `expected` (nullopt: absent): a fresh read of the value
    // and its version, a comparison, then put_if on that version (or
    // absent). Atomic against every other compare_and_swap / put_if of the
    // key (a plain put is not). Returns false, writing nothing, when the
    // stored value differs or changed meanwhile. Error naming the store and
    // key when the store cannot put conditionally (can_compare_and_swap),
    // rather than risking a lost update. Test hook: ZARR3_TEST_LOSE_RESPONSE
    // set to the key throws once per process after a write that succeeded
    // (an answer lost on its way back).
    bool compare_and_swap(const std::string& key, const std::optional<Bytes>& expected,
                          ByteView value);
    // put_if(key, value, absent) that fails with Error naming the key when it
    // exists, where the storage checks conditions itself
    // (capabilities().conditional_put); a plain put elsewhere (objects named
    // by a random id: a lock per object on local folders would cost more than
    // the collision it guards against).
    void put_new(const std::string& key, ByteView value);
};

// Passes every call to `inner`: an adapter derives from it and overrides only
// what it changes (consolidating, counting, listing, deferred-root stores).
class ForwardingStore : public Store {
  public:
    explicit ForwardingStore(std::shared_ptr<Store> inner) : inner_(std::move(inner)) {}
    std::string uri() const override { return inner_->uri(); }
    std::optional<ReadResult> read(const ReadRequest& request) override {
        return inner_->read(request);
    }
    void put(const std::string& key, ByteView value) override { inner_->put(key, value); }
    // A read-only adapter (writable false) refuses, as Store::put_if does.
    PutResult put_if(const std::string& key, ByteView value,
                     const Precondition& condition) override {
        if (!capabilities().writable) return Store::put_if(key, value, condition);
        return inner_->put_if(key, value, condition);
    }
    void erase(const std::string& key) override { inner_->erase(key); }
    std::vector<std::string> list_dir(const std::string& prefix) override {
        return inner_->list_dir(prefix);
    }
    std::unique_ptr<StoreLock> lock(const std::string& key) override { return inner_->lock(key); }
    void run_requests(size_t threads, const std::function<void()>& worker) override {
        inner_->run_requests(threads, worker);
    }
    StoreCapabilities capabilities() const override { return inner_->capabilities(); }
    const std::shared_ptr<Store>& inner() const { return inner_; }

  protected:
    std::shared_ptr<Store> inner_;
};

// Answers `request` from a value held in memory (`where` names it in
// errors): what read() of a store holding `value` returns.
ReadResult read_from_memory(ByteView value, const ReadRequest& request, const std::string& where,
                            ObjectVersion version = {});

// Answers one request through read(), keeping an error in the answer.
BatchAnswer answer_one(Store& store, const BatchRequest& request);

// Locks the local file `lock_path` (an fcntl open-file-description lock,
// created with its folder if missing, waiting while another holder has it).
// The file is removed when the lock is released; holders that opened it
// before the removal notice it and lock the new file instead.
// Error naming the file with the OS error text when it cannot be created.
std::unique_ptr<StoreLock> lock_local_file(const std::string& lock_path);

// An exclusive lock on `name` among the threads of this process (a mutex
// per name, released when the object goes): the lock of stores that live in
// this process only (MemoryStore, GDAL's /vsimem/).
std::unique_ptr<StoreLock> lock_in_process(const std::string& name);

// Runs `worker` on up to `threads` threads, the caller's among them (fewer
// when the system refuses more), and returns when all have returned; rethrows
// the first worker error. `wrap` runs around the worker on each new thread
// (a store's per-thread settings).
void run_on_threads(size_t threads, const std::function<void()>& worker,
                    const std::function<void(const std::function<void()>&)>& wrap = {});

// Throws Error unless `key` is a safe relative key: no "..", ".", empty
// segments, backslashes, NUL, or leading "/".
void validate_key(const std::string& key);

// Where `r` starts in a value of `size` bytes. FormatError naming `where`
// when the range does not lie inside the value.
uint64_t range_start(const ByteRange& r, uint64_t size, const std::string& where);

// Whether `key` passes validate_key.
bool is_valid_key(const std::string& key);

// Atomic replacement of a file-like value, shared by every store that
// writes files (FileStore, the driver's VSI store): the value goes to a
// temporary file beside `path` (temp_path_for), which is renamed into place.
// Readers see the old value or the new one. No fsync. On failure the
// temporary file is removed, the old value is kept, and Error names `path`
// with the failure text. The operations return "" on success or the OS
// error text.
struct AtomicWriteOps {
    // Creates (exclusively) and writes the whole file `tmp`.
    std::function<std::string(const std::string& tmp, ByteView value)> write_file;
    std::function<std::string(const std::string& from, const std::string& to)> rename;
    std::function<void(const std::string& tmp)> remove;
};
void write_atomically(const std::string& path, ByteView value, const AtomicWriteOps& ops);
// "<path>.tmp.<host>.<pid>.<n>": unique on this host and process.
std::string temp_path_for(const std::string& path);
// The pid in a temporary file name written on this host by temp_path_for
// ("<name>.tmp.<host>.<pid>.<n>"), or 0 for any other name.
long temp_file_pid(const std::string& name);

// FormatError naming `where`: a value of `n` bytes is above `limit`.
[[noreturn]] void throw_too_large(const std::string& where, uint64_t n, uint64_t limit);
std::string join_key(const std::string& a, const std::string& b);

class MemoryStore : public Store {
  public:
    MemoryStore();
    // Unique per instance for the life of the process (caches key on it).
    std::string uri() const override { return uri_; }
    // The version is a process-wide counter taken at each put; the size is
    // always reported.
    std::optional<ReadResult> read(const ReadRequest& request) override;
    void put(const std::string& key, ByteView value) override;
    void erase(const std::string& key) override;
    std::vector<std::string> list_dir(const std::string& prefix) override;
    // lock_in_process on the store's uri and the key.
    std::unique_ptr<StoreLock> lock(const std::string& key) override;
    StoreCapabilities capabilities() const override { return {.locks = true}; }
    std::map<std::string, Bytes> snapshot() const;

  private:
    mutable std::mutex mu_;
    std::map<std::string, Bytes> data_;
    std::map<std::string, uint64_t> versions_; // put counter per key
    std::string uri_;
};

// A directory on the local file system. put() writes a temporary file in the
// same directory and renames it into place (write_atomically).
class PathGuard;

// A local folder. Its PathGuard (path_guard.hpp, the driver's VSIStore has
// the same) keeps every read, write, erase and lock inside the root: a
// symbolic link resolving outside it is an error naming the file, never
// followed, and nothing is written through a linked folder leading out.
class FileStore : public Store {
  public:
    explicit FileStore(std::string root, bool writable = true);
    ~FileStore() override;
    std::string uri() const override { return root_; }
    // Versions: device, inode, size, mtime and ctime (ns) of the open file,
    // taken after reading; all ranges come from one open file; the size
    // (fstat) is reported and checked against the limit before allocating.
    std::optional<ReadResult> read(const ReadRequest& request) override;
    void put(const std::string& key, ByteView value) override;
    void erase(const std::string& key) override;
    std::vector<std::string> list_dir(const std::string& prefix) override;
    // "<key>.lock" beside the value (lock_local_file).
    std::unique_ptr<StoreLock> lock(const std::string& key) override;
    // Makes `to` a hard link to the stored object `from` (the same file:
    // inode and mtime kept, nothing written); false when `from` is absent
    // or the file system refuses (then write the value instead).
    bool link(const std::string& from, const std::string& to);
    // On real threads (run_on_threads): a writer stores while the caller encodes.
    void run_requests(size_t threads, const std::function<void()>& worker) override;
    StoreCapabilities capabilities() const override {
        return {.writable = writable_,
                .listable = true,
                .request_threads = true,
                .max_in_flight = 1,
                .locks = writable_};
    }

  private:
    std::string path_of(const std::string& key) const;
    std::optional<ReadResult> read_value(const std::string& path, uint64_t limit);
    std::optional<ReadResult> read_ranges(const std::string& path,
                                          const std::vector<ByteRange>& ranges);
    std::string root_;
    bool writable_;
    std::unique_ptr<PathGuard> guard_;
};

} // namespace zarr3
