// The multidimensional dataset: a GDALDataset whose root group is the store root.
#include "md_group.hpp"
#include "zarr3/metadata.hpp"
#include "zarr3_driver.hpp"

namespace zarr3drv {
namespace {

class Zarr3MDDataset final : public GDALDataset {
  public:
    explicit Zarr3MDDataset(std::shared_ptr<GDALGroup> root) : root_(std::move(root)) {}
    std::shared_ptr<GDALGroup> GetRootGroup() const override { return root_; }

  private:
    std::shared_ptr<GDALGroup> root_;
};

// Name of the single array of a root-array store: the folder name without
// its extension ("x.zarr" -> "x").
std::string RootArrayName(const std::string& root) {
    std::string name = CPLGetBasename(root.c_str());
    return name.empty() ? std::string("array") : name;
}

} // namespace
} // namespace zarr3drv

GDALDataset* Zarr3OpenMultidim(GDALOpenInfo* poOpenInfo, std::shared_ptr<zarr3::Store> store,
                               const zarr3drv::OpenTarget& target) {
    using namespace zarr3drv;
    std::unique_ptr<Zarr3MDDataset> ds;
    const std::string where = store->uri() + "/zarr.json";
    Guard(where, [&] {
        auto j = zarr3::read_node_json(*store, "");
        if (!j) throw zarr3::Error(where + ": not found");
        std::shared_ptr<GDALGroup> root;
        if (zarr3::node_type_of(*j, where) == zarr3::NodeType::Group) {
            root = Zarr3Group::Create(std::string(), "/", zarr3::Group::open(store, ""));
        } else {
            auto meta = zarr3::parse_array_metadata(*j, where);
            auto arr = zarr3::Array::open(store, "", std::move(meta));
            root = Zarr3Group::CreateForRootArray(arr, RootArrayName(target.root));
        }
        ds = std::make_unique<Zarr3MDDataset>(root);
    });
    if (!ds) return nullptr;
    ds->SetDescription(poOpenInfo->pszFilename);
    return ds.release();
}
