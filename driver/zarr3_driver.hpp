// Shared declarations of the Zarr3 GDAL plugin: open helpers, the
// classic-raster entry point and the error boundary.
#pragma once

#include "gdal_priv.h"

#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace zarr3 {
class Store;
}

namespace zarr3drv {

// Parsed form of a dataset name.
struct OpenTarget {
    std::string root;       // store root (folder or URL), no trailing "/zarr.json"
    std::string array_path; // node inside the store, without leading "/" ("" = root)
    bool prefixed = false;  // written as ZARR3:...
    bool has_array = false; // a node path was given (ZARR3:"root":/path)
};

// Parses `ZARR3:"path":/node`, `ZARR3:path:/node`, `ZARR3:"path"`, `ZARR3:path`
// and plain paths (a folder or its zarr.json). Returns false and emits a
// CPLError for a malformed prefixed name.
bool ParseOpenTarget(const char* filename, OpenTarget& out);

// `ZARR3:"root":/node` for subdataset lists.
std::string SubdatasetName(const std::string& root, const std::string& node_path);

// The error boundary of every GDAL entry point of the driver (open, raster
// and multidimensional I/O, group listing, attributes, create and copy): runs
// `f` and converts any exception into CPLError(CE_Failure) naming `where`;
// std::bad_alloc becomes CPLE_OutOfMemory. Nothing here allocates, so a
// failure under memory pressure still reaches the host as an error, never as
// std::terminate. Returns false when an exception was caught.
template <class F> bool Guard(const std::string& where, F&& f) noexcept {
    try {
        f();
        return true;
    } catch (const std::bad_alloc&) {
        CPLError(CE_Failure, CPLE_OutOfMemory,
                 "%s: out of memory (the store needs more memory than is available; see the "
                 "limits in the README)",
                 where.c_str());
    } catch (const std::exception& e) {
        const char* msg = e.what();
        if (where.empty() || std::strstr(msg, where.c_str()) != nullptr)
            CPLError(CE_Failure, CPLE_AppDefined, "%s", msg);
        else
            CPLError(CE_Failure, CPLE_AppDefined, "%s: %s", where.c_str(), msg);
    } catch (...) {
        CPLError(CE_Failure, CPLE_AppDefined, "%s: unknown error", where.c_str());
    }
    return false;
}

} // namespace zarr3drv

// Classic (2-D raster) open. `store` is the opened store (Open builds it once
// for both opens, consolidating on update when the root is), `target` the
// parsed name. Returns nullptr with a CPLError on failure. (driver/raster_*.cpp)
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

// The module is built with hidden visibility: export the entry point explicitly.
#if defined(_WIN32)
#define ZARR3_EXPORT __declspec(dllexport)
#else
#define ZARR3_EXPORT __attribute__((visibility("default")))
#endif
extern "C" ZARR3_EXPORT void GDALRegister_Zarr3();
