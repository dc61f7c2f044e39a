// Deletes of store nodes by key (store_delete.hpp).
#include "storage/store_delete.hpp"

#include "storage/path_guard.hpp"
#include "storage/vsi_store.hpp"
#include "zarr3/array.hpp"
#include "zarr3/icechunk_write.hpp"
#include "zarr3/metadata.hpp"

namespace zarr3drv {

namespace {

// `store` itself or the first store it wraps that is a T (nullptr: none).
template <class T> T* Unwrapped(zarr3::Store* store) {
    while (store) {
        if (auto* t = dynamic_cast<T*>(store)) return t;
        auto* fwd = dynamic_cast<zarr3::ForwardingStore*>(store);
        store = fwd ? fwd->inner().get() : nullptr;
    }
    return nullptr;
}

bool InSession(zarr3::Store& store) {
    return Unwrapped<zarr3::icechunk::IcechunkSession>(&store) != nullptr;
}

// The VSIStore holding the node folders, or Error naming the store.
VSIStore& FolderStore(zarr3::Store& store, const std::string& key) {
    if (auto* vsi = Unwrapped<VSIStore>(&store)) return *vsi;
    throw zarr3::Error(zarr3::join_key(store.uri(), key) +
                       ": this store cannot delete nodes; nothing removed");
}

} // namespace

void CheckNodeRemovable(zarr3::Store& store, const std::string& key) {
    zarr3::validate_key(key);
    if (InSession(store)) return; // the session deletes nodes, whatever they hold
    VSIStore& vsi = FolderStore(store, key);
    CheckRemovable(vsi.path_of(""), key); // throws naming the path
}

void RemoveNode(zarr3::Store& store, const std::string& key) {
    zarr3::validate_key(key);
    if (InSession(store)) {
        store.erase(zarr3::join_key(key, "zarr.json"));
        return;
    }
    VSIStore& vsi = FolderStore(store, key);
    std::string error;
    if (!RemoveStoreFolder(vsi.path_of(key), error))
        throw zarr3::Error(vsi.path_of(key) + ": cannot remove (" + error + ")");
}

void RemoveGroupIfEmpty(zarr3::Store& store, const std::string& key) {
    zarr3::validate_key(key);
    if (!InSession(store)) {
        RemoveEmptyGroup(FolderStore(store, key).path_of(key));
        return;
    }
    if (store.list_dir(key) != std::vector<std::string>{"zarr.json"}) return;
    const auto j = zarr3::read_node_json(store, key);
    if (j && zarr3::node_type_of(*j, key) == zarr3::NodeType::Group)
        store.erase(zarr3::join_key(key, "zarr.json"));
}

} // namespace zarr3drv
