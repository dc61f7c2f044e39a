// Icechunk repository maintenance (spec 2): expiring old snapshots and
// deleting the objects no remaining snapshot needs (garbage collection),
// with the repository's status set to ReadOnly while either runs, so that
// every other writer (commit, tag, branch, reset, new session) is refused
// with an error naming the status instead of losing data.
#pragma once

#include "zarr3/icechunk_write.hpp"

#include <functional>

namespace zarr3::icechunk {

// Holds the repository ReadOnly (status reason "gdal-zarr3 maintenance:
// WHAT by pid P on host H") from construction to release(). Error when the
// repository is not Online, unless its status is a maintenance of this
// host whose process is gone (a killed expire or gc): that one is taken
// over. The destructor sets Online again when release() was not called
// (after an error), unless another status was set meanwhile.
class MaintenanceLock {
  public:
    MaintenanceLock(std::shared_ptr<Store> storage, const std::string& what);
    ~MaintenanceLock();
    MaintenanceLock(const MaintenanceLock&) = delete;
    MaintenanceLock& operator=(const MaintenanceLock&) = delete;
    // Sets the status back to Online (error when that fails).
    void release();
    // True when the lock took over a killed maintenance's status.
    bool took_over() const { return took_over_; }

  private:
    std::shared_ptr<Store> storage_;
    std::string reason_;
    bool held_ = false, took_over_ = false;
};

struct ExpireResult {
    std::vector<std::string> released; // snapshots removed from the repo file
    std::vector<std::string> edited;   // snapshots given a new parent
};

// Icechunk's expiry (as its expire_v2): every snapshot flushed before
// `older_than_us` that has a parent and no branch or tag points at is
// removed from the repo file; a remaining snapshot whose parent was removed
// gets the root of its ancestry as parent, and the transaction log ids of
// the ancestors in between (with their own pruned lists, oldest first) in
// `pruned_ancestor_tx_logs`. One conditional update of `repo` recording an
// ExpirationRanUpdate; nothing is deleted (that is collect_garbage's).
// Call under a MaintenanceLock (the edit keeps the status it finds).
ExpireResult expire_snapshots(Store& storage, uint64_t older_than_us);

// One object of the repository's storage as a listing gives it.
struct StoredObject {
    std::string name;    // file name in its folder
    uint64_t bytes = 0;  // size
    int64_t mtime = 0;   // seconds since 1970
    bool regular = true; // false: a link, folder or other (never deleted)
};
// Lists folder `prefix` ("chunks", "manifests" ...) of the storage.
using ObjectLister = std::function<std::vector<StoredObject>(const std::string& prefix)>;
// The lister of a local folder: lstat of each entry (links not followed);
// a folder that is itself a link, or cannot be listed, gives an error.
ObjectLister local_object_lister(const std::string& root);

struct GcOptions {
    int64_t grace_seconds = 86400; // never delete an object modified more recently
    int64_t now = 0;               // seconds since 1970 (0: the clock)
};
struct GcResult {
    uint64_t deleted = 0, deleted_bytes = 0;
    uint64_t kept_young = 0;              // unreferenced but inside the grace period
    uint64_t bytes_before = 0;            // of the objects in the four folders
    std::vector<std::string> left;        // not regular files, left alone (with why)
    std::vector<std::string> ids_deleted; // "chunks/ID" ...
};

// Deletes the objects of snapshots/, transactions/, manifests/ and chunks/
// that no snapshot of the repo file references (their manifests and native
// chunks; transaction logs of the snapshots and of their pruned ancestors),
// none modified within the grace period, nothing but regular files named by
// an id. Reads the repo file and every snapshot and manifest first: any
// missing or bad one is an error before anything is deleted. Call under a
// MaintenanceLock.
GcResult collect_garbage(Store& storage, const ObjectLister& list, const GcOptions& options);

} // namespace zarr3::icechunk
