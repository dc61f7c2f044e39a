// LRU cache of decoded shard indexes, bounded in bytes.
#include "zarr3/sharding.hpp"

namespace zarr3 {

const std::shared_ptr<ShardIndexCache>& ShardIndexCache::shared() {
    static const auto cache = std::make_shared<ShardIndexCache>(); // 64 MiB default
    return cache;
}

std::shared_ptr<const ShardIndex> ShardIndexCache::get(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second); // most recently used first
    return it->second->second;
}

void ShardIndexCache::put(const std::string& key, std::shared_ptr<const ShardIndex> idx) {
    if (!idx) return;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it != map_.end()) {
        bytes_ -= it->second->second->memory_bytes() + key.size();
        lru_.erase(it->second);
        map_.erase(it);
    }
    const uint64_t sz = idx->memory_bytes() + key.size();
    if (sz > max_bytes_) return; // would evict everything and still not fit
    lru_.emplace_front(key, std::move(idx));
    map_[key] = lru_.begin();
    bytes_ += sz;
    evict_locked();
}

void ShardIndexCache::invalidate(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return;
    bytes_ -= it->second->second->memory_bytes() + key.size();
    lru_.erase(it->second);
    map_.erase(it);
}

void ShardIndexCache::invalidate_prefix(const std::string& prefix) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = lru_.begin(); it != lru_.end();) {
        if (it->first.compare(0, prefix.size(), prefix) == 0) {
            bytes_ -= it->second->memory_bytes() + it->first.size();
            map_.erase(it->first);
            it = lru_.erase(it);
        } else {
            ++it;
        }
    }
}

void ShardIndexCache::clear() {
    std::lock_guard<std::mutex> lock(mu_);
    lru_.clear();
    map_.clear();
    bytes_ = 0;
}

void ShardIndexCache::set_max_bytes(uint64_t b) {
    std::lock_guard<std::mutex> lock(mu_);
    max_bytes_ = b;
    evict_locked();
}

uint64_t ShardIndexCache::bytes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return bytes_;
}

void ShardIndexCache::evict_locked() {
    while (bytes_ > max_bytes_ && !lru_.empty()) {
        auto& last = lru_.back();
        bytes_ -= last.second->memory_bytes() + last.first.size();
        map_.erase(last.first);
        lru_.pop_back();
    }
}

} // namespace zarr3
