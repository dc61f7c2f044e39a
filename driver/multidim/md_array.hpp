// A zarr3::Array exposed as a GDALMDArray (read; write when its dataset is
// writable).
#pragma once

#include "mapping/array_mapping.hpp"
#include "gdal_compat.hpp"
#include "gdal_priv.h"
#include "multidim/md_context.hpp"
#include "ogr_spatialref.h"
#include "zarr3/array.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace zarr3drv {

// Finds an array by name (CF "coordinates" entries) in the array's group or its parents.
using ArrayResolver = std::function<std::shared_ptr<GDALMDArray>(const std::string&)>;

class Zarr3MDArray final : public GDALMDArray {
  public:
    // `parent_full_name` is the GDAL full name of the parent group ("/" for the
    // root); `name` the array's name in it. Throws zarr3::Error for data types
    // GDAL cannot represent. `ctx` (may be null) makes the array writable when
    // its store is.
    static std::shared_ptr<Zarr3MDArray>
    Create(const std::string& parent_full_name, const std::string& name,
           std::shared_ptr<zarr3::Array> array,
           std::vector<std::shared_ptr<GDALDimension>> dims = {},
           std::shared_ptr<MDContext> ctx = nullptr);

    Zarr3MDArray(const std::string& parent_full_name, const std::string& name,
                 std::shared_ptr<zarr3::Array> array,
                 std::vector<std::shared_ptr<GDALDimension>> dims, std::shared_ptr<MDContext> ctx);

    bool IsWritable() const override;
    const std::string& GetFilename() const override { return filename_; }
    const std::vector<std::shared_ptr<GDALDimension>>& GetDimensions() const override {
        return dims_;
    }
    const GDALExtendedDataType& GetDataType() const override { return dt_; }
    std::vector<GUInt64> GetBlockSize() const override;
    const void* GetRawNoDataValue() const override;
    std::vector<std::shared_ptr<GDALAttribute>>
    GetAttributes(CSLConstList options = nullptr) const override;
    std::shared_ptr<GDALAttribute> CreateAttribute(const std::string& name,
                                                   const std::vector<GUInt64>& dims,
                                                   const GDALExtendedDataType& dt,
                                                   CSLConstList options = nullptr) override;
    const std::string& GetUnit() const override { return mapping_.unit; }
    CSLConstList GetStructuralInfo() const override { return structural_.List(); }
    double GetOffset(bool* has = nullptr, GDALDataType* storage = nullptr) const override;
    double GetScale(bool* has = nullptr, GDALDataType* storage = nullptr) const override;
    std::vector<std::shared_ptr<GDALMDArray>> GetCoordinateVariables() const override;

    std::shared_ptr<OGRSpatialReference> GetSpatialRef() const override { return srs_; }

    // Writers: stored as attributes (units, scale_factor, add_offset,
    // proj:wkt2) or, for the nodata value, as the fill_value (only before any
    // data is written).
    bool SetUnit(const std::string& unit) override;
    bool SetScale(double scale, GDALDataType storage = GDT_Unknown) override;
    bool SetOffset(double offset, GDALDataType storage = GDT_Unknown) override;
    bool SetSpatialRef(const OGRSpatialReference* srs) override;
    bool SetRawNoDataValue(const void* raw) override;
#if ZARR3_HAVE_MDARRAY_RESIZE
    bool Resize(const std::vector<GUInt64>& new_sizes, CSLConstList options) override;
#endif
    // Grows (appending one chunk edge per grown rectilinear axis whose edges
    // end at the array end) or shrinks (edges kept). For every GDAL version.
    bool ResizeArray(const std::vector<GUInt64>& new_sizes);

    const std::shared_ptr<zarr3::Array>& array() const {
        return array_;
    }
    // Sets the CRS from WKT or "AUTHORITY:CODE", mapped onto the array's X/Y
    // dimensions (the last two unless dimensions are typed). Returns false when
    // the definition cannot be parsed.
    bool SetCRS(const std::string& definition);
    bool SetCRS(std::unique_ptr<OGRSpatialReference> srs); // axis mapping from the X/Y dims
    void SetResolver(ArrayResolver r) {
        resolver_ = std::move(r);
    }
    // Marks an array created in this session: its fill value may still change.
    void MarkCreated() {
        created_ = true;
    }

    // Default dimensions for `meta`: named from dimension_names, else dim0...
    static std::vector<std::shared_ptr<GDALDimension>>
    DefaultDimensions(const std::string& parent_full_name, const zarr3::ArrayMetadata& meta);

  protected:
    bool IRead(const GUInt64* start, const size_t* count, const GInt64* step,
               const GPtrDiff_t* stride, const GDALExtendedDataType& buf_type,
               void* dst) const override;
    bool IWrite(const GUInt64* start, const size_t* count, const GInt64* step,
                const GPtrDiff_t* stride, const GDALExtendedDataType& buf_type,
                const void* src) override;

  private:
    bool ReadImpl(const GUInt64* start, const size_t* count, const GInt64* step,
                  const GPtrDiff_t* stride, const GDALExtendedDataType& buf_type, void* dst) const;
    void WriteImpl(const GUInt64* start, const size_t* count, const GInt64* step,
                   const GPtrDiff_t* stride, const GDALExtendedDataType& buf_type, const void* src);
    void ResizeImpl(const std::vector<GUInt64>& new_sizes);
    // Refreshes the mapping's nodata/scale/offset/unit from the metadata.
    void RefreshFromMetadata();
    // Sets (or, for null, removes) one attribute and rewrites zarr.json.
    bool SetAttr(const std::string& name, const nlohmann::json& value);
    bool CheckWritable(const char* what) const;
    // Returns `ok`; a failure during a copy is recorded in the context.
    bool Noted(bool ok, const std::string& what) const;

    std::shared_ptr<zarr3::Array> array_;
    std::shared_ptr<MDContext> ctx_;
    std::string filename_;
    std::vector<std::shared_ptr<GDALDimension>> dims_;
    GDALExtendedDataType dt_ = GDALExtendedDataType::Create(GDT_Unknown);
    ArrayMapping mapping_; // type, nodata, scale/offset/unit (CRS: srs_, axis-mapped)
    CPLStringList structural_;
    std::shared_ptr<OGRSpatialReference> srs_;
    ArrayResolver resolver_;
    bool written_ = false; // data written through this object
    bool created_ = false; // created in this session (no data before)
};

} // namespace zarr3drv
