// A bounded LRU cache of decoded chunks (inner chunks of shards included) for
// reads of overlapping windows (pan and zoom).
#pragma once

#include "zarr3/store.hpp"

#include <atomic>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace zarr3 {

// The bytes of one decoded chunk, allocated without being zeroed (a decode
// writes every byte; zeroing a fresh 256 KiB buffer first cost a fifth of a
// pan read's time), from slabs that the kernel may back with huge pages and
// that a later chunk reuses (core/src/array/chunk_arena.hpp: a fresh 4 KiB
// page per fault cost more than the decode).
class ChunkBuffer {
  public:
    explicit ChunkBuffer(size_t n);
    ~ChunkBuffer();
    ChunkBuffer(const ChunkBuffer&) = delete;
    ChunkBuffer& operator=(const ChunkBuffer&) = delete;
    uint8_t* data() { return data_; }
    const uint8_t* data() const { return data_; }
    size_t size() const { return size_; }

  private:
    uint8_t* data_;
    size_t size_;
};

// Decoded chunks keyed by ByteSource::cache_key() ("<store uri>|<key>", an
// inner chunk "#<linear index>" more). An entry is used only while three
// things still hold:
// - the store object it was decoded from has the same ObjectVersion (the
//   version the shard index cache checks: a stat on files, ETag or
//   Last-Modified plus size over HTTP); entries of unknown version are never
//   kept;
// - no write through this process touched the key since it was read: every
//   store's put/erase/link calls note_write(key), which moves a process-wide
//   write epoch of the key (a hashed slot: a collision only costs a miss);
//   the epoch is taken before the chunk is read;
// - its decoded size is the one asked for (a chunk of another layout).
// Bounded in bytes, least recently used first out. Thread-safe: entries are
// shared read-only buffers, copied out without the lock held.
class ChunkCache {
  public:
    explicit ChunkCache(uint64_t max_bytes) : max_bytes_(max_bytes) {}

    struct Entry {
        ObjectVersion version;
        uint64_t epoch = 0;
        std::shared_ptr<const ChunkBuffer> data;
    };

    // The cached decoded chunk of `key` when its version equals `version`
    // (known), its epoch is the key's current one and it holds `nbytes`;
    // null otherwise (a stale entry is dropped). Marks it most recently used.
    std::shared_ptr<const ChunkBuffer> get(const std::string& key, const ObjectVersion& version,
                                           uint64_t nbytes);
    // The entry of `key` when it may still be current (epoch and size
    // match), without its version checked: the caller confirms the version
    // with the store (one request for no bytes) before using it.
    std::optional<Entry> peek(const std::string& key, uint64_t nbytes);
    // Whether peek() would give an entry now (nothing copied, marked or dropped).
    bool holds(const std::string& key, uint64_t nbytes) const;
    // Whether get() would give an entry now (without marking or counting it).
    bool has(const std::string& key, const ObjectVersion& version, uint64_t nbytes) const;
    // Keeps `data` decoded from `version` (nothing when unknown, or when one
    // entry would exceed the bound); `epoch` = write_epoch(key) taken before
    // the chunk was read.
    void put(const std::string& key, const ObjectVersion& version, uint64_t epoch,
             std::shared_ptr<const ChunkBuffer> data);
    void invalidate(const std::string& key);
    void clear();

    uint64_t bytes() const;
    uint64_t max_bytes() const;
    void set_max_bytes(uint64_t b);
    size_t entries() const;
    uint64_t hits() const { return hits_.load(std::memory_order_relaxed); }
    uint64_t misses() const { return misses_.load(std::memory_order_relaxed); }
    void count_hit() { hits_.fetch_add(1, std::memory_order_relaxed); }
    void count_miss() { misses_.fetch_add(1, std::memory_order_relaxed); }

    // Whether a read whose chunks decode to `touched` bytes goes past the
    // cache: more than a quarter of the bound would only evict what the
    // next windows need (full reads keep today's path and speed).
    bool bypass(uint64_t touched) const { return touched > max_bytes() / 4; }

    // Process-wide write epochs. `key` is a store key (the part after the
    // last '|' of a cache key: the same slot for either form).
    static uint64_t write_epoch(std::string_view key);
    static void note_write(std::string_view key);
    // Calls note_write(key) when it goes: after a store's write of `key`,
    // failed or not (a reader that read before it ends sees the new epoch).
    struct WriteNote {
        std::string_view key;
        ~WriteNote() { note_write(key); }
    };

  private:
    struct Node {
        std::string key;
        Entry entry;
        uint64_t size = 0; // accounted bytes
    };
    // The entry of `key` when its epoch (`epoch`, taken before the lock) and
    // size still hold; null otherwise (has and holds: nothing marked or dropped).
    const Entry* current_locked(const std::string& key, uint64_t epoch, uint64_t nbytes) const;
    void drop_locked(std::list<Node>::iterator it);
    void evict_locked();
    mutable std::mutex mu_;
    uint64_t max_bytes_;
    uint64_t bytes_ = 0;
    std::list<Node> lru_; // most recently used first
    std::unordered_map<std::string, std::list<Node>::iterator> map_;
    std::atomic<uint64_t> hits_{0}, misses_{0};
};

} // namespace zarr3
