// ICECHUNK: names, version options, repository detection and virtual URL
// mapping (icechunk_open.hpp).
#include "storage/icechunk_open.hpp"

#include "storage/vsi_store.hpp"
#include "zarr3/icechunk.hpp"
#include "zarr3/icechunk_virtual.hpp"

#include "cpl_conv.h"
#include "cpl_string.h"
#include "cpl_vsi.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>

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

// The `repo` file a remote LooksLikeIcechunkRepo read, for TakeRepoFileSeen.
struct RepoFileSeen {
    std::string root;
    std::vector<unsigned char> bytes;
    std::chrono::steady_clock::time_point at;
};
thread_local std::optional<RepoFileSeen> t_repo_file_seen;

bool HasMagic(const unsigned char* data, size_t n) {
    return n >= kMagic.size() && std::equal(kMagic.begin(), kMagic.end(), data);
}

enum class RepoFile { Icechunk, Other, Absent, Undecided };

// Remote spec-2 detection with one GET of `repo`, remembered for the open
// that follows; Undecided when that GET failed or the file is too large.
RepoFile RemoteRepoFile(const std::string& root) {
    try {
        auto file = VSIStore(root, false).get_bounded("repo", kRepoFileSeenBytes);
        if (!file) return RepoFile::Absent;
        if (!HasMagic(file->data(), file->size())) return RepoFile::Other;
        t_repo_file_seen = RepoFileSeen{root, std::move(*file), std::chrono::steady_clock::now()};
        return RepoFile::Icechunk;
    } catch (const std::exception&) {
        return RepoFile::Undecided;
    }
}

} // namespace

std::optional<std::vector<unsigned char>> TakeRepoFileSeen(const std::string& root) {
    std::optional<RepoFileSeen> seen;
    seen.swap(t_repo_file_seen);
    if (!seen || seen->root != root) return std::nullopt;
    const auto age = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - seen->at);
    if (age.count() > kRepoFileSeenMaxAgeMs) return std::nullopt;
    return std::move(seen->bytes);
}

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
        if (eq == std::string::npos ||
            !SetByKey(kv.substr(0, eq), kv.substr(eq + 1), out.version, error)) {
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

bool LooksLikeIcechunkRepo(const std::string& root) {
    t_repo_file_seen.reset();
    NoDirListingScope one_request(root);
    const RepoFile remote = IsRemoteVSIPath(root) ? RemoteRepoFile(root) : RepoFile::Undecided;
    if (remote == RepoFile::Icechunk || remote == RepoFile::Other)
        return remote == RepoFile::Icechunk;
    VSILFILE* f = remote == RepoFile::Absent ? nullptr : VSIFOpenL((root + "/repo").c_str(), "rb");
    if (f) {
        std::array<unsigned char, 12> head{};
        const size_t n = VSIFReadL(head.data(), 1, head.size(), f);
        VSIFCloseL(f);
        return HasMagic(head.data(), n);
    }
    // Spec 1: the main branch's ref (config.yaml is optional), or any refs/
    // folder beside a config.yaml.
    VSIStatBufL st;
    if (VSIStatL((root + "/refs/branch.main/ref.json").c_str(), &st) == 0) return true;
    return VSIStatL((root + "/config.yaml").c_str(), &st) == 0 &&
           VSIStatL((root + "/refs").c_str(), &st) == 0 && VSI_ISDIR(st.st_mode);
}

std::pair<std::string, std::string> VirtualUrlToGdal(const std::string& url) {
    const size_t colon = url.find("://");
    const std::string scheme = url.substr(0, colon);
    std::string rest = url.substr(colon + 3);
    std::string base;
    if (scheme == "s3")
        base = "/vsis3/";
    else if (scheme == "gs")
        base = "/vsigs/";
    else if (scheme == "az")
        base = "/vsiaz/";
    else if (scheme == "http" || scheme == "https")
        base = "/vsicurl/" + scheme + "://";
    else if (scheme == "file")
        base = "";
    else
        return {};
    const size_t slash = rest.rfind('/');
    if (slash == std::string::npos) return {base + rest, ""};
    const std::string folder = base + rest.substr(0, slash);
    return {folder.empty() ? "/" : folder, rest.substr(slash + 1)};
}

std::vector<std::string> AllowedVirtualPrefixes(CSLConstList options) {
    const char* v = CSLFetchNameValue(options, "VIRTUAL_ALLOWED_PREFIXES");
    if (!v) v = CPLGetConfigOption("ZARR3_VIRTUAL_ALLOWED_PREFIXES", nullptr);
    return v ? zarr3::icechunk::split_prefix_list(v) : std::vector<std::string>{};
}

} // namespace zarr3drv
