// `zarr3 compact`: argument handling, the time coordinate for monthly edges,
// and removing the empty folders the old chunks leave (zarr3_run.cpp).
#include "zarr3/array_lock.hpp"
#include "zarr3/compact.hpp"
#include "zarr3/hierarchy.hpp"
#include "zarr3/icechunk_write.hpp"

#include <charconv>
#include <cstring>
#include <filesystem>
#include <functional>
#include <ostream>
#include <sys/stat.h>

namespace fs = std::filesystem;

void require_local_folder(const std::string& path);

// Removes folders under `dir` that hold no file (what erased chunks leave),
// never through a link.
void remove_empty_folders(const fs::path& dir) {
    std::error_code ec;
    if (fs::is_symlink(dir, ec) || !fs::is_directory(dir, ec)) return;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.is_directory(ec) && !e.is_symlink(ec)) remove_empty_folders(e.path());
    if (fs::is_empty(dir, ec)) fs::remove(dir, ec);
}

namespace {

// A local store that refuses to write, delete or list through a symbolic
// link below its root (one lstat per path component): what refuse_links
// checked at the start still holds while the compaction runs.
class NoLinkStore : public zarr3::FileStore {
  public:
    explicit NoLinkStore(const std::string& root) : FileStore(root, true) {}
    void put(const std::string& key, zarr3::ByteView value) override {
        check(key);
        FileStore::put(key, value);
    }
    void erase(const std::string& key) override {
        check(key);
        FileStore::erase(key);
    }
    std::vector<std::string> list_dir(const std::string& prefix) override {
        check(prefix);
        return FileStore::list_dir(prefix);
    }
    // An unchanged chunk under its new key: the same file (a hard link).
    bool link(const std::string& from, const std::string& to) {
        check(from);
        check(to);
        return FileStore::link(from, to);
    }

