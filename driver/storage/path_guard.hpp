// Keeps a local store inside its root folder: the reads and writes of a
// store through zarr3::PathGuard (core, shared with the zarr3 tool's
// FileStore), and deletes here, which never follow links. Remote and other
// /vsi paths are not checked (they have no symbolic links that GDAL would
// follow for us).
#pragma once

#include "zarr3/path_guard.hpp"

#include <string>

namespace zarr3drv {

// A plain file system path (not /vsi...): zarr3::is_posix_path.
inline bool IsPosixPath(const std::string& path) {
    return zarr3::is_posix_path(path);
}

// The path guard of every local store (core: FileStore's, VSIStore's).
using zarr3::PathGuard;

// Removes `path` (a file, link or folder tree). Local paths: symbolic links
// are removed, never followed (a linked folder's contents stay). Other
// paths: VSIRmdirRecursive / VSIUnlink. False with `error` set on failure.
bool RemoveTree(const std::string& path, std::string& error);

// Deletes that remove only what they verified as store content (zarr.json,
// chunk files, node and chunk folders, a writer's side files), never
// following a symbolic link (a link is removed itself, never its target).
// Implemented beside the folder scan in unfinished_copy.cpp.

// zarr3::Error naming the path unless `rel` (a key under the store folder
// `root`) is a folder reached through no symbolic link below `root` and
// holding nothing but store content.
void CheckRemovable(const std::string& root, const std::string& rel);
// Removes the store content of the folder `dir` as the scan verified it,
// then the folders left empty. False with `error` naming what was left
// (entries that are no store content, or that appeared meanwhile).
bool RemoveStoreFolder(const std::string& dir, std::string& error);
// Removes the group folder `dir` when it holds nothing but its zarr.json.
void RemoveEmptyGroup(const std::string& dir);

} // namespace zarr3drv
