// The one rule bounding hierarchy walks (zarr3/walk.hpp).
#include "zarr3/walk.hpp"

#include <sys/stat.h>

namespace zarr3 {

bool is_remote_uri(std::string_view uri) {
    if (uri.find("://") != std::string_view::npos) return true;
    static const char* const kNetwork[] = {
        "/vsicurl", "/vsis3",    "/vsigs",   "/vsiaz",      "/vsiadls",
        "/vsioss",  "/vsiswift", "/vsihdfs", "/vsiwebhdfs", "/vsicurl_streaming"};
    for (const char* p : kNetwork)
        if (uri.find(p) != std::string_view::npos) return true;
    return false;
}

uint64_t walk_node_budget(std::string_view uri, std::optional<uint64_t> configured) {
    if (configured && *configured > 0) return *configured;
    return is_remote_uri(uri) ? kDefaultMaxRemoteWalkNodes : kDefaultMaxWalkNodes;
}

int walk_path_depth(std::string_view path) {
    if (path.empty()) return 0;
    int n = 1;
    for (char c : path)
        n += c == '/';
    return n;
}

std::pair<uint64_t, uint64_t> local_folder_id(const std::string& folder) {
    if (folder.empty() || folder.rfind("/vsi", 0) == 0 || is_remote_uri(folder)) return {0, 0};
    struct stat st {};
    if (::stat(folder.c_str(), &st) != 0) return {0, 0};
    return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
}

std::string walk_budget_message(const std::string& store_uri, uint64_t budget) {
    return store_uri + ": the hierarchy holds more than " + std::to_string(budget) +
           " groups and arrays" +
           (is_remote_uri(store_uri) ? " (a remote store: each one costs a request)" : "") +
           "; listing stopped there (" + kWalkNodesOption + " raises the bound)";
}

WalkBudget::WalkBudget(std::string store_uri, std::optional<uint64_t> configured_nodes,
                       std::optional<uint64_t> configured_seconds)
    : uri_(std::move(store_uri)), budget_(walk_node_budget(uri_, configured_nodes)),
      seconds_(configured_seconds && *configured_seconds > 0 ? *configured_seconds
               : is_remote_uri(uri_)                         ? kDefaultRemoteWalkSeconds
                                                             : 0),
      start_(std::chrono::steady_clock::now()) {}

void WalkBudget::refuse(bool& warned, std::string msg) {
    if (!warned) message_ = std::move(msg);
    warned = true;
}

bool WalkBudget::count() {
    if (stopped_) return false;
    if (seconds_ > 0 &&
        std::chrono::steady_clock::now() - start_ > std::chrono::seconds(seconds_)) {
        stopped_ = true;
        refuse(warned_budget_, uri_ + ": listing the hierarchy took more than " +
                                   std::to_string(seconds_) + " s after " + std::to_string(nodes_) +
                                   " groups and arrays; listing stopped there (" +
                                   kWalkSecondsOption + " raises the bound)");
        return false;
    }
    if (++nodes_ <= budget_) return true;
    stopped_ = true;
    refuse(warned_budget_, walk_budget_message(uri_, budget_));
    return false;
}

bool WalkBudget::enter(const std::string& group_path, std::pair<uint64_t, uint64_t> folder_id) {
    if (stopped_) return false;
    if (walk_path_depth(group_path) > kMaxWalkDepth) {
        refuse(warned_depth_, uri_ + ": group /" + group_path + " is nested deeper than " +
                                  std::to_string(kMaxWalkDepth) + " levels; not listed");
        return false;
    }
    if (folder_id != std::pair<uint64_t, uint64_t>{0, 0} && !seen_.insert(folder_id).second) {
        refuse(warned_cycle_,
               uri_ + ": group /" + group_path +
                   " is a folder already listed (a symbolic link cycle); not listed again");
        return false;
    }
    return count();
}

std::string WalkBudget::take_message() {
    std::string m;
    m.swap(message_);
    return m;
}

} // namespace zarr3
