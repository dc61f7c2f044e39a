// The one mapping from a Zarr v3 array to GDAL, shared by the classic raster
// view (raster_dataset.cpp, raster_create.cpp, georef.cpp) and the
// multidimensional view (md_array*.cpp, md_group.cpp): exposed data type,
// nodata, scale/offset/unit, the X/Y/band roles of the axes, the CRS, and which
// attributes are georeferencing. Worked out once per opened array (MapArray,
// ResolveCRS); the GDAL <-> Zarr type tables themselves are in gdal_types.hpp.
#pragma once

#include "gdal_priv.h"
#include "ogr_spatialref.h"
#include "zarr3/metadata.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace zarr3drv {

// ---------------------------------------------------------------- axis roles

inline constexpr size_t kNoAxis = SIZE_MAX;

// GDAL dimension type ("HORIZONTAL_X", "HORIZONTAL_Y", "TEMPORAL", "VERTICAL"
// or "") from a dimension name: the one name list of both views (x, lon,
// longitude, easting are X; y, lat, latitude, northing are Y).
std::string DimensionTypeFromName(const std::string& name);

// Which axis is X, which is Y (kNoAxis for a 1-D array) and which are bands
// (every other axis, in order).
struct AxisRoles {
    size_t x = kNoAxis, y = kNoAxis;
    std::vector<size_t> bands;
};

// Roles from the GDAL dimension type of each axis: the first X- and Y-typed
// axes when both exist, else the last two axes (a 1-D array: X only).
AxisRoles AxisRolesFromTypes(const std::vector<std::string>& dim_types);
// Roles of an array from its dimension names (DimensionTypeFromName).
AxisRoles AxisRolesOf(const zarr3::ArrayMetadata& m);

// --------------------------------------------------- georeferencing attributes

// Attributes read as the CRS or the geotransform: answered by GetSpatialRef /
// GetGeoTransform, so the multidimensional view does not list them (as GDAL's
// own driver: spatial:bbox, zarr_conventions and proj:epsg stay listed).
bool IsInterpretedGeorefAttribute(const std::string& key);
// Attributes the georeferencing writer owns (every spatial:* and proj:*
// attribute, _CRS, zarr_conventions, grid_mapping): dropped before the
// georeferencing of a raster is written again. Includes the interpreted ones.
bool IsWrittenGeorefAttribute(const std::string& key);

// ------------------------------------------------------------------- values

// Numeric attribute: a number or a one-element array of a number (CF).
std::optional<double> NumberAttribute(const nlohmann::json& attrs, const char* name);

// How one Zarr array shows in GDAL.
struct ArrayMapping {
    GDALDataType type = GDT_Unknown; // exposed type (GDALTypeFor)
    bool text = false; // a text type (IsTextType), exposed as GDAL strings; `type` is Unknown
    std::vector<GByte> nodata;    // fill value (or kNoDataAttribute) in `type`; empty: none
    std::optional<double> scale;  // CF scale_factor
    std::optional<double> offset; // CF add_offset
    std::string unit;             // CF units
    AxisRoles axes;               // from the dimension names
    std::shared_ptr<OGRSpatialReference> srs; // ResolveCRS; traditional GIS axis order
    std::string srs_source;                   // the attribute or variable it came from

    // nodata as a double (64-bit integers converted); nullopt without one.
    std::optional<double> NoDataAsDouble() const;
};

// Type, nodata, scale/offset/unit and axis roles of `m` (the CRS is left to
// ResolveCRS). Throws zarr3::Error naming `where` when GDAL has no type for
// the array's data type (text types are accepted only with `allow_text`: the
// multidimensional view shows them as strings).
ArrayMapping MapArray(const zarr3::ArrayMetadata& m, const std::string& where,
                      bool allow_text = false);
// The array attribute recording the nodata value where it is not the fill value (a number, or
// "NaN", "Infinity", "-Infinity": SetNoDataValue once the array holds data), or "none" (the
// classic view: no nodata).
inline constexpr const char* kNoDataAttribute = "gdal_zarr3:nodata";
// Recomputes nodata and scale/offset/unit after the metadata changed.
void RefreshValues(ArrayMapping& mapping, const zarr3::ArrayMetadata& m);

// ---------------------------------------------------------------------- CRS

// Attributes of the array `name` in the array's group or the nearest ancestor
// holding one; nullopt when there is none.
using NodeAttributesLookup = std::function<std::optional<nlohmann::json>(const std::string&)>;

// The CF grid_mapping variable named by `attrs` ("name" or "name: coord ...");
// "" when none.
std::string GridMappingName(const nlohmann::json& attrs);

// The one CRS reader of both views: the array's own attributes
// (CRSFromAttributes: proj:*, _CRS), then `group_attrs` (the classic view
// passes its group's attributes; null for none), then crs_wkt / spatial_ref of
// the CF grid_mapping variable found by `lookup`. Sets mapping.srs and
// mapping.srs_source (left empty when nothing parses).
void ResolveCRS(ArrayMapping& mapping, const nlohmann::json& attrs,
                const nlohmann::json* group_attrs, const NodeAttributesLookup& lookup);

} // namespace zarr3drv
