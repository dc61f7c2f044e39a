// zarr3 tag / zarr3 branch: new references in an Icechunk repository.
#include "zarr3/icechunk_write.hpp"

#include <algorithm>
#include <filesystem>
#include <ostream>

namespace fs = std::filesystem;

void require_local(const std::string& path, const char* command);

namespace {

bool has_ref(const std::vector<zarr3::icechunk::Ref>& refs, const std::string& name) {
    return std::any_of(refs.begin(), refs.end(), [&](const auto& r) { return r.name == name; });
}

// What SNAPSHOT names: a branch (its tip), else a tag, else a snapshot id;
// absent: the tip of main.
std::string resolve_target(zarr3::icechunk::Repository& repo, const std::string& what) {
    if (what.empty()) return repo.resolve({.branch = "main"});
    if (has_ref(repo.branches(), what)) return repo.resolve({.branch = what});
    if (has_ref(repo.tags(), what)) return repo.resolve({.tag = what});
    return repo.resolve({.snapshot = what});
}

} // namespace

// zarr3 tag|branch REPO NAME [SNAPSHOT]
int cmd_ref(const std::string& kind, const std::string& path, const std::vector<std::string>& opts,
            std::ostream& out) {
    if (opts.empty() || opts.size() > 2)
        throw zarr3::Error(kind + ": expected REPO NAME [SNAPSHOT] (SNAPSHOT: a snapshot id, a "
                                  "branch (its tip) or a tag; default: the tip of main)");
    const std::string name = opts[0], what = opts.size() == 2 ? opts[1] : "";
    require_local(path, kind.c_str());
    const std::string root = fs::absolute(path).lexically_normal().string();
    if (!fs::is_regular_file(fs::path(root) / "repo"))
        throw zarr3::Error(path + ": not an Icechunk repository of spec version 2 (no repo file)");
    auto storage = std::make_shared<zarr3::FileStore>(root, true);
    auto repo = zarr3::icechunk::Repository::open(storage);
    const std::string id = resolve_target(*repo, what);
    if (kind == "tag")
        zarr3::icechunk::create_tag(*storage, name, id);
    else
        zarr3::icechunk::create_branch(*storage, name, id);
    out << path << ": " << kind << " " << name << " -> " << id << "\n";
    return 0;
}
