// VSIStore: the Zarr key/value store over GDAL VSI file handles.
#include "storage/vsi_store.hpp"

#include "storage/conditional_put.hpp"

#include "zarr3/chunk_cache.hpp"
#include "zarr3/limits.hpp"
#include "zarr3/spare_bytes.hpp"

#include <mutex>

#include "cpl_conv.h"
#include "cpl_error.h"
#include "cpl_string.h"
#include "cpl_vsi.h"
#include "cpl_vsi_error.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace zarr3drv {

namespace {

struct VSIFileCloser {
    void operator()(VSILFILE* fp) const {
        if (fp) VSIFCloseL(fp);
    }
};
using VSIFilePtr = std::unique_ptr<VSILFILE, VSIFileCloser>;

// Size of an open file (seek to the end).
uint64_t file_size(VSILFILE* fp, const std::string& key) {
    if (VSIFSeekL(fp, 0, SEEK_END) != 0)
        throw zarr3::Error(key + ": cannot seek to the end of the file");
    return static_cast<uint64_t>(VSIFTellL(fp));
}

void read_exact(VSILFILE* fp, uint64_t offset, uint8_t* dst, uint64_t len, const std::string& key) {
    if (VSIFSeekL(fp, static_cast<vsi_l_offset>(offset), SEEK_SET) != 0)
        throw zarr3::Error(key + ": cannot seek to offset " + std::to_string(offset));
    if (len == 0) return;
    const size_t got = VSIFReadL(dst, 1, static_cast<size_t>(len), fp);
    if (got != len)
        throw zarr3::FormatError(key + ": short read (" + std::to_string(got) + " of " +
                                 std::to_string(len) + " bytes at offset " +
                                 std::to_string(offset) + ")");
}

bool is_file(const std::string& path) {
    VSIStatBufL st;
    if (VSIStatExL(path.c_str(), &st, VSI_STAT_EXISTS_FLAG | VSI_STAT_NATURE_FLAG) != 0)
        return false;
    return !VSI_ISDIR(st.st_mode);
}

// Whether a failed remote open means "no such object" (HTTP 404/410, S3/GCS
// NoSuchKey, Azure BlobNotFound) rather than an error (403, 5xx, no network).
bool remote_not_found(int err, const std::string& msg) {
    if (err == VSIE_None || err == VSIE_FileError || err == VSIE_AWSObjectNotFound) return true;
    for (const char* s : {"response code: 404", "response code: 410", "404 Not Found", "NoSuchKey",
                          "BlobNotFound", "The specified key does not exist"})
        if (msg.find(s) != std::string::npos) return true;
    return false;
}

// Opens `path` for reading; null when the object is absent, Error when it
// cannot be read for another reason. Remote paths never stat or list after a
// failed open: GDAL's error for the open request tells 404 from the rest.
VSIFilePtr open_read(const std::string& path, bool remote) {
    if (!remote) {
        VSIFilePtr fp(VSIFOpenL(path.c_str(), "rb"));
        if (!fp && is_file(path)) throw zarr3::Error(path + ": cannot open for reading");
        return fp;
    }
    VSIFilePtr fp;
    int err = VSIE_None;
    std::string msg;
    {
        CPLErrorStateBackuper keep_state;
        CPLErrorHandlerPusher quiet(CPLQuietErrorHandler);
        VSIErrorReset();
        fp.reset(VSIFOpenExL(path.c_str(), "rb", TRUE));
        if (!fp) {
            err = VSIGetLastErrorNo();
            msg = VSIGetLastErrorMsg();
        }
    }
    if (fp || remote_not_found(err, msg)) return fp;
    if (msg.size() > 300) msg = msg.substr(0, 300) + "...";
    throw zarr3::Error(path + ": cannot read: " + msg);
}

} // namespace

