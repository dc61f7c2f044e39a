// The life cycle of a store folder: the unfinished-copy mark, what a store
// folder holds, Delete and the target of a new store (see unfinished_copy.hpp).
#include "storage/unfinished_copy.hpp"
#include "storage/icechunk_open.hpp"

#include "open_target.hpp"
#include "storage/path_guard.hpp"
#include "storage/store_replace.hpp"
#include "zarr3/common.hpp"
#include "zarr3/store.hpp"

#include <nlohmann/json.hpp>

#include "cpl_conv.h"
#include "cpl_error.h"
#include "cpl_string.h"
#include "cpl_vsi.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <filesystem>
#include <functional>
#include <string_view>
#include <sys/stat.h>
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

// ------------------------------------------------------- what a folder holds

namespace {

constexpr size_t kForeignNamed = 5;       // foreign entries named in messages
constexpr size_t kShallowEntries = 10000; // top-level entries Identify looks at

enum class EntryType { Dir, File, Other };
struct Entry {
    std::string name;
    EntryType type;
};

// The entries of `dir`; symbolic links are files (removed, never followed).
bool ListFolder(const std::string& dir, std::vector<Entry>& out) {
    out.clear();
    if (IsPosixPath(dir)) {
        namespace fs = std::filesystem;
        std::error_code ec;
        fs::directory_iterator it(dir, ec), end;
        if (ec) return false;
        for (; it != end; it.increment(ec)) {
            if (ec) return false;
            const auto st = it->symlink_status(ec);
            if (ec) return false;
            const EntryType t = fs::is_directory(st)                            ? EntryType::Dir
                                : fs::is_regular_file(st) || fs::is_symlink(st) ? EntryType::File
                                                                                : EntryType::Other;
            out.push_back({it->path().filename().string(), t});
        }
        std::sort(out.begin(), out.end(),
                  [](const Entry& a, const Entry& b) { return a.name < b.name; });
        return !ec;
    }
    for (const auto& n : FolderEntries(dir)) {
        VSIStatBufL st;
        if (VSIStatL((dir + "/" + n).c_str(), &st) != 0) continue;
        out.push_back({n, VSI_ISDIR(st.st_mode)   ? EntryType::Dir
                          : VSI_ISREG(st.st_mode) ? EntryType::File
                                                  : EntryType::Other});
    }
    return true;
}

bool AllDigits(std::string_view s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit((unsigned char)c); });
}

// "\d+(\.\d+)*": a v2-encoded chunk key with the "." separator.
bool DottedDigits(std::string_view s) {
    size_t start = 0;
    while (true) {
        const size_t dot = s.find('.', start);
        if (!AllDigits(s.substr(start, dot == std::string_view::npos ? dot : dot - start)))
            return false;
        if (dot == std::string_view::npos) return true;
        start = dot + 1;
    }
}

