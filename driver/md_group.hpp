// A zarr3::Group exposed as a read-only GDALGroup; also the synthetic root
// group of a store whose root node is a single array.
#pragma once

#include "gdal_priv.h"
#include "zarr3/array.hpp"

#include <map>
#include <memory>
#include <string>

namespace zarr3drv {

class Zarr3MDArray;

class Zarr3Group final : public GDALGroup {
  public:
    // A group over `group` ("/" when parent is empty).
    static std::shared_ptr<Zarr3Group> Create(const std::string& parent_full_name,
                                              const std::string& name,
                                              std::shared_ptr<zarr3::Group> group);
    // The root group of a store whose root is an array: holds that one array
    // under `array_name`.
    static std::shared_ptr<Zarr3Group> CreateForRootArray(std::shared_ptr<zarr3::Array> array,
                                                          const std::string& array_name);

    Zarr3Group(const std::string& parent_full_name, const std::string& name);

    std::vector<std::string> GetMDArrayNames(CSLConstList options = nullptr) const override;
    std::shared_ptr<GDALMDArray> OpenMDArray(const std::string& name,
                                             CSLConstList options = nullptr) const override;
    std::vector<std::string> GetGroupNames(CSLConstList options = nullptr) const override;
    std::shared_ptr<GDALGroup> OpenGroup(const std::string& name,
                                         CSLConstList options = nullptr) const override;
    std::vector<std::shared_ptr<GDALDimension>>
    GetDimensions(CSLConstList options = nullptr) const override;
    std::vector<std::shared_ptr<GDALAttribute>>
    GetAttributes(CSLConstList options = nullptr) const override;

  private:
    std::string Where() const;
    void AttachCRS(Zarr3MDArray& arr, const nlohmann::json& attrs) const;
    std::shared_ptr<GDALMDArray> OpenArrayImpl(const std::string& name) const;
    std::vector<std::shared_ptr<GDALDimension>>
    DimensionsFor(const std::string& array_name, const zarr3::ArrayMetadata& meta) const;

    std::shared_ptr<zarr3::Group> group_;      // null for a root-array store
    std::shared_ptr<zarr3::Array> root_array_; // set for a root-array store
    std::string root_array_name_;
    mutable std::map<std::string, std::shared_ptr<GDALMDArray>> arrays_;
    mutable std::map<std::string, std::shared_ptr<GDALDimension>>
        dims_; // shared by name within this group
};

} // namespace zarr3drv
