// zarr3::Store over GDAL's virtual file systems (local files, /vsimem/,
// /vsicurl/, /vsis3/, /vsizip/, ...).
#pragma once

#include "storage/http_direct.hpp"
#include "storage/path_guard.hpp"
#include "zarr3/change_watch.hpp"
#include "zarr3/store.hpp"

#include "cpl_vsi.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>

class CPLConfigOptionSetter;

namespace zarr3drv {

// True for paths served by a network file system (/vsicurl/, /vsis3/,
// /vsigs/, /vsiaz/, ...), also when chained (/vsizip//vsicurl/...).
bool IsRemoteVSIPath(const std::string& path);

// While alive, and on remote paths only, sets GDAL_DISABLE_READDIR_ON_OPEN to
// EMPTY_DIR in this thread (restored afterwards): opening or stat'ing a
// known object then costs one request for that object instead of also
// listing its parent "directory". No effect on local paths.
class NoDirListingScope {
  public:
    explicit NoDirListingScope(const std::string& path);
    ~NoDirListingScope();
    NoDirListingScope(const NoDirListingScope&) = delete;
    NoDirListingScope& operator=(const NoDirListingScope&) = delete;

  private:
    std::unique_ptr<CPLConfigOptionSetter> setter_;
};

class VSIStore : public zarr3::Store {
  public:
    // `root` is the store folder or URL; a trailing "/" is dropped.
    // Remote roots (IsRemoteVSIPath) never list a folder to open a known key;
    // a missing object (HTTP 404) reads as absent.
    explicit VSIStore(std::string root, bool writable = false);

    std::string uri() const override { return root_; }
    // Whole values: the size (fstat, HTTP headers, GDAL's HEAD) is checked
    // against the limit before the buffer is allocated; with no limit, the
    // decoded-chunk cap (ZARR3_MAX_CHUNK_BYTES); one request on HTTP stores
    // (the size comes with the value). Byte ranges also report the object's
    // size: GDAL learnt it when opening the object (local stat, HTTP HEAD or
    // first-block GET), so it costs no request.
    // Versions: local files: device, inode, size, mtime and ctime (ns) of the
    // file read; HTTP (direct): ETag or Last-Modified plus size of the
    // answer; other file systems: size and modification time (VSIStatL).
    std::optional<zarr3::ReadResult> read(const zarr3::ReadRequest& request) override;
    // Direct HTTP stores (HttpDirect): max_in_flight is
    // ZARR3_HTTP_MAX_IN_FLIGHT (default 128, 1 .. 1024) requests at once; 1
    // for every other store. Every VSI store has request threads.
    zarr3::StoreCapabilities capabilities() const override;
    // Direct HTTP stores: `worker` on up to `threads` threads (the caller's
    // and new ones), each with a copy of the calling thread's thread-local
    // configuration (GDAL_HTTP_*, credentials, ZARR3_*); its requests go
    // through GDAL's HTTP layer. Once, on the caller's thread, elsewhere.
    void run_requests(size_t threads, const std::function<void()>& worker) override;
    // Writes "<key>.tmp.<host>.<pid>.<n>" then renames it into place
    // (zarr3::write_atomically, shared with FileStore). On
    // local and /vsimem/ stores a failure (full disk, read-only file system,
    // no permission) removes the temporary file, keeps the old value and
    // throws zarr3::Error naming the file with the OS error text; only
    // object stores, which cannot rename, write the object directly (one
    // PUT, atomic there). On local stores the first write into a folder
    // removes the temporary files that writers of this host killed before
    // their rename left there. Local stores never write through a symbolic
    // link leading outside the root (PathGuard).
    void put(const std::string& key, zarr3::ByteView value) override;
    // Local and /vsimem/ stores: under lock() (zarr3::Store::put_if). Object
    // storages that take conditions with a PUT (TakesConditionalPut: /vsis3/,
    // /vsiaz/, /vsigs/): one PUT to GDAL's signed URL with the storage's
    // condition header (If-None-Match: * / If-Match: <ETag read>; GCS:
    // x-goog-if-generation-match: 0 / <generation read>), after a
    // once-per-process probe that the storage honours both
    // (CheckConditionsHonoured). A PUT that failed is resolved by a fresh
    // read: the value stored is ours (a lost answer): Written; another value:
    // PreconditionFailed; the condition still holds: Error with the answer.
    // Elsewhere Error (no lock, no condition).
    zarr3::PutResult put_if(const std::string& key, zarr3::ByteView value,
                            const zarr3::Precondition& condition) override;
    void erase(const std::string& key) override;
    // Local stores: an fcntl lock on "<key>.lock" beside the value (removed
    // on release); /vsimem/: a lock among this process's threads
    // (zarr3::lock_in_process); nullptr elsewhere (object stores: the last
    // writer of a plain put wins; put_if and compare_and_swap use the
    // storage's conditions where it takes them, and are refused elsewhere).
    std::unique_ptr<zarr3::StoreLock> lock(const std::string& key) override;
    std::vector<std::string> list_dir(const std::string& prefix) override;