bool EndsWith(const std::string& s, std::string_view suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The key a writer's side file belongs to: "<key>.tmp.<host>.<pid>.<n>" (a
// temporary file a killed writer left) and "<key>.lock" (a shard lock).
std::string KeyOfSideFile(const std::string& name) {
    if (EndsWith(name, ".lock")) return name.substr(0, name.size() - 5);
    const size_t at = name.rfind(".tmp.");
    if (at == std::string::npos || at == 0) return name;
    const std::string rest = name.substr(at + 5); // host.pid.n
    const size_t d2 = rest.rfind('.');
    if (d2 == std::string::npos || !AllDigits(std::string_view(rest).substr(d2 + 1))) return name;
    const size_t d1 = rest.rfind('.', d2 == 0 ? 0 : d2 - 1);
    if (d1 == std::string::npos || d1 == 0 ||
        !AllDigits(std::string_view(rest).substr(d1 + 1, d2 - d1 - 1)))
        return name;
    return name.substr(0, at);
}

// Where a folder sits in a store: below a "c" folder (default chunk keys
// "c/0/1"), or in the digit folders of v2 keys ("0/1") under a node that has
// its zarr.json.
struct FolderRole {
    bool under_c = false; // in a "c" folder or a digit folder below one
    bool v2_keys = false; // digit names are v2 chunk keys here
    bool top = false;     // the store root
};

bool IsStoreFile(const std::string& name, const FolderRole& role, bool has_json) {
    const std::string key = KeyOfSideFile(name);
    if (key == "zarr.json") return true;
    if (role.top && (name == kMark || name == "zarr.json.aux.xml")) return true;
    if (role.under_c && AllDigits(key)) return true; // "c/0/1"
    if (key == "c") return true;                     // the chunk of a 0-d array
    if (key.size() > 2 && key.compare(0, 2, "c.") == 0 && DottedDigits(key.substr(2)))
        return true; // default keys with the "." separator: "c.0.1"
    return (role.v2_keys || has_json) && DottedDigits(key); // v2 keys "0.1" or "0/1"
}

class Scanner {
  public:
    explicit Scanner(FolderScan& out) : out_(out) {}

    void Foreign(const std::string& rel) {
        if (out_.foreign.size() < kForeignNamed) out_.foreign.push_back(rel);
        ++out_.foreign_count;
    }

    // Walks `dir` (`rel` its path from the root, "" for the root).
    void Walk(const std::string& dir, const std::string& rel, const FolderRole& role, int depth) {
        std::vector<Entry> entries;
        if (depth > 64 || !ListFolder(dir, entries)) {
            Foreign(rel.empty() ? std::string(".") : rel); // cannot look inside: not ours to delete
            return;
        }
        const bool has_json = std::any_of(entries.begin(), entries.end(), [](const Entry& e) {
            return e.type == EntryType::File && e.name == "zarr.json";
        });
        for (const auto& e : entries) {
            const std::string r = rel.empty() ? e.name : rel + "/" + e.name;
            if (e.type == EntryType::Other) {
                Foreign(r);
            } else if (e.type == EntryType::File) {
                if (IsStoreFile(e.name, role, has_json)) {
                    ++store_files_;
                    files_.push_back(r);
                } else {
                    Foreign(r);
                }
            } else if (e.name == "c" && !role.under_c &&
                       !StatExists(dir + "/c/zarr.json")) { // with one: a node named "c"
                Walk(dir + "/c", r, FolderRole{true, false, false}, depth + 1);
                dirs_.push_back(r);
            } else if (AllDigits(e.name) && (role.under_c || role.v2_keys || has_json)) {
                Walk(dir + "/" + e.name, r, FolderRole{role.under_c, !role.under_c, false},
                     depth + 1);
                dirs_.push_back(r);
            } else if (!role.under_c && !role.v2_keys && zarr3::is_valid_key(e.name) &&
                       e.name[0] != '.') {
                const std::string sub = dir + "/" + e.name;
                if (role.top && EndsWith(e.name, ".zarr") && out_.nested_store.empty() &&
                    StatExists(sub + "/zarr.json"))
                    out_.nested_store = e.name;
                Walk(sub, r, FolderRole{}, depth + 1); // a child group or array
                dirs_.push_back(r);
            } else {
                Foreign(r + "/");
            }
        }
    }

    size_t store_files() const { return store_files_; }
    // What the walk verified as store content (relative paths): files, and
    // folders deepest first.
    const std::vector<std::string>& files() const { return files_; }
    const std::vector<std::string>& dirs() const { return dirs_; }

    static bool StatExists(const std::string& path) {
        VSIStatBufL st;
        return VSIStatExL(path.c_str(), &st, VSI_STAT_EXISTS_FLAG) == 0;
    }

  private:
    FolderScan& out_;
    size_t store_files_ = 0;
    std::vector<std::string> files_, dirs_;
};

// Shallow: the top-level entries are store files, "c", or node folders that
// hold a zarr.json or a "c" folder (at least one of those).
void ScanShallow(const std::string& root, const std::vector<Entry>& entries, FolderScan& out) {
    size_t nodes = 0;
    for (const auto& e : entries) {
        if (e.type == EntryType::File && IsStoreFile(e.name, FolderRole{false, false, true}, false))
            continue;
        if (e.type == EntryType::Dir && e.name != "c" && zarr3::is_valid_key(e.name) &&
            e.name[0] != '.' &&
            (Scanner::StatExists(root + "/" + e.name + "/zarr.json") ||
             Scanner::StatExists(root + "/" + e.name + "/c"))) {
            if (EndsWith(e.name, ".zarr") && out.nested_store.empty() &&
                Scanner::StatExists(root + "/" + e.name + "/zarr.json"))
                out.nested_store = e.name;
            ++nodes;
            continue;
        }
        if (e.type == EntryType::Dir && e.name == "c") {
            ++nodes;
            continue;
        }
        out.foreign.push_back(e.name);
        ++out.foreign_count;
        return;
    }
    if (nodes == 0) out.foreign_count = std::max<size_t>(out.foreign_count, 1);
}

} // namespace

