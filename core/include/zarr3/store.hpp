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
#include <variant>

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

class Store {
  public:
    virtual ~Store() = default;
    // Identity of the store for caches and error messages (a path or URL).
    virtual std::string uri() const = 0;
    // Whole value; nullopt when absent.
    virtual std::optional<Bytes> get(const std::string& key) = 0;
    // Several ranges of one value; nullopt when absent. A range reaching past
    // the end is an error (FormatError naming the key). The default
    // implementation reads the whole value.
    virtual std::optional<std::vector<Bytes>> get_ranges(const std::string& key,
                                                         const std::vector<ByteRange>& ranges);
    virtual std::optional<uint64_t> size(const std::string& key) = 0;
    // Whole value if it holds at most `limit` bytes; nullopt when absent;
    // FormatError naming the key when larger. The default asks size() first;
    // stores that learn the size with the value (one HTTP GET) override it.
    virtual std::optional<Bytes> get_bounded(const std::string& key, uint64_t limit);
    // get_versioned() of a value of at most `limit` bytes: FormatError naming
    // the key, its size and `limit` when larger, refused BEFORE allocating by
    // the stores that learn the size first (files: fstat; HTTP: the answer's
    // headers). The default reads through get_versioned() and checks after
    // (wrappers should forward to their inner store).
    virtual std::optional<Bytes> get_bounded_versioned(const std::string& key, uint64_t limit,
                                                       ObjectVersion& version);
    // get_ranges that also reports the value's total size when the store
    // learns it without an extra request (a file's fstat, an HTTP
    // Content-Range); `total` stays empty otherwise.
    virtual std::optional<std::vector<Bytes>> get_ranges_sized(const std::string& key,
                                                               const std::vector<ByteRange>& ranges,
                                                               std::optional<uint64_t>& total) {
        total.reset();
        return get_ranges(key, ranges);
    }
    // get() that also reports the version the value was read from (empty
    // when the store cannot tell; the default).
    virtual std::optional<Bytes> get_versioned(const std::string& key, ObjectVersion& version) {
        version = {};
        return get(key);
    }
    // get_ranges_sized() whose ranges all come from one version of the
    // value, reported in `version` (empty when the store cannot tell; the
    // default). ObjectChanged when the store saw the value change meanwhile.
    virtual std::optional<std::vector<Bytes>>
    get_ranges_versioned(const std::string& key, const std::vector<ByteRange>& ranges,
                         std::optional<uint64_t>& total, ObjectVersion& version) {
        version = {};
        return get_ranges_sized(key, ranges, total);
    }
    // How many requests a reader keeps in flight at once (run_requests);
    // 1 (the default) when the store gains nothing from concurrency (memory,
    // local files).
    virtual size_t max_in_flight() const { return 1; }
    // Runs `worker` on up to `threads` threads at once, the caller's among
    // them, and returns when every one has returned. Each sees the caller's
    // per-thread settings of the store (a network store's credentials and
    // options) and sends its requests through the ordinary calls
    // (answer_one). The default runs `worker` once, on the caller's thread.
    virtual void run_requests(size_t threads, const std::function<void()>& worker) {
        (void)threads;
        worker();
    }
    // Whether run_requests runs workers on threads of its own (a writer can
    // then store while the caller encodes: WriteBehind).
    virtual bool has_request_threads() const { return false; }
    // Atomic: a reader sees the old value or the new one, never a mix.
    virtual void put(const std::string& key, ByteView value) = 0;
    virtual void erase(const std::string& key) = 0;
    // Names of the immediate children of a "directory" prefix ("" = root).
    virtual std::vector<std::string> list_dir(const std::string& prefix) = 0;
    virtual bool writable() const { return true; }
    // Exclusive lock on `key` shared by every writer of this store on this
    // host (processes and threads), held across a read-modify-write of the
    // value (a partial shard update). nullptr where the store has no locks
    // (memory, object stores: there the last writer of a value wins).
    virtual std::unique_ptr<StoreLock> lock(const std::string& key) {
        (void)key;
        return nullptr;
    }
    // Conditional replacement (compare-and-swap): writes `value` at `key`
    // only while the stored value equals `expected` (nullopt: absent), as
    // one step for every writer of this store (processes and threads on this
    // host for local folders). Returns false, writing nothing, when the
    // stored value differs. Stores that cannot do it atomically answer
    // false to can_compare_and_swap() and throw Error from the default.
    virtual bool can_compare_and_swap() const { return false; }
    virtual bool compare_and_swap(const std::string& key, const std::optional<Bytes>& expected,
                                  ByteView value);
};

