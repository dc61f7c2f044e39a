// The coordinate values of an append: their encoding in the coordinate's type, and the step values
// a source states for its bands along the append dimension (issue 40.3): an append without
// APPEND_COORD takes its dates from the source itself.
//   - netCDF (and the plugin's own stores, which carry the same items): the band item
//     NETCDF_DIM_<dim>, in the units of the dataset items <dim>#units and <dim>#calendar. When the
//     source's dimension has another name (ERA5's `valid_time`), its one extra dimension whose
//     units are CF time units is used.
//   - GRIB: the band item GRIB_VALID_TIME (seconds since 1970-01-01 UTC).
#pragma once

#include "zarr3/common.hpp"
#include "zarr3/dtype.hpp"

#include <gdal_priv.h>

#include <optional>
#include <string>
#include <vector>

namespace zarr3drv {

struct SourceSteps {
    std::vector<std::string>
        texts;                  // one per band: "YYYY-MM-DD[THH:MM:SS]" (time units) or a number
    std::vector<double> values; // as the source stores them, in `units`
    std::string units;          // the source coordinate's units ("" when none)
    std::string calendar;       // its calendar ("" when none given)
    std::string item;           // the metadata item read, for messages
};

// nullopt when the source states no value for some band. zarr3::Error, naming the source and the
// item, when it states values that cannot be dates: a calendar other than the (proleptic)
// Gregorian one, a value that is no number, or a time that is not a whole second.
std::optional<SourceSteps> SourceStepValues(GDALDataset* src, const std::string& dim);

// `v` as one little-endian element of a coordinate of type `dt` (float64, float32, int64, int32,
// uint32, uint64); zarr3::Error naming `where` when the type cannot hold it exactly (an integer
// type takes only an integral value in its range).
zarr3::Bytes EncodeCoordinate(double v, const zarr3::DataType& dt, const std::string& where);
// `v` read back from one element of `dt` (the types EncodeCoordinate writes; NaN for others).
double DecodeCoordinate(const uint8_t* p, const zarr3::DataType& dt);

} // namespace zarr3drv
