// A zarr3::Array exposed as a read-only GDALMDArray.
#pragma once

#include "gdal_priv.h"
#include "ogr_spatialref.h"
#include "zarr3/array.hpp"

#include <memory>
#include <string>
#include <vector>

namespace zarr3drv {

class Zarr3MDArray final : public GDALMDArray {
  public:
    // `parent_full_name` is the GDAL full name of the parent group ("/" for the
    // root); `name` the array's name in it. Throws zarr3::Error for data types
    // GDAL cannot represent.
    static std::shared_ptr<Zarr3MDArray>
    Create(const std::string& parent_full_name, const std::string& name,
           std::shared_ptr<zarr3::Array> array,
           std::vector<std::shared_ptr<GDALDimension>> dims = {});

    Zarr3MDArray(const std::string& parent_full_name, const std::string& name,
                 std::shared_ptr<zarr3::Array> array,
                 std::vector<std::shared_ptr<GDALDimension>> dims);

    bool IsWritable() const override { return false; }
    const std::string& GetFilename() const override { return filename_; }
    const std::vector<std::shared_ptr<GDALDimension>>& GetDimensions() const override {
        return dims_;
    }
    const GDALExtendedDataType& GetDataType() const override { return dt_; }
    std::vector<GUInt64> GetBlockSize() const override;
    const void* GetRawNoDataValue() const override;
    std::vector<std::shared_ptr<GDALAttribute>>
    GetAttributes(CSLConstList options = nullptr) const override;
    const std::string& GetUnit() const override { return unit_; }
    CSLConstList GetStructuralInfo() const override { return structural_.List(); }

    std::shared_ptr<OGRSpatialReference> GetSpatialRef() const override { return srs_; }

    const std::shared_ptr<zarr3::Array>& array() const { return array_; }
    // Sets the CRS from WKT or "AUTHORITY:CODE", mapped onto the array's X/Y
    // dimensions (the last two unless dimensions are typed). Returns false when
    // the definition cannot be parsed.
    bool SetCRS(const std::string& definition);

    // Default dimensions for `meta`: named from dimension_names, else dim0...
    static std::vector<std::shared_ptr<GDALDimension>>
    DefaultDimensions(const std::string& parent_full_name, const zarr3::ArrayMetadata& meta);

  protected:
    bool IRead(const GUInt64* start, const size_t* count, const GInt64* step,
               const GPtrDiff_t* stride, const GDALExtendedDataType& buf_type,
               void* dst) const override;

  private:
    bool ReadImpl(const GUInt64* start, const size_t* count, const GInt64* step,
                  const GPtrDiff_t* stride, const GDALExtendedDataType& buf_type, void* dst) const;

    std::shared_ptr<zarr3::Array> array_;
    std::string filename_;
    std::vector<std::shared_ptr<GDALDimension>> dims_;
    GDALExtendedDataType dt_ = GDALExtendedDataType::Create(GDT_Unknown);
    std::vector<GByte> nodata_; // fill value in the exposed type
    std::string unit_;
    CPLStringList structural_;
    std::shared_ptr<OGRSpatialReference> srs_;
};

// GDAL dimension type ("HORIZONTAL_X", "TEMPORAL", ...) guessed from a name.
std::string DimensionTypeFromName(const std::string& name);

} // namespace zarr3drv
