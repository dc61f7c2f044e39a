// ChangeWatch: revalidation of local files by inotify (change_watch.hpp).
#include "zarr3/change_watch.hpp"

#include <map>
#include <mutex>
#include <unordered_map>

#ifdef __linux__
#include <atomic>
#include <cerrno>
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <pthread.h>
#include <sys/inotify.h>
#include <sys/vfs.h>
#include <unistd.h>
#endif

namespace zarr3 {

namespace change_watch_detail {

// One folder of a watched path: the folder holding files, or a folder leading to it.
struct Folder {
    std::string path;
    std::map<std::string, std::unique_ptr<Folder>> children;
    int wd = -1;
    uint32_t mask = 0;
    uint64_t epoch = 0;
    bool rewatch = true; // (re)add the watch: new, or the path may lead elsewhere now
};

} // namespace change_watch_detail

namespace {
using change_watch_detail::Folder;

// Each prefix of an absolute, canonical path ("/a/b" -> "/", "/a", "/a/b"); empty when the path
// is not absolute or has an empty, "." or ".." component.
std::vector<std::string> components(const std::string& dir) {
    std::vector<std::string> out;
    if (dir.empty() || dir[0] != '/') return out;
    size_t at = 1;
    while (at < dir.size()) {
        const size_t slash = dir.find('/', at);
        const size_t end = slash == std::string::npos ? dir.size() : slash;
        const std::string name = dir.substr(at, end - at);
        if (name.empty() || name == "." || name == "..") return {};
        out.push_back(name);
        at = end + 1;
        if (slash != std::string::npos && at == dir.size()) return {}; // trailing '/'
    }
    return out;
}

constexpr size_t kMaxFolders = 65536;

// ChangeWatch::Pass on this thread: how deep, and whether its events were read.
thread_local int t_pass_depth = 0;
thread_local bool t_pass_drained = false;

} // namespace

struct ChangeWatch::State {
    using Folder = change_watch_detail::Folder;
    std::mutex mu;
    int fd = -1;  // inotify
    int mfd = -1; // /proc/self/mountinfo: POLLPRI at each mount or unmount
    bool usable = false;
    Folder root;
    std::unordered_map<int, Folder*> by_wd;
    uint64_t generation = 1;
    size_t folders = 1;

    void bump(Folder& f) {
        ++f.epoch;
        f.rewatch = true;
        for (auto& [name, child] : f.children)
            bump(*child);
    }
#ifdef __linux__
    void drain();
    void handle(const struct inotify_event& ev);
    void read_events();
    void open_instance();
    void restart_after_fork();
    bool watch(Folder& f, uint32_t mask);
#endif
};

#ifdef __linux__
namespace {

std::atomic<bool> g_forked{false};
std::mutex* g_fork_mu = nullptr;

// Events on the folder holding files: any change of a name in it; on the
// folders leading to it: a name added, removed, renamed or made inaccessible.
constexpr uint32_t kPathMask =
    IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF;
constexpr uint32_t kFilesMask = kPathMask | IN_MODIFY | IN_CLOSE_WRITE;

// File systems whose notification reports every change (no network or FUSE file system).
bool local_file_system(const std::string& dir) {
    struct statfs fs {};
    if (::statfs(dir.c_str(), &fs) != 0) return false;
    switch (static_cast<unsigned long>(fs.f_type)) {
    case EXT4_SUPER_MAGIC: // also ext2 and ext3
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
    case TMPFS_MAGIC:
    case F2FS_SUPER_MAGIC:
        return true;
    default:
        return false;
    }
}

} // namespace

void ChangeWatch::State::open_instance() {
    fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    // A file system mounted over a watched folder sends no inotify event:
    // any mount or unmount makes every token stale. No /proc: no watch.
    mfd = ::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
    usable = fd >= 0 && mfd >= 0;
    if (usable) {
        struct pollfd p {
            mfd, POLLPRI, 0
        };
        ::poll(&p, 1, 0); // takes the state of now as the start
    }
}

void ChangeWatch::State::restart_after_fork() {
    // The child shares the parent's instance: reading it would take the
    // parent's events. A new one, and every token stale.
    g_forked = false;
    if (fd >= 0) ::close(fd);
    if (mfd >= 0) ::close(mfd);
    open_instance();
    by_wd.clear();
    ++generation;
    bump(root);
    auto clear = [](auto& self, Folder& f) -> void {
        f.wd = -1;
        f.mask = 0;
        for (auto& [name, child] : f.children)
            self(self, *child);
    };
    clear(clear, root);
}

void ChangeWatch::State::handle(const struct inotify_event& ev) {
    if (ev.mask & IN_Q_OVERFLOW) {
        ++generation;
        bump(root);
        return;
    }
    const auto it = by_wd.find(ev.wd);
    if (it == by_wd.end()) return;
    Folder& f = *it->second;
    if (ev.mask & IN_IGNORED) {
        by_wd.erase(it);
        f.wd = -1;
        f.mask = 0;
        bump(f);
        return;
    }
    if (ev.len > 0 && ev.name[0] != '\0') {
        ++f.epoch; // a file of this folder
        const auto child = f.children.find(ev.name);
        if (child != f.children.end()) bump(*child->second);
        return;
    }
    bump(f); // the folder itself: moved, deleted, or its permissions
}

void ChangeWatch::State::read_events() {
    alignas(struct inotify_event) char buf[16384];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0) {
            if (n < 0 && errno == EINTR) continue;
            return; // EAGAIN: nothing pending
        }
        for (ssize_t at = 0; at < n;) {
            const auto* ev = reinterpret_cast<const struct inotify_event*>(buf + at);
            handle(*ev);
            at += static_cast<ssize_t>(sizeof(struct inotify_event) + ev->len);
        }
    }
}

