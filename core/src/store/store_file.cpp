// FileStore: a folder on the local file system (POSIX reads, atomic rename).
#include "zarr3/chunk_cache.hpp"
#include "zarr3/limits.hpp"
#include "zarr3/path_guard.hpp"
#include "zarr3/store.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace zarr3 {

namespace fs = std::filesystem;

namespace {
// write_atomically's operations on local files (POSIX calls).
const AtomicWriteOps& posix_write_ops() {
    static const AtomicWriteOps ops{
        [](const std::string& tmp, ByteView value) -> std::string {
            const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
            if (fd < 0) return std::strerror(errno);
            const uint8_t* d = value.data();
            size_t n = value.size();
            while (n > 0) {
                const ssize_t w = ::write(fd, d, n);
                if (w < 0 && errno == EINTR) continue;
                if (w <= 0) {
                    const int err = w < 0 ? errno : ENOSPC;
                    ::close(fd);
                    return std::strerror(err);
                }
                d += w;
                n -= static_cast<size_t>(w);
            }
            if (::close(fd) != 0) return std::strerror(errno);
            return {};
        },
        [](const std::string& from, const std::string& to) -> std::string {
            if (::rename(from.c_str(), to.c_str()) != 0) return std::strerror(errno);
            return {};
        },
        [](const std::string& tmp) { ::unlink(tmp.c_str()); }};
    return ops;
}
} // namespace

FileStore::FileStore(std::string root, bool writable)
    : root_(std::move(root)), writable_(writable) {
    while (root_.size() > 1 && root_.back() == '/')
        root_.pop_back();
    guard_ = std::make_unique<PathGuard>(root_);
}

FileStore::~FileStore() = default;

std::string FileStore::path_of(const std::string& key) const {
    validate_key(key);
    return root_ + "/" + key;
}

namespace {
struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

void read_exact(int fd, uint8_t* dst, uint64_t n, uint64_t off, const std::string& what) {
    while (n > 0) {
        ssize_t r = ::pread(fd, dst, n, static_cast<off_t>(off));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0)
            throw Error(what + ": read failed (" + (r < 0 ? std::strerror(errno) : "short file") +
                        ")");
        dst += r;
        off += static_cast<uint64_t>(r);
        n -= static_cast<uint64_t>(r);
    }
}
} // namespace

namespace {
// Identity of an open file: device, inode, size, mtime and ctime in ns.
ObjectVersion file_version(const struct stat& st) {
    return ObjectVersion{
        "file:" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
        std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
        std::to_string(st.st_mtim.tv_nsec) + ":" + std::to_string(st.st_ctim.tv_sec) + "." +
        std::to_string(st.st_ctim.tv_nsec)};
}

// How often a read is repeated when the file changed while it was read (a
// writer rewriting it in place) before ObjectChanged.
constexpr int kFileReadAttempts = 3;
} // namespace

std::optional<ReadResult> FileStore::read(const ReadRequest& request) {
    const std::string p = path_of(request.key);
    if (!guard_->check_read(p)) return std::nullopt;
    switch (request.kind) {
    case ReadRequest::Kind::Value:
        // A whole value is a chunk or shard: at most the decoded-chunk cap.
        return read_value(p, request.limit.value_or(max_decoded_chunk_bytes()));
    case ReadRequest::Kind::Ranges:
        return read_ranges(p, request.ranges);
    case ReadRequest::Kind::Size:
        break;
    }
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) return std::nullopt;
    ReadResult out;
    out.total_size = static_cast<uint64_t>(st.st_size);
    return out;
}

namespace {
// Opens `p` and runs `read(fd, size)` until fstat shows the same file before
// and after it (a writer may rewrite it in place meanwhile), then adds the
// size and the version; nullopt when absent or a folder.
template <class F> std::optional<ReadResult> read_stable(const std::string& p, F&& read) {
    Fd f{::open(p.c_str(), O_RDONLY | O_CLOEXEC)};
    if (f.fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
        throw Error(p + ": cannot open (" + std::strerror(errno) + ")");
    }
    for (int attempt = 0; attempt < kFileReadAttempts; ++attempt) {
        struct stat st {};
        if (::fstat(f.fd, &st) != 0) throw Error(p + ": cannot stat");
        if (S_ISDIR(st.st_mode)) return std::nullopt;
        const uint64_t size = static_cast<uint64_t>(st.st_size);
        ReadResult out = read(f.fd, size);
        struct stat after {};
        if (::fstat(f.fd, &after) != 0) throw Error(p + ": cannot stat");
        out.version = file_version(after);
        if (out.version == file_version(st)) {
            out.total_size = size;
            return out;
        }
    }
    throw ObjectChanged(p + ": the file changed while it was read (" +
                        std::to_string(kFileReadAttempts) + " attempts)");
}
} // namespace

// The size comes from fstat of the open file, checked against `limit` before
// the buffer is allocated (a sparse file may claim gigabytes it never holds).
std::optional<ReadResult> FileStore::read_value(const std::string& p, uint64_t limit) {
    return read_stable(p, [&](int fd, uint64_t size) {
        if (size > limit) throw_too_large(p, size, limit);
        ReadResult out;
        out.data.emplace_back(static_cast<size_t>(size));
        read_exact(fd, out.data.back().data(), size, 0, p);
        return out;
    });
}

std::optional<ReadResult> FileStore::read_ranges(const std::string& p,
                                                 const std::vector<ByteRange>& ranges) {
    return read_stable(p, [&](int fd, uint64_t size) {
        ReadResult out;
        out.data.reserve(ranges.size());
        for (const auto& r : ranges) {
            const uint64_t off = range_start(r, size, p);
            out.data.emplace_back(range_length(r));
            read_exact(fd, out.data.back().data(), range_length(r), off, p);
        }
        return out;
    });
}

void FileStore::put(const std::string& key, ByteView value) {
    if (!writable_) throw Error(root_ + ": store is read-only");
    const ChunkCache::WriteNote note{key};
    const std::string p = path_of(key);
    guard_->check_write(p);
    std::error_code ec;
    fs::create_directories(fs::path(p).parent_path(), ec);
    if (ec) throw Error(p + ": cannot create folder (" + ec.message() + ")");
    write_atomically(p, value, posix_write_ops());
}

void FileStore::erase(const std::string& key) {
    if (!writable_) throw Error(root_ + ": store is read-only");
    const ChunkCache::WriteNote note{key};
    const std::string p = path_of(key);
    guard_->check_write(p);
    if (::unlink(p.c_str()) != 0 && errno != ENOENT && errno != ENOTDIR)
        throw Error(p + ": cannot delete (" + std::strerror(errno) + ")");
}

bool FileStore::link(const std::string& from, const std::string& to) {
    if (!writable_) throw Error(root_ + ": store is read-only");
    const std::string src = path_of(from), dst = path_of(to);
    const ChunkCache::WriteNote note{to};
    guard_->check_write(dst);
    std::error_code ec;
    if (!guard_->check_read(src) || !fs::is_regular_file(fs::symlink_status(src, ec))) return false;
    fs::create_directories(fs::path(dst).parent_path(), ec);
    if (ec) throw Error(dst + ": cannot create folder (" + ec.message() + ")");
    fs::remove(dst, ec); // what a killed compaction left under the name
    return ::link(src.c_str(), dst.c_str()) == 0;
}

std::vector<std::string> FileStore::list_dir(const std::string& prefix) {
    const std::string p = prefix.empty() ? root_ : path_of(prefix);
    std::vector<std::string> out;
    std::error_code ec;
    for (fs::directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec))
        out.push_back(it->path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace zarr3
