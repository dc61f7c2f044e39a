// Where an array sits in a multiscales pyramid of its store: the nearest
// ancestor group (up to kMaxPyramidAncestors levels up) whose attributes hold
// a multiscales object, and the level of that layout holding the array. The
// one search behind the driver's overviews and the zarr3 tool's trim.
#pragma once

#include "zarr3/multiscales.hpp"
#include "zarr3/store.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace zarr3 {

// Group levels searched upwards from an array for its pyramid.
inline constexpr int kMaxPyramidAncestors = 3;

// `path` relative to `group` ("a/b/c" in "a" -> "b/c"; every path in the root
// group ""), nullopt when `path` is not inside `group` (or is the group).
std::optional<std::string> path_inside(const std::string& path, const std::string& group);

// The attributes of group `group` (an empty object when it has none),
// nullopt when there is no node or it is no group.
std::optional<nlohmann::json> group_attributes(Store& store, const std::string& group);

// The level of `layout` holding the node at `rel` (a path relative to the
// pyramid's group): the asset itself (suffix "") or, failing that, the
// longest asset holding it (suffix: the path inside it, GDAL's layout of one
// array per level group). nullopt when no level holds it.
std::optional<std::pair<size_t, std::string>>
level_holding(const std::vector<MultiscaleLevel>& layout, const std::string& rel);

struct PyramidPlace {
    std::string group;  // group holding the multiscales attribute
    std::string suffix; // "" or the array's path inside its level's asset
    size_t level = 0;   // the array's level in ms.layout
    Multiscales ms;     // the whole attribute
    nlohmann::json group_attributes;
};

// The pyramid of the array at `array_path`: the nearest ancestor group with a
// multiscales object decides (a layout not holding the array: nullopt, no
// search further up). FormatError for a malformed multiscales attribute.
std::optional<PyramidPlace> find_pyramid(Store& store, const std::string& array_path);

} // namespace zarr3
