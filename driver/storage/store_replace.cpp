// Replacing an existing local Zarr store (see store_replace.hpp).
#include "storage/store_replace.hpp"

#include "storage/path_guard.hpp"
#include "storage/unfinished_copy.hpp"
#include "zarr3/common.hpp"
#include "zarr3/compact.hpp"

#include <nlohmann/json.hpp>

#include "cpl_conv.h"
#include "cpl_error.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zarr3drv {

namespace {

std::string Sibling(const std::string& root, const char* suffix) {
    std::string parent = CPLGetPath(root.c_str());
    if (parent.empty()) parent = ".";
    return parent + "/." + CPLGetFilename(root.c_str()) + suffix;
}

bool Present(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}

bool IsFolder(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string OsError(int err) {
    return std::string(" (") + std::strerror(err) + ")";
}

// Exchanges two paths in one step; false (errno set) where the file system
// or the kernel cannot (ZARR3_TEST_NO_EXCHANGE=1 forces that, for tests).
bool Exchange(const std::string& a, const std::string& b) {
    const char* no = std::getenv("ZARR3_TEST_NO_EXCHANGE");
    if (no && std::strcmp(no, "1") == 0) {
        errno = EINVAL;
        return false;
    }
#ifdef RENAME_EXCHANGE
    return ::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE) == 0;
#else
    errno = ENOSYS;
    return false;
#endif
}

// Removes what an earlier replacement left at `dir` (a hidden name of ours).
void RemoveLeftover(const std::string& dir) {
    if (!Present(dir)) return;
    if (!IsFolder(dir))
        throw zarr3::Error(dir + ": expected the folder of an earlier replacement; found "
                                 "something else (a file or a link): move it away");
    if (IsUnfinishedCopy(dir) && !IsAbandonedCopy(dir))
        throw zarr3::Error(dir + ": another replacement of this store is still running");
    std::string error;
    if (!RemoveStoreFolder(dir, error))
        throw zarr3::Error(dir + ": what an earlier replacement left cannot be removed (" + error +
                           ")");
}

void RemoveOld(const std::string& dir) {
    std::string error;
    if (!RemoveStoreFolder(dir, error))
        CPLError(CE_Warning, CPLE_FileIO,
                 "%s: the replaced store was not entirely removed (%s); delete it yourself",
                 dir.c_str(), error.c_str());
}

} // namespace

std::string StagingName(const std::string& root) {
    return Sibling(root, ".zarr3-new");
}
std::string AsideName(const std::string& root) {
    return Sibling(root, ".zarr3-old");
}

bool IsReplaceableStore(const std::string& root) {
    if (root.empty() || !IsPosixPath(root) || !IsFolder(root)) return false;
    CPLErrorStateBackuper keep;
    CPLErrorHandlerPusher quiet(CPLQuietErrorHandler);
    const FolderScan scan = ScanFolder(root, false);
    if (scan.kind != FolderScan::Kind::Store || !scan.nested_store.empty()) return false;
    std::FILE* fp = std::fopen((root + "/zarr.json").c_str(), "rb");
    if (!fp) return false;
    std::string text;
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), fp)) > 0 && text.size() < (64u << 20))
        text.append(buf, n);
    std::fclose(fp);
    const auto j = nlohmann::json::parse(text, nullptr, false);
    return j.is_object() && j.contains("zarr_format") && j["zarr_format"] == 3;
}

bool RecoverInterruptedSwap(const std::string& root) {
    if (root.empty() || !IsPosixPath(root)) return false;
    const std::string aside = AsideName(root);
    if (!IsFolder(aside)) return false;
    CPLErrorStateBackuper keep;
    CPLErrorHandlerPusher quiet(CPLQuietErrorHandler);
    if (!Present(root)) {
        if (!Present(aside + "/zarr.json") || std::rename(aside.c_str(), root.c_str()) != 0)
            return false;
        CPLDebug("Zarr3", "%s: an interrupted replacement: the old store put back", root.c_str());
        return true;
    }
    std::string error;
    RemoveStoreFolder(aside, error);
    return false;
}

void RemoveReplacementLeftovers(const std::string& root) {
    if (root.empty() || !IsPosixPath(root)) return;
    CPLErrorStateBackuper keep;
    CPLErrorHandlerPusher quiet(CPLQuietErrorHandler);
    for (const std::string& dir : {StagingName(root), AsideName(root)}) {
        try {
            RemoveLeftover(dir);
        } catch (const std::exception&) {
            // kept: a running replacement's, or holding foreign files
        }
    }
}

std::string BeginReplacement(const std::string& root) {
    RecoverInterruptedSwap(root);
    const std::string staging = StagingName(root);
    RemoveLeftover(staging);
    RemoveLeftover(AsideName(root));
    // Created here, exclusively, and marked: a second replacement of the
    // same store at the same time is refused instead of sharing the folder.
    if (::mkdir(staging.c_str(), 0755) != 0) {
        const int err = errno;
        throw zarr3::Error(staging + ": cannot create the folder for the new store" +
                           (err == EEXIST
                                ? std::string(": another replacement of " + root + " is running")
                                : OsError(err)));
    }
    MarkUnfinished(staging);
    return staging;
}

void FinishReplacement(const std::string& root, const std::string& staging) {
    ClearUnfinished(staging);
    zarr3::test_kill_point("replace-staged");
    if (Exchange(staging, root)) {
        zarr3::test_kill_point("replace-exchanged");
        RemoveOld(staging);
    } else if (errno == EINVAL || errno == ENOSYS || errno == ENOTSUP) {
        // No exchange here: old aside, new in place, old removed. A kill
        // between the renames is repaired by RecoverInterruptedSwap.
        const std::string aside = AsideName(root);
        RemoveLeftover(aside);
        if (std::rename(root.c_str(), aside.c_str()) != 0)
            throw zarr3::Error(root + ": cannot move the old store aside to " + aside +
                               OsError(errno));
        zarr3::test_kill_point("replace-aside");
        if (std::rename(staging.c_str(), root.c_str()) != 0) {
            const int err = errno;
            std::rename(aside.c_str(), root.c_str());
            throw zarr3::Error(root + ": cannot move the new store " + staging + " into place" +
                               OsError(err));
        }
        zarr3::test_kill_point("replace-exchanged");
        RemoveOld(aside);
    } else {
        throw zarr3::Error(root + ": cannot exchange it with the new store " + staging +
                           OsError(errno));
    }
    // A PAM side file describes the old data.
    const std::string aux = root + ".aux.xml";
    if (Present(aux)) ::unlink(aux.c_str());
}

} // namespace zarr3drv
