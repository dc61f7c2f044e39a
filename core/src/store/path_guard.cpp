// PathGuard: a local store never leaves its root folder (path_guard.hpp).
#include "zarr3/path_guard.hpp"

#include "zarr3/common.hpp"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sys/stat.h>

namespace zarr3 {

namespace {

std::string parent_of(const std::string& path) {
    const size_t slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}

// realpath(), or empty with errno set.
std::string real_path(const std::string& path) {
    std::unique_ptr<char, decltype(&std::free)> r(::realpath(path.c_str(), nullptr), &std::free);
    return r ? std::string(r.get()) : std::string();
}

const char* kind_of(mode_t m) {
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

[[noreturn]] void throw_link_error(const std::string& path, int err) {
    if (err == ENOENT || err == ENOTDIR)
        throw Error(path + ": dangling symbolic link (its target does not exist)");
    if (err == ELOOP) throw Error(path + ": symbolic link loop");
    throw Error(path + ": cannot resolve (" + std::strerror(err) + ")");
}

} // namespace

bool is_posix_path(const std::string& path) {
    if (path.empty()) return false;
    if (path.size() < 4) return true;
    std::string head = path.substr(0, 4);
    for (auto& c : head)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return head != "/vsi";
}

PathGuard::PathGuard(std::string root) : root_(std::move(root)), active_(is_posix_path(root_)) {}

bool PathGuard::inside(const std::string& real) {
    if (real_root_.empty()) {
        real_root_ = real_path(root_);
        if (real_root_.empty())
            throw Error(root_ + ": cannot resolve the store folder (" + std::strerror(errno) + ")");
    }
    if (real == real_root_) return true;
    const std::string prefix = real_root_ == "/" ? "/" : real_root_ + "/";
    return real.compare(0, prefix.size(), prefix) == 0;
}

bool PathGuard::folder_inside(const std::string& dir) {
    if (dir == root_ || ok_dirs_.count(dir)) return true;
    const std::string real = real_path(dir);
    if (real.empty()) throw_link_error(dir, errno);
    if (!inside(real)) return false;
    if (ok_dirs_.size() > 4096) ok_dirs_.clear();
    ok_dirs_.insert(dir);
    return true;
}

bool PathGuard::check_read(const std::string& path, struct stat* file, bool* linked) {
    if (!active_) return true;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        const int err = errno;
        if (err == ENOENT || err == ENOTDIR) return false; // missing: the fill value
        if (err == ELOOP) throw_link_error(path, err);
        throw Error(path + ": cannot stat (" + std::strerror(err) + ")");
    }
    std::lock_guard lk(mu_);
    if (linked) *linked = S_ISLNK(st.st_mode);
    if (S_ISLNK(st.st_mode)) {
        const std::string real = real_path(path);
        if (real.empty()) throw_link_error(path, errno);
        if (!inside(real))
            throw Error(path + ": symbolic link to " + real + ", outside the store; not followed");
        if (::stat(real.c_str(), &st) != 0) throw_link_error(path, errno);
    } else if (!folder_inside(parent_of(path))) {
        throw Error(path + ": its folder is a symbolic link leading outside the store; " +
                    "not followed");
    }
    if (S_ISDIR(st.st_mode)) return false;
    if (!S_ISREG(st.st_mode))
        throw Error(path + ": " + kind_of(st.st_mode) + ", not a regular file; not read");
    if (file) *file = st;
    return true;
}

void PathGuard::check_write(const std::string& path) {
    if (!active_) return;
    // The deepest folder of the path that exists (the rest is created).
    std::string dir = parent_of(path);
    while (dir.size() > root_.size()) {
        struct stat st {};
        if (::lstat(dir.c_str(), &st) == 0) break;
        if (errno != ENOENT) break;
        dir = parent_of(dir);
    }
    if (dir.size() <= root_.size()) return; // the root itself, or not created yet
    std::lock_guard lk(mu_);
    if (!folder_inside(dir))
        throw Error(path + ": " + dir +
                    " is a symbolic link leading outside the store; not written");
}

} // namespace zarr3
