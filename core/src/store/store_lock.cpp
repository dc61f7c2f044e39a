// Advisory locks on local files (Store::lock for FileStore and the GDAL
// driver's local stores): fcntl open-file-description locks, so that both
// other processes and other threads of this process (each with its own
// open) wait.
#include "zarr3/path_guard.hpp"
#include "zarr3/store.hpp"

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <mutex>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace zarr3 {

namespace {

class FileLock final : public StoreLock {
  public:
    FileLock(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
    ~FileLock() override {
        // Removed while still held: a waiter that opened this file sees on
        // waking that the name is gone and locks a fresh file instead.
        ::unlink(path_.c_str());
        ::close(fd_);
    }
    FileLock(const FileLock&) = delete;
    FileLock& operator=(const FileLock&) = delete;

  private:
    int fd_;
    std::string path_;
};

bool set_lock(int fd) {
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = 0;
    fl.l_len = 0;
#ifdef F_OFD_SETLKW
    const int cmd = F_OFD_SETLKW; // per open file: threads of one process exclude each other
#else
    const int cmd = F_SETLKW;
#endif
    while (::fcntl(fd, cmd, &fl) != 0)
        if (errno != EINTR) return false;
    return true;
}

} // namespace

std::unique_ptr<StoreLock> lock_local_file(const std::string& lock_path) {
    bool made_folder = false;
    for (int attempt = 0; attempt < 10000; ++attempt) {
        const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0) {
            const int err = errno;
            if (err == ENOENT && !made_folder) {
                std::error_code ec;
                std::filesystem::create_directories(std::filesystem::path(lock_path).parent_path(),
                                                    ec);
                made_folder = true;
                continue;
            }
            throw Error(lock_path + ": cannot create the lock file (" + std::strerror(err) + ")");
        }
        if (!set_lock(fd)) {
            const int err = errno;
            ::close(fd);
            throw Error(lock_path + ": cannot lock (" + std::strerror(err) + ")");
        }
        struct stat held {
        }, named{};
        if (::fstat(fd, &held) == 0 && ::stat(lock_path.c_str(), &named) == 0 &&
            held.st_dev == named.st_dev && held.st_ino == named.st_ino)
            return std::make_unique<FileLock>(fd, lock_path);
        ::close(fd); // the previous holder removed it meanwhile: lock the new one
    }
    throw Error(lock_path + ": the lock file keeps being replaced; giving up");
}

std::unique_ptr<StoreLock> FileStore::lock(const std::string& key) {
    if (!writable()) return nullptr;
    const std::string p = path_of(key);
    guard_->check_write(p);
    return lock_local_file(p + ".lock");
}

} // namespace zarr3

namespace zarr3 {

namespace {

// Names held by lock_in_process, and the waiters' wake-up.
struct InProcessLocks {
    std::mutex mu;
    std::condition_variable cv;
    std::set<std::string> held;
};
InProcessLocks& in_process_locks() {
    static InProcessLocks locks;
    return locks;
}

class InProcessLock final : public StoreLock {
  public:
    explicit InProcessLock(std::string name) : name_(std::move(name)) {}
    ~InProcessLock() override {
        auto& l = in_process_locks();
        {
            std::lock_guard lk(l.mu);
            l.held.erase(name_);
        }
        l.cv.notify_all();
    }
    InProcessLock(const InProcessLock&) = delete;
    InProcessLock& operator=(const InProcessLock&) = delete;

  private:
    std::string name_;
};

} // namespace

std::unique_ptr<StoreLock> lock_in_process(const std::string& name) {
    auto& l = in_process_locks();
    std::unique_lock lk(l.mu);
    l.cv.wait(lk, [&] { return !l.held.count(name); });
    l.held.insert(name);
    return std::make_unique<InProcessLock>(name);
}

std::unique_ptr<StoreLock> MemoryStore::lock(const std::string& key) {
    validate_key(key);
    return lock_in_process(uri_ + "\n" + key);
}

namespace {
[[noreturn]] void refuse_conditional(const Store& store, const std::string& key,
                                     const std::string& why) {
    throw Error(join_key(store.uri(), key) + ": this store cannot replace a value conditionally (" +
                why + "), so a concurrent writer's update could be lost; refusing to write it");
}

// ZARR3_TEST_LOSE_RESPONSE=<key>: the first write of `key` in this process
// that succeeded reports a failure, as when the storage's answer is lost.
void lose_response_point(const std::string& key) {
    static std::atomic<bool> lost{false};
    const char* at = std::getenv("ZARR3_TEST_LOSE_RESPONSE");
    if (!at || key != at || lost.exchange(true)) return;
    throw Error(key + ": the answer to the write was lost (ZARR3_TEST_LOSE_RESPONSE)");
}
} // namespace

PutResult Store::put_if(const std::string& key, ByteView value, const Precondition& condition) {
    auto held = capabilities().writable && capabilities().locks ? lock(key) : nullptr;
    if (!held) refuse_conditional(*this, key, "no lock shared by its writers");
    if (condition.kind == Precondition::Kind::Absent) {
        if (size(key)) return PutResult::PreconditionFailed;
    } else if (condition.value) {
        ObjectVersion ignored;
        if (get_fresh(key, kMaxChunkBytes, ignored) != condition.value)
            return PutResult::PreconditionFailed;
    } else {
        ReadRequest probe = ReadRequest::byte_ranges(key, {});
        probe.fresh = true;
        const auto now = read(probe);
        if (!condition.version.known() || (now && !now->version.known()))
            refuse_conditional(*this, key, "the version of the stored value is unknown");
        if (!now || now->version != condition.version) return PutResult::PreconditionFailed;
    }
    put(key, value);
    return PutResult::Written;
}

bool Store::compare_and_swap(const std::string& key, const std::optional<Bytes>& expected,
                             ByteView value) {
    if (!can_compare_and_swap()) refuse_conditional(*this, key, "no compare-and-swap");
    ObjectVersion version;
    const auto now = get_fresh(key, kMaxChunkBytes, version);
    if (now != expected) return false;
    const Precondition condition =
        now ? Precondition::matches(std::move(version), now) : Precondition::absent();
    if (put_if(key, value, condition) != PutResult::Written) return false;
    lose_response_point(key);
    return true;
}

void Store::put_new(const std::string& key, ByteView value) {
    if (!capabilities().conditional_put) return put(key, value);
    if (put_if(key, value, Precondition::absent()) != PutResult::Written)
        throw Error(join_key(uri(), key) +
                    ": already exists (an object that must be new); nothing was replaced");
}

} // namespace zarr3
