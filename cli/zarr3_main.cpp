// zarr3: a small command-line tool over the core library for local stores.
//   zarr3 info PATH                     grid summary of an array (or every array of a group)
//   zarr3 verify PATH                   decode every stored chunk; checksums and shard indexes;
//                                       chunks stored past the array's end
//   zarr3 compact PATH --dim D --edges monthly|N|JSON [--coord NAME]
//   zarr3 compact REPO --array PATH --dim D --edges ... [--branch B] [--message M]
//   zarr3 log REPO [--branch NAME]
//   zarr3 tag|branch REPO NAME [SNAPSHOT]
// PATH is a local folder holding a zarr.json (a store root, a group or an array).
#include "zarr3/compact.hpp"
#include "zarr3/hierarchy.hpp"
#include "zarr3/walk.hpp"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

namespace fs = std::filesystem;

namespace {

constexpr const char* kUsage =
    "usage: zarr3 info PATH\n"
    "       zarr3 verify PATH\n"
    "       zarr3 compact PATH --dim NAME --edges monthly|N|JSON [--coord ARRAY]\n"
    "PATH: a local folder holding zarr.json (an array, or a group for info/verify).\n"
    "--edges: monthly (one chunk per calendar month of the coordinate array named like the\n"
    "dimension, CF units \"days since ...\"), N (chunks of N), or a JSON list of edges and\n"
    "[edge, count] runs as in chunk_shapes, e.g. '[[31,1],[28,1]]' or '[7,7,7]'.\n"
    "       zarr3 compact REPO --array PATH --dim NAME --edges ... [--coord ARRAY]\n"
    "                     [--branch NAME] [--message TEXT]\n"
    "REPO: a local Icechunk repository (a folder with a repo file): the compaction of the array "
    "at\n"
    "PATH in it is one commit on the branch (default main); older snapshots stay readable.\n"
    "       zarr3 log REPO [--branch NAME]   (an Icechunk repository: branches, tags, history)\n"
    "       zarr3 tag REPO NAME [SNAPSHOT]   (a new tag; SNAPSHOT: a snapshot id, a branch (its\n"
    "       zarr3 branch REPO NAME [SNAPSHOT] tip) or a tag; default: the tip of main)\n"
    "       zarr3 --help | --version\n";

struct UsageError : zarr3::Error {
    using zarr3::Error::Error;
};

} // namespace

// Object stores and GDAL paths: refused with the reason.
void require_local(const std::string& path, const char* command) {
    if (path.rfind("/vsi", 0) == 0 || path.find("://") != std::string::npos)
        throw zarr3::Error(
            path + ": zarr3 " + command +
            " works on local folders only: it has no object-store client, and on object stores "
            "(S3, GCS, HTTP) a listing of the old chunks to remove cannot be trusted; copy the "
            "store locally, or append through GDAL (gdal_translate -co APPEND_DIM=...)");
    if (!fs::is_directory(path)) throw zarr3::Error(path + ": no such folder");
}

void require_local_folder(const std::string& path) {
    require_local(path, "compact");
}

namespace {

std::shared_ptr<zarr3::Store> open_store(const std::string& path, bool writable) {
    return std::make_shared<zarr3::FileStore>(fs::absolute(path).lexically_normal().string(),
                                              writable);
}

// Paths of every array at or under `path` of `store` (depth first, sorted),
// walked by the rule of every hierarchy walk (zarr3/walk.hpp: 32 levels, no
// folder twice, ZARR3_MAX_GROUP_NODES from the environment).
void collect_arrays(const std::shared_ptr<zarr3::Store>& store, const std::string& path,
                    std::vector<std::string>& out) {
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
    visit.folder_id = [&](const std::string& group) {
        return zarr3::local_folder_id(group.empty() ? store->uri() : store->uri() + "/" + group);
    };
    // The walk's stops (depth, symbolic link cycle, node budget) on stderr.
    visit.warn = [](const std::string& msg) { std::cerr << "zarr3: warning: " << msg << "\n"; };
    // Each group read from its own zarr.json (not a consolidated entry).
    visit.open_group = [&](const zarr3::Group& g, const std::string& name) {
        return zarr3::Group::open(store, zarr3::join_key(g.path(), name));
    };
    zarr3::walk_hierarchy(*zarr3::Group::open(store, path), budget, visit);
}

int cmd_info(const std::string& path) {
    require_local(path, "info");
    auto store = open_store(path, false);
    std::vector<std::string> arrays;
    collect_arrays(store, "", arrays);
    for (size_t i = 0; i < arrays.size(); ++i)
        std::cout << (i ? "\n" : "")
                  << zarr3::describe_array(*zarr3::Array::open(store, arrays[i]));
    if (arrays.empty()) std::cout << path << ": a group without arrays\n";
    return 0;
}

int cmd_verify(const std::string& path) {
    require_local(path, "verify");
    auto store = open_store(path, false);
    std::vector<std::string> arrays;
    collect_arrays(store, "", arrays);
    size_t bad = 0, outside = 0;
    for (const auto& a : arrays) {
        const auto array = zarr3::Array::open(store, a);
        const auto problems = zarr3::verify_array(*array);
        for (const auto& p : problems)
            std::cerr << path << "/" << p << "\n";
        bad += problems.size();
        const auto orphans = zarr3::chunks_outside_extent(*array);
        for (const auto& k : orphans)
            std::cerr << path << "/" << k << ": stored chunk outside the array's extent (shape "
                      << nlohmann::json(array->metadata().shape).dump()
                      << "): never read; left by an interrupted write (an append overwrites it, "
                         "or delete it)\n";
        outside += orphans.size();
    }
    if (bad || outside) {
        if (bad) std::cerr << path << ": " << bad << " bad chunk(s)\n";
        if (outside) std::cerr << path << ": " << outside << " chunk(s) outside the extent\n";
        return 1;
    }
    std::cout << path << ": " << arrays.size()
              << " array(s), every stored chunk reads, none lies outside the extent\n";
    return 0;
}

} // namespace

int cmd_compact(const std::string& path, int argc, char** argv);
int cmd_log(const std::string& path, int argc, char** argv);
int cmd_ref(const std::string& kind, const std::string& path, int argc, char** argv);

int main(int argc, char** argv) {
    try {
        if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
            std::cout << kUsage;
            return 0;
        }
        if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
            std::cout << "zarr3 (gdal-zarr3) " << ZARR3_VERSION << "\n";
            return 0;
        }
        if (argc < 3) throw UsageError("missing arguments");
        const std::string cmd = argv[1], path = argv[2];
        if (cmd == "info" && argc == 3) return cmd_info(path);
        if (cmd == "verify" && argc == 3) return cmd_verify(path);
        if (cmd == "compact") return cmd_compact(path, argc - 3, argv + 3);
        if (cmd == "log") return cmd_log(path, argc - 3, argv + 3);
        if (cmd == "tag" || cmd == "branch") return cmd_ref(cmd, path, argc - 3, argv + 3);
        throw UsageError("unknown command or arguments");
    } catch (const UsageError& e) {
        std::cerr << "zarr3: " << e.what() << "\n" << kUsage;
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "zarr3: " << e.what() << "\n";
        return 1;
    }
}