    std::string path_of(const std::string& key) const;

  private:
    bool is_vsimem() const;
    bool conditional_put() const;
    // Written or PreconditionFailed after a conditional PUT that failed with
    // `error`, from what is stored now; Error when the condition still holds.
    zarr3::PutResult resolve_failed_put(const std::string& key, zarr3::ByteView value,
                                        const zarr3::Precondition& condition,
                                        const std::string& error);
    std::optional<zarr3::ReadResult> read_value(const std::string& key, uint64_t limit, bool fresh);
    std::optional<zarr3::ReadResult> read_ranges(const std::string& key,
                                                 const std::vector<zarr3::ByteRange>& ranges);
    std::optional<uint64_t> read_size(const std::string& key);
    // Creates and writes the whole file `path`; "" or the OS error text.
    static std::string write_file(const std::string& path, zarr3::ByteView value);
    std::string root_;
    bool writable_;
    bool remote_;
    // Local roots: reads and writes stay inside the root folder.
    PathGuard guard_;
    // Direct HTTP reads (no HEAD per object) for /vsicurl/ URLs and object
    // stores; a request it cannot use falls back to VSI.
    std::unique_ptr<HttpDirect> http_;
    // Runs `request` on http_; false (the caller reads through VSI) when
    // there is no direct path or the answer was unusable.
    template <class F> bool try_direct(F&& request);
    // The zarr.json documents read through this store (up to 16 MiB in all),
    // so that opening a dataset reads each once; put/erase drop them. Each
    // dataset has its own store: another open sees changes made meanwhile.
    // Each entry keeps the version it was read from; on local and in-memory
    // file systems a hit is used only while one stat shows that version.
    std::shared_ptr<const zarr3::Bytes> cached_meta(const std::string& key,
                                                    zarr3::ObjectVersion* version = nullptr);
    void remember_meta(const std::string& key, const zarr3::Bytes& value,
                       const zarr3::ObjectVersion& version);
    // The version of `path` as a stat shows it now (`fp`: the open file it
    // was read through, when there is one); empty for remote paths without
    // a file (a stat would be a request).
    zarr3::ObjectVersion stat_version(const std::string& path, VSILFILE* fp) const;
    struct MetaEntry {
        std::shared_ptr<const zarr3::Bytes> bytes;
        zarr3::ObjectVersion version;
    };
    void forget_meta(const std::string& key);
    // Local files (guard_ active): the version of `path` now, nullopt when
    // it is absent (or a folder). Reused without a stat while
    // zarr3::ChangeWatch reports nothing for its folder or path (a file
    // that is a symbolic link or has other hard links: a stat each time).
    std::optional<zarr3::ObjectVersion> local_version(const std::string& path);
    struct WatchedVersion {
        zarr3::ChangeWatch::Token token;
        std::optional<zarr3::ObjectVersion> version; // nullopt: absent
    };
    std::mutex watched_mu_;
    std::unordered_map<std::string, WatchedVersion> watched_;
    void sweep_stale_temp_files(const std::string& dir);
    std::mutex swept_mu_;
    std::set<std::string> swept_dirs_;
    std::mutex meta_mu_;
    std::map<std::string, MetaEntry> meta_;
    uint64_t meta_bytes_ = 0;
};

} // namespace zarr3drv
