// The multidimensional dataset: a GDALDataset whose root group is the store
// root; opened read-only or for update, or created empty.
#include "error_boundary.hpp"
#include "gdal_compat.hpp"
#include "multidim/md_array.hpp"
#include "multidim/md_context.hpp"
#include "multidim/md_group.hpp"
#include "storage/consolidation.hpp"
#include "storage/icechunk_commit.hpp"
#include "storage/store_adapters.hpp"
#include "storage/store_replace.hpp"
#include "storage/unfinished_copy.hpp"
#include "storage/vsi_store.hpp"
#include "zarr3/metadata.hpp"
#include "zarr3_driver.hpp"

#include "cpl_vsi.h"

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>

namespace zarr3drv {
namespace {

class Zarr3MDDataset final : public GDALDataset {
  public:
    Zarr3MDDataset(std::shared_ptr<GDALGroup> root, std::shared_ptr<MDContext> ctx)
        : root_(std::move(root)), ctx_(std::move(ctx)) {
        eAccess = ctx_->writable() ? GA_Update : GA_ReadOnly;
    }
    ~Zarr3MDDataset() override { CloseDataset(); }
#if ZARR3_HAVE_DATASET_CLOSE
    CPLErr Close(ZARR3_CLOSE_PARAMS) override {
        CPLErr err = CloseDataset();
        if (GDALDataset::Close() != CE_None) err = CE_Failure;
        return err;
    }
#endif
    std::shared_ptr<GDALGroup> GetRootGroup() const override {
        return root_;
    }
    const std::shared_ptr<MDContext>& context() const {
        return ctx_;
    }
    // Writes the buffered partial chunks; false (error reported) on failure.
    bool FlushAll() {
        return FlushArrays();
    }

    FlushCacheResult FlushCache(bool at_closing) override {
        const CPLErr e = BaseFlushCache(*this, at_closing);
        return ToFlushCacheResult(FlushArrays() ? e : CE_Failure);
    }

