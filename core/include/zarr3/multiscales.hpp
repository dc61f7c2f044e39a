// The `multiscales` group attribute (zarr-conventions/multiscales v1) with the
// per-level `spatial:shape` / `spatial:transform` of zarr-conventions/spatial:
// parsing with validation (paths stay inside the group, derived_from names a
// level, no cycles), the order of levels from fine to coarse, and writing.
// No store access here: resolving assets to arrays is the caller's business.
#pragma once

#include "zarr3/common.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace zarr3 {

inline constexpr const char* kMultiscalesUuid = "d35379db-88df-4056-af3a-620245f8e347";
inline constexpr const char* kSpatialUuid = "689b58e2-cf7b-45e0-9fff-9cfc0883d6b4";

struct MultiscaleLevel {
    std::string asset;                   // path relative to the group (validated)
    std::string derived_from;            // "" = none
    std::vector<double> scale;           // transform.scale, one per axis given (may be empty)
    std::vector<double> translation;     // transform.translation (may be empty)
    std::vector<uint64_t> spatial_shape; // [height, width] or empty
    std::optional<std::array<double, 6>> spatial_transform; // affine [a, b, c, d, e, f]
    std::string resampling_method;                          // "" = the pyramid's
};

struct Multiscales {
    std::vector<MultiscaleLevel> layout;
    std::string resampling_method; // "" = not given
};

// The `multiscales` member of a group's attributes. nullopt when absent or
// when it is not the v1 object form (OME-NGFF writes a list there: not
// ours). FormatError naming `where` and the member for a malformed object:
// no `layout` list, an asset that is not a relative path inside the group
// (`..`, `.`, absolute, empty segments), duplicate assets, a derived_from
// naming no level, a derivation cycle, non-numeric transforms, a
// spatial:shape that is not two positive integers or a spatial:transform
// that is not six numbers.
std::optional<Multiscales> parse_multiscales(const nlohmann::json& group_attributes,
                                             const std::string& where);

// Throws FormatError naming `where` and `member` unless `path` is a relative
// key inside the group (no "..", ".", empty segments, leading "/").
void validate_asset_path(const std::string& path, const std::string& where,
                         const std::string& member);

// Index of the base level: the first level derived from no other one.
size_t base_level(const Multiscales& ms);

// Scale of level `i` relative to the base along the last two axes (y, x):
// the product of `transform.scale` along its derived_from chain; levels
// without a scale count as 1. The chain is acyclic (parse_multiscales).
std::array<double, 2> level_scale_yx(const Multiscales& ms, size_t i);

// Indices of the levels other than the base, coarser first-to-last: sorted by
// the scale of level_scale_yx (finest first), ties in layout order.
std::vector<size_t> overview_order(const Multiscales& ms);

// Several pyramids may share one layout (one per variable of a group): the
// levels derived, directly or not, from one base form its pyramid.
// Index of the base level `i` derives from (itself for a base).
size_t root_of(const Multiscales& ms, size_t i);

// The pyramid of level `i`: its base and every level derived from that base,
// in layout order (the layout-wide resampling_method kept). `*index` (when
// given) receives the place of level `i` in the result.
Multiscales pyramid_of(const Multiscales& ms, size_t i, size_t* index = nullptr);

// `ms` without the pyramid of level `i` (the other bases and their levels
// stay); nullopt when nothing else is left.
std::optional<Multiscales> without_pyramid_of(const Multiscales& ms, size_t i);

// Which levels -clean may delete: the levels of the pyramid whose base is
// `base` (an index into `ms`) other than the base itself, and only those
// whose array path `accepted` holds (what the reader opened as overviews).
// `array_path(k)` gives level k's array path; a path that is the base's, an
// ancestor or a descendant of it, or of another base, is never returned.
std::vector<std::string> clean_set(const Multiscales& ms, size_t base,
                                   const std::vector<std::string>& array_paths,
                                   const std::vector<std::string>& accepted);

// JSON of `ms` (the attribute's value), in layout order.
nlohmann::json multiscales_to_json(const Multiscales& ms);

// Sets `multiscales` in `attributes` and registers the multiscales and
// spatial conventions in `zarr_conventions` (by uuid, once each; other
// entries kept).
void write_multiscales(nlohmann::json& attributes, const Multiscales& ms);

} // namespace zarr3
