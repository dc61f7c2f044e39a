// Classic raster mode. For now: a dataset that lists every array of the store
// as a subdataset (ZARR3:"path":/array). The raster mapping of single arrays
// is not implemented yet.
#include "gdal_types.hpp"
#include "zarr3/array.hpp"
#include "zarr3_driver.hpp"

#include "cpl_string.h"

#include <algorithm>

namespace zarr3drv {
namespace {

constexpr int kMaxDepth = 32;
constexpr size_t kMaxSubdatasets = 10000;

class SubdatasetListDataset final : public GDALDataset {
  public:
    SubdatasetListDataset() = default;
};

std::string Describe(const zarr3::ArrayMetadata& meta, const std::string& node) {
    std::string shape;
    for (size_t i = 0; i < meta.shape.size(); ++i)
        shape += (i ? "x" : "") + std::to_string(meta.shape[i]);
    return "[" + shape + "] /" + node + " (" + meta.dtype.name + ")";
}

void AddArray(CPLStringList& md, const std::string& root, const std::string& node,
              const zarr3::ArrayMetadata& meta) {
    const int n = md.size() / 2 + 1;
    md.SetNameValue(CPLSPrintf("SUBDATASET_%d_NAME", n), SubdatasetName(root, node).c_str());
    md.SetNameValue(CPLSPrintf("SUBDATASET_%d_DESC", n), Describe(meta, node).c_str());
}

void Walk(CPLStringList& md, const std::string& root, const zarr3::Group& g, int depth) {
    if (depth > kMaxDepth) return;
    auto arrays = g.array_names();
    std::sort(arrays.begin(), arrays.end());
    for (const auto& name : arrays) {
        if (static_cast<size_t>(md.size() / 2) >= kMaxSubdatasets) return;
        auto a = g.open_array(name);
        AddArray(md, root, a->path(), a->metadata());
    }
    auto groups = g.group_names();
    std::sort(groups.begin(), groups.end());
    for (const auto& name : groups)
        Walk(md, root, *g.open_group(name), depth + 1);
}

} // namespace
} // namespace zarr3drv

GDALDataset* Zarr3OpenClassic(GDALOpenInfo* poOpenInfo, std::shared_ptr<zarr3::Store> store,
                              const zarr3drv::OpenTarget& target) {
    using namespace zarr3drv;
    if (target.has_array && !target.array_path.empty()) {
        CPLError(CE_Failure, CPLE_NotSupported,
                 "%s: classic raster access to array /%s is not implemented yet; open the store "
                 "with the "
                 "multidimensional API (gdalmdiminfo, gdal.OpenEx(..., gdal.OF_MULTIDIM_RASTER))",
                 target.root.c_str(), target.array_path.c_str());
        return nullptr;
    }
    const std::string where = store->uri() + "/zarr.json";
    std::unique_ptr<SubdatasetListDataset> ds;
    Guard(where, [&] {
        auto j = zarr3::read_node_json(*store, "");
        if (!j) throw zarr3::Error(where + ": not found");
        CPLStringList md;
        if (zarr3::node_type_of(*j, where) == zarr3::NodeType::Group) {
            auto g = zarr3::Group::open(store, "");
            Walk(md, target.root, *g, 0);
        } else {
            AddArray(md, target.root, "", zarr3::parse_array_metadata(*j, where));
        }
        ds = std::make_unique<SubdatasetListDataset>();
        if (!md.empty()) ds->SetMetadata(md.List(), "SUBDATASETS");
    });
    if (!ds) return nullptr;
    ds->SetDescription(poOpenInfo->pszFilename);
    return ds.release();
}
