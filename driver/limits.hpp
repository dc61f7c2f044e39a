// Bounds on the work a hostile store can cause: configuration options for
// the core limits (JSON values, decoded chunk size), the band count of the
// classic view, and hierarchy walks that stop at cycles, depth and a node
// budget.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>

namespace zarr3drv {

// ZARR3_MAX_BANDS (default 65536): most bands of the classic view.
uint64_t MaxBands();
// ZARR3_MAX_GROUP_NODES (default 100000): most groups and arrays one walk of a
// hierarchy visits (subdataset listing; groups opened by one multidim dataset).
uint64_t MaxWalkNodes();
// Deepest group path (in path components) a walk enters.
constexpr int kMaxWalkDepth = 32;

// (device, inode) of the folder of node `path` in a local store; (0, 0) for
// remote and virtual stores, where no cycle can be told
// from the path alone (the depth and node budget still bound the walk).
std::pair<uint64_t, uint64_t> LocalFolderId(const std::string& store_uri, const std::string& path);

// One walk of a hierarchy. Enter() says whether a group may be visited:
// false (with a CE_Warning naming the store, once per reason) for a folder
// already visited on this walk (a symlink cycle), a path deeper than
// kMaxWalkDepth, or past the node budget.
class WalkGuard {
  public:
    explicit WalkGuard(std::string store_uri) : uri_(std::move(store_uri)) {}
    bool Enter(const std::string& group_path);
    // Counts one more node (an array); false past the budget.
    bool Count();
    bool stopped() const { return stopped_; }

  private:
    void Warn(const std::string& msg);
    std::string uri_;
    std::set<std::pair<uint64_t, uint64_t>> seen_;
    uint64_t nodes_ = 0;
    bool stopped_ = false;
    bool warned_cycle_ = false, warned_depth_ = false;
};

// Depth of a node path ("" = 0, "a/b" = 2).
int PathDepth(const std::string& path);

} // namespace zarr3drv
