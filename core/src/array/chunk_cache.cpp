// ChunkCache: decoded chunks, bounded in bytes, revalidated by object version
// and by this process's write epochs (chunk_cache.hpp).
#include "zarr3/chunk_cache.hpp"

#include "array/chunk_arena.hpp"

#include <array>
#include <functional>

namespace zarr3 {

namespace {

constexpr size_t kEpochSlots = 4096;
// Fixed overhead counted per entry besides its data and key (list node,
// map slot, version token).
constexpr uint64_t kEntryOverhead = 128;

std::array<std::atomic<uint64_t>, kEpochSlots>& epochs() {
    static std::array<std::atomic<uint64_t>, kEpochSlots> slots{};
    return slots;
}

std::atomic<uint64_t>& slot_of(std::string_view key) {
    const size_t bar = key.rfind('|');
    if (bar != std::string_view::npos) key.remove_prefix(bar + 1);
    const size_t hash = key.find('#');
    if (hash != std::string_view::npos) key = key.substr(0, hash); // an inner chunk: its shard
    return epochs()[std::hash<std::string_view>{}(key) % kEpochSlots];
}

} // namespace

ChunkBuffer::ChunkBuffer(size_t n) : data_(chunk_arena::allocate(n)), size_(n) {}
ChunkBuffer::~ChunkBuffer() {
    chunk_arena::release(data_, size_);
}

uint64_t ChunkCache::write_epoch(std::string_view key) {
    return slot_of(key).load(std::memory_order_acquire);
}

void ChunkCache::note_write(std::string_view key) {
    slot_of(key).fetch_add(1, std::memory_order_acq_rel);
}

std::shared_ptr<const ChunkBuffer> ChunkCache::get(const std::string& key,
                                                   const ObjectVersion& version, uint64_t nbytes) {
    if (!version.known()) return nullptr;
    const uint64_t epoch = write_epoch(key);
    std::lock_guard lk(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return nullptr;
    const Entry& e = it->second->entry;
    if (e.version != version || e.epoch != epoch || e.data->size() != nbytes) {
        drop_locked(it->second);
        return nullptr;
    }
    lru_.splice(lru_.begin(), lru_, it->second);
    hits_.fetch_add(1, std::memory_order_relaxed);
    return e.data;
}

const ChunkCache::Entry* ChunkCache::current_locked(const std::string& key, uint64_t epoch,
                                                    uint64_t nbytes) const {
    const auto it = map_.find(key);
    if (it == map_.end()) return nullptr;
    const Entry& e = it->second->entry;
    return e.epoch == epoch && e.data->size() == nbytes ? &e : nullptr;
}

bool ChunkCache::has(const std::string& key, const ObjectVersion& version, uint64_t nbytes) const {
    if (!version.known()) return false;
    const uint64_t epoch = write_epoch(key);
    std::lock_guard lk(mu_);
    const Entry* e = current_locked(key, epoch, nbytes);
    return e && e->version == version;
}

bool ChunkCache::holds(const std::string& key, uint64_t nbytes) const {
    const uint64_t epoch = write_epoch(key);
    std::lock_guard lk(mu_);
    return current_locked(key, epoch, nbytes) != nullptr;
}

std::optional<ChunkCache::Entry> ChunkCache::peek(const std::string& key, uint64_t nbytes) {
    const uint64_t epoch = write_epoch(key);
    std::lock_guard lk(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return std::nullopt;
    const Entry& e = it->second->entry;
    if (e.epoch != epoch || e.data->size() != nbytes) {
        drop_locked(it->second);
        return std::nullopt;
    }
    lru_.splice(lru_.begin(), lru_, it->second);
    return e;
}

void ChunkCache::put(const std::string& key, const ObjectVersion& version, uint64_t epoch,
                     std::shared_ptr<const ChunkBuffer> data) {
    if (!data || !version.known()) return;
    const uint64_t size = data->size() + key.size() + version.token.size() + kEntryOverhead;
    std::lock_guard lk(mu_);
    if (auto it = map_.find(key); it != map_.end()) drop_locked(it->second);
    if (size > max_bytes_) return; // would evict everything and still not fit
    lru_.push_front(Node{key, Entry{version, epoch, std::move(data)}, size});
    map_[key] = lru_.begin();
    bytes_ += size;
    evict_locked();
}

void ChunkCache::invalidate(const std::string& key) {
    std::lock_guard lk(mu_);
    if (auto it = map_.find(key); it != map_.end()) drop_locked(it->second);
}

void ChunkCache::clear() {
    std::lock_guard lk(mu_);
    lru_.clear();
    map_.clear();
    bytes_ = 0;
}

uint64_t ChunkCache::bytes() const {
    std::lock_guard lk(mu_);
    return bytes_;
}

uint64_t ChunkCache::max_bytes() const {
    std::lock_guard lk(mu_);
    return max_bytes_;
}

void ChunkCache::set_max_bytes(uint64_t b) {
    std::lock_guard lk(mu_);
    max_bytes_ = b;
    evict_locked();
}

size_t ChunkCache::entries() const {
    std::lock_guard lk(mu_);
    return map_.size();
}

void ChunkCache::drop_locked(std::list<Node>::iterator it) {
    bytes_ -= it->size;
    map_.erase(it->key);
    lru_.erase(it);
}

void ChunkCache::evict_locked() {
    while (bytes_ > max_bytes_ && !lru_.empty())
        drop_locked(std::prev(lru_.end()));
}

} // namespace zarr3
