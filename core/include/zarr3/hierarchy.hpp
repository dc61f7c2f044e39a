// Navigation of a Zarr hierarchy, in one place for every user (the GDAL
// driver's georeferencing, multidimensional and classic views, the zarr3
// tool): node path parts, "the nearest ancestor holding a name", the walk of
// a hierarchy's arrays, and the name of an axis without a dimension name.
#pragma once

#include "zarr3/array.hpp"
#include "zarr3/metadata.hpp"
#include "zarr3/walk.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace zarr3 {

// ------------------------------------------------------------------ paths

// Parent group path of a node path ("a/b/c" -> "a/b", "c" -> "", "" -> "").
std::string parent_path(std::string_view path);
// Last component of a node path ("a/b/c" -> "c", "c" -> "c").
std::string base_name(std::string_view path);

// ------------------------------------------------------ nearest ancestor

// Most nodes a search upwards looks at (the node itself and its ancestors):
// more than any hierarchy a walk enters (kMaxWalkDepth).
constexpr int kMaxAncestorSteps = 64;

// The nearest of `node` and its ancestors, nearest first, for which
// `holds(node)` is true; nullopt when none does. `parent(node)` gives the
// next node up, or nullopt at the top. The one rule of every lookup of a name
// in "this group or the nearest ancestor" (CF coordinate and grid_mapping
// variables, dimensions): at most kMaxAncestorSteps nodes. Exceptions of
// `holds` and `parent` propagate.
template <class Node, class Holds, class Parent>
std::optional<Node> nearest_ancestor(Node node, Holds&& holds, Parent&& parent) {
    for (int step = 0; step < kMaxAncestorSteps; ++step) {
        if (holds(node)) return node;
        std::optional<Node> up = parent(node);
        if (!up) break;
        node = std::move(*up);
    }
    return std::nullopt;
}

// The same over node paths of one store: `group`, its parent_path(), ...,
// up to the root "".
std::optional<std::string>
nearest_ancestor_path(const std::string& group,
                      const std::function<bool(const std::string&)>& holds);

// ---------------------------------------------------------------- walks

// What a walk of the arrays of a hierarchy does at each node.
struct HierarchyVisitor {
    // An array `name` of group `g`, after the budget counted it; false stops
    // the walk.
    std::function<bool(const Group& g, const std::string& name)> array;
    // (device, inode) of the folder of a group about to be entered (cycle
    // detection, local_folder_id); (0, 0) when unknown. Unset: (0, 0).
    std::function<std::pair<uint64_t, uint64_t>(const std::string& group_path)> folder_id;
    // Each message of the budget (WalkBudget::take_message) as it comes.
    std::function<void(const std::string& message)> warn;
    // Opens child group `name` of `g`. Unset: g.open_group(name) (on a
    // read-only store with consolidated metadata, the consolidated entry).
    std::function<std::shared_ptr<Group>(const Group& g, const std::string& name)> open_group;
};

// The one walk of a hierarchy's arrays: depth first from `top`, the arrays of
// a group (sorted by name) before its child groups (sorted), every group and
// array counted against `budget`. `top` is entered first (a refusal, e.g. a
// path deeper than kMaxWalkDepth, is reported; its arrays are still listed).
// Stops when the budget is spent or `visit.array` returns false.
void walk_hierarchy(const Group& top, WalkBudget& budget, const HierarchyVisitor& visit);

// ----------------------------------------------------------- dimensions

// Name of an axis without a dimension name: "dim<axis>" (as zarr-python and
// GDAL's own driver).
std::string unnamed_dimension_name(size_t axis);
// The dimension name of `axis` of `m`: its dimension_names entry when set and
// not empty, else unnamed_dimension_name(axis).
std::string dimension_name(const ArrayMetadata& m, size_t axis);
// True when `axis` of `m` has a non-empty dimension name.
bool has_dimension_name(const ArrayMetadata& m, size_t axis);

} // namespace zarr3
