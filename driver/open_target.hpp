// The driver's dataset names: `ZARR3:"root":/node` and plain paths, parsed
// for open and formatted for subdataset lists. (zarr3_driver.cpp)
#pragma once

#include <string>

namespace zarr3drv {

// Parsed form of a dataset name.
struct OpenTarget {
    std::string root;       // store root (folder or URL), no trailing "/zarr.json"
    std::string array_path; // node inside the store, without leading "/" ("" = root)
    bool prefixed = false;  // written as ZARR3:...
    bool has_array = false; // a node path was given (ZARR3:"root":/path)
    // Icechunk repositories opened at a chosen version: "snapshot=<id>", so
    // that subdataset names open that same snapshot. Empty otherwise.
    std::string version_query;
};

// Parses `ZARR3:"path":/node`, `ZARR3:path:/node`, `ZARR3:"path"`, `ZARR3:path`
// and plain paths (a folder or its zarr.json). Returns false and emits a
// CPLError for a malformed prefixed name.
bool ParseOpenTarget(const char* filename, OpenTarget& out);

// `ZARR3:"root":/node` for subdataset lists; `ICECHUNK:"root?query":/node`
// when `version_query` is set (an Icechunk repository at a chosen version).
std::string SubdatasetName(const std::string& root, const std::string& node_path,
                           const std::string& version_query = {});

} // namespace zarr3drv
