// The unfinished-copy mark of a store folder (see unfinished_copy.hpp).
#include "unfinished_copy.hpp"

#include "path_guard.hpp"

#include "cpl_conv.h"
#include "cpl_error.h"
#include "cpl_string.h"
#include "cpl_vsi.h"

#include <cerrno>
#include <csignal>
#include <unistd.h>

namespace zarr3drv {

namespace {

constexpr const char* kMark = ".zarr3-unfinished";

std::string mark_of(const std::string& root) {
    return root + "/" + kMark;
}

std::string host_name() {
    char buf[256] = {};
    if (gethostname(buf, sizeof(buf) - 1) != 0) return "host";
    return buf;
}

bool exists(const std::string& path) {
    VSIStatBufL st;
    return VSIStatExL(path.c_str(), &st, VSI_STAT_EXISTS_FLAG) == 0;
}

} // namespace

void MarkUnfinished(const std::string& root) {
    const std::string text = host_name() + " " + std::to_string(static_cast<long>(getpid())) + "\n";
    VSILFILE* fp = VSIFOpenL(mark_of(root).c_str(), "wb");
    if (!fp) return; // best effort: the root zarr.json is still written last
    VSIFWriteL(text.data(), 1, text.size(), fp);
    VSIFCloseL(fp);
}

void ClearUnfinished(const std::string& root) {
    CPLErrorStateBackuper keep;
    CPLErrorHandlerPusher quiet(CPLQuietErrorHandler);
    VSIUnlink(mark_of(root).c_str());
}

bool IsUnfinishedCopy(const std::string& root) {
    return exists(mark_of(root)) && !exists(root + "/zarr.json");
}

bool IsAbandonedCopy(const std::string& root) {
    if (!IsUnfinishedCopy(root)) return false;
    VSILFILE* fp = VSIFOpenL(mark_of(root).c_str(), "rb");
    if (!fp) return true;
    char buf[300] = {};
    VSIFReadL(buf, 1, sizeof(buf) - 1, fp);
    VSIFCloseL(fp);
    const CPLStringList words(CSLTokenizeString(buf));
    if (words.size() != 2 || host_name() != words[0]) return true;
    const long pid = atol(words[1]);
    if (pid <= 0) return true;
    if (pid == static_cast<long>(getpid())) return true; // a copy of this process that failed
    return kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

std::set<std::string> FolderEntries(const std::string& root) {
    std::set<std::string> out;
    const CPLStringList names(VSIReadDir(root.c_str()));
    for (int i = 0; i < names.size(); ++i) {
        const std::string n = names[i];
        if (!n.empty() && n != "." && n != "..") out.insert(n);
    }
    return out;
}

void RemoveCreated(const std::string& root, bool folder_existed,
                   const std::set<std::string>& kept) {
    CPLErrorStateBackuper keep;
    CPLErrorHandlerPusher quiet(CPLQuietErrorHandler);
    std::string error;
    if (!folder_existed) {
        RemoveTree(root, error);
        return;
    }
    for (const auto& n : FolderEntries(root))
        if (!kept.count(n)) RemoveTree(root + "/" + n, error);
}

} // namespace zarr3drv