// One system call when nothing happened: a poll of both descriptors.
void ChangeWatch::State::drain() {
    if (g_forked) restart_after_fork();
    if (!usable) return;
    struct pollfd p[2] = {{fd, POLLIN, 0}, {mfd, POLLPRI, 0}};
    int n = 0;
    do {
        n = ::poll(p, 2, 0);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        ++generation; // cannot tell: nothing is trusted
        bump(root);
        return;
    }
    if (p[1].revents != 0) {
        ++generation;
        bump(root);
    }
    if (p[0].revents != 0) read_events();
}

bool ChangeWatch::State::watch(Folder& f, uint32_t mask) {
    if (!f.rewatch && f.wd >= 0 && (f.mask & mask) == mask) return true;
    const uint32_t want = f.mask | mask;
    // IN_DONT_FOLLOW | IN_ONLYDIR: a symbolic link on the path is refused here.
    const int wd = ::inotify_add_watch(fd, f.path.c_str(), want | IN_DONT_FOLLOW | IN_ONLYDIR);
    if (wd < 0) return false;
    const auto other = by_wd.find(wd);
    if (other != by_wd.end() && other->second != &f) return false; // one folder, two paths
    if (f.wd >= 0 && f.wd != wd) {
        // The path leads to another folder now: forget the old one.
        ::inotify_rm_watch(fd, f.wd);
        by_wd.erase(f.wd);
        bump(f);
    }
    f.wd = wd;
    f.mask = want;
    f.rewatch = false;
    by_wd[wd] = &f;
    return true;
}

ChangeWatch::ChangeWatch() : s_(std::make_unique<State>()) {
    s_->open_instance();
    g_fork_mu = &s_->mu;
    ::pthread_atfork([] { g_fork_mu->lock(); }, [] { g_fork_mu->unlock(); },
                     [] {
                         g_forked = true;
                         g_fork_mu->unlock();
                     });
}

std::optional<ChangeWatch::Token> ChangeWatch::arm(const std::string& file) {
    const size_t slash = file.find_last_of('/');
    if (slash == std::string::npos || slash + 1 == file.size()) return std::nullopt;
    const std::string dir = slash == 0 ? "/" : file.substr(0, slash);
    const auto names = components(dir);
    if (names.empty() && dir != "/") return std::nullopt;
    std::lock_guard lk(s_->mu);
    s_->drain();
    if (!s_->usable) return std::nullopt;
    Folder* f = &s_->root;
    f->path = "/";
    for (size_t i = 0;; ++i) {
        const bool leaf = i == names.size();
        if (f->wd < 0 && leaf && !local_file_system(f->path)) return std::nullopt;
        if (!s_->watch(*f, leaf ? kFilesMask : kPathMask)) return std::nullopt;
        if (leaf) break;
        auto& child = f->children[names[i]];
        if (!child) {
            if (s_->folders >= kMaxFolders) {
                f->children.erase(names[i]);
                return std::nullopt;
            }
            ++s_->folders;
            child = std::make_unique<Folder>();
            child->path = (f->path == "/" ? "" : f->path) + "/" + names[i];
        }
        f = child.get();
    }
    // Events of what arm() itself did are read before the token is taken.
    s_->drain();
    if (f->wd < 0 || f->rewatch) return std::nullopt;
    return Token{f, f->epoch, s_->generation};
}

bool ChangeWatch::unchanged(const Token& token) {
    std::lock_guard lk(s_->mu);
    if (t_pass_depth == 0 || !t_pass_drained) s_->drain();
    t_pass_drained = t_pass_depth > 0;
    const auto* f = static_cast<const Folder*>(token.folder);
    return s_->usable && token.generation == s_->generation && f && f->epoch == token.epoch &&
           f->wd >= 0 && !f->rewatch;
}

#else // not Linux: no watch, every caller keeps its stat per use

ChangeWatch::ChangeWatch() : s_(std::make_unique<State>()) {}
std::optional<ChangeWatch::Token> ChangeWatch::arm(const std::string&) {
    return std::nullopt;
}
bool ChangeWatch::unchanged(const Token&) {
    return false;
}

#endif

ChangeWatch::~ChangeWatch() = default;

ChangeWatch::Pass::Pass() {
    if (t_pass_depth++ == 0) t_pass_drained = false;
}
ChangeWatch::Pass::~Pass() {
    --t_pass_depth;
}

ChangeWatch& ChangeWatch::process() {
    static ChangeWatch* const watch = new ChangeWatch(); // never destroyed: used until exit
    return *watch;
}

void ChangeWatch::simulate_overflow() {
    std::lock_guard lk(s_->mu);
    ++s_->generation;
    s_->bump(s_->root);
}

} // namespace zarr3
