// Creating Icechunk repositories (icechunk_create.hpp).
#include "storage/icechunk_create.hpp"

#include "classic/raster_dataset.hpp"
#include "error_boundary.hpp"
#include "storage/icechunk_commit.hpp"
#include "storage/vsi_store.hpp"
#include "zarr3/array.hpp"
#include "zarr3/metadata.hpp"
#include "zarr3/store_copy.hpp"
#include "zarr3_driver.hpp"

#include "cpl_conv.h"
#include "cpl_string.h"
#include "cpl_vsi.h"

namespace zarr3drv {

namespace {

bool Exists(const std::string& path) {
    VSIStatBufL st;
    return VSIStatL(path.c_str(), &st) == 0;
}

// The repository's storage, created (empty, branch main) when absent.
// Refused when `root` holds a plain Zarr store.
std::shared_ptr<zarr3::Store> RepositoryStorage(const std::string& root) {
    auto storage = WritableRepositoryStorage(root);
    if (LooksLikeIcechunkRepo(root)) return storage;
    if (Exists(root + "/zarr.json"))
        throw zarr3::Error(root + ": a plain Zarr store is there, not an Icechunk repository; "
                                  "delete it first or choose another name");
    // Object stores have no folders (a mkdir there writes a marker object).
    if (!IsRemoteVSIPath(root) && !Exists(root) && VSIMkdir(root.c_str(), 0755) != 0 &&
        VSIMkdirRecursive(root.c_str(), 0755) != 0)
        throw zarr3::Error(root + ": cannot create the folder");
    zarr3::icechunk::create_repository(storage);
    return storage;
}

CPLStringList WithoutIcechunkOptions(CSLConstList options) {
    CPLStringList out(CSLDuplicate(const_cast<char**>(options)));
    for (const char* key : {"ICECHUNK", "COMMIT_MESSAGE", "BRANCH"})
        out.SetNameValue(key, nullptr);
    return out;
}

std::string MessageOf(CSLConstList options, const char* fallback) {
    const char* m = CSLFetchNameValue(options, "COMMIT_MESSAGE");
    return m && m[0] ? m : fallback;
}

// A session on the branch `name` selects (WriteBranch) of the repository
// it designates (created when absent, for branch main only) for a dataset
// being created; `fill` puts its first nodes. A failure
// discards the session: nothing of a half-made create is committed.
// `commit_now`: committed before returning (a copy: its result is the
// dataset's, not its close's); else when the dataset closes.
template <typename Fill>
GDALDataset* CreateInSession(const char* name, CSLConstList options, const char* message,
                             bool commit_now, Fill&& fill) {
    const std::string root = IcechunkRepoRoot(name);
    std::shared_ptr<CommittingStore> session;
    GDALDataset* ds = nullptr;
    ErrorBoundary(root, [&] {
        IcechunkVersion v;
        v.branch = WriteBranch(name, options);
        if (v.branch != "main" && !LooksLikeIcechunkRepo(root))
            throw zarr3::Error(root + ": no Icechunk repository here yet, so no branch '" +
                               v.branch +
                               "': a new repository has only main (write there, then make "
                               "branches with `zarr3 branch`); nothing was written");
        RepositoryStorage(root);
        session = OpenRepositoryForUpdate(root, v, MessageOf(options, message).c_str());
        try {
            ds = fill(session);
        } catch (...) {
            session->Discard();
            throw;
        }
        if (!ds) session->Discard();
    });
    if (ds && commit_now && !session->Commit()) {
        GDALClose(ds); // the failure was reported; closing does not commit again
        return nullptr;
    }
    return ds;
}

// What a new dataset replaces: everything the branch held.
void EraseAll(zarr3::Store& session) {
    zarr3::MemoryStore nothing;
    zarr3::replace_store_contents(nothing, session);
}
} // namespace

bool WantsIcechunk(const char* name, CSLConstList options) {
    return (name && STARTS_WITH_CI(name, "ICECHUNK:")) ||
           CPLTestBool(CSLFetchNameValueDef(options, "ICECHUNK", "NO"));
}

GDALDataset* IcechunkCreateMultidim(const char* name, CSLConstList options) {
    const std::string root = IcechunkRepoRoot(name);
    return CreateInSession(
        name, options, "gdal-zarr3: create", false,
        [&](const std::shared_ptr<CommittingStore>& session) {
            EraseAll(*session); // as classic Create: the new dataset replaces the branch's contents
            zarr3::Group::create(session, "");
            GDALOpenInfo oi(root.c_str(), GDAL_OF_MULTIDIM_RASTER | GDAL_OF_UPDATE);
            OpenTarget t;
            t.root = root;
            return Zarr3OpenMultidim(&oi, session, t);
        });
}

GDALDataset* IcechunkCreate(const char* name, int xsize, int ysize, int bands, GDALDataType type,
                            CSLConstList options) {
    const std::string root = IcechunkRepoRoot(name);
    const CPLStringList plain_options = WithoutIcechunkOptions(options);
    return CreateInSession(name, options, "gdal-zarr3: create", false,
                           [&](const std::shared_ptr<CommittingStore>& session) {
                               EraseAll(*session);
                               return Zarr3CreateInStore(session, root, xsize, ysize, bands, type,
                                                         plain_options.List());
                           });
}

GDALDataset* IcechunkCreateCopy(const char* name, GDALDataset* src, int strict,
                                CSLConstList options, GDALProgressFunc progress,
                                void* progress_data) {
    const std::string root = IcechunkRepoRoot(name);
    const CPLStringList plain = WithoutIcechunkOptions(options);
    const bool multidim = src->GetRasterCount() == 0 && src->GetRootGroup();
    return CreateInSession(
        name, options, "gdal-zarr3: copy", true,
        [&](const std::shared_ptr<CommittingStore>& session) {
            EraseAll(*session);
            return multidim ? Zarr3CopyMultidimInStore(session, root, src, strict, plain.List(),
                                                       progress, progress_data)
                            : Zarr3CreateCopyInStore(session, root, src, strict, plain.List(),
                                                     progress, progress_data);
        });
}

} // namespace zarr3drv
