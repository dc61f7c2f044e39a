// Overviews written during a copy: the OVERVIEWS, OVERVIEW_COUNT and
// OVERVIEW_RESAMPLING creation options (named as in GDAL's COG driver).
// gdaladdo goes through Zarr3RasterDataset::IBuildOverviews.
#pragma once

#include "gdal_priv.h"

#include <nlohmann/json.hpp>

namespace zarr3drv {

class Zarr3RasterDataset;

// Throws zarr3::Error naming the option when a value is not accepted.
void CheckOverviewOptions(CSLConstList options);

// Removes the multiscales attribute and its zarr_conventions entry.
void EraseMultiscales(nlohmann::json& attrs);

// Builds the overviews the options ask for on the finished copy `ds`
// (nothing for OVERVIEWS=NONE, the default). Throws zarr3::Error.
void BuildCopyOverviews(Zarr3RasterDataset& ds, CSLConstList options, GDALProgressFunc progress,
                        void* progress_data);

} // namespace zarr3drv
