// Overviews written during a copy: the OVERVIEWS, OVERVIEW_COUNT and
// OVERVIEW_RESAMPLING creation options (named as in GDAL's COG driver).
// gdaladdo goes through Zarr3RasterDataset::IBuildOverviews.
#pragma once

#include "gdal_priv.h"

namespace zarr3drv {

class Zarr3RasterDataset;

// Throws zarr3::Error naming the option when a value is not accepted.
void CheckOverviewOptions(CSLConstList options);

// Builds the overviews the options ask for on the finished copy `ds`
// (nothing for OVERVIEWS=NONE, the default). Throws zarr3::Error.
void BuildCopyOverviews(Zarr3RasterDataset& ds, CSLConstList options, GDALProgressFunc progress,
                        void* progress_data);

} // namespace zarr3drv