// Answers one request through the single-key calls (get_versioned,
// get_ranges_versioned), keeping an error in the answer.
BatchAnswer answer_one(Store& store, const BatchRequest& request);

// Locks the local file `lock_path` (an fcntl open-file-description lock,
// created with its folder if missing, waiting while another holder has it).
// The file is removed when the lock is released; holders that opened it
// before the removal notice it and lock the new file instead.
// Error naming the file with the OS error text when it cannot be created.
std::unique_ptr<StoreLock> lock_local_file(const std::string& lock_path);

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
    std::optional<Bytes> get(const std::string& key) override;
    std::optional<std::vector<Bytes>> get_ranges_sized(const std::string& key,
                                                       const std::vector<ByteRange>& ranges,
                                                       std::optional<uint64_t>& total) override;
    std::optional<uint64_t> size(const std::string& key) override;
    // The version is a process-wide counter taken at each put.
    std::optional<Bytes> get_versioned(const std::string& key, ObjectVersion& version) override;
    std::optional<Bytes> get_bounded_versioned(const std::string& key, uint64_t limit,
                                               ObjectVersion& version) override;
    std::optional<std::vector<Bytes>> get_ranges_versioned(const std::string& key,
                                                           const std::vector<ByteRange>& ranges,
                                                           std::optional<uint64_t>& total,
                                                           ObjectVersion& version) override;
    void put(const std::string& key, ByteView value) override;
    void erase(const std::string& key) override;
    std::vector<std::string> list_dir(const std::string& prefix) override;
    // Under the store's mutex.
    bool can_compare_and_swap() const override { return true; }
    bool compare_and_swap(const std::string& key, const std::optional<Bytes>& expected,
                          ByteView value) override;
    std::map<std::string, Bytes> snapshot() const;

  private:
    mutable std::mutex mu_;
    std::map<std::string, Bytes> data_;
    std::map<std::string, uint64_t> versions_; // put counter per key
    std::string uri_;
};

// A directory on the local file system. put() writes a temporary file in the
// same directory and renames it into place (write_atomically).
class FileStore : public Store {
  public:
    explicit FileStore(std::string root, bool writable = true);
    std::string uri() const override { return root_; }
    std::optional<Bytes> get(const std::string& key) override;
    std::optional<std::vector<Bytes>> get_ranges(const std::string& key,
                                                 const std::vector<ByteRange>& ranges) override;
    std::optional<std::vector<Bytes>> get_ranges_sized(const std::string& key,
                                                       const std::vector<ByteRange>& ranges,
                                                       std::optional<uint64_t>& total) override;
    std::optional<uint64_t> size(const std::string& key) override;
    // Versions: device, inode, size, mtime and ctime (ns) of the open file,
    // taken after reading; all ranges come from one open file.
    std::optional<Bytes> get_versioned(const std::string& key, ObjectVersion& version) override;
    std::optional<Bytes> get_bounded(const std::string& key, uint64_t limit) override;
    std::optional<Bytes> get_bounded_versioned(const std::string& key, uint64_t limit,
                                               ObjectVersion& version) override;
    std::optional<std::vector<Bytes>> get_ranges_versioned(const std::string& key,
                                                           const std::vector<ByteRange>& ranges,
                                                           std::optional<uint64_t>& total,
                                                           ObjectVersion& version) override;
    void put(const std::string& key, ByteView value) override;
    void erase(const std::string& key) override;
    std::vector<std::string> list_dir(const std::string& prefix) override;
    bool writable() const override { return writable_; }
    // "<key>.lock" beside the value (lock_local_file).
    std::unique_ptr<StoreLock> lock(const std::string& key) override;
    // lock(key), compare the file's bytes, then put (atomic rename).
    bool can_compare_and_swap() const override { return writable_; }
    bool compare_and_swap(const std::string& key, const std::optional<Bytes>& expected,
                          ByteView value) override;
    // On real threads (run_on_threads): a writer stores while the caller encodes.
    void run_requests(size_t threads, const std::function<void()>& worker) override;
    bool has_request_threads() const override { return true; }

