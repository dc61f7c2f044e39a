// Keeps a local store inside its root folder: symbolic links that resolve
// outside it are refused, only regular files are read, dangling or looping
// links are errors (not missing chunks), and deletion never follows links.
// Remote and other /vsi paths are not checked (they have no symbolic links
// that GDAL would follow for us).
#pragma once

#include <mutex>
#include <set>
#include <string>

namespace zarr3drv {

// A plain file system path (not /vsi...): the checks below apply to it.
bool IsPosixPath(const std::string& path);

class PathGuard {
  public:
    explicit PathGuard(std::string root);
    bool active() const { return active_; }

    // Before opening `path` (a file under the root) for reading: false when
    // it is absent (missing, or a folder); zarr3::Error naming the file when
    // it is a dangling or looping symbolic link, resolves outside the root,
    // or is not a regular file (FIFO, device, socket: opening one could
    // block for ever). True when it may be opened.
    bool check_read(const std::string& path);
    // Before writing, erasing or locking `path`: zarr3::Error when the part
    // of its folder that exists resolves outside the root (a symbolic link
    // to another folder), so that nothing is created or changed out there.
    void check_write(const std::string& path);

  private:
    // realpath(dir) lies under the root; remembered once checked.
    bool folder_inside(const std::string& dir);
    bool inside(const std::string& real);
    std::string root_;
    bool active_;
    std::mutex mu_;
    std::string real_root_;
    std::set<std::string> ok_dirs_;
};

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