  private:
    void check(const std::string& key) const {
        std::string p = uri();
        for (size_t at = 0; at < key.size();) {
            const size_t slash = std::min(key.find('/', at), key.size());
            p += "/" + key.substr(at, slash - at);
            struct stat st {};
            if (::lstat(p.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
                throw zarr3::Error(p + ": a symbolic link inside the array; zarr3 compact "
                                       "neither writes nor deletes through links");
            at = slash + 1;
        }
    }
};

struct Args {
    std::string dim, edges, coord;
    // Icechunk repositories only.
    std::string array, branch, message;
    bool repo_option = false;
};

Args parse_args(const std::vector<std::string>& opts) {
    Args a;
    for (size_t i = 0; i < opts.size(); ++i) {
        const std::string& k = opts[i];
        if (i + 1 >= opts.size()) throw zarr3::Error("compact: " + k + " needs a value");
        const std::string& v = opts[++i];
        if (k == "--dim")
            a.dim = v;
        else if (k == "--edges")
            a.edges = v;
        else if (k == "--coord")
            a.coord = v;
        else if (k == "--array" || k == "--branch" || k == "--message") {
            (k == "--array" ? a.array : k == "--branch" ? a.branch : a.message) = v;
            a.repo_option = true;
        } else
            throw zarr3::Error("compact: unknown option " + k);
    }
    if (a.dim.empty() || a.edges.empty())
        throw zarr3::Error("compact: --dim and --edges are needed");
    return a;
}

// A whole number given to `option`: Error naming the option and the text
// (not "stoull") when it is not one or does not fit in 64 bits.
uint64_t parse_number(const std::string& text, const std::string& option) {
    uint64_t v = 0;
    const char* end = text.data() + text.size();
    const auto r = std::from_chars(text.data(), end, v);
    if (text.empty() || r.ec != std::errc() || r.ptr != end)
        throw zarr3::Error("compact: " + option + " " + text +
                           ": expected a whole number from 0 to 18446744073709551615");
    return v;
}

size_t axis_of(const zarr3::ArrayMetadata& m, const std::string& dim, const std::string& where) {
    for (size_t d = 0; d < m.dimension_names.size(); ++d)
        if (m.dimension_names[d] && *m.dimension_names[d] == dim) return d;
    if (!dim.empty() && dim.find_first_not_of("0123456789") == std::string::npos &&
        dim.size() < 20 && parse_number(dim, "--dim") < m.rank())
        return parse_number(dim, "--dim");
    throw zarr3::Error(where + ": --dim " + dim + ": no dimension of that name or number");
}

// Values of a 1-D numeric array as doubles.
std::vector<double> read_values(const zarr3::Array& a) {
    const auto& m = a.metadata();
    const uint64_t n = m.shape[0];
    if (n > (uint64_t{1} << 28)) throw zarr3::Error(a.describe() + ": too many coordinate values");
    zarr3::Bytes buf(zarr3::checked_mul(n, m.dtype.size, "coordinate size"));
    a.read(zarr3::Selection::all(m.shape), buf.data());
    std::vector<double> out(n);
    const std::string& t = m.dtype.name;
    for (uint64_t i = 0; i < n; ++i) {
        const uint8_t* p = buf.data() + i * m.dtype.size;
        auto get = [&](auto v) {
            std::memcpy(&v, p, sizeof v);
            return static_cast<double>(v);
        };
        if (t == "float64")
            out[i] = get(double{});
        else if (t == "float32")
            out[i] = get(float{});
        else if (t == "int64")
            out[i] = get(int64_t{});
        else if (t == "int32")
            out[i] = get(int32_t{});
        else if (t == "uint32")
            out[i] = get(uint32_t{});
        else if (t == "uint64")
            out[i] = get(uint64_t{});
        else if (t == "int16")
            out[i] = get(int16_t{});
        else
            throw zarr3::Error(a.describe() + ": coordinate data type " + t + " is not supported");
    }
    return out;
}

// A 1-D coordinate array `a` of `length` values, or an error naming it.
std::shared_ptr<zarr3::Array> checked_coordinate(std::shared_ptr<zarr3::Array> a, uint64_t length) {
    if (a->metadata().rank() != 1 || a->metadata().shape[0] != length)
        throw zarr3::Error(a->describe() + ": not a 1-D coordinate of length " +
                           std::to_string(length));
    return a;
}

// The coordinate array named `name` beside the array folder `dir` or in a
// folder above it (nearest first).
std::shared_ptr<zarr3::Array> find_coordinate(const fs::path& dir, const std::string& name,
                                              uint64_t length) {
    const auto holder = zarr3::nearest_ancestor(
        dir.parent_path(), [&](const fs::path& p) { return fs::exists(p / name / "zarr.json"); },
        [](const fs::path& p) -> std::optional<fs::path> {
            // Upwards while the folder is a group of the hierarchy.
            if (!fs::exists(p / "zarr.json") || p == p.parent_path() || p.parent_path().empty())
                return std::nullopt;
            return p.parent_path();
        });
    if (holder && !holder->empty())
        return checked_coordinate(
            zarr3::Array::open(std::make_shared<zarr3::FileStore>(holder->string(), false), name),
            length);
    throw zarr3::Error(dir.string() + ": --edges monthly needs a coordinate array named " + name +
                       " beside the array (or give --coord)");
}

using CoordinateFinder =
    std::function<std::shared_ptr<zarr3::Array>(const std::string& name, uint64_t length)>;

zarr3::AxisPartition plan(const Args& a, const zarr3::Array& arr, size_t axis,
                          const CoordinateFinder& find) {
    const uint64_t len = arr.metadata().shape[axis];
    if (a.edges == "monthly") {
        auto c = find(a.coord.empty() ? a.dim : a.coord, len);
        const auto it = c->metadata().attributes.find("units");
        const auto u = it != c->metadata().attributes.end() && it->is_string()
                           ? zarr3::parse_cf_time_units(it->get<std::string>())
                           : std::nullopt;
        if (!u)
            throw zarr3::Error(c->describe() +
                               ": --edges monthly needs CF time units (attribute \"units\": "
                               "\"days since YYYY-MM-DD\")");
        return zarr3::plan_monthly_edges(read_values(*c), *u, c->describe());
    }
    if (a.edges.find_first_not_of("0123456789") == std::string::npos)
        return zarr3::plan_fixed_edges(len, parse_number(a.edges, "--edges"));
    if (a.edges.find_first_of("[") != 0)
        throw zarr3::Error("--edges " + a.edges +
                           ": expected monthly, a chunk length N, or a JSON list of edges and "
                           "[edge, count] runs such as '[[31,1],28]' or '[7,7,7]'");
    return zarr3::parse_edges(a.edges, len, "--edges");
}

// The chunk folders of array folder `dir` ("c" and the v2 "0", "1", ...)
// once emptied by the compaction.
void remove_empty_chunk_folders(const fs::path& dir) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        const std::string n = e.path().filename().string();
        if (n == "c" || (!n.empty() && n.find_first_not_of("0123456789") == std::string::npos))
            remove_empty_folders(e.path());
    }
}

// Error naming the first symbolic link found inside array folder `dir`:
// compaction neither writes nor deletes through links.
void refuse_links(const fs::path& dir) {
    std::error_code ec;
    fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end;
    for (; !ec && it != end; it.increment(ec))
        if (it->is_symlink(ec))
            throw zarr3::Error(it->path().string() +
                               ": a symbolic link inside the array; zarr3 compact neither writes "
                               "nor deletes through links (nothing was changed)");
    if (ec) throw zarr3::Error(dir.string() + ": cannot list (" + ec.message() + ")");
}

// The groups above the array folder `dir` (while they hold a zarr.json)
// whose consolidated metadata lists the array get its new metadata.
void update_parents(const fs::path& dir, const zarr3::ArrayMetadata& m) {
    const nlohmann::json node = zarr3::to_json(m);
    for (fs::path p = dir.parent_path(); fs::exists(p / "zarr.json"); p = p.parent_path()) {
        zarr3::FileStore store(p.string(), true);
        zarr3::update_consolidated_entry(store, "", fs::relative(dir, p).generic_string(), node);
        if (p == p.parent_path()) break;
    }
}

// The coordinate array `name` in the group of array `path` of `store` or
// in a group above it (nearest first).
std::shared_ptr<zarr3::Array> find_in_store(const std::shared_ptr<zarr3::Store>& store,
                                            const std::string& path, const std::string& name,
                                            uint64_t length) {
    const auto group =
        zarr3::nearest_ancestor_path(zarr3::parent_path(path), [&](const std::string& g) {
            return zarr3::read_node_json(*store, zarr3::join_key(g, name)).has_value();
        });
    if (!group)
        throw zarr3::Error(store->uri() + "/" + path +
                           ": --edges monthly needs a coordinate array named " + name +
                           " beside the array (or give --coord)");
    return checked_coordinate(zarr3::Array::open(store, zarr3::join_key(*group, name)), length);
}

// " (W written, K kept as stored)": what a compaction wrote.
std::string written(const zarr3::CompactResult& res) {
    return " (" + std::to_string(res.new_chunks - res.kept_chunks) + " written, " +
           std::to_string(res.kept_chunks) + " kept as stored)";
}

// An Icechunk repository (a folder with a `repo` file): the compaction is one
// commit on the branch through a session; nothing is deleted or overwritten.
int compact_repository(const std::string& path, const fs::path& dir, const Args& a,
                       std::ostream& out) {
    if (a.array.empty())
        throw zarr3::Error("compact: " + path +
                           " is an Icechunk repository: give the array with --array PATH "
                           "(its path in the repository, e.g. t2m)");
    auto storage = std::make_shared<zarr3::FileStore>(dir.string(), true);
    auto session =
        zarr3::icechunk::IcechunkSession::open(storage, a.branch.empty() ? "main" : a.branch);
    const std::string base = session->base_snapshot();
    std::shared_ptr<zarr3::Store> snap = zarr3::icechunk::IcechunkStore::open(
        std::make_shared<zarr3::FileStore>(dir.string(), false), {.snapshot = base});
    std::string apath = a.array;
    while (!apath.empty() && apath.front() == '/')
        apath.erase(0, 1);
    auto arr = zarr3::Array::open(snap, apath);
    const size_t axis = axis_of(arr->metadata(), a.dim, path + " " + apath);
    const auto edges = plan(a, *arr, axis, [&](const std::string& name, uint64_t len) {
        return find_in_store(snap, apath, name, len);
    });
    const auto res = zarr3::compact_array_into(*arr, *session, axis, edges);
    if (res.unchanged) {
        out << path << " /" << apath << ": axis " << axis << " (" << a.dim << ") already has "
            << "these edges (" << res.old_axis.dump() << "); nothing to do: no commit on branch "
            << session->branch() << " (tip " << base << ")\n";
        return 0;
    }
    const std::string msg = a.message.empty()
                                ? "zarr3 compact: /" + apath + " axis " + std::to_string(axis) +
                                      " " + res.old_axis.dump() + " -> " + res.new_axis.dump()
                                : a.message;
    const std::string id = session->commit(msg);
    out << path << " /" << apath << ": axis " << axis << " (" << a.dim << ") "
        << res.old_axis.dump() << " -> " << res.new_axis.dump() << "; " << res.old_chunks
        << " chunks -> " << res.new_chunks << written(res) << "; commit " << id << " on branch "
        << session->branch() << " (parent " << base << ")\n";
    return 0;
}

} // namespace