  private:
    std::string path_of(const std::string& key) const;
    std::string root_;
    bool writable_;
};

// Wraps a store and counts requests (for tests and benchmarks).
class CountingStore : public Store {
  public:
    explicit CountingStore(std::shared_ptr<Store> inner) : inner_(std::move(inner)) {}
    std::string uri() const override { return inner_->uri(); }
    std::optional<Bytes> get(const std::string& key) override;
    std::optional<std::vector<Bytes>> get_ranges(const std::string& key,
                                                 const std::vector<ByteRange>& ranges) override;
    std::optional<std::vector<Bytes>> get_ranges_sized(const std::string& key,
                                                       const std::vector<ByteRange>& ranges,
                                                       std::optional<uint64_t>& total) override;
    std::optional<uint64_t> size(const std::string& key) override;
    std::optional<Bytes> get_bounded(const std::string& key, uint64_t limit) override;
    std::optional<Bytes> get_bounded_versioned(const std::string& key, uint64_t limit,
                                               ObjectVersion& version) override;
    // Counted as get and get_ranges.
    std::optional<Bytes> get_versioned(const std::string& key, ObjectVersion& version) override;
    std::optional<std::vector<Bytes>> get_ranges_versioned(const std::string& key,
                                                           const std::vector<ByteRange>& ranges,
                                                           std::optional<uint64_t>& total,
                                                           ObjectVersion& version) override;
    void put(const std::string& key, ByteView value) override;
    void erase(const std::string& key) override;
    std::vector<std::string> list_dir(const std::string& prefix) override;
    std::unique_ptr<StoreLock> lock(const std::string& key) override { return inner_->lock(key); }
    bool can_compare_and_swap() const override { return inner_->can_compare_and_swap(); }
    bool compare_and_swap(const std::string& key, const std::optional<Bytes>& expected,
                          ByteView value) override {
        return inner_->compare_and_swap(key, expected, value);
    }
    // Forwarded to the inner store (its concurrency); the workers' requests
    // come through this store and are counted as gets and get_ranges.
    size_t max_in_flight() const override { return inner_->max_in_flight(); }
    void run_requests(size_t threads, const std::function<void()>& worker) override {
        inner_->run_requests(threads, worker);
    }
    bool has_request_threads() const override { return inner_->has_request_threads(); }

    struct Counts {
        uint64_t gets = 0;        // whole-value gets
        uint64_t range_calls = 0; // get_ranges calls
        uint64_t ranges = 0;      // ranges requested in total
        uint64_t bytes = 0;       // bytes returned
        uint64_t sizes = 0;
        uint64_t puts = 0;
        uint64_t lists = 0;
    };
    Counts counts() const;
    void reset();
    std::vector<std::string> log() const; // "get key", "ranges key off+len,...", ...

  private:
    void count_ranges(const std::string& key, const std::vector<ByteRange>& ranges,
                      const std::optional<std::vector<Bytes>>& got);
    std::shared_ptr<Store> inner_;
    mutable std::mutex mu_;
    Counts c_;
    std::vector<std::string> log_;
};

} // namespace zarr3