  private:
    // The buffered chunks, then the commit of an Icechunk repository opened
    // for update (arrays still held after this write into the next commit,
    // made when the last of them is released).
    CPLErr CloseDataset() {
        if (closed_ || !ctx_->writable()) return CE_None;
        closed_ = true;
        const bool flushed = FlushArrays();
        return CommitIfIcechunk(ctx_->store().get()) && flushed ? CE_None : CE_Failure;
    }
    // Writes the buffered partial chunks of every array of this dataset.
    bool FlushArrays() {
        if (!ctx_->writable()) return true;
        return ErrorBoundary(ctx_->store()->uri(), [&] { ctx_->Flush(); });
    }
    std::shared_ptr<GDALGroup> root_;
    std::shared_ptr<MDContext> ctx_;
    bool closed_ = false;
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
    ErrorBoundary(where, [&] {
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

namespace zarr3drv {
namespace {

// A new dataset over `store`: its root group is put at once. Throws.
std::unique_ptr<Zarr3MDDataset> NewMDDataset(const std::shared_ptr<zarr3::Store>& store,
                                             const std::string& root) {
    auto ctx = std::make_shared<MDContext>(store, true);
    auto group = zarr3::Group::create(store, "");
    auto ds =
        std::make_unique<Zarr3MDDataset>(Zarr3Group::Create(std::string(), "/", group, ctx), ctx);
    ds->SetDescription(root.c_str());
    return ds;
}

// The folder `root` (created if missing) as a new store with a root group.
// `wrap` may wrap the store (a copy holds its root zarr.json back).
std::unique_ptr<Zarr3MDDataset> CreateMDStore(
    const std::string& root,
    const std::function<std::shared_ptr<zarr3::Store>(std::shared_ptr<zarr3::Store>)>& wrap) {
    std::unique_ptr<Zarr3MDDataset> ds;
    ErrorBoundary(root, [&] {
        if (root.empty()) throw zarr3::Error("empty dataset name");
        VSIStatBufL st;
        if (VSIStatL((root + "/zarr.json").c_str(), &st) == 0)
            throw zarr3::Error(root + ": a Zarr store already exists there; delete it first");
        if (VSIStatL(root.c_str(), &st) != 0 && VSIMkdir(root.c_str(), 0755) != 0 &&
            VSIMkdirRecursive(root.c_str(), 0755) != 0)
            throw zarr3::Error(root + ": cannot create the folder");
        std::shared_ptr<zarr3::Store> store = std::make_shared<VSIStore>(root, true);
        ds = NewMDDataset(wrap ? wrap(store) : store, root);
    });
    return ds;
}

std::string TrimRoot(const char* name) {
    std::string root = name ? name : "";
    while (root.size() > 1 && root.back() == '/')
        root.pop_back();
    return root;
}

} // namespace
} // namespace zarr3drv

GDALDataset* Zarr3CreateMultidim(const char* pszName, CSLConstList root_group_options,
                                 CSLConstList options) {
    using namespace zarr3drv;
    const Consolidation consolidated = ConsolidationAsked(options, root_group_options);
    return CreateMDStore(TrimRoot(pszName),
                         [&](std::shared_ptr<zarr3::Store> s) {
                             return ConsolidatingIf(std::move(s), consolidated);
                         })
        .release();
}

namespace zarr3drv {
namespace {
// The metadata of every array of this plugin under `group` (recursively), by full name: the layouts
// a copy keeps (zarr3::copy_layout, in Zarr3Group::CreateMDArray).
void CollectCopySources(const std::shared_ptr<GDALGroup>& group,
                        std::map<std::string, zarr3::ArrayMetadata>& out, int depth = 0) {
    if (!group || depth > 64) return;
    for (const auto& name : group->GetMDArrayNames())
        if (auto a = std::dynamic_pointer_cast<Zarr3MDArray>(group->OpenMDArray(name)))
            out.emplace(a->GetFullName(), a->array()->metadata());
    for (const auto& name : group->GetGroupNames())
        CollectCopySources(group->OpenGroup(name), out, depth + 1);
}

// Copies every group and array of `src` into `ds` and flushes the buffered
// chunks; false after a CPLError naming `root`.
bool CopyHierarchy(Zarr3MDDataset& ds, const std::string& root, GDALDataset* src, int strict,
                   CSLConstList options, GDALProgressFunc progress, void* progress_data) {
    // While copying, ARRAY: options go to the arrays they fit and every
    // failure is recorded: GDAL 3.6 goes on when e.g. a coordinate array
    // cannot be created, and the copy would succeed without it.
    std::map<std::string, zarr3::ArrayMetadata> sources;
    if (dynamic_cast<Zarr3MDDataset*>(src)) CollectCopySources(src->GetRootGroup(), sources);
    ds.context()->SetCopySources(std::move(sources));
    ds.context()->SetCopying(true);
    bool ok = GDALDriver::DefaultCreateCopyMultiDimensional(src, &ds, strict != 0, options,
                                                            progress, progress_data) == CE_None;
    ds.context()->SetCopying(false);
    if (ok && !ds.context()->failure().empty()) {
        CPLError(CE_Failure, CPLE_AppDefined, "%s: the copy failed (%s: see the error above)",
                 root.c_str(), ds.context()->failure().c_str());
        ok = false;
    }
    return ok && ds.FlushAll();
}
} // namespace

GDALDataset* Zarr3CopyMultidimInStore(std::shared_ptr<zarr3::Store> store, const std::string& root,
                                      GDALDataset* src, int strict, CSLConstList options,
                                      GDALProgressFunc progress, void* progress_data) {
    std::unique_ptr<Zarr3MDDataset> ds;
    ErrorBoundary(root, [&] {
        // An Icechunk session (lists its nodes from its manifests): only when asked.
        ds = NewMDDataset(ConsolidatingIf(store, ConsolidationAsked(options) == Consolidation::Yes),
                          root);
    });
    if (ds && CopyHierarchy(*ds, root, src, strict, options, progress, progress_data))
        return ds.release();
    DiscardIfIcechunk(store.get()); // before the dataset's close could commit part of it
    return nullptr;
}

} // namespace zarr3drv

GDALDataset* Zarr3CreateCopyMultidim(const char* pszName, GDALDataset* src, int strict,
                                     CSLConstList options, GDALProgressFunc progress,
                                     void* progress_data) {
    using namespace zarr3drv;
    // ARRAY:<option> entries (and ARRAY:IF(DIM=n):/IF(NAME=x): forms) reach
    // every CreateMDArray through GDALGroup::CopyFrom; the rest is for the
    // dataset (no dataset creation options yet).
    std::string root = TrimRoot(pszName);
    // An existing store is replaced: the copy goes to a hidden staging
    // folder beside it, swapped into place when complete (store_replace.hpp).
    std::string target;
    if (IsReplaceableStore(root) && !ErrorBoundary(root, [&] {
            target = root;
            root = BeginReplacement(target);
        }))
        return nullptr;
    // A killed copy's folder is replaced; otherwise only what this copy
    // creates is removed when it fails or is cancelled.
    if (target.empty() && !root.empty() && IsAbandonedCopy(root)) RemoveCreated(root, false);
    VSIStatBufL st;
    const bool existed = target.empty() && !root.empty() && VSIStatL(root.c_str(), &st) == 0;
    const std::set<std::string> before = existed ? FolderEntries(root) : std::set<std::string>();
    std::shared_ptr<DeferredRootStore> deferred;
    std::unique_ptr<Zarr3MDDataset> ds = CreateMDStore(root, [&](std::shared_ptr<zarr3::Store> s) {
        deferred = std::make_shared<DeferredRootStore>(std::move(s));
        return ConsolidatingIf(deferred, ConsolidationAsked(options));
    });
    if (!ds) return nullptr;
    MarkUnfinished(root);
    // The arrays' buffered chunks first, the root zarr.json last.
    const bool ok = CopyHierarchy(*ds, root, src, strict, options, progress, progress_data) &&
                    ErrorBoundary(root, [&] { deferred->commit(); });
    if (!ok) {
        ds.reset();
        RemoveCreated(root, existed, before);
        return nullptr;
    }
    ClearUnfinished(root);
    if (target.empty()) return ds.release();
    CPLErrorReset();
    ds.reset();
    if (CPLGetLastErrorType() >= CE_Failure) { // closing failed: the old store stays
        RemoveCreated(root, false);
        return nullptr;
    }
    if (!ErrorBoundary(target, [&] {
            try {
                FinishReplacement(target, root);
            } catch (...) {
                RemoveCreated(root, false);
                throw;
            }
        }))
        return nullptr;
    const char* const drivers[] = {"Zarr3", nullptr};
    return GDALDataset::FromHandle(
        GDALOpenEx(target.c_str(), GDAL_OF_MULTIDIM_RASTER | GDAL_OF_UPDATE | GDAL_OF_VERBOSE_ERROR,
                   drivers, nullptr, nullptr));
}
