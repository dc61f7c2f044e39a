// zarr3: a small command-line tool over the core library for local stores
// (zarr3cli::run, zarr3_cli.hpp; main() is in zarr3_main.cpp).
//   zarr3 info PATH                     grid summary of an array (or every array of a group)
//   zarr3 verify PATH                   decode every stored chunk; checksums and shard indexes;
//                                       chunks stored past the array's end
//   zarr3 compact PATH --dim D --edges monthly|N|JSON [--coord NAME]
//   zarr3 trim PATH --dim D --length N, zarr3 reset REPO --branch B SNAPSHOT (zarr3_undo.cpp)
// PATH is a local folder holding a zarr.json (a store root, a group or an array);
// info and verify also take an Icechunk repository (zarr3_repo_versions.cpp).
#include "zarr3_cli.hpp"
#include "zarr3_repo_versions.hpp"

#include "zarr3/compact.hpp"
#include "zarr3/hierarchy.hpp"
#include "zarr3/walk.hpp"

#include <cstdlib>
#include <filesystem>
#include <ostream>

namespace fs = std::filesystem;

namespace {

constexpr const char* kUsage =
    "usage: zarr3 info PATH | REPO [--branch NAME | --tag NAME]\n"
    "       zarr3 verify PATH | REPO [--branch NAME | --tag NAME]\n"
    "       zarr3 compact PATH --dim NAME --edges monthly|N|JSON [--coord ARRAY]\n"
    "       zarr3 compact REPO --array PATH --dim NAME --edges ... [--coord ARRAY]\n"
    "                     [--branch NAME] [--message TEXT]\n"
    "       zarr3 trim PATH --dim NAME --length N\n"
    "       zarr3 trim REPO --array PATH --dim NAME --length N [--branch NAME]\n"
    "                     [--message TEXT]\n"
    "       zarr3 reset REPO --branch NAME SNAPSHOT | --to-tag TAG\n"
    "       zarr3 log REPO [--branch NAME]\n"
    "       zarr3 tag REPO NAME [SNAPSHOT]\n"
    "       zarr3 branch REPO NAME [SNAPSHOT]\n"
    "       zarr3 expire REPO --older-than DATE\n"
    "       zarr3 gc REPO [--grace SECONDS]\n"
    "       zarr3 virtualize REPO FILE... --concat-dim DIM [--append] [--variables A,B]\n"
    "                     [--container URL_PREFIX] [--branch NAME] [--message TEXT]\n"
    "       zarr3 virtualize REPO --relocate OLD_PREFIX NEW_PREFIX [--branch NAME]\n"
    "       zarr3 --help | --version\n"
    "PATH: a local folder holding zarr.json (an array, or a group for info/verify).\n"
    "--edges: monthly (one chunk per calendar month of the coordinate array named like the\n"
    "  dimension, CF units \"days since ...\"), N (chunks of N), or a JSON list of edges and\n"
    "  [edge, count] runs as in chunk_shapes, e.g. '[[31,1],[28,1]]' or '[7,7,7]'.\n"
    "REPO: a local Icechunk repository (a folder with a repo file).\n"
    "  info, verify: every branch tip (each named with its snapshot), or the one branch or tag\n"
    "  given; verify reads every chunk, virtual ones in the repository's file:// containers too.\n"
    "  compact: the compaction of the array at PATH in it is one commit on the branch\n"
    "  (default main); older snapshots stay readable.\n"
    "  log: the repository's branches, tags and history.\n"
    "trim: shortens the array at PATH along NAME (axis 0) to N elements, with its coordinate\n"
    "  array and its overview levels; chunks past the end are deleted (repositories: one\n"
    "  commit, older snapshots stay readable).\n"
    "virtualize: an Icechunk repository whose arrays reference the chunks of NetCDF-4 files in\n"
    "  place (the zarr3 program only; zarr3 virtualize --help).\n"
    "reset: moves branch NAME to SNAPSHOT (an id) or TAG; prints the previous tip.\n"
    "  tag, branch: a new tag or branch at SNAPSHOT (a snapshot id, a branch (its tip) or a\n"
    "  tag; default: the tip of main).\n"
    "expire: removes from the history the snapshots flushed before DATE (ISO 8601) that no\n"
    "  branch or tag points at (Icechunk's expiry); gc: deletes the objects no remaining\n"
    "  snapshot references and older than the grace period (default 86400 s, so a writer in\n"
    "  flight keeps its new chunks). Both set the repository ReadOnly while they run.\n";

struct UsageError : zarr3::Error {
    using zarr3::Error::Error;
};

} // namespace

