// The Zarr3 array behind the source of a classic copy (gdal_translate, CreateCopy), whose layout
// the copy keeps (zarr3::copy_layout): this plugin's dataset itself, or the VRT gdal_translate
// makes for -srcwin / -b when it shows one window of consecutive bands of such a dataset, unscaled.
#pragma once

#include "zarr3/array.hpp"
#include "zarr3/copy_layout.hpp"

#include "gdal_priv.h"

#include <memory>
#include <optional>
#include <vector>

namespace zarr3drv {

struct CopySource {
    std::shared_ptr<zarr3::Store>
        store; // the store holding `array` (its coordinates are found there)
    std::shared_ptr<zarr3::Array> array;
    std::vector<zarr3::AxisRange> ranges; // the region the source shows, in the array's axis order
};

// Null when the source is none of these, or its array's axes are not [band,] y, x in that order, or
// the copy is the first step of a time series (APPEND_DIM).
std::optional<CopySource> FindCopySource(GDALDataset* src, CSLConstList options);

} // namespace zarr3drv
