// Zarr3Group: browsing a Zarr v3 hierarchy through GDAL's multidimensional API.
#include "md_group.hpp"

#include "md_array.hpp"
#include "md_attribute.hpp"
#include "zarr3_driver.hpp"

#include <algorithm>

namespace zarr3drv {

Zarr3Group::Zarr3Group(const std::string& parent_full_name, const std::string& name)
    : GDALGroup(parent_full_name, name) {}

std::shared_ptr<Zarr3Group> Zarr3Group::Create(const std::string& parent_full_name,
                                               const std::string& name,
                                               std::shared_ptr<zarr3::Group> group) {
    auto g = std::make_shared<Zarr3Group>(parent_full_name, name);
    g->group_ = std::move(group);
    return g;
}

std::shared_ptr<Zarr3Group> Zarr3Group::CreateForRootArray(std::shared_ptr<zarr3::Array> array,
                                                           const std::string& array_name) {
    auto g = std::make_shared<Zarr3Group>(std::string(), "/");
    g->root_array_ = std::move(array);
    g->root_array_name_ = array_name;
    return g;
}

std::string Zarr3Group::Where() const {
    const auto store = group_ ? group_->store() : nullptr;
    const std::string uri = group_ ? store->uri() : root_array_->store().uri();
    return uri + (GetFullName() == "/" ? "" : GetFullName());
}

std::vector<std::string> Zarr3Group::GetMDArrayNames(CSLConstList) const {
    std::vector<std::string> names;
    Guard(Where(), [&] {
        names = group_ ? group_->array_names() : std::vector<std::string>{root_array_name_};
    });
    std::sort(names.begin(), names.end());
    return names;
}

std::vector<std::string> Zarr3Group::GetGroupNames(CSLConstList) const {
    std::vector<std::string> names;
    if (group_) Guard(Where(), [&] { names = group_->group_names(); });
    std::sort(names.begin(), names.end());
    return names;
}

std::shared_ptr<GDALGroup> Zarr3Group::OpenGroup(const std::string& name, CSLConstList) const {
    std::shared_ptr<GDALGroup> out;
    if (!group_) return out;
    Guard(Where(), [&] {
        const auto names = group_->group_names();
        if (std::find(names.begin(), names.end(), name) == names.end()) return;
        out = Create(GetFullName(), name, group_->open_group(name));
    });
    return out;
}

std::shared_ptr<GDALMDArray> Zarr3Group::OpenMDArray(const std::string& name, CSLConstList) const {
    std::shared_ptr<GDALMDArray> out;
    Guard(Where() + "/" + name, [&] { out = OpenArrayImpl(name); });
    return out;
}

std::vector<std::shared_ptr<GDALDimension>>
Zarr3Group::DimensionsFor(const std::string& array_name, const zarr3::ArrayMetadata& meta) const {
    std::vector<std::shared_ptr<GDALDimension>> dims;
    for (size_t i = 0; i < meta.rank(); ++i) {
        const bool named = i < meta.dimension_names.size() && meta.dimension_names[i] &&
                           !meta.dimension_names[i]->empty();
        const auto size = static_cast<GUInt64>(meta.shape[i]);
        if (!named) { // private to the array
            const std::string n = "dim" + std::to_string(i);
            const std::string parent =
                (GetFullName() == "/" ? "/" : GetFullName() + "/") + array_name;
            dims.push_back(
                std::make_shared<GDALDimension>(parent, n, std::string(), std::string(), size));
            continue;
        }
        const std::string& n = *meta.dimension_names[i];
        auto it = dims_.find(n);
        if (it != dims_.end() && it->second->GetSize() == size) {
            dims.push_back(it->second);
            continue;
        }
        auto d = std::make_shared<GDALDimensionWeakIndexingVar>(
            GetFullName(), n, DimensionTypeFromName(n), std::string(), size);
        if (it == dims_.end()) dims_[n] = d;
        dims.push_back(d);
    }
    return dims;
}

// CRS of an array: its own proj:wkt2 / proj:code / proj:epsg attributes, else
// the crs_wkt / spatial_ref attribute of its CF grid_mapping variable.
void Zarr3Group::AttachCRS(Zarr3MDArray& arr, const nlohmann::json& attrs) const {
    const auto str = [](const nlohmann::json& j, const char* k) -> std::string {
        auto it = j.find(k);
        return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    for (const char* k : {"proj:wkt2", "proj:code"})
        if (auto v = str(attrs, k); !v.empty() && arr.SetCRS(v)) return;
    if (auto it = attrs.find("proj:epsg"); it != attrs.end() && it->is_number_integer())
        if (arr.SetCRS("EPSG:" + std::to_string(it->get<int64_t>()))) return;
    const std::string gm = str(attrs, "grid_mapping");
    if (gm.empty() || !group_) return;
    try {
        const auto names = group_->array_names();
        if (std::find(names.begin(), names.end(), gm) == names.end()) return;
        const auto& gattrs = group_->open_array(gm)->metadata().attributes;
        for (const char* k : {"crs_wkt", "spatial_ref"})
            if (auto v = str(gattrs, k); !v.empty() && arr.SetCRS(v)) return;
    } catch (const std::exception& e) {
        CPLError(CE_Warning, CPLE_AppDefined, "%s: grid_mapping %s: %s", Where().c_str(),
                 gm.c_str(), e.what());
    }
}

std::shared_ptr<GDALMDArray> Zarr3Group::OpenArrayImpl(const std::string& name) const {
    auto cached = arrays_.find(name);
    if (cached != arrays_.end()) return cached->second;
    std::shared_ptr<zarr3::Array> za;
    if (group_) {
        const auto names = group_->array_names();
        if (std::find(names.begin(), names.end(), name) == names.end()) return nullptr;
        za = group_->open_array(name);
    } else {
        if (name != root_array_name_) return nullptr;
        za = root_array_;
    }
    const auto& meta = za->metadata();
    for (const auto& w : meta.warnings)
        CPLError(CE_Warning, CPLE_AppDefined, "%s", w.c_str());
    auto arr = Zarr3MDArray::Create(GetFullName(), name, za, DimensionsFor(name, meta));
    arrays_[name] = arr;
    AttachCRS(*arr, meta.attributes);

    // Link dimensions to their indexing variables: a 1-D array of the same
    // name and size in this group (the array itself for a coordinate array).
    for (const auto& d : arr->GetDimensions()) {
        auto weak = std::dynamic_pointer_cast<GDALDimensionWeakIndexingVar>(d);
        if (!weak || weak->GetIndexingVariable()) continue;
        std::shared_ptr<GDALMDArray> var;
        if (d->GetName() == name) {
            if (arr->GetDimensionCount() == 1) var = arr;
        } else if (group_) {
            const auto names = group_->array_names();
            if (std::find(names.begin(), names.end(), d->GetName()) != names.end()) {
                auto other = group_->open_array(d->GetName());
                const auto& om = other->metadata();
                if (om.rank() == 1 && om.shape[0] == d->GetSize() &&
                    om.dimension_names.size() == 1 && om.dimension_names[0] == d->GetName())
                    var = OpenArrayImpl(d->GetName());
            }
        }
        if (var && var->GetDimensionCount() == 1 && var->GetDimensions()[0] == d)
            weak->SetIndexingVariable(var);
    }
    return arr;
}

std::vector<std::shared_ptr<GDALDimension>> Zarr3Group::GetDimensions(CSLConstList) const {
    // Dimensions are known once the arrays are opened; arrays that fail to
    // open report their errors when opened directly.
    {
        CPLErrorStateBackuper keep_state;
        CPLErrorHandlerPusher quiet(CPLQuietErrorHandler);
        for (const auto& n : GetMDArrayNames())
            Guard(Where(), [&] { OpenArrayImpl(n); });
    }
    std::vector<std::shared_ptr<GDALDimension>> out;
    for (const auto& [n, d] : dims_)
        out.push_back(d);
    return out;
}

std::vector<std::shared_ptr<GDALAttribute>> Zarr3Group::GetAttributes(CSLConstList) const {
    if (!group_) return {};
    return MakeAttributes(GetFullName(), group_->metadata().attributes);
}

} // namespace zarr3drv
