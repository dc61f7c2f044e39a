// What a band axis's coordinate says about each band, for GIS tools: ISO dates
// for a CF time coordinate ("days since 2023-01-01") in the band descriptions
// (QGIS's band list, gdalinfo), and the netCDF driver's NETCDF_DIM_* metadata
// that rioxarray turns into a `time` dimension with datetime values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cpl_string.h"

namespace zarr3drv {

// One band axis and its coordinate, as LoadBandCoordinates read it.
struct BandAxisCoordinate {
    std::string name;                              // dimension name
    std::optional<std::vector<double>> values;     // numeric coordinate values
    std::optional<std::vector<std::string>> texts; // datetime64 ISO text or string labels
    // datetime64/timedelta64: the exact stored counts (`values` rounds past 2^53).
    std::optional<std::vector<int64_t>> counts;
    bool temporal_dtype = false; // texts are datetime64 values
    std::string units;           // the coordinate's "units" attribute
    std::string nc_units;        // units of the values: "units", or the datetime64 unit
    std::string calendar;        // "calendar" attribute
};

// ISO date (and time when not midnight) of each value of a numeric coordinate
// whose units are "<unit> since <date>"; nullopt for other units, or when a
// value is not a representable date (then the numbers are shown instead).
std::optional<std::vector<std::string>> CfTimeLabels(const std::vector<double>& values,
                                                     const std::string& units);

// Dataset metadata as GDAL's netCDF driver writes it for the extra dimensions
// (NETCDF_DIM_EXTRA, NETCDF_DIM_<name>_DEF, NETCDF_DIM_<name>_VALUES,
// <name>#units, <name>#calendar), for the axes with numeric values.
CPLStringList NetcdfDimDatasetItems(const std::vector<BandAxisCoordinate>& axes);

// Value `i` of an axis as a number: the exact count of a datetime64/timedelta64
// coordinate (a double would round 922337203685477579 up to ...632, which a
// reader converting 10 ms to ms overflows into NaT), else "%.17g".
std::string AxisNumberText(const BandAxisCoordinate& axis, size_t i);

} // namespace zarr3drv
