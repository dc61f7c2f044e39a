// Store implementations: in-memory, local files (atomic rename), counting wrapper.
#include "zarr3/store.hpp"

#include "zarr3/limits.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace zarr3 {

namespace fs = std::filesystem;

uint64_t range_start(const ByteRange& r, uint64_t size, const std::string& where) {
    if (const auto* sfx = std::get_if<RangeSuffix>(&r)) {
        if (sfx->length > size)
            throw FormatError(where + ": byte range of " + std::to_string(sfx->length) +
                              " bytes is larger than the file (" + std::to_string(size) +
                              " bytes)");
        return size - sfx->length;
    }
    const auto& fs = std::get<RangeFromStart>(r);
    if (fs.length > size || fs.offset > size - fs.length)
        throw FormatError(where + ": byte range " + std::to_string(fs.offset) + "+" +
                          std::to_string(fs.length) + " reaches past the end of the file (" +
                          std::to_string(size) + " bytes)");
    return fs.offset;
}

std::string range_text(const ByteRange& r) {
    if (const auto* sfx = std::get_if<RangeSuffix>(&r)) return "-" + std::to_string(sfx->length);
    const auto& fs = std::get<RangeFromStart>(r);
    return std::to_string(fs.offset) + "+" + std::to_string(fs.length);
}

void throw_too_large(const std::string& where, uint64_t n, uint64_t limit) {
    throw FormatError(where + ": " + std::to_string(n) + " bytes exceeds the limit of " +
                      std::to_string(limit) + " bytes; refused before reading");
}

std::optional<Bytes> Store::get_bounded_versioned(const std::string& key, uint64_t limit,
                                                  ObjectVersion& version) {
    auto v = get_versioned(key, version);
    if (v && v->size() > limit) throw_too_large(uri() + "/" + key, v->size(), limit);
    return v;
}

std::optional<Bytes> Store::get_bounded(const std::string& key, uint64_t limit) {
    const auto n = size(key);
    if (!n) return std::nullopt;
    if (*n > limit) throw_too_large(uri() + "/" + key, *n, limit);
    auto v = get(key);
    if (v && v->size() > limit) throw_too_large(uri() + "/" + key, v->size(), limit);
    return v;
}

std::optional<std::vector<Bytes>> Store::get_ranges(const std::string& key,
                                                    const std::vector<ByteRange>& ranges) {
    auto all = get(key);
    if (!all) return std::nullopt;
    std::vector<Bytes> out;
    out.reserve(ranges.size());
    for (const auto& r : ranges) {
        const uint64_t off = range_start(r, all->size(), uri() + "/" + key);
        out.emplace_back(all->begin() + static_cast<ptrdiff_t>(off),
                         all->begin() + static_cast<ptrdiff_t>(off + range_length(r)));
    }
    return out;
}

bool is_valid_key(const std::string& key) {
    try {
        validate_key(key);
        return true;
    } catch (const Error&) {
        return false;
    }
}

void validate_key(const std::string& key) {
    if (key.empty()) throw Error("empty store key");
    if (key.front() == '/') throw Error("store key '" + key + "' must be relative");
    size_t start = 0;
    while (start <= key.size()) {
        size_t end = key.find('/', start);
        if (end == std::string::npos) end = key.size();
        const std::string seg = key.substr(start, end - start);
        if (seg.empty() || seg == "." || seg == "..")
            throw Error("store key '" + key + "' has an empty, '.' or '..' segment");
        start = end + 1;
    }
    for (char c : key)
        if (c == '\\' || c == '\0')
            throw Error("store key '" + key + "' holds a forbidden character");
}

std::string join_key(const std::string& a, const std::string& b) {
    if (a.empty()) return b;
    if (b.empty()) return a;
    return a + "/" + b;
}

// ------------------------------------------------------------ MemoryStore
namespace {
std::atomic<uint64_t> memory_puts{0};
ObjectVersion memory_version(uint64_t n) {
    return ObjectVersion{"mem:" + std::to_string(n)};
}
} // namespace

MemoryStore::MemoryStore() {
    static std::atomic<uint64_t> serial{0};
    uri_ = "memory://" + std::to_string(++serial);
}

