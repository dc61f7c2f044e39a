// A zarr3::Group exposed as a GDALGroup (browse; create children when the
// dataset is writable); also the synthetic root group of a store whose root
// node is a single array.
#pragma once

#include "gdal_priv.h"
#include "multidim/md_context.hpp"
#include "zarr3/array.hpp"

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

namespace zarr3drv {

class Zarr3MDArray;

class Zarr3Group final : public GDALGroup, public std::enable_shared_from_this<Zarr3Group> {
  public:
    // A group over `group` ("/" when parent_full_name is empty). `parent` is
    // the GDAL parent group (null for the root); `ctx` the dataset state.
    static std::shared_ptr<Zarr3Group> Create(const std::string& parent_full_name,
                                              const std::string& name,
                                              std::shared_ptr<zarr3::Group> group,
                                              std::shared_ptr<MDContext> ctx = nullptr,
                                              std::shared_ptr<Zarr3Group> parent = nullptr);
    // The root group of a store whose root is an array: holds that one array
    // under `array_name`.
    static std::shared_ptr<Zarr3Group> CreateForRootArray(std::shared_ptr<zarr3::Array> array,
                                                          const std::string& array_name,
                                                          std::shared_ptr<MDContext> ctx = nullptr);

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

    std::shared_ptr<GDALGroup> CreateGroup(const std::string& name,
                                           CSLConstList options = nullptr) override;
    std::shared_ptr<GDALDimension> CreateDimension(const std::string& name, const std::string& type,
                                                   const std::string& direction, GUInt64 size,
                                                   CSLConstList options = nullptr) override;
    std::shared_ptr<GDALMDArray>
    CreateMDArray(const std::string& name, const std::vector<std::shared_ptr<GDALDimension>>& dims,
                  const GDALExtendedDataType& dt, CSLConstList options = nullptr) override;
    std::shared_ptr<GDALAttribute> CreateAttribute(const std::string& name,
                                                   const std::vector<GUInt64>& dims,
                                                   const GDALExtendedDataType& dt,
                                                   CSLConstList options = nullptr) override;

  private:
    std::string Where() const;
    bool Writable(const char* what) const;
    bool HasArray(const std::string& name) const;
    bool HasChild(const std::string& name) const;
    // Throws zarr3::Error unless `name` can name a new child (`kind`: "group", "array").
    void CheckNewChildName(const std::string& name, const char* kind) const;
    std::string ChildPath(const std::string& name) const;
    // Throws unless child group `name` stays within the walk bounds (depth,
    // no symbolic link cycle, the node budget: ZARR3_MAX_GROUP_NODES, smaller
    // on remote stores, with one warning per dataset when first exceeded).
    void CheckWalkBounds(const std::string& name) const;
    void AttachCRS(Zarr3MDArray& arr, const nlohmann::json& attrs) const;
    std::shared_ptr<GDALMDArray> OpenArrayImpl(const std::string& name) const;
    std::shared_ptr<GDALMDArray> FindArrayUpwards(const std::string& name) const;
    // This group or the nearest of its parents in this view for which `holds`
    // is true (zarr3::nearest_ancestor); nullptr when none.
    std::shared_ptr<Zarr3Group>
    NearestAncestor(const std::function<bool(const Zarr3Group&)>& holds) const;
    static std::shared_ptr<GDALMDArray> ResolveUpwards(const std::weak_ptr<const Zarr3Group>& self,
                                                       const std::string& n);
    std::vector<std::shared_ptr<GDALDimension>>
    DimensionsFor(const std::string& array_name, const zarr3::ArrayMetadata& meta) const;
    // Dimension `name` of `size` for an array of this group: this group's
    // own, else a parent's of that name and size, else new here.
    std::shared_ptr<GDALDimension> FindDimension(const std::string& name, GUInt64 size) const;
    void LinkIndexingVariables(const std::shared_ptr<GDALMDArray>& arr,
                               const std::string& name) const;
    // Drops the root's consolidated metadata, stale once the hierarchy changes.
    void InvalidateConsolidated();
    // Warns once about children whose zarr.json the listing left out.
    void WarnSkippedChildren() const;
    mutable bool skipped_checked_ = false;
    // Array names without the check GetMDArrayNames makes.
    std::vector<std::string> RawArrayNames() const;
    // The children's names (the store's listing and those created here),
    // built once and kept current by the creations: lookups and listings cost
    // the children, never a listing, a copy and a sort per call (issue 39:
    // walks and creations of thousands of groups were quadratic).
    struct ChildNames {
        std::set<std::string> arrays, groups;
    };
    const ChildNames& Children() const;
    mutable std::optional<ChildNames> children_;
    mutable std::set<std::string> listed_ok_, listed_bad_; // checked by GetMDArrayNames

    std::shared_ptr<zarr3::Group> group_;      // null for a root-array store
    std::shared_ptr<zarr3::Array> root_array_; // set for a root-array store
    std::string root_array_name_;
    std::shared_ptr<MDContext> ctx_;
    std::weak_ptr<Zarr3Group> parent_;
    // Walk bounds: this group's folder (local stores; (0, 0) elsewhere) to
    // refuse symbolic link cycles, and the groups opened so far by the
    // dataset (shared by all its groups) against ZARR3_MAX_GROUP_NODES.
    std::pair<uint64_t, uint64_t> folder_id_{0, 0};
    std::shared_ptr<std::atomic<uint64_t>> groups_opened_;
    std::set<std::string> created_arrays_, created_groups_;
    mutable std::map<std::string, std::shared_ptr<GDALMDArray>> arrays_;
    mutable std::map<std::string, std::shared_ptr<Zarr3Group>> groups_;
    mutable std::map<std::string, std::shared_ptr<GDALDimension>>
        dims_; // shared by name within this group
};

// One warning per entry of `g`'s consolidated metadata whose path names no
// node ("", "a//b", ".."): such entries are ignored by every listing (the
// classic subdataset walk and the multidimensional tree alike).
void WarnInvalidConsolidatedKeys(const zarr3::Group& g);

} // namespace zarr3drv
