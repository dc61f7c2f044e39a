// Deleting nodes of a store by their store key (gdaladdo -clean's levels):
// the store decides what a delete is, never a path built from its uri (an
// Icechunk session's uri, "<repo>@main", names no folder).
// - An Icechunk session (the store is or wraps one): the node is deleted in
//   the session (its zarr.json erased through the store given, which takes
//   its chunks with it) and committed with the session's other changes.
// - A VSIStore (local folders, /vsimem/, object stores), possibly wrapped:
//   the node's folder under the store's root, verified to hold nothing but
//   store content and reached through no symbolic link (CheckRemovable,
//   RemoveStoreFolder, RemoveEmptyGroup of path_guard.hpp).
// - Any other store: zarr3::Error naming the store and the key; nothing
//   removed.
#pragma once

#include "zarr3/store.hpp"

#include <string>

namespace zarr3drv {

// zarr3::Error naming the node unless RemoveNode(store, key) may remove it
// (changes nothing).
void CheckNodeRemovable(zarr3::Store& store, const std::string& key);
// Removes the node `key` (an array or group) and everything under it;
// zarr3::Error naming what was left on failure. A missing node is no error.
void RemoveNode(zarr3::Store& store, const std::string& key);
// Removes the group node `key` when it holds nothing but its zarr.json.
void RemoveGroupIfEmpty(zarr3::Store& store, const std::string& key);

} // namespace zarr3drv