int cmd_compact(const std::string& path, const std::vector<std::string>& opts, std::ostream& out) {
    const Args a = parse_args(opts);
    require_local_folder(path);
    const fs::path dir = fs::absolute(path).lexically_normal();
    if (fs::is_regular_file(dir / "repo") && !fs::exists(dir / "zarr.json"))
        return compact_repository(path, dir, a, out);
    if (a.repo_option)
        throw zarr3::Error("compact: --array, --branch and --message apply to Icechunk "
                           "repositories only; " +
                           path + " holds no repo file");
    refuse_links(dir);
    auto store = std::make_shared<NoLinkStore>(dir.string());
    auto arr = zarr3::Array::open(store, "");
    const size_t axis = axis_of(arr->metadata(), a.dim, path);
    const auto finder = [&](const std::string& name, uint64_t len) {
        return find_coordinate(dir, name, len);
    };
    const auto res = zarr3::compact_array(
        *arr, axis, plan(a, *arr, axis, finder),
        [&](const zarr3::ArrayMetadata& m) { update_parents(dir, m); },
        [&](const std::string& from, const std::string& to) { return store->link(from, to); });
    if (res.unchanged) {
        out << path << ": axis " << axis << " (" << a.dim << ") already has these edges ("
            << res.old_axis.dump() << "); nothing to do, nothing written\n";
        return 0;
    }
    {
        // Under the array's lock again: an append that waited for the
        // compaction creates chunk folders meanwhile.
        const auto lock = zarr3::lock_array(*store, "");
        remove_empty_chunk_folders(dir);
    }
    out << path << ": axis " << axis << " (" << a.dim << ") " << res.old_axis.dump() << " -> "
        << res.new_axis.dump() << "; " << res.old_chunks << " chunks -> " << res.new_chunks
        << written(res) << "\n";
    return 0;
}
