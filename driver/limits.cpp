// Bounds on the work a hostile store can cause (see limits.hpp); installs
// the GDAL configuration options as the core's limit source at load time.
#include "limits.hpp"

#include "cpl_conv.h"
#include "cpl_error.h"
#include "cpl_vsi.h"
#include "zarr3/limits.hpp"

#include <cstdlib>
#include <optional>

namespace zarr3drv {
namespace {

// A positive integer configuration option; nullopt when unset or invalid.
std::optional<uint64_t> PositiveOption(const char* name) {
    const char* v = CPLGetConfigOption(name, nullptr);
    if (!v || !*v) return std::nullopt;
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 10);
    if (*end != '\0' || n == 0 || v[0] == '-') return std::nullopt;
    return static_cast<uint64_t>(n);
}

std::optional<uint64_t> CoreLimit(zarr3::Limit which) {
    switch (which) {
    case zarr3::Limit::JsonNodes:
        return PositiveOption("ZARR3_MAX_JSON_NODES");
    case zarr3::Limit::DecodedChunkBytes:
        return PositiveOption("ZARR3_MAX_CHUNK_BYTES");
    }
    return std::nullopt;
}

// The core asks for its limits through this source from the moment the
// plugin is loaded.
const bool kInstalled = (zarr3::set_limit_source(&CoreLimit), true);

bool IsLocalPath(const std::string& p) {
    return !p.empty() && p.rfind("/vsi", 0) != 0 && p.find("://") == std::string::npos;
}

} // namespace

uint64_t MaxBands() {
    (void)kInstalled;
    return PositiveOption("ZARR3_MAX_BANDS").value_or(65536);
}

uint64_t MaxWalkNodes(const std::string& store_uri) {
    return zarr3::walk_node_budget(store_uri, PositiveOption(zarr3::kWalkNodesOption));
}

int PathDepth(const std::string& path) {
    if (path.empty()) return 0;
    int n = 1;
    for (char c : path)
        n += c == '/';
    return n;
}

std::pair<uint64_t, uint64_t> LocalFolderId(const std::string& store_uri, const std::string& path) {
    if (!IsLocalPath(store_uri)) return {0, 0};
    const std::string folder = path.empty() ? store_uri : store_uri + "/" + path;
    VSIStatBufL st;
    if (VSIStatL(folder.c_str(), &st) != 0) return {0, 0};
    return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
}

zarr3::WalkBudget WalkBudgetFor(const std::string& store_uri, bool per_node_requests) {
    auto nodes = PositiveOption(zarr3::kWalkNodesOption);
    if (!nodes && !per_node_requests) nodes = zarr3::kDefaultMaxWalkNodes;
    return zarr3::WalkBudget(store_uri, nodes, PositiveOption(zarr3::kWalkSecondsOption));
}

zarr3::HierarchyVisitor WalkVisitorFor(const std::string& store_uri) {
    zarr3::HierarchyVisitor v;
    v.folder_id = [store_uri](const std::string& group_path) {
        return LocalFolderId(store_uri, group_path);
    };
    v.warn = [](const std::string& msg) {
        CPLError(CE_Warning, CPLE_AppDefined, "%s", msg.c_str());
    };
    return v;
}

} // namespace zarr3drv