std::optional<std::vector<Bytes>>
MemoryStore::get_ranges_sized(const std::string& key, const std::vector<ByteRange>& ranges,
                              std::optional<uint64_t>& total) {
    total = size(key);
    return get_ranges(key, ranges);
}

std::optional<Bytes> MemoryStore::get(const std::string& key) {
    std::lock_guard lk(mu_);
    auto it = data_.find(key);
    if (it == data_.end()) return std::nullopt;
    return it->second;
}

std::optional<Bytes> MemoryStore::get_versioned(const std::string& key, ObjectVersion& version) {
    std::lock_guard lk(mu_);
    version = {};
    auto it = data_.find(key);
    if (it == data_.end()) return std::nullopt;
    version = memory_version(versions_[key]);
    return it->second;
}

std::optional<Bytes> MemoryStore::get_bounded_versioned(const std::string& key, uint64_t limit,
                                                        ObjectVersion& version) {
    std::lock_guard lk(mu_);
    version = {};
    auto it = data_.find(key);
    if (it == data_.end()) return std::nullopt;
    if (it->second.size() > limit) throw_too_large(uri_ + "/" + key, it->second.size(), limit);
    version = memory_version(versions_[key]);
    return it->second;
}

std::optional<std::vector<Bytes>>
MemoryStore::get_ranges_versioned(const std::string& key, const std::vector<ByteRange>& ranges,
                                  std::optional<uint64_t>& total, ObjectVersion& version) {
    std::lock_guard lk(mu_);
    total.reset();
    version = {};
    auto it = data_.find(key);
    if (it == data_.end()) return std::nullopt;
    const Bytes& v = it->second;
    std::vector<Bytes> out;
    out.reserve(ranges.size());
    for (const auto& r : ranges) {
        const uint64_t off = range_start(r, v.size(), uri_ + "/" + key);
        out.emplace_back(v.begin() + static_cast<ptrdiff_t>(off),
                         v.begin() + static_cast<ptrdiff_t>(off + range_length(r)));
    }
    total = v.size();
    version = memory_version(versions_[key]);
    return out;
}

std::optional<uint64_t> MemoryStore::size(const std::string& key) {
    std::lock_guard lk(mu_);
    auto it = data_.find(key);
    if (it == data_.end()) return std::nullopt;
    return it->second.size();
}

void MemoryStore::put(const std::string& key, ByteView value) {
    validate_key(key);
    std::lock_guard lk(mu_);
    data_[key] = Bytes(value.begin(), value.end());
    versions_[key] = ++memory_puts;
}

bool MemoryStore::compare_and_swap(const std::string& key, const std::optional<Bytes>& expected,
                                   ByteView value) {
    validate_key(key);
    std::lock_guard lk(mu_);
    auto it = data_.find(key);
    if (it == data_.end() ? expected.has_value() : (!expected || it->second != *expected))
        return false;
    data_[key] = Bytes(value.begin(), value.end());
    versions_[key] = ++memory_puts;
    return true;
}

void MemoryStore::erase(const std::string& key) {
    std::lock_guard lk(mu_);
    data_.erase(key);
    versions_.erase(key);
}

std::vector<std::string> MemoryStore::list_dir(const std::string& prefix) {
    std::lock_guard lk(mu_);
    const std::string p = prefix.empty() ? "" : prefix + "/";
    std::vector<std::string> out;
    for (auto it = data_.lower_bound(p); it != data_.end(); ++it) {
        if (it->first.compare(0, p.size(), p) != 0) break;
        std::string rest = it->first.substr(p.size());
        std::string name = rest.substr(0, rest.find('/'));
        if (out.empty() || out.back() != name) out.push_back(name);
    }
    return out;
}

std::map<std::string, Bytes> MemoryStore::snapshot() const {
    std::lock_guard lk(mu_);
    return data_;
}

// ------------------------------------------------------------ FileStore
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
}

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

std::optional<Bytes> FileStore::get(const std::string& key) {
    ObjectVersion ignored;
    return get_versioned(key, ignored);
}

std::optional<Bytes> FileStore::get_versioned(const std::string& key, ObjectVersion& version) {
    // A whole value is a chunk or shard: at most the decoded-chunk cap.
    return get_bounded_versioned(key, max_decoded_chunk_bytes(), version);
}

