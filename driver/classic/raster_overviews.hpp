// Multiscales pyramids (zarr-conventions/multiscales) in the classic view:
// which arrays are coarser levels of a pyramid (they are overviews of their
// base, not subdatasets), and where the levels of a base array are.
// Opening them as overviews: Zarr3RasterDataset::OpenOverviews
// (raster_overviews.cpp); building them: overview_build.cpp.
#pragma once

#include "zarr3/multiscales.hpp"
#include "zarr3/store.hpp"

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace zarr3drv {

// Array paths among `array_paths` that are levels other than the base of a
// pyramid declared by one of their ancestor groups. Quiet: problems with the
// pyramid are reported when its base opens.
std::set<std::string> CoarserPyramidLevels(zarr3::Store& store,
                                           const std::vector<std::string>& array_paths);

// The pyramid the array at `array_path` belongs to.
struct PyramidOf {
    std::string group;       // group holding the multiscales attribute
    std::string suffix;      // "" (array-based layout) or the array path inside each level group
    size_t level = 0;        // the array's own level in ms.layout
    zarr3::Multiscales ms;   // the array's own pyramid: its base and the levels derived from it
    zarr3::Multiscales full; // the whole attribute (other bases and their levels too)
    size_t full_level = 0;   // the array's own level in full.layout
    nlohmann::json group_attributes;
    // Array path of level `k`.
    std::string ArrayPath(size_t k) const;
};

// Finds the nearest ancestor group (up to three levels up) whose multiscales
// attribute lists the array. nullopt when none. A malformed attribute throws
// zarr3::FormatError naming the group's zarr.json and the member.
std::optional<PyramidOf> FindPyramid(zarr3::Store& store, const std::string& array_path);

// GDAL geotransform <-> the spatial convention's affine [a, b, c, d, e, f].
std::array<double, 6> AffineFromGeoTransform(const double* gt);

} // namespace zarr3drv
