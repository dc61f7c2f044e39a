// What an append's values mean, checked against the target array before
// anything is written: units must agree; band scale/offset (CF
// scale_factor/add_offset) and nodata that differ are converted into the
// array's exactly (zarr3::Repacker) or the append is refused naming both
// sides (and -co APPEND_REPACK=NEAREST when rounding would convert).
#pragma once

#include "gdal_priv.h"

#include "zarr3/repack.hpp"

#include <string>
#include <vector>

namespace zarr3drv {

struct AppendValues {
    std::vector<zarr3::Repacker> bands; // one per source band; empty: stored as they are
    bool converts() const { return !bands.empty(); }
    // Converts `n` bands of `per_band` values each (band after band) in place.
    void Convert(double* v, size_t per_band) const;
};

// The conversion of each band of `src` into the representation of `view`
// (the target array's classic view; its last band's scale/offset/units and
// the array's nodata), elements of type `target`. zarr3::Error naming
// `where` and both sides when the units differ or no conversion exists.
AppendValues PlanAppendValues(GDALDataset* view, GDALDataset* src, const zarr3::DataType& target,
                              CSLConstList options, const std::string& where);

// Rows [y0, y0 + h) of every source band into `buf` (type `gt`, band after
// band; sized by the caller), converted into the array's packing and nodata
// when `values` converts (read as doubles; integral after the conversion, so
// the copy is exact). zarr3::Error when the source cannot be read.
void ReadSourceRows(GDALDataset* src, int y0, int w, int h, GDALDataType gt,
                    const AppendValues& values, std::vector<GByte>& buf);

// Reads the whole source once and converts it, throwing the conversion's
// error: a refused append has written nothing.
void CheckAppendValues(GDALDataset* src, const AppendValues& values);

} // namespace zarr3drv