void VSIStore::sweep_stale_temp_files(const std::string& dir) {
    if (remote_ || STARTS_WITH(root_.c_str(), "/vsi")) return; // local folders only
    {
        std::lock_guard lk(swept_mu_);
        if (!swept_dirs_.insert(dir).second) return;
    }
    const CPLStringList names(VSIReadDir(dir.c_str()));
    for (int i = 0; i < names.size(); ++i) {
        const long pid = zarr3::temp_file_pid(names[i]);
        if (pid <= 0 || pid == static_cast<long>(getpid())) continue;
        // Only a writer that no longer exists: never a file being written.
        if (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
        VSIUnlink((dir + "/" + names[i]).c_str());
    }
}

bool IsRemoteVSIPath(const std::string& path) {
    for (const char* fs :
         {"/vsicurl/", "/vsicurl?", "/vsis3/", "/vsigs/", "/vsiaz/", "/vsiadls/", "/vsioss/",
          "/vsiswift/", "/vsiwebhdfs/", "/vsihdfs/", "/vsicurl_streaming/", "/vsis3_streaming/",
          "/vsigs_streaming/", "/vsiaz_streaming/", "/vsioss_streaming/", "/vsiswift_streaming/"})
        if (path.find(fs) != std::string::npos) return true;
    return false;
}

NoDirListingScope::NoDirListingScope(const std::string& path) {
    if (IsRemoteVSIPath(path))
        setter_ = std::make_unique<CPLConfigOptionSetter>("GDAL_DISABLE_READDIR_ON_OPEN",
                                                          "EMPTY_DIR", false);
}

NoDirListingScope::~NoDirListingScope() = default;

VSIStore::VSIStore(std::string root, bool writable)
    : root_(std::move(root)), writable_(writable), remote_(IsRemoteVSIPath(root_)), guard_([&] {
          while (root_.size() > 1 && root_.back() == '/')
              root_.pop_back();
          return root_;
      }()) {
    if (remote_) http_ = HttpDirect::ForRoot(root_);
}

std::string VSIStore::path_of(const std::string& key) const {
    if (key.empty()) return root_;
    zarr3::validate_key(key);
    return root_ + "/" + key;
}

std::optional<zarr3::ReadResult> VSIStore::read(const zarr3::ReadRequest& request) {
    switch (request.kind) {
    case zarr3::ReadRequest::Kind::Value:
        return read_value(request.key, request.limit.value_or(zarr3::max_decoded_chunk_bytes()),
                          request.fresh);
    case zarr3::ReadRequest::Kind::Ranges:
        return read_ranges(request.key, request.ranges);
    case zarr3::ReadRequest::Kind::Size:
        break;
    }
    const auto n = read_size(request.key);
    if (!n) return std::nullopt;
    return zarr3::ReadResult{{}, n, {}};
}

namespace {
bool is_meta_key(const std::string& key) {
    constexpr std::string_view name = "zarr.json";
    return key == name || (key.size() > name.size() && key.ends_with(name) &&
                           key[key.size() - name.size() - 1] == '/');
}
constexpr uint64_t kMetaCacheBytes = 16ull << 20;
constexpr size_t kMaxWatchedVersions = 65536;
} // namespace

namespace {
// A local file's identity in nanoseconds: device, inode, size, mtime, ctime.
zarr3::ObjectVersion file_version(const struct stat& st) {
    return zarr3::ObjectVersion{
        "file:" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
        std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
        std::to_string(st.st_mtim.tv_nsec) + ":" + std::to_string(st.st_ctim.tv_sec) + "." +
        std::to_string(st.st_ctim.tv_nsec)};
}
} // namespace

zarr3::ObjectVersion VSIStore::stat_version(const std::string& path, VSILFILE* fp) const {
    if (!remote_ && !STARTS_WITH(path.c_str(), "/vsi")) {
        // A real local file: POSIX stat for the identity in nanoseconds, of
        // the open file itself when GDAL gives its descriptor.
        struct stat st {};
        int rc = -1;
        if (fp != nullptr)
            if (void* h = VSIFGetNativeFileDescriptorL(fp))
                rc = ::fstat(static_cast<int>(reinterpret_cast<intptr_t>(h)), &st);
        if (rc != 0) rc = ::stat(path.c_str(), &st);
        if (rc != 0 || !S_ISREG(st.st_mode)) return {};
        return file_version(st);
    }
    if (remote_ && fp == nullptr) return {}; // a stat would be a request
    // Other file systems (/vsimem/, /vsizip/, remote through VSI, where GDAL
    // answers from what it learnt opening the file): size and time.
    VSIStatBufL st;
    if (VSIStatExL(path.c_str(), &st, VSI_STAT_EXISTS_FLAG | VSI_STAT_SIZE_FLAG) != 0 ||
        st.st_mtime == 0)
        return {};
    return zarr3::ObjectVersion{"vsi:" + std::to_string(st.st_size) + ":" +
                                std::to_string(static_cast<long long>(st.st_mtime))};
}

std::shared_ptr<const zarr3::Bytes> VSIStore::cached_meta(const std::string& key,
                                                          zarr3::ObjectVersion* version) {
    if (!is_meta_key(key)) return nullptr;
    MetaEntry hit;
    {
        std::lock_guard lk(meta_mu_);
        const auto it = meta_.find(key);
        if (it == meta_.end()) return nullptr;
        hit = it->second;
    }
    // Local and in-memory files: used only while a stat shows the version
    // it was read from. Remote: kept for the life of this store (one open).
    const std::string path = path_of(key);
    if (!remote_ && (guard_.active() ? local_version(path) != hit.version
                                     : stat_version(path, nullptr) != hit.version)) {
        forget_meta(key);
        return nullptr;
    }
    if (version) *version = hit.version;
    return hit.bytes;
}

std::optional<zarr3::ObjectVersion> VSIStore::local_version(const std::string& path) {
    auto& watch = zarr3::ChangeWatch::process();
    {
        std::lock_guard lk(watched_mu_);
        const auto it = watched_.find(path);
        if (it != watched_.end()) {
            if (watch.unchanged(it->second.token)) return it->second.version;
            watched_.erase(it);
        }
    }
    // Armed before the stat: a change after it is reported.
    const auto token = watch.arm(path);
    // The guard's one lstat (a stat for a link it follows) is the version.
    struct stat st {};
    bool linked = false;
    std::optional<zarr3::ObjectVersion> version;
    if (guard_.check_read(path, &st, &linked)) version = file_version(st);
    if (token && !linked && (!version || st.st_nlink == 1)) {
        std::lock_guard lk(watched_mu_);
        if (watched_.size() >= kMaxWatchedVersions) watched_.clear();
        watched_[path] = WatchedVersion{*token, version};
    }
    return version;
}

void VSIStore::remember_meta(const std::string& key, const zarr3::Bytes& value,
                             const zarr3::ObjectVersion& version) {
    if (!is_meta_key(key)) return;
    if (!remote_ && !version.known()) return; // could not be revalidated
    forget_meta(key);
    std::lock_guard lk(meta_mu_);
    if (meta_.count(key) || meta_bytes_ + value.size() > kMetaCacheBytes) return;
    meta_bytes_ += value.size();
    meta_.emplace(key, MetaEntry{std::make_shared<const zarr3::Bytes>(value), version});
}

void VSIStore::forget_meta(const std::string& key) {
    std::lock_guard lk(meta_mu_);
    const auto it = meta_.find(key);
    if (it == meta_.end()) return;
    meta_bytes_ -= it->second.bytes->size();
    meta_.erase(it);
}

template <class F> bool VSIStore::try_direct(F&& request) {
    if (!http_) return false;
    try {
        request(*http_);
        return true;
    } catch (const HttpDirect::Unusable& e) {
        CPLDebug("Zarr3", "%s; reading through VSI", e.what());
        return false;
    }
}

std::optional<zarr3::ReadResult> VSIStore::read_value(const std::string& key, uint64_t limit,
                                                      bool fresh) {
    zarr3::ObjectVersion version;
    const std::string path = path_of(key);
    // A local cache entry is revalidated by a stat: fresh already.
    fresh = fresh && remote_;
    if (fresh) VSICurlPartialClearCache(path.c_str()); // what GDAL kept of it
    if (const auto hit = fresh ? nullptr : cached_meta(key, &version)) {
        if (hit->size() > limit) zarr3::throw_too_large(path, hit->size(), limit);
        return zarr3::ReadResult{{*hit}, hit->size(), version};
    }
    std::optional<zarr3::Bytes> out;
    if (!try_direct([&](HttpDirect& h) { out = h.get(path, limit, &version); })) {
        const NoDirListingScope no_listing(root_);
        if (!guard_.check_read(path)) return std::nullopt;
        VSIFilePtr fp = open_read(path, remote_);
        if (!fp) return std::nullopt;
        const uint64_t n = file_size(fp.get(), path);
        if (n > limit) zarr3::throw_too_large(path, n, limit);
        out.emplace(zarr3::take_spare_bytes(static_cast<size_t>(n)));
        read_exact(fp.get(), 0, out->data(), n, path);
        version = stat_version(path, fp.get());
    }
    if (!out) return std::nullopt;
    remember_meta(key, *out, version);
    const uint64_t n = out->size();
    zarr3::ReadResult result{{}, n, std::move(version)};
    result.data.push_back(std::move(*out));
    return result;
}

std::optional<zarr3::ReadResult>
VSIStore::read_ranges(const std::string& key, const std::vector<zarr3::ByteRange>& ranges) {
    std::optional<uint64_t> total;
    zarr3::ObjectVersion version;
    const std::string path = path_of(key);
    if (ranges.empty() && !remote_) {
        // No bytes (a version check before a cached decoded chunk or shard
        // index is used): a stat of local and /vsimem/ files, no open.
        if (guard_.active()) {
            auto local = local_version(path);
            if (!local) return std::nullopt;
            return zarr3::ReadResult{{}, std::nullopt, std::move(*local)};
        }
        const NoDirListingScope no_listing(root_);
        if (!guard_.check_read(path)) return std::nullopt;
        version = stat_version(path, nullptr);
        if (!version.known() && !is_file(path)) return std::nullopt;
        return zarr3::ReadResult{{}, std::nullopt, std::move(version)};
    }
    for (const auto& r : ranges)
        if (zarr3::range_length(r) > zarr3::kMaxChunkBytes)
            throw zarr3::FormatError(path + ": byte range of " +
                                     std::to_string(zarr3::range_length(r)) +
                                     " bytes exceeds the limit");
    std::optional<std::vector<zarr3::Bytes>> direct;
    if (try_direct([&](HttpDirect& h) { direct = h.get_ranges(path, ranges, total, &version); })) {
        if (!direct) return std::nullopt;
        return zarr3::ReadResult{std::move(*direct), total, std::move(version)};
    }
    total.reset();
    version = {};
    const NoDirListingScope no_listing(root_);
    if (!guard_.check_read(path)) return std::nullopt;
    VSIFilePtr fp = open_read(path, remote_);
    if (!fp) return std::nullopt;
    const uint64_t n = file_size(fp.get(), path);
    total = n;
    std::vector<zarr3::Bytes> out(ranges.size());
    std::vector<uint64_t> offsets(ranges.size());
    for (size_t i = 0; i < ranges.size(); ++i) {
        const auto& r = ranges[i];
        offsets[i] = zarr3::range_start(r, n, path);
        out[i] = zarr3::take_spare_bytes(static_cast<size_t>(zarr3::range_length(r)));
    }
    if (ranges.size() == 1) {
        read_exact(fp.get(), offsets[0], out[0].data(), out[0].size(), path);
        return zarr3::ReadResult{std::move(out), total, stat_version(path, fp.get())};
    }
    // Several ranges: let the file system coalesce them (one HTTP multi-range
    // request for /vsicurl/). Zero-length ranges are skipped.
    std::vector<void*> ptrs;
    std::vector<vsi_l_offset> offs;
    std::vector<size_t> sizes;
    for (size_t i = 0; i < ranges.size(); ++i) {
        if (out[i].empty()) continue;
        ptrs.push_back(out[i].data());
        offs.push_back(static_cast<vsi_l_offset>(offsets[i]));
        sizes.push_back(out[i].size());
    }
    if (!ptrs.empty() && VSIFReadMultiRangeL(static_cast<int>(ptrs.size()), ptrs.data(),
                                             offs.data(), sizes.data(), fp.get()) != 0)
        throw zarr3::Error(path + ": reading " + std::to_string(ptrs.size()) +
                           " byte ranges failed");
    return zarr3::ReadResult{std::move(out), total, stat_version(path, fp.get())};
}

bool VSIStore::is_vsimem() const {
    return root_.rfind("/vsimem/", 0) == 0;
}

zarr3::StoreCapabilities VSIStore::capabilities() const {
    zarr3::StoreCapabilities c;
    c.writable = writable_;
    c.request_threads = true;
    c.locks = writable_ && (guard_.active() || is_vsimem());
    c.conditional_put = conditional_put();
    if (http_)
        c.max_in_flight = static_cast<size_t>(
            std::clamp(atoi(CPLGetConfigOption("ZARR3_HTTP_MAX_IN_FLIGHT", "128")), 1, 1024));
    return c;
}

void VSIStore::run_requests(size_t threads, const std::function<void()>& worker) {
    // Helper threads see the caller's thread-local configuration (GDAL_HTTP_*
    // set with gdal.config_options, credentials, ZARR3_* options). Callers
    // bound `threads` (max_in_flight for reads, 2 for write-behind).
    const CPLStringList local(CPLGetThreadLocalConfigOptions(), TRUE);
    zarr3::run_on_threads(std::min<size_t>(threads, 1024), worker,
                          [&](const std::function<void()>& run) {
                              CPLSetThreadLocalConfigOptions(local.List());
                              run();
                              CPLSetThreadLocalConfigOptions(nullptr);
                          });
}

std::optional<uint64_t> VSIStore::read_size(const std::string& key) {
    const std::string path = path_of(key);
    if (const auto hit = cached_meta(key)) return hit->size();
    std::optional<uint64_t> direct;
    if (try_direct([&](HttpDirect& h) { direct = h.size(path); })) return direct;
    const NoDirListingScope no_listing(root_);
    if (remote_) {
        // One request (HEAD, or a first-block GET for /vsis3/ and co) whose
        // answer GDAL caches for the following get(); a stat of a missing S3
        // key would also list its "folder".
        VSIFilePtr fp = open_read(path, true);
        if (!fp) return std::nullopt;
        return file_size(fp.get(), path);
    }
    if (!guard_.check_read(path)) return std::nullopt;
    VSIStatBufL st;
    if (VSIStatExL(path.c_str(), &st,
                   VSI_STAT_EXISTS_FLAG | VSI_STAT_NATURE_FLAG | VSI_STAT_SIZE_FLAG) != 0)
        return std::nullopt;
    if (VSI_ISDIR(st.st_mode)) return std::nullopt;
    return static_cast<uint64_t>(st.st_size);
}

namespace {
// The OS error text of the call that just failed: errno for local files,
// GDAL's VSI error message otherwise.
// Local folders: each missing level made with mkdir(2), so that the error is
// the OS cause at the level that failed (GDAL 3.13's VSIMkdirRecursive leaves
// errno at ENOENT when a parent is not writable). "" when made.
std::string MakeLocalFolders(const std::string& dir) {
    std::vector<std::string> missing;
    std::string p = dir;
    struct stat st;
    while (!p.empty() && p != "/" && ::stat(p.c_str(), &st) != 0) {
        missing.push_back(p);
        const size_t slash = p.find_last_of('/');
        if (slash == std::string::npos) break;
        p = slash == 0 ? std::string("/") : p.substr(0, slash);
    }
    for (auto it = missing.rbegin(); it != missing.rend(); ++it)
        if (::mkdir(it->c_str(), 0755) != 0 && errno != EEXIST) return std::strerror(errno);
    return {};
}

std::string os_error(int err) {
    if (err != 0) return std::strerror(err);
    const char* m = VSIGetLastErrorMsg();
    return m && *m ? std::string(m) : std::string("unknown error");
}
} // namespace

std::string VSIStore::write_file(const std::string& path, zarr3::ByteView value) {
    errno = 0;
    VSIErrorReset();
    VSIFilePtr fp(VSIFOpenExL(path.c_str(), "wb", TRUE));
    if (!fp) return os_error(errno);
    errno = 0;
    if (!value.empty() && VSIFWriteL(value.data(), 1, value.size(), fp.get()) != value.size())
        return os_error(errno);
    errno = 0;
    if (VSIFCloseL(fp.release()) != 0) return os_error(errno);
    return {};
}

void VSIStore::put(const std::string& key, zarr3::ByteView value) {
    if (!writable_) throw zarr3::Error(root_ + ": store is opened read-only, cannot write " + key);
    const zarr3::ChunkCache::WriteNote note{key};
    forget_meta(key);
    const NoDirListingScope no_listing(root_);
    const std::string path = path_of(key);
    guard_.check_write(path);
    const std::string dir = CPLGetPath(path.c_str());
    if (!dir.empty()) {
        // Chunks are written from several threads: VSIMkdirRecursive gives up
        // when another thread creates an intermediate folder first, so folder
        // creation is serialised. Object stores have no folders: failure is
        // ignored there (the write below reports real problems); on local
        // files it is the error, naming the OS cause (Permission denied),
        // not the temporary file's "No such file or directory" that follows.
        static std::mutex mkdir_mu;
        std::lock_guard lk(mkdir_mu);
        VSIStatBufL st;
        if (VSIStatL(dir.c_str(), &st) != 0) {
            if (IsPosixPath(root_)) {
                const std::string err = MakeLocalFolders(dir);
                if (!err.empty() && VSIStatL(dir.c_str(), &st) != 0)
                    throw zarr3::Error(dir + ": cannot create the folder (" + err + ")");
            } else {
                VSIMkdirRecursive(dir.c_str(), 0755);
            }
        }
    }
    sweep_stale_temp_files(dir.empty() ? root_ : dir);
    // Object stores cannot rename (and a PUT is atomic there): write the
    // object directly when the rename is refused. Never on local files.
    const bool may_write_directly = !IsPosixPath(root_) && !STARTS_WITH(root_.c_str(), "/vsimem/");
    static const zarr3::AtomicWriteOps ops{
        &VSIStore::write_file,
        [](const std::string& from, const std::string& to) -> std::string {
            errno = 0;
            VSIErrorReset();
            if (VSIRename(from.c_str(), to.c_str()) != 0) return os_error(errno);
            return {};
        },
        [](const std::string& tmp) { VSIUnlink(tmp.c_str()); }};
    try {
        CPLErrorStateBackuper keep_state;
        CPLErrorHandlerPusher quiet(CPLQuietErrorHandler);
        zarr3::write_atomically(path, value, ops);
    } catch (const zarr3::Error&) {
        if (!may_write_directly) throw;
        if (const std::string err = write_file(path, value); !err.empty())
            throw zarr3::Error(path + ": write failed (" + err + ")");
    }
}

bool VSIStore::conditional_put() const {
    return writable_ && http_ && TakesConditionalPut(root_);
}

zarr3::PutResult VSIStore::put_if(const std::string& key, zarr3::ByteView value,
                                  const zarr3::Precondition& condition) {
    if (!conditional_put()) return zarr3::Store::put_if(key, value, condition);
    const std::string path = path_of(key);
    const auto header = ConditionHeader(root_, condition);
    if (!header)
        throw zarr3::Error(path + ": cannot replace it conditionally: the version read (" +
                           condition.version.token +
                           ") holds no validator the storage takes a condition on (ETag, "
                           "generation); nothing was written");
    if (value.size() > SinglePutLimit(root_))
        throw zarr3::Error(path + ": a conditional write of " + std::to_string(value.size()) +
                           " bytes is above what one PUT of this storage takes (" +
                           std::to_string(SinglePutLimit(root_)) + " bytes); nothing was written");
    CheckConditionsHonoured(root_);
    const zarr3::ChunkCache::WriteNote note{key};
    forget_meta(key);
    const std::string error = PutWithCondition(root_, path, value, *header);
    if (error.empty()) return zarr3::PutResult::Written;
    return resolve_failed_put(key, value, condition, error);
}

zarr3::PutResult VSIStore::resolve_failed_put(const std::string& key, zarr3::ByteView value,
                                              const zarr3::Precondition& condition,
                                              const std::string& error) {
    zarr3::ObjectVersion now_version;
    const auto now = get_fresh(key, zarr3::kMaxChunkBytes, now_version);
    const bool ours =
        now && now->size() == value.size() && std::equal(value.begin(), value.end(), now->begin());
    const bool held = condition.kind == zarr3::Precondition::Kind::Absent
                          ? !now
                          : now && now_version == condition.version;
    if (held)
        throw zarr3::Error(path_of(key) + ": conditional write failed (" + error +
                           "); nothing was written");
    return ours ? zarr3::PutResult::Written : zarr3::PutResult::PreconditionFailed;
}

void VSIStore::erase(const std::string& key) {
    const NoDirListingScope no_listing(root_);
    if (!writable_) throw zarr3::Error(root_ + ": store is opened read-only, cannot erase " + key);
    const zarr3::ChunkCache::WriteNote note{key};
    forget_meta(key);
    const std::string path = path_of(key);
    guard_.check_write(path);
    if (!is_file(path)) return;
    if (VSIUnlink(path.c_str()) != 0)
        throw zarr3::Error(path + ": cannot delete (" + os_error(errno) + ")");
}

std::unique_ptr<zarr3::StoreLock> VSIStore::lock(const std::string& key) {
    if (!writable_) return nullptr;
    const std::string path = path_of(key);
    // /vsimem/ lives in this process: a lock among its threads is enough.
    if (is_vsimem()) return zarr3::lock_in_process(path);
    if (!guard_.active()) return nullptr;
    guard_.check_write(path);
    return zarr3::lock_local_file(path + ".lock");
}

std::vector<std::string> VSIStore::list_dir(const std::string& prefix) {
    std::string p = prefix;
    while (!p.empty() && p.back() == '/')
        p.pop_back();
    const std::string path = path_of(p);
    CPLStringList names(VSIReadDir(path.c_str()));
    std::vector<std::string> out;
    for (int i = 0; i < names.size(); ++i) {
        const std::string n = names[i];
        if (n.empty() || n == "." || n == "..") continue;
        out.push_back(n);
    }
    return out;
}

} // namespace zarr3drv
