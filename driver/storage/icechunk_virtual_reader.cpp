// Reads Icechunk virtual chunk references through GDAL's file systems, as
// far as VirtualAccess allows, and checks the recorded ETag or modification
// time of each object once per version of it (icechunk_open.hpp).
#include "storage/icechunk_open.hpp"
#include "storage/vsi_store.hpp"

#include "zarr3/icechunk_virtual.hpp"

#include "cpl_string.h"
#include "cpl_vsi.h"
#include "gdal_priv.h"

#include <cstdlib>
#include <map>
#include <mutex>

namespace zarr3drv {

namespace {

using zarr3::icechunk::VirtualRef;

std::string Unquoted(std::string s) {
    if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
    if (s.rfind("W/", 0) == 0) s = Unquoted(s.substr(2));
    return s;
}

// The ETag the server reports for `path` (empty when none).
std::string ETagOf(const std::string& path) {
    const CPLStringList headers(VSIGetFileMetadata(path.c_str(), "HEADERS", nullptr));
    for (const char* key : {"ETag", "etag", "ETAG"})
        if (const char* v = headers.FetchNameValue(key)) return Unquoted(v);
    return {};
}

class GdalVirtualResolver final : public zarr3::icechunk::VirtualResolver {
  public:
    explicit GdalVirtualResolver(zarr3::icechunk::VirtualAccess access)
        : access_(std::move(access)) {}

    std::vector<zarr3::Bytes> read(const VirtualRef& ref,
                                   const std::vector<zarr3::RangeFromStart>& ranges,
                                   const std::string& chunk_key) override {
        const std::string guard = access_.check(ref.location, chunk_key);
        const auto [root, key] = VirtualObjectPath(ref.location, guard, chunk_key);
        const auto store = StoreFor(root);
        std::vector<zarr3::ByteRange> want(ranges.begin(), ranges.end());
        std::optional<uint64_t> total;
        zarr3::ObjectVersion version;
        std::optional<std::vector<zarr3::Bytes>> got;
        try {
            got = store->get_ranges_versioned(key, want, total, version);
        } catch (const zarr3::Error& e) {
            // The store's PathGuard: a link leading out of the guard's folder.
            throw zarr3::Error(chunk_key + ": virtual chunk URL '" + ref.location +
                               "' (container '" + guard + "'): " + e.what());
        }
        if (!got)
            throw zarr3::Error(chunk_key + ": the object of virtual chunk URL '" + ref.location +
                               "' does not exist");
        Check(ref, store->path_of(key), version, chunk_key);
        return std::move(*got);
    }

  private:
    // One read-only store per root: a local root's PathGuard keeps every
    // object read through it inside the root once links are resolved.
    std::shared_ptr<VSIStore> StoreFor(const std::string& root) {
        std::lock_guard<std::mutex> lock(mu_);
        auto& s = stores_[root];
        if (!s) s = std::make_shared<VSIStore>(root, false);
        return s;
    }

    // The reference's checksum against the object, once per version seen
    // (a version the store cannot tell is checked on every read).
    void Check(const VirtualRef& ref, const std::string& path, const zarr3::ObjectVersion& version,
               const std::string& chunk_key) {
        if (ref.etag.empty() && ref.last_modified == 0) return;
        const std::string seen_key =
            path + "\n" + ref.etag + "\n" + std::to_string(ref.last_modified);
        {
            std::lock_guard<std::mutex> lock(mu_);
            auto it = checked_.find(seen_key);
            if (version.known() && it != checked_.end() && it->second == version) return;
        }
        if (!ref.etag.empty()) {
            const std::string now = ETagOf(path);
            if (now != Unquoted(ref.etag))
                throw zarr3::Error(chunk_key + ": the object of virtual chunk URL '" +
                                   ref.location +
                                   "' changed since the reference was written (ETag '" +
                                   Unquoted(ref.etag) + "' recorded, '" + now + "' now)");
        } else {
            VSIStatBufL st;
            if (VSIStatL(path.c_str(), &st) != 0)
                throw zarr3::Error(chunk_key + ": cannot stat the object of virtual chunk URL '" +
                                   ref.location + "'");
            if (static_cast<uint64_t>(st.st_mtime) > ref.last_modified)
                throw zarr3::Error(
                    chunk_key + ": the object of virtual chunk URL '" + ref.location +
                    "' was modified after the reference was written (at " +
                    std::to_string(static_cast<long long>(st.st_mtime)) + ", reference from " +
                    std::to_string(ref.last_modified) + " seconds since 1970)");
        }
        std::lock_guard<std::mutex> lock(mu_);
        checked_[seen_key] = version;
    }

