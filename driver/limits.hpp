// Bounds on the work a hostile store can cause: configuration options for
// the core limits (JSON values, decoded chunk size), the band count of the
// classic view, and hierarchy walks that stop at cycles, depth and a node
// budget.
#pragma once

#include "zarr3/hierarchy.hpp"
#include "zarr3/walk.hpp"

#include <cstdint>
#include <set>
#include <string>
#include <utility>

namespace zarr3drv {

// ZARR3_MAX_BANDS (default 65536): most bands of the classic view.
uint64_t MaxBands();
// ZARR3_MAX_GROUP_NODES (default 100000 on local stores, 256 on remote ones,
// zarr3/walk.hpp): most groups and arrays one walk of the hierarchy of
// `store_uri` visits (subdataset listing; groups opened by one multidim dataset).
uint64_t MaxWalkNodes(const std::string& store_uri);
// Deepest group path (in path components) a walk enters.
constexpr int kMaxWalkDepth = zarr3::kMaxWalkDepth;

// (device, inode) of the folder of node `path` in a local store; (0, 0) for
// remote and virtual stores, where no cycle can be told
// from the path alone (the depth and node budget still bound the walk).
std::pair<uint64_t, uint64_t> LocalFolderId(const std::string& store_uri, const std::string& path);

// The budget of one walk of the hierarchy of `store_uri` (zarr3::WalkBudget,
// the rule shared with the zarr3 tool) with the configured bounds
// (ZARR3_MAX_GROUP_NODES, ZARR3_MAX_WALK_SECONDS). `per_node_requests`
// false: every node's metadata is already in memory (an Icechunk snapshot,
// even of a remote repository), so the local node bound applies.
zarr3::WalkBudget WalkBudgetFor(const std::string& store_uri, bool per_node_requests = true);
// The driver's part of a walk (zarr3::walk_hierarchy): LocalFolderId for the
// cycle check, and each refusal (a folder already visited on this walk, a
// path deeper than kMaxWalkDepth, the node budget) as a CE_Warning naming the
// store, once per reason. The caller sets `array`.
zarr3::HierarchyVisitor WalkVisitorFor(const std::string& store_uri);

// Depth of a node path ("" = 0, "a/b" = 2).
int PathDepth(const std::string& path);

} // namespace zarr3drv
