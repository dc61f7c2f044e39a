// `zarr3 virtualize`: planning (virtualize_plan.hpp).
#include "virtualize_plan.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>

namespace fs = std::filesystem;

namespace zarr3virt {

namespace {

using nlohmann::json;
using zarr3::Error;
namespace vz = zarr3::virtualize;

std::string dims_text(const std::vector<std::string>& d) {
    std::string s = "(";
    for (size_t i = 0; i < d.size(); ++i)
        s += (i ? ", " : "") + d[i];
    return s + ")";
}

std::string shape_text(const std::vector<uint64_t>& v) {
    return json(v).dump();
}

// The variables of the first file: data variables (along the dimension,
// virtualized), and the others (copied).
struct Selection {
    std::vector<std::string> data, statics;
    std::string coord; // the dimension's coordinate variable ("" when none)
};

Selection select_vars(const NcFile& f, const Options& opt) {
    Selection s;
    for (const auto& v : f.vars) {
        if (v.zarr_type.empty()) continue; // text and compound variables: not carried
        const auto at = std::find(v.dims.begin(), v.dims.end(), opt.concat_dim);
        if (v.name == opt.concat_dim && v.dims.size() == 1) {
            s.coord = v.name;
        } else if (at == v.dims.end()) {
            s.statics.push_back(v.name);
        } else if (opt.variables.empty() || opt.variables.count(v.name)) {
            if (at != v.dims.begin())
                throw Error(f.path + ": variable " + v.name + dims_text(v.dims) + " has " +
                            opt.concat_dim +
                            " as no first dimension; only the first dimension can be concatenated");
            s.data.push_back(v.name);
        }
    }
    for (const auto& want : opt.variables)
        if (std::find(s.data.begin(), s.data.end(), want) == s.data.end())
            throw Error(f.path + ": no numeric variable " + want + " along dimension " +
                        opt.concat_dim);
    if (s.data.empty())
        throw Error(f.path + ": no variable along dimension " + opt.concat_dim +
                    " (--concat-dim names a dimension of the data variables)");
    return s;
}

// The chunk shape of a variable outside the concatenated axis.
std::vector<uint64_t> inner_chunk(const NcVar& v) {
    const auto& c = v.layout == NcVar::Layout::Chunked ? v.chunk_shape : v.shape;
    std::vector<uint64_t> out(c.begin() + 1, c.end());
    for (auto& x : out)
        x = std::max<uint64_t>(x, 1);
    return out;
}

uint64_t time_chunk(const NcVar& v) {
    return v.layout == NcVar::Layout::Chunked ? v.chunk_shape[0]
                                              : std::max<uint64_t>(v.shape[0], 1);
}

const char* kPacking[] = {"scale_factor", "add_offset", "units", "missing_value"};

void check_same(const NcVar& a, const NcVar& b, const NcFile& first, const NcFile& f, bool along) {
    const std::string head = f.path + ": variable " + b.name + " ";
    const std::string vs = " where " + first.path + " has ";
    if (a.zarr_type != b.zarr_type)
        throw Error(head + "is " + b.zarr_type + vs + a.zarr_type + "; nothing written");
    if (a.dims != b.dims)
        throw Error(head + "has dimensions " + dims_text(b.dims) + vs + dims_text(a.dims) +
                    "; nothing written");
    const size_t from = along ? 1 : 0;
    if (!std::equal(a.shape.begin() + long(from), a.shape.end(), b.shape.begin() + long(from)))
        throw Error(head + "has shape " + shape_text(b.shape) + vs + shape_text(a.shape) +
                    "; nothing written");
    if (!along) return;
    if (inner_chunk(a) != inner_chunk(b))
        throw Error(head + "has HDF5 chunks " + shape_text(b.chunk_shape) + vs +
                    shape_text(a.chunk_shape) + " (outside " + a.dims[0] + "); nothing written");
    if (a.filters != b.filters)
        throw Error(head + "has other HDF5 filters than in " + first.path + "; nothing written");
    for (const char* k : kPacking)
        if (a.attributes.value(k, json()) != b.attributes.value(k, json()))
            throw Error(head + "has " + k + " " + b.attributes.value(k, json()).dump() + vs +
                        a.attributes.value(k, json()).dump() +
                        " (one array has one packing); nothing written");
}

void check_files(const std::vector<NcFile>& files, const Selection& s) {
    const NcFile& first = files[0];
    for (size_t i = 1; i < files.size(); ++i) {
        const NcFile& f = files[i];
        for (int along = 0; along < 2; ++along)
            for (const auto& name : along ? s.data : s.statics) {
                const NcVar* b = f.find(name);
                if (!b)
                    throw Error(f.path + ": no variable " + name + " (" + first.path +
                                " has one); nothing written");
                check_same(*first.find(name), *b, first, f, along);
                if (!along && b->dimension_scale &&
                    first.read_region(name, std::vector<uint64_t>(b->shape.size(), 0), b->shape) !=
                        f.read_region(name, std::vector<uint64_t>(b->shape.size(), 0), b->shape))
                    throw Error(f.path + ": coordinate " + name + " holds other values than in " +
                                first.path + "; nothing written");
            }
    }
}

std::vector<double> as_doubles(const zarr3::Bytes& b, const std::string& t) {
    std::vector<double> out;
    auto take = [&](auto x) {
        const size_t n = b.size() / sizeof(x);
        for (size_t i = 0; i < n; ++i) {
            std::memcpy(&x, b.data() + i * sizeof(x), sizeof(x));
            out.push_back(double(x));
        }
    };
    if (t == "float64")
        take(double{});
    else if (t == "float32")
        take(float{});
    else if (t == "int64")
        take(int64_t{});
    else if (t == "int32")
        take(int32_t{});
    else if (t == "int16")
        take(int16_t{});
    else if (t == "uint32")
        take(uint32_t{});
    else if (t == "uint16")
        take(uint16_t{});
    else
        throw Error("time coordinate of type " + t + ": not converted");
    return out;
}

std::string text_attr(const json& attrs, const char* k) {
    const auto it = attrs.find(k);
    return it != attrs.end() && it->is_string() ? it->get<std::string>() : "";
}

nlohmann::json rle(const std::vector<uint64_t>& edges) {
    json out = json::array();
    for (size_t i = 0; i < edges.size();) {
        size_t j = i;
        while (j < edges.size() && edges[j] == edges[i])
            ++j;
        if (j - i > 1)
            out.push_back(json::array({edges[i], j - i}));
        else
            out.push_back(edges[i]);
        i = j;
    }
    return out;
}

json base_metadata(const NcVar& v, const std::vector<uint64_t>& shape, json grid, json codecs) {
    return {{"zarr_format", 3},
            {"node_type", "array"},
            {"shape", shape},
            {"data_type", v.zarr_type},
            {"chunk_grid", std::move(grid)},
            {"chunk_key_encoding", {{"name", "default"}, {"configuration", {{"separator", "/"}}}}},
            {"fill_value", v.fill_value.is_null() ? json(0) : v.fill_value},
            {"codecs", std::move(codecs)},
            {"attributes", v.attributes},
            {"dimension_names", v.dims}};
}

json native_codecs(size_t element_size) {
    json bytes = {{"name", "bytes"}};
    if (element_size > 1) bytes["configuration"] = {{"endian", "little"}};
    return json::array({bytes, {{"name", "gzip"}, {"configuration", {{"level", 6}}}}});
}

json regular(const std::vector<uint64_t>& shape) {
    std::vector<uint64_t> c = shape;
    for (auto& x : c)
        x = std::max<uint64_t>(x, 1);
    return {{"name", "regular"}, {"configuration", {{"chunk_shape", c}}}};
}

// The codecs of a data variable: its HDF5 filters mapped, or (none mapped)
// a chain of this tool's choice for chunks that are all copied.
json codecs_of(const NcVar& v, std::string& why) {
    if (v.layout == NcVar::Layout::Compact)
        why = "compact HDF5 layout";
    else if (auto c = vz::codecs_for_filters(v.filters, v.element_size, v.big_endian, &why))
        return *c;
    return native_codecs(v.element_size);
}

// One file's chunks of a data variable, placed after `t0` elements and `k0`
// chunks along the concatenated axis.
void plan_file_chunks(ArrayPlan& a, const NcVar& v, size_t file, uint64_t t0, uint64_t k0,
                      const std::string& why) {
    const uint64_t ct = time_chunk(v);
    const auto edges = vz::file_edges(v.shape[0], ct);
    const auto inner = inner_chunk(v);
    auto copy_region = [&](ChunkPlan& c, uint64_t local, std::vector<uint64_t> origin,
                           const std::string& reason) {
        c.copy = true;
        c.reason = reason;
        c.file_start = origin;
        c.file_start[0] = local * ct;
        c.count.push_back(edges.edges[local]);
        for (size_t d = 1; d < v.shape.size(); ++d)
            c.count.push_back(std::min(inner[d - 1], v.shape[d] - origin[d]));
        c.array_start = c.file_start;
        c.array_start[0] += t0;
    };
    if (!why.empty()) { // every chunk of the file copied (decoded by libhdf5)
        std::vector<uint64_t> n(v.shape.size(), 0);
        n[0] = edges.edges.size();
        for (size_t d = 1; d < v.shape.size(); ++d)
            n[d] = (v.shape[d] + inner[d - 1] - 1) / inner[d - 1];
        std::vector<uint64_t> idx(v.shape.size(), 0);
        for (bool more = std::all_of(n.begin(), n.end(), [](uint64_t x) { return x > 0; }); more;) {
            ChunkPlan c;
            c.file = file;
            c.coords = idx;
            c.coords[0] += k0;
            std::vector<uint64_t> origin(idx.size(), 0);
            for (size_t d = 1; d < idx.size(); ++d)
                origin[d] = idx[d] * inner[d - 1];
            copy_region(c, idx[0], origin, why);
            a.chunks.push_back(std::move(c));
            size_t d = idx.size();
            while (d > 0 && ++idx[d - 1] == n[d - 1])
                idx[--d] = 0;
            more = d > 0;
        }
        return;
    }
    for (const NcChunk& h : v.chunks) {
        ChunkPlan c;
        c.file = file;
        const uint64_t local = h.origin[0] / ct;
        c.coords.push_back(k0 + local);
        for (size_t d = 1; d < h.origin.size(); ++d)
            c.coords.push_back(h.origin[d] / inner[d - 1]);
        if (h.filter_mask)
            copy_region(c, local, h.origin, "HDF5 filters skipped for this chunk");
        else if (edges.padded_last && local + 1 == edges.edges.size())
            copy_region(c, local, h.origin,
                        "padded edge chunk (HDF5 chunk of " + std::to_string(ct) +
                            " does not divide the file's " + std::to_string(v.shape[0]) + ")");
        else {
            c.address = h.address;
            c.size = h.size;
        }
        a.chunks.push_back(std::move(c));
    }
}

// The reference URL of each file: under `container`, or by default under the
// folder (bucket prefix, server folder) holding them all.
std::vector<std::string> urls_of(const std::vector<NcFile>& files, const std::string& container) {
    std::vector<std::string> remote;
    for (const auto& f : files)
        if (auto u = vz::remote_source_url(f.path)) remote.push_back(*u);
    if (!remote.empty()) {
        if (remote.size() != files.size())
            throw Error(files[0].path + ", " + files.back().path +
                        ": local and remote files together (virtualize them separately)");
        const std::string common = vz::common_url_prefix(remote);
        std::vector<std::string> out;
        for (const auto& u : remote)
            out.push_back(
                vz::reference_url(container.empty() ? common : container, u.substr(common.size())));
        return out;
    }
    fs::path common = fs::absolute(files[0].path).lexically_normal().parent_path();
    for (const auto& f : files) {
        const fs::path dir = fs::absolute(f.path).lexically_normal().parent_path();
        while (!common.empty() && dir.string().rfind(common.string(), 0) != 0)
            common = common.parent_path();
    }
    std::string prefix = container;
    if (prefix.empty()) {
        prefix = "file://" + common.string();
        if (prefix.back() != '/') prefix += '/';
    }
    std::vector<std::string> out;
    for (const auto& f : files)
        out.push_back(vz::reference_url(
            prefix, fs::absolute(f.path).lexically_normal().lexically_relative(common).string()));
    return out;
}

// The time coordinate: values of every file in the first one's units
// (after the existing values on --append).
NativeArray time_array(const std::vector<NcFile>& files, const std::string& name,
                       const std::optional<Existing>& existing) {
    std::vector<vz::TimePiece> pieces;
    json meta = existing ? existing->time_metadata : json();
    if (existing)
        pieces.push_back({"the repository's " + name + " coordinate", existing->time,
                          text_attr(meta["attributes"], "units"),
                          text_attr(meta["attributes"], "calendar")});
    for (const auto& f : files) {
        const NcVar& v = *f.find(name);
        pieces.push_back({f.path, as_doubles(f.read_region(name, {0}, v.shape), v.zarr_type),
                          text_attr(v.attributes, "units"), text_attr(v.attributes, "calendar")});
    }
    const auto values = vz::concatenate_time(pieces);
    NcVar v = *files[0].find(name);
    v.zarr_type = "float64";
    v.fill_value = "NaN";
    NativeArray out{name, {}, {}};
    out.metadata = existing ? meta : base_metadata(v, {}, json(), native_codecs(8));
    out.metadata["shape"] = {values.size()};
    out.metadata["chunk_grid"] = regular({values.size()});
    out.values.resize(values.size() * 8);
    std::memcpy(out.values.data(), values.data(), out.values.size());
    return out;
}

NativeArray static_array(const NcFile& f, const std::string& name) {
    const NcVar& v = *f.find(name);
    NativeArray out{name,
                    base_metadata(v, v.shape, regular(v.shape), native_codecs(v.element_size)),
                    f.read_region(name, std::vector<uint64_t>(v.shape.size(), 0), v.shape)};
    return out;
}

// A data variable's array over every file (after the existing chunks).
ArrayPlan data_array(const std::vector<NcFile>& files, const std::string& name,
                     const std::optional<Existing>& existing) {
    const NcVar& v0 = *files[0].find(name);
    std::string why;
    json codecs = codecs_of(v0, why);
    ArrayPlan a{name, {}, {}};
    uint64_t t0 = existing ? existing->length : 0;
    std::vector<uint64_t> edges;
    if (existing && existing->edges.count(name)) edges = existing->edges.at(name);
    for (size_t i = 0; i < files.size(); ++i) {
        const NcVar& v = *files[i].find(name);
        plan_file_chunks(a, v, i, t0, edges.size(), why);
        const auto e = vz::file_edges(v.shape[0], time_chunk(v)).edges;
        edges.insert(edges.end(), e.begin(), e.end());
        t0 += v.shape[0];
    }
    std::vector<uint64_t> shape = v0.shape;
    shape[0] = t0;
    json axes = json::array({rle(edges)});
    const auto inner = inner_chunk(v0);
    for (size_t d = 1; d < shape.size(); ++d)
        axes.push_back(json::array({json::array(
            {inner[d - 1], std::max<uint64_t>(1, (shape[d] + inner[d - 1] - 1) / inner[d - 1])})}));
    json grid = {{"name", "rectilinear"},
                 {"configuration", {{"kind", "inline"}, {"chunk_shapes", axes}}}};
    a.metadata = base_metadata(v0, shape, grid, codecs);
    if (existing) {
        const auto it = existing->arrays.find(name);
        if (it == existing->arrays.end())
            throw Error(files[0].path + ": variable " + name +
                        " is no array of the repository; nothing written");
        for (const char* k : {"data_type", "codecs", "fill_value", "dimension_names"})
            if (it->second.value(k, json()) != a.metadata[k])
                throw Error(files[0].path + ": variable " + name + " has " + k + " " +
                            a.metadata[k].dump() + " where the repository's array has " +
                            it->second.value(k, json()).dump() + "; nothing written");
        const json& had = it->second;
        const json shape_tail(std::vector<json>(had["shape"].begin() + 1, had["shape"].end()));
        const json want_tail(
            std::vector<json>(a.metadata["shape"].begin() + 1, a.metadata["shape"].end()));
        if (shape_tail != want_tail)
            throw Error(files[0].path + ": variable " + name + " has shape " +
                        shape_text(v0.shape) + " where the repository's array has " +
                        had["shape"].dump() + " (outside " + v0.dims[0] + "); nothing written");
        const auto& hs = had["chunk_grid"]["configuration"]["chunk_shapes"];
        const auto& ws = a.metadata["chunk_grid"]["configuration"]["chunk_shapes"];
        if (json(std::vector<json>(hs.begin() + 1, hs.end())) !=
            json(std::vector<json>(ws.begin() + 1, ws.end())))
            throw Error(files[0].path + ": variable " + name + " has HDF5 chunks " +
                        shape_text(v0.chunk_shape) + " other than the repository's array (" +
                        hs.dump() + "); nothing written");
        a.metadata["attributes"] = had.value("attributes", json::object());
    }
    return a;
}

// A file through libhdf5, or a remote one through the caller's reader.
NcFile open_file(const std::string& path, const Options& opt) {
    if (!vz::remote_source_url(path)) return read_nc(path);
    if (!opt.remote)
        throw Error(path + ": remote NetCDF files (/vsis3/, /vsicurl/) are read by `gdal driver "
                           "zarr3 virtualize` on GDAL >= 3.12 only; with the zarr3 program, copy "
                           "them locally and give --container the URL prefix where they are "
                           "served");
    NcFile f = opt.remote->read(path);
    f.reader = opt.remote;
    return f;
}

} // namespace

Plan make_plan(const Options& opt, const std::optional<Existing>& existing) {
    Plan p;
    for (const auto& f : opt.files)
        p.files.push_back(open_file(f, opt));
    const Selection s = select_vars(p.files[0], opt);
    check_files(p.files, s);
    p.urls = urls_of(p.files, opt.container);
    p.group_attributes = p.files[0].attributes;
    for (const auto& name : s.data)
        p.arrays.push_back(data_array(p.files, name, existing));
    if (!s.coord.empty()) {
        for (const auto& f : p.files)
            if (!f.find(s.coord))
                throw Error(f.path + ": no coordinate variable " + s.coord + "; nothing written");
        p.natives.push_back(time_array(p.files, s.coord, existing));
    }
    if (!existing)
        for (const auto& name : s.statics)
            p.natives.push_back(static_array(p.files[0], name));
    check_remote_chunks(p);
    return p;
}

std::string chunk_key(const std::string& array, const std::vector<uint64_t>& coords) {
    std::string k = array + "/c";
    for (uint64_t c : coords)
        k += "/" + std::to_string(c);
    return k;
}

} // namespace zarr3virt