// For a path that is no folder: when a folder above it is an Icechunk repository
// (whose arrays are no folders), how to name the array instead; else "".
static std::string array_hint(const std::string& path) {
    std::error_code ec;
    const fs::path p = fs::path(path).lexically_normal();
    for (fs::path up = p.parent_path(); !up.empty() && up != up.root_path();
         up = up.parent_path()) {
        if (!fs::is_directory(up, ec)) continue;
        if (!fs::is_regular_file(up / "repo", ec) && !fs::is_directory(up / "refs", ec)) return "";
        const std::string array = fs::relative(p, up, ec).generic_string();
        return "; " + up.string() + " is an Icechunk repository: name the array with --array " +
               array + " (e.g. zarr3 compact " + up.string() + " --array " + array + " ...)";
    }
    return "";
}

// Object stores and GDAL paths: refused with the reason.
void require_local(const std::string& path, const char* command) {
    if (path.rfind("/vsi", 0) == 0 || path.find("://") != std::string::npos)
        throw zarr3::Error(
            path + ": zarr3 " + command +
            " works on local folders only: it has no object-store client, and on object stores "
            "(S3, GCS, HTTP) a listing of the old chunks to remove cannot be trusted; copy the "
            "store locally, or append through GDAL (gdal_translate -co APPEND_DIM=...)");
    if (!fs::is_directory(path)) throw zarr3::Error(path + ": no such folder" + array_hint(path));
}

void require_local_folder(const std::string& path) {
    require_local(path, "compact");
}

