// The remote sources of `gdal driver zarr3 virtualize` (GDAL >= 3.12): a
// NetCDF-4 / HDF5 file on /vsis3/ or /vsicurl/ read through GDAL's
// multidimensional API (the HDF5 driver, which reads any GDAL file system):
// its variables, attributes and coordinates, and the chunk index from
// GDALMDArray::GetRawBlockInfo. It gives the NcFile the libhdf5 path gives
// for a local file (cli/virtualize/nc_file.hpp), so the planning and writing
// are the tool's own.
#pragma once

#include "gdal_compat.hpp"

#if ZARR3_HAVE_RAW_BLOCK_INFO

#include "nc_file.hpp"

#include <memory>

namespace zarr3drv {

std::shared_ptr<const zarr3virt::NcReader> GdalRemoteNcReader();

} // namespace zarr3drv

#endif
