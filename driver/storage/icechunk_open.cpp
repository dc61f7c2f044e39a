// ICECHUNK: names, version options, repository detection and virtual URL
// mapping (icechunk_open.hpp).
#include "storage/icechunk_open.hpp"

#include "storage/vsi_store.hpp"
#include "zarr3/icechunk.hpp"
#include "zarr3/icechunk_virtual.hpp"
#include "zarr3/metadata.hpp"

#include "cpl_conv.h"
#include "cpl_error.h"
#include "cpl_string.h"
#include "cpl_vsi.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cstring>
#include <exception>

namespace zarr3drv {

namespace {

constexpr const char* kIcechunkPrefix = "ICECHUNK:";
// "ICE" U+1F9CA "CHUNK": the 12 bytes every Icechunk metadata file starts with.
constexpr std::array<unsigned char, 12> kMagic = {'I',  'C', 'E', 0xF0, 0x9F, 0xA7,
                                                  0x8A, 'C', 'H', 'U',  'N',  'K'};

bool SetOnce(std::string& slot, const std::string& value, const char* what, IcechunkVersion& v,
             std::string& error) {
    if (value.empty()) {
        error = std::string("empty ") + what;
        return false;
    }
    if (!slot.empty()) {
        error = std::string("two values of ") + what + " ('" + slot + "' and '" + value + "')";
        return false;
    }
    slot = value;
    // as_of goes with a branch (the latest snapshot of it at or before the time).
    const int picks =
        int(!v.tag.empty()) + int(!v.snapshot.empty()) + int(!v.branch.empty() || !v.as_of.empty());
    if (picks > 1) {
        error = std::string("choose one of branch (with as_of if wanted), tag and snapshot; got ") +
                what + "=" + value + " as well";
        return false;
    }
    return true;
}

bool SetByKey(const std::string& key, const std::string& value, IcechunkVersion& v,
              std::string& error) {
    const std::string k = CPLString(key).tolower();
    if (k == "branch") return SetOnce(v.branch, value, "branch", v, error);
    if (k == "tag") return SetOnce(v.tag, value, "tag", v, error);
    if (k == "snapshot") return SetOnce(v.snapshot, value, "snapshot", v, error);
    if (k == "as_of") return SetOnce(v.as_of, value, "as_of", v, error);
    error = "unknown selector '" + key + "' (expected branch, tag, snapshot or as_of)";
    return false;
}

int HexDigit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// "a%26b" -> "a&b"; false for a '%' not followed by two hex digits.
bool DecodeQueryValue(const std::string& in, std::string& out) {
    out.clear();
    for (size_t i = 0; i < in.size(); ++i) {
        if (in[i] != '%') {
            out += in[i];
            continue;
        }
        if (i + 2 >= in.size() || HexDigit(in[i + 1]) < 0 || HexDigit(in[i + 2]) < 0) return false;
        out += char(HexDigit(in[i + 1]) * 16 + HexDigit(in[i + 2]));
        i += 2;
    }
    return true;
}

bool HasMagic(const unsigned char* data, size_t n) {
    return n >= kMagic.size() && std::equal(kMagic.begin(), kMagic.end(), data);
}

enum class RepoFile { Icechunk, Other, Absent, Undecided };

// Remote spec-2 detection with one GET of `repo`, kept in `bytes` for the
// open that follows; Undecided when that GET failed or the file is too large.
RepoFile RemoteRepoFile(const std::string& root, std::optional<std::vector<unsigned char>>& bytes) {
    try {
        auto file = VSIStore(root, false).get_bounded("repo", kRepoFileProbeBytes);
        if (!file) return RepoFile::Absent;
        if (!HasMagic(file->data(), file->size())) return RepoFile::Other;
        bytes = std::move(*file);
        return RepoFile::Icechunk;
    } catch (const std::exception&) {
        return RepoFile::Undecided;
    }
}

} // namespace

std::optional<IcechunkName> ParseIcechunkName(const std::string& name, bool& ok,
                                              std::string& error) {
    ok = true;
    if (!STARTS_WITH_CI(name.c_str(), kIcechunkPrefix)) return std::nullopt;
    IcechunkName out;
    std::string rest = name.substr(std::strlen(kIcechunkPrefix));
    if (!rest.empty() && rest.front() == '"') {
        const size_t close = rest.find('"', 1);
        if (close == std::string::npos) {
            ok = false;
            error = "unbalanced quote in '" + name + "'";
            return out;
        }
        std::string after = rest.substr(close + 1);
        rest = rest.substr(1, close - 1);
        if (!after.empty()) {
            if (after.size() < 2 || after[0] != ':' || after[1] != '/') {
                ok = false;
                error = "expected :/node after the quoted repository in '" + name + "'";
                return out;
            }
            size_t b = 1;
            while (b < after.size() && after[b] == '/')
                ++b;
            out.node = after.substr(b);
            while (!out.node.empty() && out.node.back() == '/')
                out.node.pop_back();
            out.has_node = !out.node.empty();
        }
    }
    const size_t q = rest.rfind('?');
    out.repo = rest.substr(0, q);
    while (out.repo.size() > 1 && out.repo.back() == '/')
        out.repo.pop_back();
    if (out.repo.empty()) {
        ok = false;
        error = "no repository path after ICECHUNK:";
        return out;
    }
    if (q == std::string::npos) return out;
    const CPLStringList parts(CSLTokenizeString2(rest.c_str() + q + 1, "&", 0));
    for (int i = 0; i < parts.size(); ++i) {
        const std::string kv = parts[i];
        const size_t eq = kv.find('=');
        std::string value;
        if (eq != std::string::npos && !DecodeQueryValue(kv.substr(eq + 1), value)) {
            ok = false;
            error = "bad %-escape in '" + kv + "' (write a '%' as %25)";
            return out;
        }
        if (eq == std::string::npos || !SetByKey(kv.substr(0, eq), value, out.version, error)) {
            if (error.empty()) error = "expected key=value, got '" + kv + "'";
            ok = false;
            return out;
        }
    }
    return out;
}

bool ApplyVersionOptions(CSLConstList options, IcechunkVersion& v, std::string& error) {
    for (const char* key : {"BRANCH", "TAG", "SNAPSHOT", "AS_OF"}) {
        const char* value = CSLFetchNameValue(options, key);
        if (value && !SetByKey(key, value, v, error)) return false;
    }
    if (!v.as_of.empty()) {
        try {
            zarr3::icechunk::parse_iso_time(v.as_of, "AS_OF");
        } catch (const std::exception& e) {
            error = e.what();
            return false;
        }
    }
    return true;
}

IcechunkProbe ProbeIcechunkRepo(const std::string& root, bool repo_absent) {
    IcechunkProbe probe;
    NoDirListingScope one_request(root);
    const RepoFile remote = repo_absent             ? RepoFile::Absent
                            : IsRemoteVSIPath(root) ? RemoteRepoFile(root, probe.repo_file)
                                                    : RepoFile::Undecided;
    if (remote == RepoFile::Icechunk || remote == RepoFile::Other) {
        probe.is_repo = remote == RepoFile::Icechunk;
        return probe;
    }
    VSILFILE* f = remote == RepoFile::Absent ? nullptr : VSIFOpenL((root + "/repo").c_str(), "rb");
    if (f) {
        std::array<unsigned char, 12> head{};
        const size_t n = VSIFReadL(head.data(), 1, head.size(), f);
        VSIFCloseL(f);
        probe.is_repo = HasMagic(head.data(), n);
        return probe;
    }
    // Spec 1: the main branch's ref (config.yaml is optional), or any refs/
    // folder beside a config.yaml.
    VSIStatBufL st;
    probe.is_repo = VSIStatL((root + "/refs/branch.main/ref.json").c_str(), &st) == 0 ||
                    (VSIStatL((root + "/config.yaml").c_str(), &st) == 0 &&
                     VSIStatL((root + "/refs").c_str(), &st) == 0 && VSI_ISDIR(st.st_mode));
    return probe;
}

PrefixedRoot ReadPrefixedRoot(VSIStore& store, const std::string& root) {
    PrefixedRoot out;
    if (!IsRemoteVSIPath(root)) {
        out.root_json = store.get_bounded("zarr.json", zarr3::kMaxMetadataBytes);
        return out;
    }
    std::exception_ptr failed;
    std::optional<std::vector<unsigned char>> repo_file;
    RepoFile kind = RepoFile::Undecided;
    std::atomic<int> next{0};
    store.run_requests(2, [&] {
        for (int task = next++; task < 2; task = next++) {
            if (task == 0) {
                try {
                    out.root_json = store.get_bounded("zarr.json", zarr3::kMaxMetadataBytes);
                } catch (...) {
                    failed = std::current_exception();
                }
            } else {
                // A plain store has no `repo`: its 404 (or an object store's
                // 403) is no error of the open.
                CPLErrorStateBackuper keep_state;
                CPLErrorHandlerPusher quiet(CPLQuietErrorHandler);
                NoDirListingScope one_request(root);
                kind = RemoteRepoFile(root, repo_file);
            }
        }
    });
    if (kind == RepoFile::Icechunk) { // an object store may answer 403 for the missing zarr.json
        out.root_json.reset();
        out.probe = IcechunkProbe{true, std::move(repo_file)};
        return out;
    }
    if (failed) std::rethrow_exception(failed);
    out.repo_absent = kind == RepoFile::Absent;
    return out;
}

namespace {

// file:// URLs (absolute paths, checked by check_virtual_url): the guard's
// folder as the root, the rest of the path as the key.
VirtualObject LocalVirtualObject(const std::string& url, const std::string& guard) {
    const std::string path = url.substr(std::strlen("file://"));
    const size_t colon = guard.find("://");
    std::string root = colon == std::string::npos ? "" : guard.substr(colon + 3);
    while (!root.empty() && root.back() == '/')
        root.pop_back();
    if (root == path) root = path.substr(0, path.rfind('/')); // a container naming the file
    if (root.empty()) return {"/", path.substr(1)};
    return {root, path.substr(root.size() + 1)};
}

} // namespace

VirtualObject VirtualObjectPath(const std::string& url, const std::string& guard,
                                const std::string& where) {
    const size_t colon = url.find("://");
    const std::string scheme = url.substr(0, colon);
    if (scheme == "file") return LocalVirtualObject(url, guard);
    const std::string rest = url.substr(colon + 3);
    std::string base;
    if (scheme == "s3")
        base = "/vsis3/";
    else if (scheme == "gs")
        base = "/vsigs/";
    else if (scheme == "az")
        base = "/vsiaz/";
    else if (scheme == "http" || scheme == "https")
        base = "/vsicurl/" + scheme + "://";
    const size_t slash = rest.rfind('/');
    if (base.empty() || slash == std::string::npos || slash + 1 == rest.size())
        throw zarr3::Error(where + ": virtual chunk URL '" + url +
                           "' names no object GDAL can read");
    return {base + rest.substr(0, slash), rest.substr(slash + 1)};
}

std::vector<std::string> AllowedVirtualPrefixes(CSLConstList options) {
    const char* v = CSLFetchNameValue(options, "VIRTUAL_ALLOWED_PREFIXES");
    if (!v) v = CPLGetConfigOption("ZARR3_VIRTUAL_ALLOWED_PREFIXES", nullptr);
    return v ? zarr3::icechunk::split_prefix_list(v) : std::vector<std::string>{};
}

std::string EncodeQueryValue(const std::string& value) {
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : value) {
        if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
            out += char(c);
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

std::string WriteBranch(const char* name, CSLConstList options) {
    const std::string n = name ? name : "";
    const char* option = CSLFetchNameValue(options, "BRANCH");
    bool ok = true;
    std::string error;
    const auto ice = ParseIcechunkName(n, ok, error);
    if (!ok) throw zarr3::Error(n + ": " + error);
    if (ice && (!ice->version.tag.empty() || !ice->version.snapshot.empty() ||
                !ice->version.as_of.empty()))
        throw zarr3::Error(n + ": a tag, a snapshot or AS_OF cannot be written (versions are "
                               "read-only): commits go to a branch (?branch=name or -co "
                               "BRANCH=name, default main); nothing was written");
    if (!ice || ice->version.branch.empty()) return option && option[0] ? option : "main";
    if (option && option[0] && ice->version.branch != option)
        throw zarr3::Error(n + ": the name selects branch '" + ice->version.branch +
                           "' and BRANCH='" + option + "'; give one; nothing was written");
    return ice->version.branch;
}

std::string IcechunkRepoRoot(const char* name) {
    std::string root = name ? name : "";
    bool ok = true;
    std::string error;
    if (auto ice = ParseIcechunkName(root, ok, error); ice && ok) root = ice->repo;
    while (root.size() > 1 && root.back() == '/')
        root.pop_back();
    return root;
}

} // namespace zarr3drv