namespace {

std::shared_ptr<zarr3::Store> open_store(const std::string& path, bool writable) {
    return std::make_shared<zarr3::FileStore>(fs::absolute(path).lexically_normal().string(),
                                              writable);
}

// What info and verify read: a local store (`prefix` "PATH/"), or one
// version of an Icechunk repository (`prefix` "REPO [branch main (snapshot
// ID)] "), named so in every line about it.
struct Target {
    std::string prefix;
    std::shared_ptr<zarr3::Store> store;
    bool local = true;
};

std::vector<Target> targets_of(const std::string& path, const std::vector<std::string>& opts,
                               const char* verb) {
    require_local(path, verb);
    std::vector<Target> out;
    if (is_repository(path)) {
        for (auto& v : repository_versions(path, opts, verb))
            out.push_back({path + " [" + v.label + "] ", std::move(v.store), false});
        if (out.empty()) throw zarr3::Error(path + ": an Icechunk repository without branches");
        return out;
    }
    if (!opts.empty())
        throw UsageError(std::string(verb) +
                         ": --branch and --tag apply to Icechunk "
                         "repositories only; " +
                         path + " holds a zarr.json");
    out.push_back({path + "/", open_store(path, false), true});
    return out;
}

// Paths of every array at or under `path` of `store` (depth first, sorted),
// walked by the rule of every hierarchy walk (zarr3/walk.hpp: 32 levels, no
// folder twice, ZARR3_MAX_GROUP_NODES from the environment).
void collect_arrays(const Target& t, const std::string& path, std::vector<std::string>& out,
                    std::ostream& err) {
    const auto& store = t.store;
    const auto j = zarr3::read_node_json(*store, path);
    if (!j) throw zarr3::NotFound(store->uri() + "/" + path + ": no zarr.json");
    if (zarr3::node_type_of(*j, path + "/zarr.json") == zarr3::NodeType::Array) {
        out.push_back(path);
        return;
    }
    std::optional<uint64_t> nodes;
    if (const char* v = std::getenv(zarr3::kWalkNodesOption); v && *v && v[0] != '-')
        nodes = std::strtoull(v, nullptr, 10);
    zarr3::WalkBudget budget(store->uri(), nodes);
    zarr3::HierarchyVisitor visit;
    visit.array = [&](const zarr3::Group& g, const std::string& name) {
        out.push_back(zarr3::join_key(g.path(), name));
        return true;
    };
    if (t.local) // a repository's nodes are no folders (and have no links to follow)
        visit.folder_id = [&](const std::string& group) {
            return zarr3::local_folder_id(group.empty() ? store->uri()
                                                        : store->uri() + "/" + group);
        };
    // The walk's stops (depth, symbolic link cycle, node budget) on stderr.
    visit.warn = [&err](const std::string& msg) { err << "zarr3: warning: " << msg << "\n"; };
    // Each group read from its own zarr.json (not a consolidated entry).
    visit.open_group = [&](const zarr3::Group& g, const std::string& name) {
        return zarr3::Group::open(store, zarr3::join_key(g.path(), name));
    };
    zarr3::walk_hierarchy(*zarr3::Group::open(store, path), budget, visit);
}

int cmd_info(const std::string& path, const std::vector<std::string>& opts, std::ostream& out,
             std::ostream& err) {
    const auto targets = targets_of(path, opts, "info");
    for (size_t n = 0; n < targets.size(); ++n) {
        const Target& t = targets[n];
        if (!t.local) out << (n ? "\n" : "") << "== " << t.prefix << "\n";
        std::vector<std::string> arrays;
        collect_arrays(t, "", arrays, err);
        for (size_t i = 0; i < arrays.size(); ++i)
            out << (i ? "\n" : "")
                << zarr3::describe_array(*zarr3::Array::open(t.store, arrays[i]));
        if (arrays.empty()) out << path << ": a group without arrays\n";
    }
    return 0;
}

struct VerifyCounts {
    size_t arrays = 0, bad = 0, outside = 0;
};

void verify_target(const Target& t, VerifyCounts& n, std::ostream& err) {
    std::vector<std::string> arrays;
    collect_arrays(t, "", arrays, err);
    n.arrays += arrays.size();
    for (const auto& a : arrays) {
        const auto array = zarr3::Array::open(t.store, a);
        const auto problems = zarr3::verify_array(*array);
        for (const auto& p : problems)
            err << t.prefix << p << "\n";
        n.bad += problems.size();
        const auto orphans = zarr3::chunks_outside_extent(*array);
        for (const auto& k : orphans)
            err << t.prefix << k << ": stored chunk outside the array's extent (shape "
                << nlohmann::json(array->metadata().shape).dump()
                << "): never read; left by an interrupted write (an append overwrites it, "
                   "or delete it)\n";
        n.outside += orphans.size();
    }
}

int cmd_verify(const std::string& path, const std::vector<std::string>& opts, std::ostream& out,
               std::ostream& err) {
    const auto targets = targets_of(path, opts, "verify");
    VerifyCounts n;
    for (const auto& t : targets)
        verify_target(t, n, err);
    if (n.bad || n.outside) {
        if (n.bad) err << path << ": " << n.bad << " bad chunk(s)\n";
        if (n.outside) err << path << ": " << n.outside << " chunk(s) outside the extent\n";
        return 1;
    }
    if (!targets.front().local) {
        out << path << ": read";
        for (const auto& t : targets)
            out << " " << t.prefix.substr(path.size() + 1);
        out << "\n";
    }
    out << path << ": " << n.arrays
        << " array(s), every stored chunk reads, none lies outside the extent\n";
    return 0;
}

} // namespace

using Options = std::vector<std::string>;
int cmd_compact(const std::string& path, const Options& opts, std::ostream& out);
int cmd_log(const std::string& path, const Options& opts, std::ostream& out);
int cmd_trim(const std::string& path, const Options& opts, std::ostream& out);
int cmd_reset(const std::string& path, const Options& opts, std::ostream& out);
int cmd_expire(const std::string& path, const Options& opts, std::ostream& out);
int cmd_gc(const std::string& path, const Options& opts, std::ostream& out);
int cmd_ref(const std::string& kind, const std::string& path, const Options& opts,
            std::ostream& out);

