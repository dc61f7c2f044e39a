// zarr3 virtualize REPO FILE... --concat-dim DIM [--variables a,b] [--branch B]
//                  [--message M] [--container URL_PREFIX] [--append] [--no-checksum]
// zarr3 virtualize REPO --relocate OLD_PREFIX NEW_PREFIX [--branch B] [--message M]
// An Icechunk repository whose arrays reference the HDF5 chunks of NetCDF-4
// files in place (the plan: virtualize_plan.cpp). The zarr3 program, and the
// plugin on GDAL >= 3.12 (driver/zarr3_algorithms.cpp), run it.
#include "zarr3_virtualize.hpp"

#include "virtualize_plan.hpp"

#include "zarr3/array.hpp"
#include "zarr3/icechunk_write.hpp"

#include <filesystem>
#include <map>
#include <ostream>
#include <unistd.h>

namespace fs = std::filesystem;

namespace zarr3virt {

namespace {

using nlohmann::json;
using zarr3::Error;

struct UsageError : Error {
    using Error::Error;
};

constexpr const char* kUsage =
    "usage: zarr3 virtualize REPO FILE... --concat-dim DIM [--variables A,B] [--branch NAME]\n"
    "                        [--message TEXT] [--container URL_PREFIX] [--append]\n"
    "                        [--no-checksum]\n"
    "       zarr3 virtualize REPO --relocate OLD_PREFIX NEW_PREFIX [--branch NAME]\n"
    "                        [--message TEXT]\n"
    "Creates the Icechunk repository REPO (or, with --append, adds one commit to it) whose\n"
    "arrays reference the HDF5 chunks of the NetCDF-4 FILEs in place, concatenated along DIM\n"
    "(files of different lengths: a rectilinear axis). Coordinates and the chunks that cannot be\n"
    "referenced are copied. Remote FILEs (/vsis3/BUCKET/KEY, /vsicurl/http(s)://...) are read\n"
    "by `gdal driver zarr3 virtualize` on GDAL >= 3.12 only. --container: the URL prefix the\n"
    "references name (default: file:// of the files' folder, or the remote files' URL\n"
    "folder). --no-checksum: the references record no modification time (files\n"
    "copied without their times; a changed file is then read unnoticed). --relocate: rewrites\n"
    "every reference under OLD_PREFIX.\n";

std::set<std::string> split_list(const std::string& s) {
    std::set<std::string> out;
    size_t at = 0;
    while (at <= s.size()) {
        const size_t comma = std::min(s.find(',', at), s.size());
        if (comma > at) out.insert(s.substr(at, comma - at));
        at = comma + 1;
    }
    return out;
}

Options parse(const std::vector<std::string>& args) {
    Options o;
    if (args.empty()) throw UsageError("virtualize: missing REPO");
    o.repo = args[0];
    auto value = [&](size_t& i) -> const std::string& {
        if (i + 1 >= args.size()) throw UsageError("virtualize: " + args[i] + " needs a value");
        return args[++i];
    };
    for (size_t i = 1; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--concat-dim")
            o.concat_dim = value(i);
        else if (a == "--variables")
            o.variables = split_list(value(i));
        else if (a == "--branch")
            o.branch = value(i);
        else if (a == "--message")
            o.message = value(i);
        else if (a == "--container")
            o.container = value(i);
        else if (a == "--append")
            o.append = true;
        else if (a == "--no-checksum")
            o.no_checksum = true;
        else if (a == "--relocate") {
            o.relocate_from = value(i);
            o.relocate_to = value(i);
        } else if (a.starts_with("--"))
            throw UsageError("virtualize: unknown option " + a);
        else
            o.files.push_back(a);
    }
    if (!o.relocate_from.empty()) {
        if (!o.files.empty() || o.append || o.no_checksum)
            throw UsageError(
                "virtualize: --relocate takes no FILE, no --append and no --no-checksum");
        return o;
    }
    if (o.files.empty()) throw UsageError("virtualize: no FILE given");
    if (o.concat_dim.empty()) throw UsageError("virtualize: --concat-dim DIM is required");
    return o;
}

// Remote files are checked when the plan opens them (open_file in virtualize_plan.cpp).
void require_local_repository(const Options& o) {
    if (o.repo.rfind("/vsi", 0) == 0 || o.repo.find("://") != std::string::npos)
        throw Error(o.repo + ": zarr3 virtualize writes local repositories only");
}

struct Written {
    size_t refs = 0, copied = 0;
    std::map<std::string, size_t> reasons;
};

void write_native(const std::shared_ptr<zarr3::Store>& session, const NativeArray& n) {
    const std::string text = n.metadata.dump();
    session->put(n.name + "/zarr.json",
                 zarr3::ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
    auto a = zarr3::Array::open(session, n.name);
    a->write(zarr3::Selection::all(a->metadata().shape), n.values.data());
    a->flush();
}

// The checksum a reference records: the file's modification time, and a
// remote file's ETag (none with --no-checksum).
struct Checksum {
    int64_t mtime = 0;
    std::string etag;
};

void write_array(const std::shared_ptr<zarr3::icechunk::IcechunkSession>& session, const Plan& plan,
                 const ArrayPlan& a, const std::vector<Checksum>& sums, Written& w) {
    const std::string text = a.metadata.dump();
    session->put(a.name + "/zarr.json",
                 zarr3::ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
    std::shared_ptr<zarr3::Array> array;
    for (const ChunkPlan& c : a.chunks) {
        if (!c.copy) {
            session->put_virtual(chunk_key(a.name, c.coords), plan.urls[c.file], c.address, c.size,
                                 uint32_t(sums[c.file].mtime), sums[c.file].etag);
            ++w.refs;
            continue;
        }
        if (!array) array = zarr3::Array::open(session, a.name);
        const auto values = plan.files[c.file].read_region(a.name, c.file_start, c.count);
        array->write(zarr3::Selection{c.array_start, c.count, {}}, values.data());
        ++w.copied;
        ++w.reasons[c.reason];
    }
    if (array) array->flush();
}

// Everything the plan holds, staged in `session`.
Written stage(const std::shared_ptr<zarr3::icechunk::IcechunkSession>& session, const Options& o,
              const Plan& plan, bool with_group) {
    if (with_group) {
        const std::string g =
            json{{"zarr_format", 3}, {"node_type", "group"}, {"attributes", plan.group_attributes}}
                .dump();
        session->put("zarr.json",
                     zarr3::ByteView(reinterpret_cast<const uint8_t*>(g.data()), g.size()));
    }
    std::vector<Checksum> sums;
    for (const auto& f : plan.files)
        sums.push_back(o.no_checksum ? Checksum{} : Checksum{f.mtime, f.etag});
    Written w;
    for (const auto& a : plan.arrays)
        write_array(session, plan, a, sums, w);
    for (const auto& n : plan.natives)
        write_native(session, n);
    return w;
}

std::string container_of(const std::string& url) {
    return url.substr(0, url.rfind('/') + 1);
}

void report(std::ostream& out, const Options& o, const Plan& plan, const Written& w,
            const std::string& id) {
    out << o.repo << ": " << plan.files.size() << " file(s), " << plan.arrays.size()
        << " virtual array(s) (";
    for (size_t i = 0; i < plan.arrays.size(); ++i)
        out << (i ? ", " : "") << plan.arrays[i].name;
    out << "): " << w.refs << " chunk reference(s), " << w.copied << " chunk(s) copied";
    for (const auto& [why, n] : w.reasons)
        out << "\n  copied " << n << ": " << why;
    if (o.no_checksum) out << "\n  no modification time recorded (--no-checksum)";
    out << "\n  stored natively: ";
    for (size_t i = 0; i < plan.natives.size(); ++i)
        out << (i ? ", " : "") << plan.natives[i].name;
    out << "\n  commit " << id << " on branch " << o.branch << "\n";
}

std::string default_message(const Options& o, const Plan& plan) {
    if (!o.message.empty()) return o.message;
    return std::string(o.append ? "virtualize --append: " : "virtualize: ") +
           std::to_string(plan.files.size()) + " NetCDF-4 file(s) along " + o.concat_dim;
}

int create(const Options& o, std::ostream& out) {
    if (fs::exists(o.repo))
        throw Error(o.repo + ": exists already (use --append to add files to a repository)");
    const Plan plan = make_plan(o, std::nullopt);
    const fs::path final_path = fs::absolute(o.repo).lexically_normal();
    const fs::path tmp = final_path.string() + ".virtualize-" + std::to_string(::getpid());
    fs::create_directories(tmp);
    try {
        auto storage = std::make_shared<zarr3::FileStore>(tmp.string(), true);
        zarr3::icechunk::create_repository(storage);
        zarr3::icechunk::declare_virtual_container(*storage, container_of(plan.urls[0]));
        auto session = zarr3::icechunk::IcechunkSession::open(storage, "main");
        const Written w = stage(session, o, plan, true);
        const std::string id = session->commit(default_message(o, plan));
        if (o.branch != "main") zarr3::icechunk::create_branch(*storage, o.branch, id);
        fs::rename(tmp, final_path);
        report(out, o, plan, w, id);
    } catch (...) {
        std::error_code ec;
        fs::remove_all(tmp, ec);
        throw;
    }
    return 0;
}

} // namespace

int append(const Options& o, std::ostream& out);
int relocate(const Options& o, std::ostream& out);

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
        std::shared_ptr<const NcReader> remote) {
    try {
        if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
            out << kUsage;
            return 0;
        }
        Options o = parse(args);
        o.remote = std::move(remote);
        require_local_repository(o);
        if (!o.relocate_from.empty()) return relocate(o, out);
        return o.append ? append(o, out) : create(o, out);
    } catch (const UsageError& e) {
        err << "zarr3: " << e.what() << "\n" << kUsage;
        return 2;
    } catch (const std::exception& e) {
        err << "zarr3: " << e.what() << "\n";
        return 1;
    }
}

namespace {

// The edges of a rectilinear axis as chunk_shapes lists it (runs expanded).
std::vector<uint64_t> expand_axis(const json& axis, const std::string& where) {
    std::vector<uint64_t> out;
    if (!axis.is_array()) throw Error(where + ": the first axis is no list of chunk edges");
    for (const auto& e : axis) {
        if (e.is_array() && e.size() == 2)
            out.insert(out.end(), e[1].get<uint64_t>(), e[0]);
        else
            out.push_back(e.get<uint64_t>());
    }
    return out;
}

// What the repository's branch holds along the dimension: its data arrays
// (first dimension named DIM), their common length and edges, the
// coordinate's values.
Existing existing_of(const std::shared_ptr<zarr3::icechunk::IcechunkSession>& session,
                     const Options& o) {
    Existing e;
    bool first = true;
    for (const auto& name : zarr3::Group::open(session, "")->array_names()) {
        const auto j = zarr3::read_node_json(*session, name);
        if (!j || name == o.concat_dim) continue;
        const auto dims = j->value("dimension_names", json::array());
        if (dims.empty() || dims[0] != o.concat_dim) continue;
        const std::string where = o.repo + ": array " + name;
        const json grid = j->value("chunk_grid", json::object());
        if (grid.value("name", "") != "rectilinear")
            throw Error(where + ": no rectilinear grid (not written by zarr3 virtualize)");
        const auto edges = expand_axis(grid["configuration"]["chunk_shapes"][0], where);
        const uint64_t length = (*j)["shape"][0].get<uint64_t>();
        if (!first && length != e.length)
            throw Error(where + ": its length along " + o.concat_dim +
                        " differs from the other arrays'; nothing written");
        e.length = length;
        e.edges[name] = edges;
        e.arrays[name] = *j;
        first = false;
    }
    if (first) throw Error(o.repo + ": no array along dimension " + o.concat_dim);
    if (const auto t = zarr3::read_node_json(*session, o.concat_dim)) {
        auto a = zarr3::Array::open(session, o.concat_dim);
        if (a->metadata().dtype.name != "float64" || a->metadata().shape.size() != 1)
            throw Error(o.repo + ": coordinate " + o.concat_dim + " is no 1-D float64 array");
        e.time.resize(a->metadata().shape[0]);
        a->read(zarr3::Selection::all(a->metadata().shape), e.time.data());
        e.time_metadata = *t;
    }
    return e;
}

// The repository's coordinates other than DIM (1-D arrays named like their
// dimension) must hold the values of the new files' (the same grid).
void check_coordinates(const std::shared_ptr<zarr3::icechunk::IcechunkSession>& session,
                       const Options& o, const Plan& plan) {
    for (const auto& name : zarr3::Group::open(session, "")->array_names()) {
        if (name == o.concat_dim) continue;
        auto a = zarr3::Array::open(session, name);
        const auto& m = a->metadata();
        if (m.shape.size() != 1 || m.dimension_names.size() != 1 || m.dimension_names[0] != name)
            continue;
        for (const auto& f : plan.files) {
            const NcVar* v = f.find(name);
            if (!v || v->zarr_type != m.dtype.name || v->shape != m.shape)
                throw Error(f.path + ": coordinate " + name + " differs in presence, type or " +
                            "length from the repository's; nothing written");
            zarr3::Bytes had(m.shape[0] * m.dtype.size);
            a->read(zarr3::Selection::all(m.shape), had.data());
            if (f.read_region(name, {0}, v->shape) != had)
                throw Error(f.path + ": coordinate " + name +
                            " holds other values than the repository's; nothing written");
        }
    }
}

} // namespace

int append(const Options& o, std::ostream& out) {
    const std::string root = fs::absolute(o.repo).lexically_normal().string();
    if (!fs::is_regular_file(fs::path(root) / "repo"))
        throw Error(o.repo + ": not an Icechunk repository of spec version 2 (no repo file)");
    auto storage = std::make_shared<zarr3::FileStore>(root, true);
    auto session = zarr3::icechunk::IcechunkSession::open(storage, o.branch);
    const Existing existing = existing_of(session, o);
    const Plan plan = make_plan(o, existing);
    check_coordinates(session, o, plan);
    for (const auto& [name, meta] : existing.arrays) {
        (void)meta;
        if (std::none_of(plan.arrays.begin(), plan.arrays.end(),
                         [&](const ArrayPlan& a) { return a.name == name; }))
            throw Error(plan.files[0].path + ": no variable " + name + " (the repository's array " +
                        "along " + o.concat_dim + "); nothing written");
    }
    const std::string container = container_of(plan.urls[0]);
    const auto declared = zarr3::icechunk::declared_virtual_containers(*storage);
    if (std::find(declared.begin(), declared.end(), container) == declared.end())
        zarr3::icechunk::declare_virtual_container(*storage, container);
    const Written w = stage(session, o, plan, false);
    const std::string id = session->commit(default_message(o, plan));
    report(out, o, plan, w, id);
    return 0;
}

} // namespace zarr3virt
