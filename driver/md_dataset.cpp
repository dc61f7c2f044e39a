// The multidimensional dataset: a GDALDataset whose root group is the store
// root; opened read-only or for update, or created empty.
#include "md_context.hpp"
#include "md_group.hpp"
#include "vsi_store.hpp"
#include "zarr3/metadata.hpp"
#include "zarr3_driver.hpp"

#include "cpl_vsi.h"

namespace zarr3drv {
namespace {

class Zarr3MDDataset final : public GDALDataset {
  public:
    Zarr3MDDataset(std::shared_ptr<GDALGroup> root, std::shared_ptr<MDContext> ctx)
        : root_(std::move(root)), ctx_(std::move(ctx)) {
        eAccess = ctx_->writable() ? GA_Update : GA_ReadOnly;
    }
    ~Zarr3MDDataset() override { FlushArrays(); }
    std::shared_ptr<GDALGroup> GetRootGroup() const override { return root_; }

#if GDAL_VERSION_NUM >= GDAL_COMPUTE_VERSION(3, 7, 0)
    CPLErr FlushCache(bool at_closing) override {
        CPLErr e = GDALDataset::FlushCache(at_closing);
        return FlushArrays() ? e : CE_Failure;
    }
#else
    void FlushCache(bool at_closing) override {
        GDALDataset::FlushCache(at_closing);
        FlushArrays();
    }
#endif

  private:
    // Writes the buffered partial chunks of every array of this dataset.
    bool FlushArrays() {
        if (!ctx_->writable()) return true;
        return Guard(ctx_->store()->uri(), [&] { ctx_->Flush(); });
    }
    std::shared_ptr<GDALGroup> root_;
    std::shared_ptr<MDContext> ctx_;
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
    const bool update = poOpenInfo->eAccess == GA_Update;
    if (update && !store->writable()) {
        CPLError(CE_Failure, CPLE_NotSupported, "%s: update access needs a writable store",
                 store->uri().c_str());
        return nullptr;
    }
    auto ctx = std::make_shared<MDContext>(store, update);
    Guard(where, [&] {
        auto j = zarr3::read_node_json(*store, "");
        if (!j) throw zarr3::Error(where + ": not found");
        std::shared_ptr<GDALGroup> root;
        if (zarr3::node_type_of(*j, where) == zarr3::NodeType::Group) {
            root = Zarr3Group::Create(std::string(), "/", zarr3::Group::open(store, ""), ctx);
        } else {
            auto meta = zarr3::parse_array_metadata(*j, where);
            auto arr = zarr3::Array::open(store, "", std::move(meta));
            root = Zarr3Group::CreateForRootArray(arr, RootArrayName(target.root), ctx);
        }
        ds = std::make_unique<Zarr3MDDataset>(root, ctx);
    });
    if (!ds) return nullptr;
    ds->SetDescription(poOpenInfo->pszFilename);
    return ds.release();
}

GDALDataset* Zarr3CreateMultidim(const char* pszName, CSLConstList, CSLConstList) {
    using namespace zarr3drv;
    std::string root = pszName ? pszName : "";
    while (root.size() > 1 && root.back() == '/')
        root.pop_back();
    std::unique_ptr<Zarr3MDDataset> ds;
    Guard(root, [&] {
        if (root.empty()) throw zarr3::Error("empty dataset name");
        VSIStatBufL st;
        if (VSIStatL((root + "/zarr.json").c_str(), &st) == 0)
            throw zarr3::Error(root + ": a Zarr store already exists there; delete it first");
        if (VSIStatL(root.c_str(), &st) != 0 && VSIMkdir(root.c_str(), 0755) != 0 &&
            VSIMkdirRecursive(root.c_str(), 0755) != 0)
            throw zarr3::Error(root + ": cannot create the folder");
        auto store = std::make_shared<VSIStore>(root, true);
        auto ctx = std::make_shared<MDContext>(store, true);
        auto group = zarr3::Group::create(store, "");
        ds = std::make_unique<Zarr3MDDataset>(Zarr3Group::Create(std::string(), "/", group, ctx),
                                              ctx);
    });
    if (!ds) return nullptr;
    ds->SetDescription(root.c_str());
    return ds.release();
}

GDALDataset* Zarr3CreateCopyMultidim(const char* pszName, GDALDataset* src, int strict,
                                     CSLConstList options, GDALProgressFunc progress,
                                     void* progress_data) {
    // ARRAY:<option> entries (and ARRAY:IF(DIM=n):/IF(NAME=x): forms) reach
    // every CreateMDArray through GDALGroup::CopyFrom; the rest is for the dataset.
    CPLStringList dataset_options;
    for (CSLConstList it = options; it && *it; ++it)
        if (!STARTS_WITH_CI(*it, "ARRAY:")) dataset_options.AddString(*it);
    std::unique_ptr<GDALDataset> ds(Zarr3CreateMultidim(pszName, nullptr, dataset_options.List()));
    if (!ds) return nullptr;
    if (GDALDriver::DefaultCreateCopyMultiDimensional(src, ds.get(), strict != 0, options, progress,
                                                      progress_data) != CE_None)
        return nullptr;
    return ds.release();
}
