// numpy.datetime64 / numpy.timedelta64 arrays in GDAL: exposed as Int64 with the
// unit in the unit string ("seconds since 1970-01-01T00:00:00" for a datetime in
// seconds), and ISO 8601 text for the band metadata of a datetime coordinate.
#pragma once

#include "zarr3/array.hpp"

#include <optional>
#include <string>
#include <vector>

namespace zarr3drv {

// Unit string of a temporal data type; "" for any other type.
std::string TemporalUnit(const zarr3::DataType& dt);
// ISO 8601 text of one datetime64 value ("2024-01-01T00:00:00", "NaT"); for a
// timedelta64 the count with its unit ("90 s").
std::string TemporalText(int64_t v, const zarr3::DataType& dt);
// Every stored count of a 1-D datetime64/timedelta64 array (exact int64, in the
// stored unit: never converted, so never overflowing); nullopt for another type
// or more than `max_elements` values.
std::optional<std::vector<int64_t>> TemporalCoordinateCounts(const zarr3::Array& a,
                                                             uint64_t max_elements);
// The same values as text (TemporalText).
std::vector<std::string> TemporalCoordinateText(const std::vector<int64_t>& counts,
                                                const zarr3::DataType& dt);

} // namespace zarr3drv
