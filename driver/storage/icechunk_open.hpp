// How the driver names and opens Icechunk repositories: the ICECHUNK:
// connection syntax and version open options, recognising a repository
// folder, and mapping virtual chunk URLs onto GDAL's file systems. The
// format itself (files, snapshots, manifests, which references may be
// followed) lives in core (zarr3/icechunk*.hpp).
#pragma once

#include "cpl_port.h"
#include "zarr3/common.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace zarr3drv {

// Which version of a repository to open (at most one is set; none = branch main).
struct IcechunkVersion {
    std::string branch, tag, snapshot, as_of;
    bool any() const {
        return !branch.empty() || !tag.empty() || !snapshot.empty() || !as_of.empty();
    }
};

// "ICECHUNK:<repo>", "ICECHUNK:<repo>?branch=x" (also tag=, snapshot=, as_of=), as GDAL
// 3.14's Icechunk driver names a repository. nullopt when `name` does not
// start with ICECHUNK: (any case); false in `ok` with `error` set when the
// query is malformed (unknown key, two selectors, empty value).
// Also ICECHUNK:"<repo>[?query]":/node (a node inside, as ZARR3: names one).
struct IcechunkName {
    std::string repo;
    IcechunkVersion version;
    std::string node; // "" = the root; no leading "/"
    bool has_node = false;
};
std::optional<IcechunkName> ParseIcechunkName(const std::string& name, bool& ok,
                                              std::string& error);

// A query value as ParseIcechunkName reads it back ("a&b" -> "a%26b"):
// every byte but ASCII letters, digits and -._~ percent-encoded. Names the
// driver builds (an append's reopen) quote branch names with it.
std::string EncodeQueryValue(const std::string& value);

// The branch a writer (Create, CreateCopy, an append) commits to: the
// branch of an ICECHUNK:repo?branch=x name, else the BRANCH creation
// option, else main. zarr3::Error naming the dataset name when the name is
// malformed, selects a tag, a snapshot or AS_OF (versions are read-only),
// or names another branch than BRANCH.
std::string WriteBranch(const char* name, CSLConstList options);

// The repository folder a dataset name designates: the repo of an
// ICECHUNK: name, or the name itself; without trailing slashes.
std::string IcechunkRepoRoot(const char* name);

// Adds the open options BRANCH, TAG, SNAPSHOT, AS_OF to `v`. False with
// `error` set when more than one version is chosen in all.
bool ApplyVersionOptions(CSLConstList options, IcechunkVersion& v, std::string& error);

// Whether `root` holds an Icechunk repository: a `repo` file starting with
// the Icechunk magic (spec 2) or `config.yaml` beside `refs/` (spec 1). One
// small read (and one stat for spec 1). For a remote root that one read is a
// GET of the whole `repo` file (at most kRepoFileProbeBytes), returned in
// `repo_file` so that the open that follows (OpenIcechunkStore) does not ask
// for it again: the open costs one round trip for it, not three.
struct IcechunkProbe {
    bool is_repo = false;
    std::optional<std::vector<unsigned char>> repo_file; // remote spec 2 only
};
// `repo_absent`: the caller has just found no `repo` file (only spec 1 is left to look for).
IcechunkProbe ProbeIcechunkRepo(const std::string& root, bool repo_absent = false);
inline bool LooksLikeIcechunkRepo(const std::string& root) {
    return ProbeIcechunkRepo(root).is_repo;
}
constexpr unsigned long long kRepoFileProbeBytes = 16ull << 20;

class VSIStore;

// What a prefixed open (ZARR3:"root":/node) finds at `root`: the root
// zarr.json (a plain store) and, for a remote root, the `repo` file asked for
// at the same time (both GETs in flight together: one round trip whichever
// kind of root it is). `probe` is set only when that GET found an Icechunk
// `repo` file; otherwise the caller probes as for any root.
struct PrefixedRoot {
    std::optional<zarr3::Bytes> root_json;
    std::optional<IcechunkProbe> probe;
    bool repo_absent = false; // that GET found no `repo` file
};
// Throws what reading zarr.json throws (the probe's own failures are quiet).
PrefixedRoot ReadPrefixedRoot(VSIStore& store, const std::string& root);

// Where GDAL reads the object of a virtual chunk URL that passed
// zarr3::icechunk::VirtualAccess::check with the guard prefix `guard`: a
// VSIStore root and the key under it. file:// URLs: the root is the guard's
// folder, so that the store's PathGuard keeps the object inside it once
// symbolic links are resolved ("file:///d/sub/f.nc" with guard "file:///d/"
// -> {"/d", "sub/f.nc"}); other schemes (no links to follow): the object's own
// folder ("s3://b/k/f.nc" -> {"/vsis3/b/k", "f.nc"}; gs:// -> /vsigs/, az://
// -> /vsiaz/, http(s):// -> /vsicurl/). check_virtual_url has refused file://
// paths GDAL would take for its virtual file systems (/vsi...). Throws
// zarr3::Error naming `where` and the URL when the URL names no object.
struct VirtualObject {
    std::string root;
    std::string key;
};
VirtualObject VirtualObjectPath(const std::string& url, const std::string& guard,
                                const std::string& where);

// The prefixes the user allows virtual references into: the open option
// VIRTUAL_ALLOWED_PREFIXES, else the configuration option
// ZARR3_VIRTUAL_ALLOWED_PREFIXES (comma-separated URL prefixes).
std::vector<std::string> AllowedVirtualPrefixes(CSLConstList options);

} // namespace zarr3drv

#include "zarr3/icechunk.hpp"

#include <memory>

class GDALDataset;

namespace zarr3drv {

// The chosen snapshot of the Icechunk repository at `root` (any GDAL path),
// read-only, with virtual references followed as zarr3::icechunk::VirtualAccess
// allows (containers the repository declares; the user's
// VIRTUAL_ALLOWED_PREFIXES; a local repository's file:// containers). Throws
// zarr3::Error naming the repository and the problem (unknown version, ...).
// `repo_file`: the bytes of root/repo when the caller has just read them
// (ProbeIcechunkRepo), else read here.
std::shared_ptr<zarr3::icechunk::IcechunkStore>
OpenIcechunkStore(const std::string& root, const IcechunkVersion& version, CSLConstList options,
                  std::optional<std::vector<unsigned char>> repo_file = std::nullopt);

// Shows which snapshot `ds` reads in its ICECHUNK metadata domain
// (SNAPSHOT_ID, SNAPSHOT_MESSAGE, SNAPSHOT_TIME, VERSION, SPEC_VERSION) and,
// for the default domain, ICECHUNK_SNAPSHOT_ID. Not saved anywhere.
void ShowIcechunkVersion(GDALDataset& ds, const zarr3::icechunk::IcechunkStore& store,
                         const IcechunkVersion& version);

} // namespace zarr3drv
