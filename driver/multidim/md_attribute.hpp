// Zarr `attributes` members as read-only GDALAttribute objects.
#pragma once

#include "gdal_priv.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <vector>

namespace zarr3drv {

// One attribute: a string, a number, or a 1-D list of numbers or strings.
// Objects, nested lists and mixed lists are exposed as their JSON text.
class JsonAttribute final : public GDALAttribute {
  public:
    JsonAttribute(const std::string& parent, const std::string& name, const nlohmann::json& value);
    static std::shared_ptr<GDALAttribute> Create(const std::string& parent, const std::string& name,
                                                 const nlohmann::json& value);

    const std::vector<std::shared_ptr<GDALDimension>>& GetDimensions() const override {
        return dims_;
    }
    const GDALExtendedDataType& GetDataType() const override { return dt_; }

  protected:
    bool IRead(const GUInt64* start, const size_t* count, const GInt64* step,
               const GPtrDiff_t* stride, const GDALExtendedDataType& buf_type,
               void* dst) const override;

  private:
    std::vector<std::shared_ptr<GDALDimension>> dims_;
    GDALExtendedDataType dt_ = GDALExtendedDataType::CreateString();
    std::vector<std::string> strings_; // string type
    std::vector<double> doubles_;      // Float64 type
    std::vector<int64_t> ints_;        // Int64 type
};

// Stores an attribute value in its node's zarr.json; returns false (after a
// CPLError) on failure.
using AttributeSink = std::function<bool(const std::string& name, const nlohmann::json& value)>;

// An attribute being created: a scalar or 1-D list of numbers or strings.
// Each Write hands the whole value, as JSON, to the sink. A string holding a
// JSON object is stored as that object (the reader shows objects as text).
class WritableAttribute final : public GDALAttribute {
  public:
    // Throws zarr3::Error naming the attribute for more than one dimension or
    // for compound/complex types.
    static std::shared_ptr<GDALAttribute> Create(const std::string& parent, const std::string& name,
                                                 const std::vector<GUInt64>& dims,
                                                 const GDALExtendedDataType& dt,
                                                 AttributeSink sink);
    WritableAttribute(const std::string& parent, const std::string& name,
                      const std::vector<GUInt64>& dims, const GDALExtendedDataType& dt,
                      AttributeSink sink);

    const std::vector<std::shared_ptr<GDALDimension>>& GetDimensions() const override {
        return dims_;
    }
    const GDALExtendedDataType& GetDataType() const override { return dt_; }

  protected:
    bool IRead(const GUInt64* start, const size_t* count, const GInt64* step,
               const GPtrDiff_t* stride, const GDALExtendedDataType& buf_type,
               void* dst) const override;
    bool IWrite(const GUInt64* start, const size_t* count, const GInt64* step,
                const GPtrDiff_t* stride, const GDALExtendedDataType& buf_type,
                const void* src) override;

  private:
    nlohmann::json Value() const;
    std::vector<std::shared_ptr<GDALDimension>> dims_;
    GDALExtendedDataType dt_;
    AttributeSink sink_;
    std::vector<nlohmann::json> values_;
};

// All members of an `attributes` object, in JSON order.
std::vector<std::shared_ptr<GDALAttribute>> MakeAttributes(const std::string& parent,
                                                           const nlohmann::json& attrs);

} // namespace zarr3drv
