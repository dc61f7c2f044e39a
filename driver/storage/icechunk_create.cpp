// Creating Icechunk repositories (icechunk_create.hpp).
#include "storage/icechunk_create.hpp"

#include "classic/raster_dataset.hpp"
#include "error_boundary.hpp"
#include "storage/icechunk_commit.hpp"
#include "storage/path_guard.hpp"
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

// The hidden folder beside `root` a copy is staged in; the store is
// `<it>/<name of root>` (a root array is named after its store's folder).
std::string StagingParent(const std::string& root) {
    const std::string dir = CPLGetPath(root.c_str());
    const std::string name = "." + std::string(CPLGetFilename(root.c_str())) + ".icechunk-staging";
    return dir.empty() ? name : std::string(CPLFormFilename(dir.c_str(), name.c_str(), nullptr));
}

// Removes the staging folder: a symbolic link found at its name (stale or
// planted) is removed itself, never followed into what it leads to.
void RemoveFolder(const std::string& path) {
    std::string error;
    if (!RemoveTree(path, error))
        CPLError(CE_Warning, CPLE_FileIO, "%s: cannot remove the staging folder (%s)",
                 path.c_str(), error.c_str());
}

// The repository's storage, created (empty, branch main) when absent.
// Refused when `root` holds a plain Zarr store.
std::shared_ptr<zarr3::Store> RepositoryStorage(const std::string& root) {
    auto storage = WritableRepositoryStorage(root);
    if (LooksLikeIcechunkRepo(root)) return storage;
    if (Exists(root + "/zarr.json"))
        throw zarr3::Error(root + ": a plain Zarr store is there, not an Icechunk repository; "
                                  "delete it first or choose another name");
    if (!Exists(root) && VSIMkdir(root.c_str(), 0755) != 0 &&
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

} // namespace

bool WantsIcechunk(const char* name, CSLConstList options) {
    return (name && STARTS_WITH_CI(name, "ICECHUNK:")) ||
           CPLTestBool(CSLFetchNameValueDef(options, "ICECHUNK", "NO"));
}

GDALDataset* IcechunkCreateCopy(const char* name, GDALDataset* src, CSLConstList options,
                                const PlainCopy& copy) {
    const std::string root = IcechunkRepoRoot(name);
    const std::string parent = StagingParent(root);
    const std::string staging = parent + "/" + CPLGetFilename(root.c_str());
    const char* branch = CSLFetchNameValueDef(options, "BRANCH", "main");
    // Refused before anything is written where no commit could be made.
    if (!ErrorBoundary(root, [&] { WritableRepositoryStorage(root); })) return nullptr;
    RemoveFolder(parent); // what a killed copy left
    if (VSIMkdir(parent.c_str(), 0755) != 0 && VSIMkdirRecursive(parent.c_str(), 0755) != 0) {
        CPLError(CE_Failure, CPLE_FileIO, "%s: cannot create the staging folder %s", root.c_str(),
                 parent.c_str());
        return nullptr;
    }
    const CPLStringList plain_options = WithoutIcechunkOptions(options);
    GDALDataset* staged = copy(staging.c_str(), plain_options.List());
    if (!staged) {
        RemoveFolder(parent);
        return nullptr;
    }
    const bool multidim = src->GetRasterCount() == 0 && src->GetRootGroup();
    CPLErrorReset();
    GDALClose(staged);
    bool ok = CPLGetLastErrorType() < CE_Failure;
    ok = ok && ErrorBoundary(root, [&] {
             auto storage = RepositoryStorage(root);
             auto session = zarr3::icechunk::IcechunkSession::open(storage, branch);
             VSIStore from(staging, false);
             zarr3::replace_store_contents(from, *session);
             if (session->has_changes()) session->commit(MessageOf(options, "gdal-zarr3: copy"));
         });
    RemoveFolder(parent);
    if (!ok) return nullptr;
    const std::string open_name = std::string("ICECHUNK:\"") + root + "?branch=" + branch + "\"";
    const unsigned flags = multidim ? GDAL_OF_MULTIDIM_RASTER : GDAL_OF_RASTER;
    const char* const drivers[] = {"Zarr3", nullptr};
    return GDALDataset::Open(open_name.c_str(), flags | GDAL_OF_VERBOSE_ERROR, drivers);
}

namespace {
// A session on the branch of the repository at `root` (created when absent)
// for a dataset being created; `fill` puts its first nodes. A failure
// discards the session: nothing of a half-made create is committed.
template <typename Fill>
GDALDataset* CreateInSession(const std::string& root, CSLConstList options, Fill&& fill) {
    std::shared_ptr<CommittingStore> session;
    GDALDataset* ds = nullptr;
    ErrorBoundary(root, [&] {
        RepositoryStorage(root);
        IcechunkVersion v;
        v.branch = CSLFetchNameValueDef(options, "BRANCH", "main");
        session = OpenRepositoryForUpdate(root, v, MessageOf(options, "gdal-zarr3: create").c_str());
        try {
            ds = fill(session);
        } catch (...) {
            session->Discard();
            throw;
        }
        if (!ds) session->Discard();
    });
    return ds;
}
} // namespace

GDALDataset* IcechunkCreateMultidim(const char* name, CSLConstList options) {
    const std::string root = IcechunkRepoRoot(name);
    return CreateInSession(root, options, [&](const std::shared_ptr<CommittingStore>& session) {
        if (!zarr3::read_node_json(*session, "")) zarr3::Group::create(session, "");
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
    return CreateInSession(root, options, [&](const std::shared_ptr<CommittingStore>& session) {
        zarr3::MemoryStore nothing; // the new raster replaces what the branch held
        zarr3::replace_store_contents(nothing, *session);
        return Zarr3CreateInStore(session, root, xsize, ysize, bands, type, plain_options.List());
    });
}

} // namespace zarr3drv
