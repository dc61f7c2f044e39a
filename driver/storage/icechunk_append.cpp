// Appends to an Icechunk repository as commits (icechunk_create.hpp): the
// append of raster_append.cpp runs in a session on the branch tip and is
// committed once; when another writer committed to the same array meanwhile
// (core's CommitConflict: two appends are never disjoint) the whole append
// is made again on the new tip, a bounded number of times.
#include "storage/icechunk_create.hpp"

#include "classic/raster_append.hpp"
#include "error_boundary.hpp"
#include "limits.hpp"
#include "storage/icechunk_commit.hpp"

#include "cpl_conv.h"
#include "cpl_string.h"

namespace zarr3drv {

bool AppendsToRepository(const char* name, CSLConstList options) {
    return IsAppendRequest(options) && LooksLikeIcechunkRepo(IcechunkRepoRoot(name));
}

GDALDataset* IcechunkAppendCopy(const char* name, GDALDataset* src, CSLConstList options,
                                GDALProgressFunc progress, void* progress_data) {
    const std::string root = IcechunkRepoRoot(name);
    std::string branch;
    if (!ErrorBoundary(root, [&] { branch = WriteBranch(name, options); })) return nullptr;
    const char* given = CSLFetchNameValue(options, "COMMIT_MESSAGE");
    const std::string message = given && given[0]
                                    ? given
                                    : std::string("gdal-zarr3: append along ") +
                                          CSLFetchNameValueDef(options, "APPEND_DIM", "?") +
                                          AppendedStepsText(src, options);
    const int attempts =
        std::max(1, atoi(CPLGetConfigOption("ZARR3_ICECHUNK_APPEND_RETRIES", "8")));
    std::shared_ptr<zarr3::Store> storage;
    if (!ErrorBoundary(root, [&] { storage = WritableRepositoryStorage(root); })) return nullptr;
    for (int attempt = 1;; ++attempt) {
        std::shared_ptr<zarr3::icechunk::IcechunkSession> session;
        if (!ErrorBoundary(root, [&] { session = OpenBranchSession(storage, root, branch); }))
            return nullptr;
        GDALDataset* ds = Zarr3AppendInto(root, session, src, options, progress, progress_data);
        if (!ds) return nullptr; // refused or failed: nothing committed
        bool conflict = false;
        const bool ok = ErrorBoundary(root, [&] {
            try {
                session->commit(message);
            } catch (const zarr3::icechunk::CommitConflict& e) {
                if (attempt >= attempts)
                    throw zarr3::Error(
                        root + ": the append could not be committed to branch '" + branch +
                        "' after " + std::to_string(attempt) +
                        " attempts (other writers kept committing first): " + e.what());
                CPLDebug("Zarr3", "%s: append attempt %d lost to another commit (%s); again",
                         root.c_str(), attempt, e.what());
                conflict = true;
            }
        });
        if (!ok || conflict) GDALClose(ds);
        if (!ok) return nullptr;
        if (conflict) continue;
        // More steps than the classic view of the branch shows (ZARR3_MAX_BANDS): the append's own
        // view, over the session now at the new tip, is the result.
        if (static_cast<uint64_t>(ds->GetRasterCount()) > MaxBands()) return ds;
        GDALClose(ds);
        break;
    }
    // The branch quoted: any valid branch name ("a&b", "q?x") reopens that branch.
    const std::string open_name =
        std::string("ICECHUNK:\"") + root + "?branch=" + EncodeQueryValue(branch) + "\"";
    const char* const drivers[] = {"Zarr3", nullptr};
    return GDALDataset::Open(open_name.c_str(), GDAL_OF_RASTER | GDAL_OF_VERBOSE_ERROR, drivers);
}

} // namespace zarr3drv
