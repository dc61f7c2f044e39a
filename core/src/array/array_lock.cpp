// Node write locks (array_lock.hpp): an in-process mutex per (store, node)
// plus the store's own lock (local files) when it has one.
#include "zarr3/array_lock.hpp"

#include "zarr3/metadata.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

namespace zarr3 {
namespace {

std::mutex registry_mu;
std::map<std::string, std::weak_ptr<std::mutex>>& registry() {
    static std::map<std::string, std::weak_ptr<std::mutex>> r;
    return r;
}

// The process-wide mutex of `id`, created on first use; entries whose
// mutex is no longer held by anyone are dropped on the way.
std::shared_ptr<std::mutex> mutex_of(const std::string& id) {
    std::lock_guard lk(registry_mu);
    auto& r = registry();
    for (auto it = r.begin(); it != r.end();)
        it = it->second.expired() ? r.erase(it) : std::next(it);
    auto& slot = r[id];
    auto m = slot.lock();
    if (!m) {
        m = std::make_shared<std::mutex>();
        slot = m;
    }
    return m;
}

class NodeLock final : public ArrayLock {
  public:
    NodeLock(Store& store, const std::string& path)
        : mu_(mutex_of(store.uri() + "\n" + path)), held_(*mu_) {
        const char* off = std::getenv("ZARR3_TEST_NO_STORE_LOCKS");
        if (!off || std::strcmp(off, "1") != 0)
            store_lock_ = store.lock(join_key(path, "zarr.json"));
    }
    bool across_processes() const override { return store_lock_ != nullptr; }

  private:
    std::shared_ptr<std::mutex> mu_;
    std::unique_lock<std::mutex> held_;
    std::unique_ptr<StoreLock> store_lock_; // released before the mutex
};

} // namespace

std::unique_ptr<ArrayLock> lock_array(Store& store, const std::string& path) {
    if (!path.empty()) validate_key(path);
    return std::make_unique<NodeLock>(store, path);
}

NodeSnapshot snapshot_node(Store& store, const std::string& path) {
    const std::string key = join_key(path, "zarr.json");
    if (const auto n = store.size(key); n && *n > kMaxMetadataBytes)
        throw_too_large(store.uri() + "/" + key, *n, kMaxMetadataBytes);
    NodeSnapshot s;
    s.bytes = store.get_fresh(key, kMaxMetadataBytes, s.version);
    if (s.bytes && s.bytes->size() > kMaxMetadataBytes)
        throw_too_large(store.uri() + "/" + key, s.bytes->size(), kMaxMetadataBytes);
    return s;
}

std::shared_ptr<Array> open_array_fresh(std::shared_ptr<Store> store, const std::string& path,
                                        NodeSnapshot& seen) {
    seen = snapshot_node(*store, path);
    const std::string where = store->uri() + "/" + join_key(path, "zarr.json");
    if (!seen.bytes) throw NotFound(where + ": not found");
    auto node = parse_node_metadata_text(
        std::string_view(reinterpret_cast<const char*>(seen.bytes->data()), seen.bytes->size()),
        where);
    if (node.type != NodeType::Array || !node.array)
        throw FormatError(where + ": node_type is 'group', expected an array");
    return Array::open(std::move(store), path, std::move(*node.array));
}

void require_node_unchanged(Store& store, const std::string& path, const NodeSnapshot& seen,
                            const std::string& what) {
    const NodeSnapshot now = snapshot_node(store, path);
    if (now.bytes == seen.bytes && !versions_differ(now.version, seen.version)) return;
    const std::string key = store.uri() + "/" + join_key(path, "zarr.json");
    throw Error(key + ": changed by another writer during this " + what +
                (now.bytes ? "" : " (it is gone)") + "; nothing was switched: run the " + what +
                " again (concurrent writers of one array on a store without locks, such as an "
                "object store, must be serialized by the caller)");
}

void switch_metadata_if(Array& array, const NodeSnapshot& seen, const std::string& what) {
    const std::string key = join_key(array.path(), "zarr.json");
    const std::string text = to_json(array.metadata()).dump(2);
    Store& store = array.store();
    const auto condition =
        seen.bytes ? Precondition::matches(seen.version, seen.bytes) : Precondition::absent();
    if (store.put_if(key, ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()),
                     condition) == PutResult::Written)
        return;
    throw Error(store.uri() + "/" + key + ": changed by another writer during this " + what +
                "; this " + what + " is not stored (its zarr.json was not replaced): run the " +
                what + " again");
}

ArrayMetadata set_array_attributes(const std::shared_ptr<Store>& store, const std::string& path,
                                   const nlohmann::json& attributes) {
    const auto lock = lock_array(*store, path);
    NodeSnapshot seen;
    auto a = open_array_fresh(store, path, seen);
    ArrayMetadata m = a->metadata();
    m.attributes = attributes;
    Array::open(store, path, m)->write_metadata();
    return m;
}

void test_pause_point(const char* step) {
    const char* at = std::getenv("ZARR3_TEST_PAUSE_AT");
    if (!at || std::strcmp(at, step) != 0) return;
    const char* ms = std::getenv("ZARR3_TEST_PAUSE_MS");
    if (const char* mark = std::getenv("ZARR3_TEST_PAUSE_MARK")) {
        if (std::FILE* f = std::fopen(mark, "w")) std::fclose(f); // the test waits for it
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(ms ? std::atol(ms) : 1000));
}

} // namespace zarr3
