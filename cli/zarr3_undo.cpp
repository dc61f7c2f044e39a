// zarr3 trim / zarr3 reset: undoing appends (trim.hpp) and moving an
// Icechunk branch back to an earlier snapshot (reset_branch).
#include "zarr3/array_lock.hpp"
#include "zarr3/hierarchy.hpp"
#include "zarr3/icechunk_write.hpp"
#include "zarr3/trim.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <ostream>

namespace fs = std::filesystem;

void require_local(const std::string& path, const char* command);
void remove_empty_folders(const fs::path& dir); // zarr3_compact.cpp

namespace {

// `--name value` pairs (names in `known`) and the other words, in order.
struct Parsed {
    std::map<std::string, std::string> opts;
    std::vector<std::string> words;
};

Parsed parse(const std::string& verb, const std::vector<std::string>& args,
             const std::vector<std::string>& known) {
    Parsed p;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a.rfind("--", 0) != 0) {
            p.words.push_back(a);
            continue;
        }
        const std::string name = a.substr(2);
        if (std::find(known.begin(), known.end(), name) == known.end())
            throw zarr3::Error(verb + ": unknown option " + a);
        if (i + 1 >= args.size()) throw zarr3::Error(verb + ": " + a + " needs a value");
        p.opts[name] = args[++i];
    }
    return p;
}

std::string opt(const Parsed& p, const std::string& name) {
    const auto it = p.opts.find(name);
    return it == p.opts.end() ? "" : it->second;
}

uint64_t parse_length(const std::string& text) {
    if (text.empty() || text.size() > 19 ||
        text.find_first_not_of("0123456789") != std::string::npos)
        throw zarr3::Error("trim: --length " + text + ": expected a whole number of elements");
    return std::stoull(text);
}

bool is_repository(const fs::path& dir) {
    return fs::is_regular_file(dir / "repo") && !fs::exists(dir / "zarr.json");
}

// The store root of a plain store holding the array folder `dir`: the
// topmost folder above it (or itself) holding a zarr.json, so that the
// coordinate and the pyramid levels beside or above the array are reached.
fs::path store_root(const fs::path& dir) {
    fs::path root = dir;
    for (fs::path p = dir.parent_path(); !p.empty() && fs::exists(p / "zarr.json");
         p = p.parent_path()) {
        root = p;
        if (p == p.parent_path()) break;
    }
    return root;
}

std::string describe(const zarr3::TrimResult& r) {
    std::string s;
    for (const auto& a : r.arrays)
        s += (s.empty() ? "/" : ", /") + a;
    return s;
}

} // namespace

// zarr3 trim PATH --dim DIM --length N
// zarr3 trim REPO --array PATH --dim DIM --length N [--branch B] [--message M]
int cmd_trim(const std::string& path, const std::vector<std::string>& args, std::ostream& out) {
    const Parsed p = parse("trim", args, {"dim", "length", "array", "branch", "message"});
    if (!p.words.empty()) throw zarr3::Error("trim: unexpected argument " + p.words.front());
    const std::string dim = opt(p, "dim");
    if (dim.empty() || opt(p, "length").empty())
        throw zarr3::Error("trim: give --dim NAME and --length N (the new length along it)");
    const uint64_t length = parse_length(opt(p, "length"));
    require_local(path, "trim");
    const fs::path dir = fs::absolute(path).lexically_normal();
    if (is_repository(dir)) {
        std::string apath = opt(p, "array");
        while (!apath.empty() && apath.front() == '/')
            apath.erase(0, 1);
        if (apath.empty())
            throw zarr3::Error("trim: " + path +
                               " is an Icechunk repository: give the array with --array PATH");
        auto storage = std::make_shared<zarr3::FileStore>(dir.string(), true);
        const std::string branch = opt(p, "branch").empty() ? "main" : opt(p, "branch");
        auto session = zarr3::icechunk::IcechunkSession::open(storage, branch);
        const std::string base = session->base_snapshot();
        const auto r = zarr3::trim_array(session, apath, dim, length);
        const std::string msg = !opt(p, "message").empty()
                                    ? opt(p, "message")
                                    : "zarr3 trim: " + describe(r) + " " + dim + " " +
                                          std::to_string(r.old_length) + " -> " +
                                          std::to_string(r.new_length);
        const std::string id = session->commit(msg);
        out << path << ": " << describe(r) << " " << dim << " " << r.old_length << " -> "
            << r.new_length << "; commit " << id << " on branch " << branch << " (parent " << base
            << ")\n";
        return 0;
    }
    if (!opt(p, "array").empty() || !opt(p, "branch").empty() || !opt(p, "message").empty())
        throw zarr3::Error("trim: --array, --branch and --message apply to Icechunk repositories "
                           "only; " +
                           path + " holds no repo file");
    if (!fs::is_regular_file(dir / "zarr.json"))
        throw zarr3::Error(path + ": no zarr.json (name the array's folder, STORE/ARRAY)");
    const fs::path root = store_root(dir);
    auto store = std::make_shared<zarr3::FileStore>(root.string(), true);
    const std::string apath = fs::relative(dir, root).generic_string();
    const std::string node = apath == "." ? "" : apath;
    const auto r = zarr3::trim_array(store, node, dim, length);
    {
        // Under the array's lock again: an append that waited for the trim
        // holds it while it creates chunk folders (of the levels and the
        // coordinate too), which an unlocked clean-up removed under it.
        const auto lock = zarr3::lock_array(*store, node);
        zarr3::test_pause_point("trim-tidy");
        for (const auto& a : r.arrays)
            remove_empty_folders(root / a / "c");
    }
    out << path << ": " << describe(r) << " " << dim << " " << r.old_length << " -> "
        << r.new_length << "; " << r.erased << " chunk(s) past the end deleted\n";
    return 0;
}

// zarr3 reset REPO --branch NAME SNAPSHOT | --to-tag TAG
int cmd_reset(const std::string& path, const std::vector<std::string>& args, std::ostream& out) {
    const Parsed p = parse("reset", args, {"branch", "to-tag"});
    const std::string branch = opt(p, "branch"), tag = opt(p, "to-tag");
    if (branch.empty() || p.words.size() > 1 || (p.words.empty() == tag.empty()))
        throw zarr3::Error("reset: expected REPO --branch NAME SNAPSHOT_ID, or REPO --branch NAME "
                           "--to-tag TAG");
    require_local(path, "reset");
    const fs::path dir = fs::absolute(path).lexically_normal();
    if (!fs::is_regular_file(dir / "repo"))
        throw zarr3::Error(path + ": not an Icechunk repository of spec version 2 (no repo file)");
    auto storage = std::make_shared<zarr3::FileStore>(dir.string(), true);
    auto repo = zarr3::icechunk::Repository::open(storage);
    const std::string tip = repo->resolve({.branch = branch});
    const std::string id =
        tag.empty() ? repo->resolve({.snapshot = p.words[0]}) : repo->resolve({.tag = tag});
    const std::string previous = zarr3::icechunk::reset_branch(*storage, branch, id, tip);
    out << path << ": branch " << branch << " -> " << id << " (was " << previous
        << "; undo with: zarr3 reset " << path << " --branch " << branch << " " << previous
        << ")\n";
    return 0;
}
