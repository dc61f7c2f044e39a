// Serializing the writers of one node (an array's zarr.json, or a group's
// when its consolidated metadata is rewritten): a read of the metadata that a
// write depends on, the write and the switch (the new zarr.json) happen under
// one lock, so that two appends or an append and a compaction never both
// take the same length.
//
// What holds where:
// - local stores (FileStore, the driver's local VSIStore): an fcntl lock on
//   "<path>/zarr.json.lock" (Store::lock) excludes other processes and other
//   threads of this host; plus an in-process mutex.
// - stores without locks (memory, /vsimem/, object stores, HTTP): an
//   in-process mutex per (store uri, path) excludes the other writers of
//   this process only. Across processes there is nothing to hold: a writer
//   compares the node's zarr.json (its bytes and ObjectVersion / ETag) with
//   what it read before it switches (require_node_unchanged) and fails
//   naming the conflict.
#pragma once

#include "zarr3/array.hpp"
#include "zarr3/store.hpp"

#include <memory>
#include <string>

namespace zarr3 {

class ArrayLock {
  public:
    virtual ~ArrayLock() = default;
    // True when every writer of the store is excluded, other processes too
    // (the store has locks; for stores living in this process, memory and
    // /vsimem/, its in-process lock).
    virtual bool across_processes() const = 0;
};

// Waits for and takes the write lock of the node at `path` ("" = the root)
// of `store`. Never nullptr. Taking it twice in one thread for one node
// deadlocks: callers lock distinct nodes, in the order data array, then
// coordinate array, then the root group.
std::unique_ptr<ArrayLock> lock_array(Store& store, const std::string& path);

// The zarr.json of the node at `path` as read now: its bytes (nullopt when
// absent) and version (empty when the store cannot tell).
struct NodeSnapshot {
    std::optional<Bytes> bytes;
    ObjectVersion version;
};
// FormatError past kMaxMetadataBytes.
NodeSnapshot snapshot_node(Store& store, const std::string& path);

// The array at `path` as its zarr.json reads now, in one read (never a
// consolidated or cached copy): what a write under lock_array depends on.
// `seen` keeps that read for require_node_unchanged before the switch.
// NotFound / FormatError naming the file.
std::shared_ptr<Array> open_array_fresh(std::shared_ptr<Store> store, const std::string& path,
                                        NodeSnapshot& seen);

// Error naming the node's zarr.json and the conflict unless the node now
// reads as `seen` (same bytes; same version when both versions are known):
// another writer changed it meanwhile (a concurrent append on a store
// without locks). `what` names the interrupted operation ("append").
void require_node_unchanged(Store& store, const std::string& path, const NodeSnapshot& seen,
                            const std::string& what);

// Writes `array`'s metadata as its zarr.json only while the stored one is
// still the one `seen` read: put_if on that version (a storage's If-Match).
// Error naming the zarr.json ("changed by another writer during this <what>")
// when it changed meanwhile, nothing written.
void switch_metadata_if(Array& array, const NodeSnapshot& seen, const std::string& what);

// Rewrites the attributes of the array at `path` under its lock, every other
// member of zarr.json (shape, grid, codecs) as stored now, never from a copy
// read earlier (an update-mode dataset must not undo an append made since it
// opened). Returns the metadata written. NotFound / FormatError naming the file.
ArrayMetadata set_array_attributes(const std::shared_ptr<Store>& store, const std::string& path,
                                   const nlohmann::json& attributes);

// Test hooks. ZARR3_TEST_NO_STORE_LOCKS=1: lock_array takes only the
// in-process mutex (a local store behaves as an object store across
// processes). ZARR3_TEST_PAUSE_AT=<step>: test_pause_point(<step>) sleeps
// ZARR3_TEST_PAUSE_MS milliseconds (default 1000), first creating the file
// ZARR3_TEST_PAUSE_MARK when set (a test waits for it instead of guessing
// how long the process takes to get there).
void test_pause_point(const char* step);

} // namespace zarr3