std::optional<Bytes> FileStore::get_bounded(const std::string& key, uint64_t limit) {
    ObjectVersion ignored;
    return get_bounded_versioned(key, limit, ignored);
}

// The size comes from fstat of the open file, checked against `limit` before
// the buffer is allocated (a sparse file may claim gigabytes it never holds).
std::optional<Bytes> FileStore::get_bounded_versioned(const std::string& key, uint64_t limit,
                                                      ObjectVersion& version) {
    version = {};
    const std::string p = path_of(key);
    Fd f{::open(p.c_str(), O_RDONLY | O_CLOEXEC)};
    if (f.fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
        throw Error(p + ": cannot open (" + std::strerror(errno) + ")");
    }
    for (int attempt = 0; attempt < kFileReadAttempts; ++attempt) {
        struct stat st {};
        if (::fstat(f.fd, &st) != 0) throw Error(p + ": cannot stat");
        if (S_ISDIR(st.st_mode)) return std::nullopt;
        if (static_cast<uint64_t>(st.st_size) > limit)
            throw_too_large(p, static_cast<uint64_t>(st.st_size), limit);
        Bytes out(static_cast<size_t>(st.st_size));
        read_exact(f.fd, out.data(), out.size(), 0, p);
        struct stat after {};
        if (::fstat(f.fd, &after) != 0) throw Error(p + ": cannot stat");
        version = file_version(after);
        if (version == file_version(st)) return out;
    }
    throw ObjectChanged(p + ": the file changed while it was read (" +
                        std::to_string(kFileReadAttempts) + " attempts)");
}

std::optional<std::vector<Bytes>> FileStore::get_ranges(const std::string& key,
                                                        const std::vector<ByteRange>& ranges) {
    std::optional<uint64_t> total;
    return get_ranges_sized(key, ranges, total);
}

std::optional<std::vector<Bytes>> FileStore::get_ranges_sized(const std::string& key,
                                                              const std::vector<ByteRange>& ranges,
                                                              std::optional<uint64_t>& total) {
    ObjectVersion ignored;
    return get_ranges_versioned(key, ranges, total, ignored);
}

std::optional<std::vector<Bytes>>
FileStore::get_ranges_versioned(const std::string& key, const std::vector<ByteRange>& ranges,
                                std::optional<uint64_t>& total, ObjectVersion& version) {
    total.reset();
    version = {};
    const std::string p = path_of(key);
    Fd f{::open(p.c_str(), O_RDONLY | O_CLOEXEC)};
    if (f.fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
        throw Error(p + ": cannot open (" + std::strerror(errno) + ")");
    }
    for (int attempt = 0; attempt < kFileReadAttempts; ++attempt) {
        struct stat st {};
        if (::fstat(f.fd, &st) != 0 || S_ISDIR(st.st_mode)) return std::nullopt;
        const uint64_t size = static_cast<uint64_t>(st.st_size);
        std::vector<Bytes> out;
        out.reserve(ranges.size());
        for (const auto& r : ranges) {
            const uint64_t off = range_start(r, size, p);
            Bytes b(range_length(r));
            read_exact(f.fd, b.data(), b.size(), off, p);
            out.push_back(std::move(b));
        }
        struct stat after {};
        if (::fstat(f.fd, &after) != 0) throw Error(p + ": cannot stat");
        version = file_version(after);
        if (version == file_version(st)) {
            total = size;
            return out;
        }
    }
    throw ObjectChanged(p + ": the file changed while it was read (" +
                        std::to_string(kFileReadAttempts) + " attempts)");
}

std::optional<uint64_t> FileStore::size(const std::string& key) {
    struct stat st {};
    if (::stat(path_of(key).c_str(), &st) != 0 || S_ISDIR(st.st_mode)) return std::nullopt;
    return static_cast<uint64_t>(st.st_size);
}

void FileStore::put(const std::string& key, ByteView value) {
    if (!writable_) throw Error(root_ + ": store is read-only");
    const std::string p = path_of(key);
    std::error_code ec;
    fs::create_directories(fs::path(p).parent_path(), ec);
    if (ec) throw Error(p + ": cannot create folder (" + ec.message() + ")");
    write_atomically(p, value, posix_write_ops());
}

