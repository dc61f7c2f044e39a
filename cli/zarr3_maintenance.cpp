// zarr3 expire / zarr3 gc: Icechunk history expiry and garbage collection
// (zarr3/icechunk_maintenance.hpp), each with the repository ReadOnly while
// it runs.
#include "zarr3/compact.hpp"
#include "zarr3/icechunk_maintenance.hpp"

#include <filesystem>
#include <ostream>

namespace fs = std::filesystem;

void require_local(const std::string& path, const char* command);

namespace {

std::string repo_root(const std::string& path, const char* verb) {
    require_local(path, verb);
    const std::string root = fs::absolute(path).lexically_normal().string();
    if (!fs::is_regular_file(fs::path(root) / "repo"))
        throw zarr3::Error(path + ": not an Icechunk repository of spec version 2 (no repo file)");
    return root;
}

// `--name value` of `args` (only `name` known); "" when absent.
std::string option(const std::string& verb, const std::vector<std::string>& args,
                   const std::string& name, bool required) {
    std::string value;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] != "--" + name) throw zarr3::Error(verb + ": unexpected argument " + args[i]);
        if (i + 1 >= args.size()) throw zarr3::Error(verb + ": --" + name + " needs a value");
        value = args[++i];
    }
    if (required && value.empty()) throw zarr3::Error(verb + ": give --" + name);
    return value;
}

int64_t parse_seconds(const std::string& text) {
    if (text.empty() || text.size() > 12 ||
        text.find_first_not_of("0123456789") != std::string::npos)
        throw zarr3::Error("gc: --grace " + text + ": expected a whole number of seconds");
    return std::stoll(text);
}

void note_takeover(const zarr3::icechunk::MaintenanceLock& lock, const std::string& path,
                   std::ostream& out) {
    if (lock.took_over())
        out << path << ": took over the ReadOnly status an interrupted expire or gc left\n";
}

} // namespace

// zarr3 expire REPO --older-than DATE
int cmd_expire(const std::string& path, const std::vector<std::string>& args, std::ostream& out) {
    const std::string date = option("expire", args, "older-than", true);
    const uint64_t before = zarr3::icechunk::parse_iso_time(date, "expire: --older-than");
    auto storage = std::make_shared<zarr3::FileStore>(repo_root(path, "expire"), true);
    zarr3::icechunk::MaintenanceLock lock(storage, "expire");
    note_takeover(lock, path, out);
    const auto r = zarr3::icechunk::expire_snapshots(*storage, before);
    zarr3::test_kill_point("expire-edited");
    lock.release();
    out << path << ": expired " << r.released.size() << " snapshot(s) flushed before "
        << zarr3::icechunk::format_iso_time(before) << " that no branch or tag points at; "
        << r.edited.size() << " snapshot(s) re-parented";
    if (!r.released.empty()) out << "; delete their objects with: zarr3 gc " << path;
    out << "\n";
    return 0;
}

// zarr3 gc REPO [--grace SECONDS]
int cmd_gc(const std::string& path, const std::vector<std::string>& args, std::ostream& out) {
    const std::string grace_text = option("gc", args, "grace", false);
    zarr3::icechunk::GcOptions o;
    if (!grace_text.empty()) o.grace_seconds = parse_seconds(grace_text);
    const std::string root = repo_root(path, "gc");
    auto storage = std::make_shared<zarr3::FileStore>(root, true);
    zarr3::icechunk::MaintenanceLock lock(storage, "gc");
    note_takeover(lock, path, out);
    const auto r =
        zarr3::icechunk::collect_garbage(*storage, zarr3::icechunk::local_object_lister(root), o);
    lock.release();
    for (const auto& l : r.left)
        out << path << ": " << l << "\n";
    out << path << ": deleted " << r.deleted << " object(s) (" << r.deleted_bytes
        << " bytes) no snapshot references; " << r.kept_young
        << " unreferenced object(s) younger than the grace period (" << o.grace_seconds
        << " s) kept; objects " << r.bytes_before << " -> " << (r.bytes_before - r.deleted_bytes)
        << " bytes\n";
    return 0;
}