namespace {

// What the full walk verified, for a removal of exactly that.
struct Verified {
    std::vector<std::string> files, dirs;
};

FolderScan ScanFolderImpl(const std::string& root, bool shallow, Verified* verified);

} // namespace

FolderScan ScanFolder(const std::string& root, bool shallow) {
    return ScanFolderImpl(root, shallow, nullptr);
}

namespace {

FolderScan ScanFolderImpl(const std::string& root, bool shallow, Verified* verified) {
    FolderScan out;
    VSIStatBufL st;
    if (VSIStatExL(root.c_str(), &st, VSI_STAT_EXISTS_FLAG | VSI_STAT_NATURE_FLAG) != 0) {
        // GDAL 3.6 cannot stat implicit /vsimem/ folders: look for entries.
        if (!STARTS_WITH(root.c_str(), "/vsimem/") || FolderEntries(root).empty()) return out;
    } else if (!VSI_ISDIR(st.st_mode)) {
        out.kind = FolderScan::Kind::NotFolder;
        return out;
    }
    out.marked = Scanner::StatExists(mark_of(root));
    const bool has_root_json = Scanner::StatExists(root + "/zarr.json");
    std::vector<Entry> entries;
    if (!ListFolder(root, entries)) {
        out.kind = FolderScan::Kind::Foreign;
        out.foreign.push_back(".");
        out.foreign_count = 1;
        return out;
    }
    if (entries.empty()) {
        out.kind = FolderScan::Kind::Empty;
        return out;
    }
    if (shallow) {
        if (!out.marked) {
            if (entries.size() > kShallowEntries) {
                out.kind = FolderScan::Kind::Foreign;
                return out;
            }
            ScanShallow(root, entries, out);
        }
    }
    size_t store_files = 1; // shallow: the mark or the node folders seen
    if (!shallow) {
        Scanner scanner(out);
        scanner.Walk(root, "", FolderRole{false, false, true}, 0);
        store_files = scanner.store_files();
        if (verified) *verified = {scanner.files(), scanner.dirs()};
    }
    if (out.foreign_count)
        out.kind = FolderScan::Kind::Foreign;
    else if (has_root_json)
        out.kind = FolderScan::Kind::Store;
    else
        out.kind = store_files ? FolderScan::Kind::Incomplete : FolderScan::Kind::NoStore;
    return out;
}

} // namespace

bool LooksLikeIncompleteStore(const std::string& root) {
    if (!IsPosixPath(root) && !STARTS_WITH(root.c_str(), "/vsimem/")) return false;
    if (Scanner::StatExists(root + "/zarr.json")) return false;
    CPLErrorStateBackuper keep;
    CPLErrorHandlerPusher quiet(CPLQuietErrorHandler);
    const FolderScan s = ScanFolder(root, true);
    return s.kind == FolderScan::Kind::Incomplete && s.nested_store.empty();
}

