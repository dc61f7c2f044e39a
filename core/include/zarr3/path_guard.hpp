// Keeps a local store inside its root folder: symbolic links that resolve
// outside it are refused, only regular files are read, dangling or looping
// links are errors (not missing chunks), and nothing is written through a
// linked folder leading out. The one guard of every local store: FileStore
// (the zarr3 tool) and the driver's VSIStore on local paths. Paths of GDAL's
// virtual file systems ("/vsi...") are not checked: they have no symbolic
// links that GDAL would follow for us.
#pragma once

#include <mutex>
#include <set>
#include <string>

#include <sys/stat.h>

namespace zarr3 {

// A plain file system path (not empty, not /vsi... in any case): the checks
// below apply to it.
bool is_posix_path(const std::string& path);

class PathGuard {
  public:
    explicit PathGuard(std::string root);
    bool active() const { return active_; }

    // Before opening `path` (a file under the root) for reading: false when
    // it is absent (missing, or a folder); zarr3::Error naming the file when
    // it is a dangling or looping symbolic link, resolves outside the root,
    // or is not a regular file (FIFO, device, socket: opening one could
    // block for ever). True when it may be opened; then `file` (when given)
    // holds the stat of the regular file it leads to (a version check
    // needs no second stat), and `linked` (when given) whether `path` is a
    // symbolic link.
    bool check_read(const std::string& path, struct stat* file = nullptr, bool* linked = nullptr);
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

} // namespace zarr3
