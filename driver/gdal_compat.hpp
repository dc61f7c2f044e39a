// Every difference between the GDAL versions the plugin builds against
// (3.6 .. 3.13) lives here, and only here: the rest of the driver names
// features (ZARR3_HAVE_*) and the aliases below, never GDAL_VERSION_NUM.
#pragma once

#include "gdal_priv.h"

#include <tuple>

#if __has_include(<cpl_worker_thread_pool.h>)
#include <cpl_worker_thread_pool.h>
#else
// GDAL builds that do not install cpl_worker_thread_pool.h (Debian's 3.6)
// still export the class; only this exported, non-virtual member is used.
class CPLWorkerThreadPool {
  public:
    bool SubmitJob(CPLThreadFunc pfnFunc, void* pData);
};
#endif

#define ZARR3_GDAL_AT_LEAST(major, minor)                                                          \
    (GDAL_VERSION_NUM >= GDAL_COMPUTE_VERSION(major, minor, 0))

// ---- data types
#define ZARR3_HAVE_GDT_INT8 ZARR3_GDAL_AT_LEAST(3, 7)     // GDT_Int8
#define ZARR3_HAVE_GDT_FLOAT16 ZARR3_GDAL_AT_LEAST(3, 11) // GDT_Float16

// ---- driver algorithms, `gdal driver zarr3 VERB` (GDAL 3.12): GDALAlgorithm,
// GDALDriver::DeclareAlgorithm and pfnInstantiateAlgorithm.
#if ZARR3_GDAL_AT_LEAST(3, 12) && __has_include(<gdalalgorithm.h>)
#define ZARR3_HAVE_DRIVER_ALGORITHMS 1
#else
#define ZARR3_HAVE_DRIVER_ALGORITHMS 0
#endif

// ---- GDALMDArray::GetRawBlockInfo (GDAL 3.12): where a block of an array is
// stored (file, offset, size, filters). The remote sources of `gdal driver
// zarr3 virtualize` (driver/virtualize_gdal_reader.cpp; the algorithms, and so
// the zarr3virt library, come with the same version).
#define ZARR3_HAVE_RAW_BLOCK_INFO ZARR3_HAVE_DRIVER_ALGORITHMS

// ---- GDALDataset::Close (RFC 91, GDAL 3.7): GDALClose, gdal_translate and
// Python's Dataset.Close() report what closing a dataset returns.
#define ZARR3_HAVE_DATASET_CLOSE ZARR3_GDAL_AT_LEAST(3, 7)
// Its parameters: Close() up to 3.12, Close(progress, progress data) since
// 3.13 (overrides are declared `CPLErr Close(ZARR3_CLOSE_PARAMS) override`).
#if ZARR3_GDAL_AT_LEAST(3, 13)
#define ZARR3_CLOSE_PARAMS GDALProgressFunc, void*
#else
#define ZARR3_CLOSE_PARAMS
#endif

// ---- multidimensional API
#define ZARR3_HAVE_MDARRAY_RESIZE ZARR3_GDAL_AT_LEAST(3, 7) // GDALMDArray::Resize

// ---- IRasterIO band map: `int*` before 3.10, `BANDMAP_TYPE` (const int*) since.
#ifdef BANDMAP_TYPE
#define ZARR3_BANDMAP BANDMAP_TYPE
#else
#define ZARR3_BANDMAP int*
#endif

namespace zarr3drv {

// ---- GDALDataset::FlushCache: returns CPLErr since 3.7, void before.
#if ZARR3_GDAL_AT_LEAST(3, 7)
using FlushCacheResult = CPLErr;
#else
using FlushCacheResult = void;
#endif

// GDALDataset's own FlushCache with its result (CE_None where it has none).
inline CPLErr BaseFlushCache(GDALDataset& ds, bool at_closing) {
#if ZARR3_GDAL_AT_LEAST(3, 7)
    return ds.GDALDataset::FlushCache(at_closing);
#else
    ds.GDALDataset::FlushCache(at_closing);
    return CE_None;
#endif
}

// A dataset's FlushCache with its result; before GDAL 3.7 (no result) a
// CE_Failure error raised during it counts as the failure.
inline CPLErr FlushCacheOf(GDALDataset& ds, bool at_closing) {
#if ZARR3_GDAL_AT_LEAST(3, 7)
    return ds.FlushCache(at_closing);
#else
    CPLErrorReset();
    ds.FlushCache(at_closing);
    return CPLGetLastErrorType() == CE_Failure ? CE_Failure : CE_None;
#endif
}

// What an override of FlushCache returns for `err`.
inline FlushCacheResult ToFlushCacheResult(CPLErr err) {
#if ZARR3_GDAL_AT_LEAST(3, 7)
    return err;
#else
    (void)err;
#endif
}

// ---- Creation options handed to a driver's Create/CreateCopy: char** up to
// 3.12, CSLConstList since. Read off GDALDriver's own callback type.
namespace detail {
template <class F> struct LastButOneArg;
template <class R, class... A> struct LastButOneArg<R (*)(A...)> {
    using type = std::tuple_element_t<5, std::tuple<A...>>; // (name, x, y, bands, type, options)
};
} // namespace detail
using DriverOptionList = detail::LastButOneArg<decltype(GDALDriver::pfnCreate)>::type;

// ---- GDALMajorObject::SetMetadata takes CSLConstList since 3.13.
#if ZARR3_GDAL_AT_LEAST(3, 13)
using MetadataList = CSLConstList;
#else
using MetadataList = char**;
#endif
inline MetadataList AsMetadataList(CSLConstList l) {
    return const_cast<MetadataList>(l);
}

} // namespace zarr3drv

// ---- Get/SetGeoTransform take GDALGeoTransform since 3.12, double[6]
// before. A dataset implements GetGeoTransformArray/SetGeoTransformArray and
// puts this macro in its public section.
#if ZARR3_GDAL_AT_LEAST(3, 12)
#define ZARR3_GEOTRANSFORM_OVERRIDES                                                               \
    CPLErr GetGeoTransform(GDALGeoTransform& gt) const override {                                  \
        return GetGeoTransformArray(gt.data());                                                    \
    }                                                                                              \
    CPLErr SetGeoTransform(const GDALGeoTransform& gt) override {                                  \
        return SetGeoTransformArray(gt.data());                                                    \
    }
#else
#define ZARR3_GEOTRANSFORM_OVERRIDES                                                               \
    CPLErr GetGeoTransform(double* gt) override {                                                  \
        return GetGeoTransformArray(gt);                                                           \
    }                                                                                              \
    CPLErr SetGeoTransform(double* gt) override {                                                  \
        return SetGeoTransformArray(gt);                                                           \
    }
#endif

namespace zarr3drv {
// Geotransform of any dataset through the C API, whose form never changed.
inline CPLErr DatasetGeoTransform(GDALDataset* ds, double gt[6]) {
    return GDALGetGeoTransform(GDALDataset::ToHandle(ds), gt);
}
inline CPLErr SetDatasetGeoTransform(GDALDataset* ds, const double gt[6]) {
    return GDALSetGeoTransform(GDALDataset::ToHandle(ds), const_cast<double*>(gt));
}
} // namespace zarr3drv
