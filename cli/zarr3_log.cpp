// zarr3 log: the branches, tags and history of an Icechunk repository.
#include "zarr3/icechunk.hpp"

#include <filesystem>
#include <ostream>

namespace fs = std::filesystem;

void require_local(const std::string& path, const char* command);

namespace {

std::string joined(const std::vector<std::string>& names, const char* prefix) {
    std::string out;
    for (const auto& n : names)
        out += (out.empty() ? "" : ", ") + std::string(prefix) + n;
    return out;
}

void print_refs(std::ostream& out, const char* what,
                const std::vector<zarr3::icechunk::Ref>& refs) {
    out << what << ":";
    if (refs.empty()) out << " (none)";
    out << "\n";
    for (const auto& r : refs)
        out << "  " << r.name << " -> " << r.snapshot << "\n";
}

} // namespace

// zarr3 log REPO [--branch NAME]: refs, then the branch's history, newest first.
int cmd_log(const std::string& path, const std::vector<std::string>& opts, std::ostream& out) {
    std::string branch = "main";
    for (size_t i = 0; i < opts.size(); ++i) {
        const std::string& a = opts[i];
        if (a == "--branch" && i + 1 < opts.size()) {
            branch = opts[++i];
        } else {
            throw zarr3::Error("log: unexpected argument '" + a + "' (expected --branch NAME)");
        }
    }
    require_local(path, "log");
    auto storage =
        std::make_shared<zarr3::FileStore>(fs::absolute(path).lexically_normal().string(), false);
    auto repo = zarr3::icechunk::Repository::open(storage);
    out << "repository: " << path << " (Icechunk spec " << repo->spec_version() << ")\n";
    print_refs(out, "branches", repo->branches());
    print_refs(out, "tags", repo->tags());
    zarr3::icechunk::VersionSpec v;
    v.branch = branch;
    const std::string head = repo->resolve(v);
    out << "history of branch " << branch << " (newest first):\n";
    for (const auto& e : repo->history(head)) {
        out << e.id << "  " << zarr3::icechunk::format_iso_time(e.flushed_at_us);
        const std::string refs = joined(e.branches, "") +
                                 (e.branches.empty() || e.tags.empty() ? "" : ", ") +
                                 joined(e.tags, "tag: ");
        if (!refs.empty()) out << "  (" << refs << ")";
        out << "  " << e.message << "\n";
    }
    return 0;
}
