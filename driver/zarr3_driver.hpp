// The Zarr3 GDAL plugin's entry: registration and the open / create entry
// points of the classic and multidimensional views. The dataset name syntax
// is in open_target.hpp, the error boundary of every entry point in
// error_boundary.hpp.
#pragma once

#include "open_target.hpp"

#include "gdal_priv.h"

#include <memory>
#include <string>
#include <vector>

namespace zarr3 {
class Store;
}

// Classic (2-D raster) open. `store` is the opened store, `target` the parsed
// name. Returns nullptr with a CPLError on failure. (driver/raster_*.cpp)
GDALDataset* Zarr3OpenClassic(GDALOpenInfo* poOpenInfo, std::shared_ptr<zarr3::Store> store,
                              const zarr3drv::OpenTarget& target);

// Multidimensional open: a dataset whose GetRootGroup() is the store root.
GDALDataset* Zarr3OpenMultidim(GDALOpenInfo* poOpenInfo, std::shared_ptr<zarr3::Store> store,
                               const zarr3drv::OpenTarget& target);

// pfnCreateMultiDimensional: an empty store (root group) opened for writing.
// (driver/md_dataset.cpp)
GDALDataset* Zarr3CreateMultidim(const char* pszName, CSLConstList papszRootGroupOptions,
                                 CSLConstList papszOptions);
// CreateCopy of a source without raster bands but with a root group (e.g.
// gdalmdimtranslate): creates the store and copies the hierarchy; ARRAY:
// options go to each array. (driver/md_dataset.cpp)
GDALDataset* Zarr3CreateCopyMultidim(const char* pszName, GDALDataset* src, int strict,
                                     CSLConstList options, GDALProgressFunc progress,
                                     void* progress_data);
namespace zarr3drv {
// The same copy into `store` (a repository's session): no folder, nothing
// replaced; nullptr after a CPLError, the session's changes discarded.
GDALDataset* Zarr3CopyMultidimInStore(std::shared_ptr<zarr3::Store> store, const std::string& root,
                                      GDALDataset* src, int strict, CSLConstList options,
                                      GDALProgressFunc progress, void* progress_data);
} // namespace zarr3drv

// The module is built with hidden visibility: export the entry point explicitly.
#if defined(_WIN32)
#define ZARR3_EXPORT __declspec(dllexport)
#else
#define ZARR3_EXPORT __attribute__((visibility("default")))
#endif
extern "C" ZARR3_EXPORT void GDALRegister_Zarr3();
