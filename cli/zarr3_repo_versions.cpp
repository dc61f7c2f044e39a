// zarr3 info / verify on an Icechunk repository: which versions they read
// (every branch tip, or --branch NAME / --tag NAME), each a read-only store
// whose virtual chunks are read from the local file:// containers the
// repository declares (VirtualAccess), their modification time checked.
#include "zarr3_repo_versions.hpp"

#include "zarr3/icechunk.hpp"
#include "zarr3/icechunk_virtual.hpp"

#include <filesystem>
#include <sys/stat.h>

namespace fs = std::filesystem;

namespace {

using zarr3::icechunk::VirtualRef;

// Local file:// references only (the tool has no object-store client).
class LocalVirtualResolver final : public zarr3::icechunk::VirtualResolver {
  public:
    explicit LocalVirtualResolver(zarr3::icechunk::VirtualAccess access)
        : access_(std::move(access)) {}

    std::vector<zarr3::Bytes> read(const VirtualRef& ref,
                                   const std::vector<zarr3::RangeFromStart>& ranges,
                                   const std::string& chunk_key) override {
        const std::string guard = access_.check(ref.location, chunk_key);
        const std::string where =
            chunk_key + ": the object of virtual chunk URL '" + ref.location + "'";
        if (ref.location.rfind("file://", 0) != 0 || guard.rfind("file://", 0) != 0)
            throw zarr3::Error(chunk_key + ": virtual chunk URL '" + ref.location +
                               "': zarr3 reads local file:// objects only");
        const std::string path = ref.location.substr(7);
        std::string root = guard.substr(7);
        while (!root.empty() && root.back() == '/')
            root.pop_back();
        if (root == path) root = path.substr(0, path.rfind('/')); // a container naming the file
        if (root.empty()) root = "/";
        const std::string key = path.substr(root == "/" ? 1 : root.size() + 1);
        zarr3::FileStore store(root, false); // its PathGuard keeps the read inside `root`
        std::optional<std::vector<zarr3::Bytes>> got;
        try {
            got =
                store.get_ranges(key, std::vector<zarr3::ByteRange>(ranges.begin(), ranges.end()));
        } catch (const zarr3::Error& e) {
            throw zarr3::Error(where + " (container '" + guard + "'): " + e.what());
        }
        if (!got) throw zarr3::Error(where + " does not exist");
        check(ref, path, where);
        return std::move(*got);
    }

  private:
    static void check(const VirtualRef& ref, const std::string& path, const std::string& where) {
        if (!ref.etag.empty())
            throw zarr3::Error(where + " has a recorded ETag, which a local file cannot show");
        if (ref.last_modified == 0) return;
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0) throw zarr3::Error(where + ": cannot stat it");
        if (static_cast<uint64_t>(st.st_mtime) > ref.last_modified)
            throw zarr3::Error(where + " was modified after the reference was written (at " +
                               std::to_string(static_cast<long long>(st.st_mtime)) +
                               ", reference from " + std::to_string(ref.last_modified) +
                               " seconds since 1970)");
    }

    zarr3::icechunk::VirtualAccess access_;
};

} // namespace

bool is_repository(const std::string& path) {
    std::error_code ec;
    const fs::path p(path);
    return !fs::exists(p / "zarr.json", ec) &&
           (fs::is_regular_file(p / "repo", ec) || fs::is_directory(p / "refs", ec));
}

std::vector<RepoVersion> repository_versions(const std::string& path,
                                             const std::vector<std::string>& opts,
                                             const std::string& verb) {
    zarr3::icechunk::VersionSpec spec;
    for (size_t i = 0; i < opts.size(); i += 2) {
        if (i + 1 >= opts.size() || (opts[i] != "--branch" && opts[i] != "--tag") ||
            !spec.branch.empty() || !spec.tag.empty())
            throw zarr3::Error(verb + ": unexpected argument '" + opts[i] +
                               "' (expected one --branch NAME or --tag NAME)");
        (opts[i] == "--branch" ? spec.branch : spec.tag) = opts[i + 1];
    }
    auto storage =
        std::make_shared<zarr3::FileStore>(fs::absolute(path).lexically_normal().string(), false);
    auto repo = zarr3::icechunk::Repository::open(storage);
    std::vector<std::pair<std::string, zarr3::icechunk::VersionSpec>> wanted;
    if (!spec.branch.empty())
        wanted.emplace_back("branch " + spec.branch, spec);
    else if (!spec.tag.empty())
        wanted.emplace_back("tag " + spec.tag, spec);
    else
        for (const auto& b : repo->branches())
            wanted.emplace_back("branch " + b.name, zarr3::icechunk::VersionSpec{.branch = b.name});
    auto resolver = std::make_shared<LocalVirtualResolver>(zarr3::icechunk::VirtualAccess(
        repo->virtual_chunk_containers(), {}, true, "the repository's file:// containers"));
    std::vector<RepoVersion> out;
    for (const auto& [label, v] : wanted) {
        const std::string id = repo->resolve(v);
        out.push_back({label + " (snapshot " + id + ")",
                       std::make_shared<zarr3::icechunk::IcechunkStore>(repo, id, resolver)});
    }
    return out;
}