std::string ForeignList(const FolderScan& scan) {
    std::string out;
    for (size_t i = 0; i < scan.foreign.size(); ++i)
        out += (i ? ", " : "") + scan.foreign[i];
    if (scan.foreign_count > scan.foreign.size())
        out += " and " + std::to_string(scan.foreign_count - scan.foreign.size()) + " more";
    return out;
}

// ------------------------------------------------- removing verified content

namespace {

// A small text file (at most 1 MiB read).
std::string ReadSmallFile(const std::string& path) {
    std::string text;
    VSILFILE* fp = VSIFOpenL(path.c_str(), "rb");
    if (!fp) return text;
    char buf[65536];
    size_t n;
    while (text.size() < (1u << 20) && (n = VSIFReadL(buf, 1, sizeof(buf), fp)) > 0)
        text.append(buf, n);
    VSIFCloseL(fp);
    return text;
}

bool IsLink(const std::string& path) {
    struct stat st {};
    return IsPosixPath(path) && ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

// Removes one verified file (a link itself, never its target); a folder
// found in its place (changed since the scan) is left.
bool RemoveVerifiedFile(const std::string& path) {
    if (!IsPosixPath(path)) return VSIUnlink(path.c_str()) == 0;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return errno == ENOENT;
    if (S_ISDIR(st.st_mode)) return false;
    return ::unlink(path.c_str()) == 0 || errno == ENOENT;
}

// Removes the folder when empty; false (left) otherwise.
bool RemoveEmptyFolder(const std::string& path) {
    if (IsPosixPath(path)) return ::rmdir(path.c_str()) == 0 || errno == ENOENT;
    if (!FolderEntries(path).empty()) return false;
    VSIRmdir(path.c_str());
    return true;
}

// Removes exactly what `v` lists under `root`, then `root` when left empty
// (`remove_root`). False with `error` naming what was left in place.
bool RemoveVerified(const std::string& root, const Verified& v, bool remove_root,
                    std::string& error) {
    std::vector<std::string> left;
    for (const auto& f : v.files)
        if (!RemoveVerifiedFile(root + "/" + f)) left.push_back(f);
    for (const auto& d : v.dirs)
        if (!RemoveEmptyFolder(root + "/" + d)) left.push_back(d + "/");
    if (remove_root && !RemoveEmptyFolder(root)) {
        for (const auto& n : FolderEntries(root))
            if (std::find(left.begin(), left.end(), n) == left.end() &&
                std::find(left.begin(), left.end(), n + "/") == left.end())
                left.push_back(n);
        if (left.empty()) left.push_back(".");
    }
    if (left.empty()) return true;
    error = "left in place, not verified as store content: ";
    for (size_t i = 0; i < left.size() && i < kForeignNamed; ++i)
        error += (i ? ", " : "") + left[i];
    if (left.size() > kForeignNamed)
        error += " and " + std::to_string(left.size() - kForeignNamed) + " more";
    return false;
}

// An Icechunk repository (no zarr.json of a plain store beside it): a plain
// copy or Delete names it as one instead of listing its objects as foreign.
bool IsIcechunkFolder(const std::string& root) {
    return !Scanner::StatExists(root + "/zarr.json") && LooksLikeIcechunkRepo(root);
}

[[noreturn]] void ThrowNotRemovable(const std::string& path, const std::string& why) {
    throw zarr3::Error(path + ": " + why + "; nothing removed");
}

} // namespace

void CheckRemovable(const std::string& root, const std::string& rel) {
    const std::string path = root + "/" + rel;
    if (IsPosixPath(root)) {
        // Every folder from the store root down: a real folder, no link.
        std::string at = root;
        size_t start = 0;
        while (start <= rel.size()) {
            const size_t slash = rel.find('/', start);
            at += "/" + rel.substr(start, slash == std::string::npos ? slash : slash - start);
            if (IsLink(at)) ThrowNotRemovable(path, at + " is a symbolic link (never followed)");
            if (slash == std::string::npos) break;
            start = slash + 1;
        }
    }
    const FolderScan scan = ScanFolderImpl(path, false, nullptr);
    if (scan.kind == FolderScan::Kind::Missing) return; // nothing to remove
    if (scan.kind == FolderScan::Kind::NotFolder) ThrowNotRemovable(path, "not a folder");
    if (scan.kind == FolderScan::Kind::Foreign)
        ThrowNotRemovable(path, "it holds what a Zarr array does not (" + ForeignList(scan) + ")");
}

bool RemoveStoreFolder(const std::string& dir, std::string& error) {
    if (IsLink(dir)) {
        error = dir + " is a symbolic link (never followed)";
        return false;
    }
    Verified v;
    const FolderScan scan = ScanFolderImpl(dir, false, &v);
    if (scan.kind == FolderScan::Kind::Missing) return true;
    if (scan.kind == FolderScan::Kind::NotFolder) {
        error = "not a folder";
        return false;
    }
    return RemoveVerified(dir, v, true, error);
}

void RemoveEmptyGroup(const std::string& dir) {
    if (IsLink(dir) || FolderEntries(dir) != std::set<std::string>{"zarr.json"}) return;
    auto j = nlohmann::json::parse(ReadSmallFile(dir + "/zarr.json"), nullptr, false);
    if (!j.is_object() || j.value("node_type", "") != "group") return;
    if (RemoveVerifiedFile(dir + "/zarr.json")) RemoveEmptyFolder(dir);
}

void RemoveCreated(const std::string& root, bool folder_existed,
                   const std::set<std::string>& kept) {
    CPLErrorStateBackuper keep;
    CPLErrorHandlerPusher quiet(CPLQuietErrorHandler);
    if (IsLink(root)) return;
    Verified v;
    ScanFolderImpl(root, false, &v);
    if (folder_existed) {
        // Only what this copy added: entries not there before.
        const auto added = [&](const std::string& rel) {
            return kept.count(rel.substr(0, rel.find('/'))) == 0;
        };
        std::erase_if(v.files, [&](const std::string& f) { return !added(f); });
        std::erase_if(v.dirs, [&](const std::string& d) { return !added(d); });
    }
    std::string error;
    RemoveVerified(root, v, !folder_existed, error);
}

// ------------------------------------------------------------ delete, replace

namespace {

// The pid in the mark of a copy still running on this host (0: none).
long RunningCopy(const std::string& root) {
    if (!IsUnfinishedCopy(root) || IsAbandonedCopy(root)) return 0;
    VSILFILE* fp = VSIFOpenL(mark_of(root).c_str(), "rb");
    if (!fp) return 0;
    char buf[300] = {};
    VSIFReadL(buf, 1, sizeof(buf) - 1, fp);
    VSIFCloseL(fp);
    const CPLStringList words(CSLTokenizeString(buf));
    return words.size() == 2 ? atol(words[1]) : 0;
}

// The root zarr.json says zarr_format 3.
bool IsZarrV3Root(const std::string& root) {
    VSILFILE* fp = VSIFOpenL((root + "/zarr.json").c_str(), "rb");
    if (!fp) return false;
    std::string text;
    char buf[65536];
    size_t n;
    while ((n = VSIFReadL(buf, 1, sizeof(buf), fp)) > 0 && text.size() < (64u << 20))
        text.append(buf, n);
    VSIFCloseL(fp);
    const auto j = nlohmann::json::parse(text, nullptr, false);
    return j.is_object() && j.contains("zarr_format") && j["zarr_format"].is_number_integer() &&
           j["zarr_format"] == 3;
}

std::string RootOfName(const char* name) {
    OpenTarget t;
    {
        CPLErrorStateBackuper keep;
        CPLErrorHandlerPusher quiet(CPLQuietErrorHandler);
        if (!ParseOpenTarget(name, t)) return name ? name : "";
    }
    return t.root;
}

} // namespace

std::string StoreRoot(const char* name) {
    std::string s = name ? name : "";
    if (s.size() >= 10 && s.compare(s.size() - 10, 10, "/zarr.json") == 0) s.resize(s.size() - 10);
    while (s.size() > 1 && s.back() == '/')
        s.pop_back();
    return s;
}

CPLErr DeleteStore(const char* name) {
    // An ICECHUNK: name (gdal_translate's QuietDelete before a copy into a
    // repository): a repository keeps its history; the copy becomes a commit.
    if (name && STARTS_WITH_CI(name, "ICECHUNK:")) {
        bool ok = true;
        std::string error;
        const auto ice = ParseIcechunkName(name, ok, error);
        if (!ice || !ok || !LooksLikeIcechunkRepo(ice->repo)) return CE_None; // nothing there
        CPLError(CE_Warning, CPLE_AppDefined,
                 "%s: an Icechunk repository is not deleted (it keeps its history; a copy into "
                 "it is a new commit); remove the folder %s to delete it",
                 name, ice->repo.c_str());
        return CE_Failure;
    }
    const std::string root = RootOfName(name);
    const char* r = root.c_str();
    if (IsLink(root)) {
        CPLError(CE_Failure, CPLE_AppDefined,
                 "%s: a symbolic link; not deleted (links are never followed: delete the link "
                 "itself, or name the store folder it leads to)",
                 r);
        return CE_Failure;
    }
    if (IsIcechunkFolder(root)) {
        CPLError(CE_Failure, CPLE_AppDefined,
                 "%s: an Icechunk repository is not deleted (it keeps its history; a copy into "
                 "it with -co ICECHUNK=YES is a new commit); remove the folder to delete it",
                 r);
        return CE_Failure;
    }
    Verified verified;
    const FolderScan scan = ScanFolderImpl(root, false, &verified);
    switch (scan.kind) {
    case FolderScan::Kind::Missing:
        CPLError(CE_Failure, CPLE_FileIO, "%s: not found; nothing deleted", r);
        return CE_Failure;
    case FolderScan::Kind::NotFolder:
    case FolderScan::Kind::Empty:
    case FolderScan::Kind::NoStore:
        CPLError(CE_Failure, CPLE_AppDefined, "%s: not a Zarr store (no zarr.json); not deleted",
                 r);
        return CE_Failure;
    case FolderScan::Kind::Foreign:
        CPLError(CE_Failure, CPLE_AppDefined,
                 "%s: not deleted: it holds what a Zarr store does not (%s); move those out "
                 "first",
                 r, ForeignList(scan).c_str());
        return CE_Failure;
    case FolderScan::Kind::Store:
        if (!IsZarrV3Root(root)) {
            CPLError(CE_Failure, CPLE_AppDefined, "%s: not a Zarr v3 store; not deleted", r);
            return CE_Failure;
        }
        break;
    case FolderScan::Kind::Incomplete:
        if (!scan.nested_store.empty()) {
            CPLError(CE_Failure, CPLE_AppDefined,
                     "%s: not deleted: no zarr.json here, and it holds the store %s of its "
                     "own; delete the stores one by one",
                     r, scan.nested_store.c_str());
            return CE_Failure;
        }
        if (const long pid = RunningCopy(root)) {
            CPLError(CE_Failure, CPLE_AppDefined,
                     "%s: not deleted: a copy into it is still running (process %ld on this "
                     "host); stop it first",
                     r, pid);
            return CE_Failure;
        }
        break;
    }
    // Exactly what the scan verified; symbolic links inside the store are
    // removed, never followed.
    std::string error;
    if (!RemoveVerified(root, verified, true, error)) {
        CPLError(CE_Failure, CPLE_FileIO, "%s: not entirely deleted (%s)", r, error.c_str());
        return CE_Failure;
    }
    // The PAM side file (statistics, ...) belongs to the dataset, and so
    // does what a killed replacement left beside it (store_replace.hpp).
    const std::string aux = root + ".aux.xml";
    if (Scanner::StatExists(aux)) VSIUnlink(aux.c_str());
    RemoveReplacementLeftovers(root);
    return CE_None;
}

bool PrepareTarget(const std::string& root) {
    if (root.empty()) return true; // the creator reports the empty name
    const char* r = root.c_str();
    RecoverInterruptedSwap(root);
    if (IsLink(root)) {
        CPLError(CE_Failure, CPLE_AppDefined,
                 "%s: a symbolic link; choose another name (links are never followed)", r);
        return false;
    }
    if (IsIcechunkFolder(root)) {
        CPLError(CE_Failure, CPLE_AppDefined,
                 "%s: an Icechunk repository is there, not a plain Zarr store; to write into it "
                 "as a new commit, add -co ICECHUNK=YES (or name the output ICECHUNK:%s); "
                 "nothing changed",
                 r, r);
        return false;
    }
    // A complete store is refused without walking its chunks.
    Verified verified;
    const FolderScan scan = Scanner::StatExists(root + "/zarr.json")
                                ? FolderScan{FolderScan::Kind::Store, false, {}, 0, {}}
                                : ScanFolderImpl(root, false, &verified);
    switch (scan.kind) {
    case FolderScan::Kind::Missing:
    case FolderScan::Kind::Empty:
        return true;
    case FolderScan::Kind::NotFolder:
        CPLError(CE_Failure, CPLE_AppDefined,
                 "%s: a file of that name exists; delete it or choose another name", r);
        return false;
    case FolderScan::Kind::NoStore:
        CPLError(CE_Failure, CPLE_AppDefined,
                 "%s: the folder exists and is not a Zarr store; choose another name or empty "
                 "it",
                 r);
        return false;
    case FolderScan::Kind::Foreign:
        CPLError(CE_Failure, CPLE_AppDefined,
                 "%s: the folder exists and holds what a Zarr store does not (%s); choose "
                 "another name or empty it",
                 r, ForeignList(scan).c_str());
        return false;
    case FolderScan::Kind::Store:
        // Replaced by the new store once that is complete (store_replace.hpp).
        if (IsReplaceableStore(root)) return true;
        if (!IsPosixPath(root)) {
            CPLError(CE_Failure, CPLE_AppDefined,
                     "%s: a Zarr store already exists there (only a store on a local file "
                     "system is replaced); delete it first (gdalmanage delete %s) or write to "
                     "another name",
                     r, r);
            return false;
        }
        {
            const FolderScan full = ScanFolder(root, false);
            const std::string why =
                full.kind == FolderScan::Kind::Foreign
                    ? "it holds what a Zarr store does not: " + ForeignList(full)
                    : std::string("it is not a Zarr v3 store");
            CPLError(CE_Failure, CPLE_AppDefined,
                     "%s: not replaced (%s); delete it yourself or write to another name", r,
                     why.c_str());
        }
        return false;
    case FolderScan::Kind::Incomplete:
        break;
    }
    if (!scan.nested_store.empty()) {
        CPLError(CE_Failure, CPLE_AppDefined,
                 "%s: the folder holds the Zarr store %s; choose another name", r,
                 scan.nested_store.c_str());
        return false;
    }
    if (const long pid = RunningCopy(root)) {
        CPLError(CE_Failure, CPLE_AppDefined,
                 "%s: a copy into this folder is still running (process %ld on this host); "
                 "wait for it or stop it, or write to another name",
                 r, pid);
        return false;
    }
    // What a killed copy left: replaced.
    CPLDebug("Zarr3", "%s: removing the incomplete store a copy left", r);
    std::string error;
    if (!RemoveVerified(root, verified, true, error)) {
        CPLError(CE_Failure, CPLE_FileIO, "%s: cannot remove the incomplete store there (%s)", r,
                 error.c_str());
        return false;
    }
    return true;
}

} // namespace zarr3drv
