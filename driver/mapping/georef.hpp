// Georeferencing of classic rasters: read from GeoZarr `spatial:`/`proj:`
// attributes, CF grid_mapping variables, GDAL's `_CRS` and regular 1-D
// coordinate arrays; written as GeoZarr attributes plus CF x/y coordinate
// arrays and a `spatial_ref` variable.
#pragma once

#include "ogr_spatialref.h"
#include "zarr3/array.hpp"

#include <array>
#include <memory>
#include <optional>
#include <string>

namespace zarr3drv {

struct GeoRef {
    std::optional<std::array<double, 6>> gt;  // GDAL order
    std::unique_ptr<OGRSpatialReference> srs; // traditional GIS axis order
    std::string gt_source, srs_source;        // which convention gave them
};

// CRS from an array's or group's own attributes (proj:wkt2, proj:code,
// proj:projjson, proj:epsg, GDAL's _CRS); `source` names the attribute used.
// nullptr when none parses. Used by ResolveCRS (array_mapping.hpp), the one
// CRS reader of both the classic and the multidimensional view.
std::unique_ptr<OGRSpatialReference> CRSFromAttributes(const nlohmann::json& attrs,
                                                       std::string& source);

// Opens the array `name` in group `group` or the nearest ancestor group that
// holds one (zarr3::nearest_ancestor_path); nullptr when none (or when the
// node is not an array).
std::shared_ptr<zarr3::Array> FindArrayUpwards(const std::shared_ptr<zarr3::Store>& store,
                                               const std::string& group, const std::string& name);

// Values of a small 1-D numeric array as doubles (nullopt if not numeric or
// larger than `max_elements`).
std::optional<std::vector<double>> ReadCoordinateValues(const zarr3::Array& a,
                                                        uint64_t max_elements = 10000000);

// Georeferencing of `array` with its X/Y axes at ix/iy: the CRS through
// ResolveCRS (own, group, grid_mapping attributes), else EPSG:4326 for
// lon/lat coordinate arrays in degrees; the transform from spatial:transform
// (own, group), the grid_mapping GeoTransform or regular coordinate arrays.
GeoRef ReadGeoRef(const std::shared_ptr<zarr3::Store>& store, const zarr3::Array& array, size_t ix,
                  size_t iy);

// CRS from WKT, PROJJSON, "AUTH:CODE" or a URL; nullptr when unparseable.
std::unique_ptr<OGRSpatialReference> ParseCRS(const std::string& definition);

// Adds GeoZarr spatial:/proj: attributes, `_CRS` and grid_mapping to
// `attrs` and writes CF coordinate arrays (named xdim/ydim, cell centres;
// only for axis-aligned transforms) and a 0-d `spatial_ref` variable in group
// `group` (unless write_cf_arrays is false). Either gt or srs may be null.
void WriteGeoRef(const std::shared_ptr<zarr3::Store>& store, const std::string& group,
                 nlohmann::json& attrs, const double* gt, const OGRSpatialReference* srs,
                 uint64_t width, uint64_t height, const std::string& xdim, const std::string& ydim,
                 bool write_cf_arrays = true);

// Names of the arrays WriteGeoRef may create (to reject clashing names).
bool IsGeoRefArrayName(const std::string& name, const std::string& xdim, const std::string& ydim);

} // namespace zarr3drv
