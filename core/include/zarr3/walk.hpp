// The one rule bounding every walk of a hierarchy (the GDAL driver's classic
// subdataset listing and multidimensional group tree, the zarr3 tool's array
// listing): a depth limit, no folder entered twice on one walk (symbolic
// link cycles, local stores), and a node budget, much smaller on remote
// stores where each node costs at least one request.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace zarr3 {

// Deepest group path (in path components) a walk enters.
constexpr int kMaxWalkDepth = 32;
// Groups and arrays one walk visits, by default: on local (and in-memory)
// stores, and on remote ones (HTTP, object stores), where a walk of
// 256 nodes already takes several hundred requests.
constexpr uint64_t kDefaultMaxWalkNodes = 100000;
constexpr uint64_t kDefaultMaxRemoteWalkNodes = 256;
// The option (GDAL configuration option, or environment variable for the
// zarr3 tool) that sets the node budget for every store.
constexpr const char* kWalkNodesOption = "ZARR3_MAX_GROUP_NODES";
// Seconds one listing walk of a remote store may take by default (slow
// servers: each request may take up to GDAL_HTTP_TIMEOUT); local walks have
// no time bound. The option sets it for every store.
constexpr uint64_t kDefaultRemoteWalkSeconds = 60;
constexpr const char* kWalkSecondsOption = "ZARR3_MAX_WALK_SECONDS";

// True for stores reached over a network (/vsicurl/, /vsis3/, /vsigs/,
// /vsiaz/, ... anywhere in a chained path, or a URL with "://").
bool is_remote_uri(std::string_view uri);
// The node budget of a walk of `uri`: `configured` when set (> 0), else the
// default for the kind of store.
uint64_t walk_node_budget(std::string_view uri, std::optional<uint64_t> configured);
// Depth of a node path ("" = 0, "a/b" = 2).
int walk_path_depth(std::string_view path);
// (device, inode) of the folder `folder` on the local file system; (0, 0)
// when it cannot be told (remote and virtual stores, missing folders).
std::pair<uint64_t, uint64_t> local_folder_id(const std::string& folder);

// One walk. enter() says whether a group may be visited and counts it;
// count() counts an array. Each refusal gives its message once (naming the
// store, the node and, for the budget, the option that raises it) through
// take_message(); stopped() is true once the budget is spent.
class WalkBudget {
  public:
    // `configured_seconds`: kWalkSecondsOption's value (nullopt: the default).
    WalkBudget(std::string store_uri, std::optional<uint64_t> configured_nodes,
               std::optional<uint64_t> configured_seconds = std::nullopt);
    // `folder_id`: local_folder_id() of the group's folder, (0, 0) if unknown.
    bool enter(const std::string& group_path, std::pair<uint64_t, uint64_t> folder_id);
    bool count();
    bool stopped() const { return stopped_; }
    uint64_t budget() const { return budget_; }
    // The warning of the last refusal not yet taken ("" for none).
    std::string take_message();

  private:
    void refuse(bool& warned, std::string msg);
    std::string uri_;
    uint64_t budget_;
    uint64_t seconds_; // 0: no time bound
    std::chrono::steady_clock::time_point start_;
    uint64_t nodes_ = 0;
    std::set<std::pair<uint64_t, uint64_t>> seen_;
    bool stopped_ = false;
    bool warned_cycle_ = false, warned_depth_ = false, warned_budget_ = false;
    std::string message_;
};

// The budget's warning: "<uri>: the hierarchy holds more than N groups and
// arrays (...); listing stopped there (ZARR3_MAX_GROUP_NODES raises the bound)".
std::string walk_budget_message(const std::string& store_uri, uint64_t budget);

} // namespace zarr3