    zarr3::icechunk::VirtualAccess access_;
    std::mutex mu_;
    std::map<std::string, std::shared_ptr<VSIStore>> stores_;
    std::map<std::string, zarr3::ObjectVersion> checked_;
};

// Only a repository in a local folder may follow its own file:// containers
// unasked. A /vsimem/ repository is bytes a program was handed (an upload,
// a download): it is treated as remote, so it cannot reach local files.
bool IsLocalRoot(const std::string& root) {
    return !STARTS_WITH(root.c_str(), "/vsi");
}

} // namespace

std::shared_ptr<zarr3::icechunk::IcechunkStore>
OpenIcechunkStore(const std::string& root, const IcechunkVersion& version, CSLConstList options,
                  std::optional<std::vector<unsigned char>> repo_file) {
    auto storage = std::make_shared<VSIStore>(root, false);
    // The byte budget of the decoded manifests and snapshots each repository
    // keeps (this one, and the sessions' repositories opened after it).
    if (const char* mb = CPLGetConfigOption("ZARR3_ICECHUNK_CACHE_MB", nullptr))
        zarr3::icechunk::set_default_cache_budget(std::strtoull(mb, nullptr, 10) << 20);
    auto repo = repo_file ? zarr3::icechunk::Repository::open(storage, std::move(*repo_file))
                          : zarr3::icechunk::Repository::open(storage);
    zarr3::icechunk::VirtualAccess access(repo->virtual_chunk_containers(),
                                          AllowedVirtualPrefixes(options), IsLocalRoot(root),
                                          "VIRTUAL_ALLOWED_PREFIXES");
    const zarr3::icechunk::VersionSpec spec{version.branch, version.tag, version.snapshot,
                                            version.as_of};
    const std::string id = repo->resolve(spec);
    return std::make_shared<zarr3::icechunk::IcechunkStore>(
        repo, id, std::make_shared<GdalVirtualResolver>(std::move(access)));
}

void ShowIcechunkVersion(GDALDataset& ds, const zarr3::icechunk::IcechunkStore& store,
                         const IcechunkVersion& version) {
    const auto& snap = store.snapshot();
    const zarr3::icechunk::VersionSpec spec{version.branch, version.tag, version.snapshot,
                                            version.as_of};
    // GDALMajorObject's own: not a PAM change (nothing is saved for a repository).
    auto set = [&](const char* key, const std::string& value, const char* domain) {
        ds.GDALMajorObject::SetMetadataItem(key, value.c_str(), domain);
    };
    set("SNAPSHOT_ID", snap.id, "ICECHUNK");
    set("SNAPSHOT_MESSAGE", snap.message, "ICECHUNK");
    set("SNAPSHOT_TIME", zarr3::icechunk::format_iso_time(snap.flushed_at_us), "ICECHUNK");
    set("VERSION", zarr3::icechunk::Repository::describe(spec), "ICECHUNK");
    set("SPEC_VERSION", std::to_string(store.repository()->spec_version()), "ICECHUNK");
    set("ICECHUNK_SNAPSHOT_ID", snap.id, "");
}

} // namespace zarr3drv
