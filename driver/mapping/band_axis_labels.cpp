// Band-axis coordinates as dates and as netCDF-style metadata (band_axis_labels.hpp).
#include "mapping/band_axis_labels.hpp"

#include "zarr3/cf_time.hpp"
#include "zarr3/common.hpp"

#include "cpl_conv.h"

namespace zarr3drv {

std::optional<std::vector<std::string>> CfTimeLabels(const std::vector<double>& values,
                                                     const std::string& units) {
    const auto cf = zarr3::parse_cf_time_units(units);
    if (!cf) return std::nullopt;
    std::vector<std::string> out;
    out.reserve(values.size());
    try {
        for (double v : values)
            out.push_back(zarr3::format_civil(zarr3::cf_civil_of(*cf, v)));
    } catch (const zarr3::Error&) {
        return std::nullopt; // NaN or far out of range: the numbers are shown
    }
    return out;
}

CPLStringList NetcdfDimDatasetItems(const std::vector<BandAxisCoordinate>& axes) {
    CPLStringList md;
    std::string extra;
    for (const auto& a : axes) {
        if (!a.values || (a.texts && !a.temporal_dtype)) continue; // string labels: no numbers
        extra += (extra.empty() ? "" : ",") + a.name;
        // 6 = NC_DOUBLE: the values are written as doubles, %.17g round-trips them.
        md.SetNameValue(("NETCDF_DIM_" + a.name + "_DEF").c_str(),
                        CPLSPrintf("{%zu,6}", a.values->size()));
        std::string list;
        for (size_t i = 0; i < a.values->size(); ++i)
            list += (list.empty() ? "" : ",") + AxisNumberText(a, i);
        md.SetNameValue(("NETCDF_DIM_" + a.name + "_VALUES").c_str(), ("{" + list + "}").c_str());
        if (!a.nc_units.empty()) md.SetNameValue((a.name + "#units").c_str(), a.nc_units.c_str());
        if (!a.calendar.empty())
            md.SetNameValue((a.name + "#calendar").c_str(), a.calendar.c_str());
    }
    if (!extra.empty()) md.SetNameValue("NETCDF_DIM_EXTRA", ("{" + extra + "}").c_str());
    return md;
}

std::string AxisNumberText(const BandAxisCoordinate& axis, size_t i) {
    if (axis.counts && i < axis.counts->size()) return std::to_string((*axis.counts)[i]);
    return CPLSPrintf("%.17g", (*axis.values)[i]);
}

} // namespace zarr3drv