void FileStore::erase(const std::string& key) {
    if (!writable_) throw Error(root_ + ": store is read-only");
    const std::string p = path_of(key);
    if (::unlink(p.c_str()) != 0 && errno != ENOENT && errno != ENOTDIR)
        throw Error(p + ": cannot delete (" + std::strerror(errno) + ")");
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

// ------------------------------------------------------------ CountingStore
std::optional<Bytes> CountingStore::get(const std::string& key) {
    auto r = inner_->get(key);
    std::lock_guard lk(mu_);
    ++c_.gets;
    if (r) c_.bytes += r->size();
    log_.push_back("get " + key);
    return r;
}

std::optional<std::vector<Bytes>> CountingStore::get_ranges(const std::string& key,
                                                            const std::vector<ByteRange>& ranges) {
    std::optional<uint64_t> total;
    return get_ranges_sized(key, ranges, total);
}

std::optional<std::vector<Bytes>>
CountingStore::get_ranges_sized(const std::string& key, const std::vector<ByteRange>& ranges,
                                std::optional<uint64_t>& total) {
    auto r = inner_->get_ranges_sized(key, ranges, total);
    count_ranges(key, ranges, r);
    return r;
}

void CountingStore::count_ranges(const std::string& key, const std::vector<ByteRange>& ranges,
                                 const std::optional<std::vector<Bytes>>& r) {
    std::lock_guard lk(mu_);
    ++c_.range_calls;
    c_.ranges += ranges.size();
    std::string line = "ranges " + key;
    for (const auto& br : ranges)
        line += " " + range_text(br);
    log_.push_back(line);
    if (r)
        for (const auto& b : *r)
            c_.bytes += b.size();
}

std::optional<uint64_t> CountingStore::size(const std::string& key) {
    std::lock_guard lk(mu_);
    ++c_.sizes;
    log_.push_back("size " + key);
    return inner_->size(key);
}

std::optional<Bytes> CountingStore::get_bounded(const std::string& key, uint64_t limit) {
    auto r = inner_->get_bounded(key, limit);
    std::lock_guard lk(mu_);
    ++c_.gets;
    if (r) c_.bytes += r->size();
    log_.push_back("get " + key);
    return r;
}

std::optional<Bytes> CountingStore::get_bounded_versioned(const std::string& key, uint64_t limit,
                                                          ObjectVersion& version) {
    auto r = inner_->get_bounded_versioned(key, limit, version);
    std::lock_guard lk(mu_);
    ++c_.gets;
    if (r) c_.bytes += r->size();
    log_.push_back("get " + key);
    return r;
}

std::optional<Bytes> CountingStore::get_versioned(const std::string& key, ObjectVersion& version) {
    auto r = inner_->get_versioned(key, version);
    std::lock_guard lk(mu_);
    ++c_.gets;
    if (r) c_.bytes += r->size();
    log_.push_back("get " + key);
    return r;
}

std::optional<std::vector<Bytes>>
CountingStore::get_ranges_versioned(const std::string& key, const std::vector<ByteRange>& ranges,
                                    std::optional<uint64_t>& total, ObjectVersion& version) {
    auto r = inner_->get_ranges_versioned(key, ranges, total, version);
    count_ranges(key, ranges, r);
    return r;
}

void CountingStore::put(const std::string& key, ByteView value) {
    inner_->put(key, value);
    std::lock_guard lk(mu_);
    ++c_.puts;
    log_.push_back("put " + key);
}

void CountingStore::erase(const std::string& key) {
    inner_->erase(key);
    std::lock_guard lk(mu_);
    log_.push_back("erase " + key);
}

std::vector<std::string> CountingStore::list_dir(const std::string& prefix) {
    {
        std::lock_guard lk(mu_);
        ++c_.lists;
        log_.push_back("list " + prefix);
    }
    return inner_->list_dir(prefix);
}

CountingStore::Counts CountingStore::counts() const {
    std::lock_guard lk(mu_);
    return c_;
}

void CountingStore::reset() {
    std::lock_guard lk(mu_);
    c_ = {};
    log_.clear();
}

std::vector<std::string> CountingStore::log() const {
    std::lock_guard lk(mu_);
    return log_;
}

} // namespace zarr3