namespace zarr3cli {

const std::vector<Verb>& verbs() {
    static const std::vector<Verb> v = {
        {"info",
         "Grid summary of a Zarr v3 array, or of every array of a group or Icechunk repository",
         "local folder holding a zarr.json (an array or a group), or an Icechunk repository",
         {{"branch", "Icechunk repositories: this branch only (default: every branch tip)", false},
          {"tag", "Icechunk repositories: this tag only", false}}},
        {"verify",
         "Decode every stored chunk (checksums, shard indexes, an Icechunk repository's chunk "
         "objects) and report chunks stored past the array's end",
         "local folder holding a zarr.json (an array or a group), or an Icechunk repository",
         {{"branch", "Icechunk repositories: this branch only (default: every branch tip)", false},
          {"tag", "Icechunk repositories: this tag only", false}}},
        {"compact",
         "Re-chunk an array along one dimension (rectilinear edges), e.g. one chunk per "
         "calendar month",
         "local folder of the array",
         {{"dim", "dimension name or number", true},
          {"edges",
           "monthly (calendar months of the CF time coordinate), N (chunks of N), or a JSON list "
           "of edges and [edge, count] runs",
           true},
          {"coord", "coordinate array for --edges monthly (default: named like the dimension)",
           false},
          {"array", "Icechunk repositories: the array's path in the repository", false},
          {"branch", "Icechunk repositories: the branch to commit on (default main)", false},
          {"message", "Icechunk repositories: the commit message", false}}},
        {"trim",
         "Shorten an array along its append axis (with its coordinate and overview levels)",
         "local folder of the array, or of an Icechunk repository (with --array)",
         {{"dim", "dimension name (axis 0)", true},
          {"length", "the new length along it (smaller than the current one)", true},
          {"array", "Icechunk repositories: the array's path in the repository", false},
          {"branch", "Icechunk repositories: the branch to commit on (default main)", false},
          {"message", "Icechunk repositories: the commit message", false}}},
        {"reset",
         "Move a branch of an Icechunk repository to another snapshot (prints the previous tip)",
         "local folder of the Icechunk repository",
         {{"branch", "the branch to move", true},
          {"to-tag", "the tag whose snapshot the branch moves to (instead of SNAPSHOT)", false}},
         {{"snapshot", "the snapshot id the branch moves to", false}}},
        {"log",
         "Branches, tags and history of an Icechunk repository",
         "local folder of the Icechunk repository",
         {{"branch", "branch whose history is listed (default main)", false}}},
        {"tag",
         "Add a tag to an Icechunk repository",
         "local folder of the Icechunk repository",
         {},
         {{"name", "name of the new tag", true},
          {"snapshot", "snapshot id, branch (its tip) or tag (default: the tip of main)", false}}},
        {"branch",
         "Add a branch to an Icechunk repository",
         "local folder of the Icechunk repository",
         {},
         {{"name", "name of the new branch", true},
          {"snapshot", "snapshot id, branch (its tip) or tag (default: the tip of main)", false}}},
        {"expire",
         "Remove from an Icechunk repository's history the snapshots older than a date that no "
         "branch or tag points at (the repository is ReadOnly while it runs)",
         "local folder of the Icechunk repository",
         {{"older-than", "ISO 8601 date or time: snapshots flushed before it expire", true}}},
        {"gc",
         "Delete the objects no snapshot of an Icechunk repository references (the repository "
         "is ReadOnly while it runs)",
         "local folder of the Icechunk repository",
         {{"grace", "seconds: objects modified more recently are kept (default 86400)", false}}},
    };
    return v;
}

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    try {
        if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
            out << kUsage;
            return 0;
        }
        if (args.size() == 1 && args[0] == "--version") {
            out << "zarr3 (gdal-zarr3) " << ZARR3_VERSION << "\n";
            return 0;
        }
        if (args.size() < 2) throw UsageError("missing arguments");
        const std::string& cmd = args[0];
        const std::string& path = args[1];
        const Options opts(args.begin() + 2, args.end());
        if (cmd == "info") return cmd_info(path, opts, out, err);
        if (cmd == "verify") return cmd_verify(path, opts, out, err);
        if (cmd == "compact") return cmd_compact(path, opts, out);
        if (cmd == "log") return cmd_log(path, opts, out);
        if (cmd == "trim") return cmd_trim(path, opts, out);
        if (cmd == "reset") return cmd_reset(path, opts, out);
        if (cmd == "expire") return cmd_expire(path, opts, out);
        if (cmd == "gc") return cmd_gc(path, opts, out);
        if (cmd == "tag" || cmd == "branch") return cmd_ref(cmd, path, opts, out);
        throw UsageError("unknown command or arguments");
    } catch (const UsageError& e) {
        err << "zarr3: " << e.what() << "\n" << kUsage;
        return 2;
    } catch (const std::exception& e) {
        err << "zarr3: " << e.what() << "\n";
        return 1;
    }
}

} // namespace zarr3cli
