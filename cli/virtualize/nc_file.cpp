// NetCDF-4 files through libhdf5 (nc_file.hpp).
#include "nc_file.hpp"

#include <hdf5.h>

#include <cmath>
#include <cstring>
#include <set>
#include <sys/stat.h>

namespace zarr3virt {

namespace {

using zarr3::Error;

// An HDF5 identifier closed by `close` when it goes out of scope.
struct Hid {
    hid_t id = -1;
    herr_t (*close)(hid_t) = nullptr;
    Hid(hid_t i, herr_t (*c)(hid_t)) : id(i), close(c) {}
    Hid(const Hid&) = delete;
    Hid& operator=(const Hid&) = delete;
    ~Hid() {
        if (id >= 0 && close) close(id);
    }
    operator hid_t() const { return id; }
};

// Per thread: a thread-safe libhdf5 keeps the error stack's printer per
// thread (the plugin's `gdal driver zarr3 virtualize` runs on the caller's).
void quiet_hdf5() {
    thread_local const bool once = [] {
        H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); // errors come back as messages here
        return true;
    }();
    (void)once;
}

// A file id the caller closes (wrapped in a Hid).
hid_t open_file(const std::string& path) {
    quiet_hdf5();
    if (H5Fis_hdf5(path.c_str()) <= 0)
        throw Error(path + ": not a NetCDF-4 (HDF5) file (NetCDF classic files hold no chunks to "
                           "reference)");
    const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) throw Error(path + ": libhdf5 cannot open the file");
    return f;
}

// The Zarr data type of an HDF5 numeric type ("" for others).
std::string zarr_type_of(hid_t type, size_t& size, bool& big_endian) {
    size = H5Tget_size(type);
    big_endian = H5Tget_order(type) == H5T_ORDER_BE;
    const H5T_class_t c = H5Tget_class(type);
    if (c == H5T_FLOAT && (size == 4 || size == 8)) return size == 4 ? "float32" : "float64";
    if (c == H5T_INTEGER && (size == 1 || size == 2 || size == 4 || size == 8)) {
        const bool is_signed = H5Tget_sign(type) == H5T_SGN_2;
        return std::string(is_signed ? "int" : "uint") + std::to_string(size * 8);
    }
    return "";
}

hid_t native_of(const std::string& zarr_type) {
    if (zarr_type == "float32") return H5T_NATIVE_FLOAT;
    if (zarr_type == "float64") return H5T_NATIVE_DOUBLE;
    if (zarr_type == "int8") return H5T_NATIVE_INT8;
    if (zarr_type == "int16") return H5T_NATIVE_INT16;
    if (zarr_type == "int32") return H5T_NATIVE_INT32;
    if (zarr_type == "int64") return H5T_NATIVE_INT64;
    if (zarr_type == "uint8") return H5T_NATIVE_UINT8;
    if (zarr_type == "uint16") return H5T_NATIVE_UINT16;
    if (zarr_type == "uint32") return H5T_NATIVE_UINT32;
    return H5T_NATIVE_UINT64;
}

// An attribute's value as JSON: text, a number, or a list of numbers.
nlohmann::json attribute_value(hid_t attr, const std::string& where) {
    Hid type(H5Aget_type(attr), H5Tclose);
    Hid space(H5Aget_space(attr), H5Sclose);
    const hssize_t n = H5Sget_simple_extent_npoints(space);
    if (H5Tget_class(type) == H5T_STRING) {
        if (H5Tis_variable_str(type) > 0) {
            if (n != 1) return nullptr;
            char* s = nullptr;
            Hid mem(H5Tcopy(H5T_C_S1), H5Tclose);
            H5Tset_size(mem, H5T_VARIABLE);
            if (H5Aread(attr, mem, &s) < 0) throw Error(where + ": unreadable attribute");
            std::string out = s ? s : "";
            H5free_memory(s);
            return out;
        }
        std::string buf(H5Tget_size(type) * size_t(std::max<hssize_t>(n, 1)), '\0');
        if (H5Aread(attr, type, buf.data()) < 0) throw Error(where + ": unreadable attribute");
        return std::string(buf.c_str());
    }
    size_t size = 0;
    bool be = false;
    const std::string zt = zarr_type_of(type, size, be);
    if (zt.empty() || n < 0) return nullptr;
    std::vector<uint8_t> buf(size * size_t(n));
    if (H5Aread(attr, native_of(zt), buf.data()) < 0) throw Error(where + ": unreadable attribute");
    nlohmann::json out = nlohmann::json::array();
    for (hssize_t i = 0; i < n; ++i)
        out.push_back(number_json(zt, buf.data() + size * size_t(i)));
    return n == 1 ? out[0] : out;
}

const std::set<std::string> kInternalAttributes = {"CLASS",          "NAME",
                                                   "REFERENCE_LIST", "DIMENSION_LIST",
                                                   "_Netcdf4Dimid",  "_Netcdf4Coordinates",
                                                   "_FillValue",     "_nc3_strict",
                                                   "_NCProperties",  "_IsNetcdf4"};

herr_t collect_attribute(hid_t, const char* name, const H5A_info_t*, void* data) {
    static_cast<std::vector<std::string>*>(data)->push_back(name);
    return 0;
}

// The attributes of `obj` but netCDF's and HDF5's own (H5Aiterate2 and
// H5Aopen have one signature from libhdf5 1.10 to 1.14).
nlohmann::json attributes_of(hid_t obj, const std::string& where) {
    nlohmann::json out = nlohmann::json::object();
    std::vector<std::string> names;
    hsize_t idx = 0;
    if (H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_attribute, &names) < 0)
        throw Error(where + ": libhdf5 cannot list the attributes");
    for (const auto& name : names) {
        if (kInternalAttributes.count(name)) continue;
        Hid a(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose);
        if (a < 0) throw Error(where + ": libhdf5 cannot open attribute " + name);
        auto v = attribute_value(a, where + " attribute " + name);
        if (!v.is_null()) out[name] = std::move(v);
    }
    return out;
}

std::string name_of(hid_t obj) {
    std::string n(size_t(H5Iget_name(obj, nullptr, 0)), '\0');
    H5Iget_name(obj, n.data(), n.size() + 1);
    return n.starts_with("/") ? n.substr(1) : n;
}

// Dimension names through the DIMENSION_LIST attribute (the dimension scales).
std::vector<std::string> dims_of(hid_t d, const std::string& name, size_t rank) {
    std::vector<std::string> out;
    if (H5Aexists(d, "DIMENSION_LIST") > 0) {
        Hid a(H5Aopen(d, "DIMENSION_LIST", H5P_DEFAULT), H5Aclose);
        Hid vlen(H5Tvlen_create(H5T_STD_REF_OBJ), H5Tclose);
        std::vector<hvl_t> refs(rank);
        if (H5Aread(a, vlen, refs.data()) >= 0) {
            for (const hvl_t& v : refs) {
                std::string dim;
                if (v.len > 0) {
                    Hid o(H5Rdereference2(d, H5P_DEFAULT, H5R_OBJECT, v.p), H5Oclose);
                    if (o >= 0) dim = name_of(o);
                }
                out.push_back(dim);
            }
            Hid space(H5Aget_space(a), H5Sclose);
            H5Dvlen_reclaim(vlen, space, H5P_DEFAULT, refs.data());
        }
    }
    if (out.size() != rank) out.assign(rank, "");
    for (size_t i = 0; i < rank; ++i)
        if (out[i].empty()) out[i] = rank == 1 ? name : "dim" + std::to_string(i);
    return out;
}

void read_layout(hid_t d, NcVar& v, const std::string& where) {
    Hid dcpl(H5Dget_create_plist(d), H5Pclose);
    const H5D_layout_t layout = H5Pget_layout(dcpl);
    std::vector<uint8_t> fill(std::max<size_t>(v.element_size, 8));
    if (H5Pget_fill_value(dcpl, native_of(v.zarr_type), fill.data()) >= 0)
        v.fill_value = number_json(v.zarr_type, fill.data());
    const int nf = H5Pget_nfilters(dcpl);
    for (int i = 0; i < nf; ++i) {
        unsigned flags = 0, cd[16];
        size_t ncd = 16;
        char fname[64] = {0};
        const H5Z_filter_t id =
            H5Pget_filter2(dcpl, unsigned(i), &flags, &ncd, cd, sizeof fname, fname, nullptr);
        v.filters.push_back(
            {unsigned(id), std::vector<unsigned>(cd, cd + std::min<size_t>(ncd, 16)), fname});
    }
    const size_t rank = v.shape.size();
    if (layout == H5D_COMPACT) {
        v.layout = NcVar::Layout::Compact;
    } else if (layout == H5D_CONTIGUOUS) {
        v.layout = NcVar::Layout::Contiguous;
        const haddr_t at = H5Dget_offset(d);
        if (at != HADDR_UNDEF)
            v.chunks.push_back({std::vector<uint64_t>(rank, 0), at, H5Dget_storage_size(d), 0});
    } else if (layout == H5D_CHUNKED) {
        v.layout = NcVar::Layout::Chunked;
        std::vector<hsize_t> cs(rank);
        H5Pget_chunk(dcpl, int(rank), cs.data());
        v.chunk_shape.assign(cs.begin(), cs.end());
        hsize_t n = 0;
        Hid space(H5Dget_space(d), H5Sclose); // libhdf5 1.10 refuses H5S_ALL here
        if (H5Dget_num_chunks(d, space, &n) < 0)
            throw Error(where + ": libhdf5 cannot list the chunks");
        for (hsize_t i = 0; i < n; ++i) {
            std::vector<hsize_t> off(rank);
            unsigned mask = 0;
            haddr_t addr = 0;
            hsize_t size = 0;
            if (H5Dget_chunk_info(d, space, i, off.data(), &mask, &addr, &size) < 0)
                throw Error(where + ": libhdf5 cannot read chunk " + std::to_string(i));
            v.chunks.push_back({std::vector<uint64_t>(off.begin(), off.end()), addr, size, mask});
        }
    } else {
        throw Error(where + ": a virtual HDF5 dataset layout (not supported)");
    }
}

// One dataset of the root group; nullopt for netCDF's dimension-only datasets.
std::optional<NcVar> read_var(hid_t file, const std::string& name, const std::string& path) {
    const std::string where = path + ": variable " + name;
    Hid d(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
    if (d < 0) throw Error(where + ": libhdf5 cannot open it");
    NcVar v;
    v.name = name;
    if (H5Aexists(d, "NAME") > 0) {
        Hid a(H5Aopen(d, "NAME", H5P_DEFAULT), H5Aclose);
        const auto n = attribute_value(a, where);
        if (n.is_string() && n.get<std::string>().starts_with("This is a netCDF dimension but not"))
            return std::nullopt;
    }
    v.dimension_scale = H5Aexists(d, "CLASS") > 0;
    Hid type(H5Dget_type(d), H5Tclose);
    v.zarr_type = zarr_type_of(type, v.element_size, v.big_endian);
    Hid space(H5Dget_space(d), H5Sclose);
    const int rank = H5Sget_simple_extent_ndims(space);
    if (rank < 0) throw Error(where + ": unreadable dataspace");
    std::vector<hsize_t> dims(static_cast<size_t>(rank));
    H5Sget_simple_extent_dims(space, dims.data(), nullptr);
    v.shape.assign(dims.begin(), dims.end());
    v.dims = dims_of(d, name, size_t(rank));
    v.attributes = attributes_of(d, where);
    if (!v.zarr_type.empty()) read_layout(d, v, where);
    return v;
}

herr_t collect_name(hid_t, const char* name, const H5L_info_t*, void* data) {
    static_cast<std::vector<std::string>*>(data)->push_back(name);
    return 0;
}

} // namespace

nlohmann::json number_json(const std::string& zarr_type, const void* p) {
    auto real = [](double v) -> nlohmann::json {
        if (std::isnan(v)) return "NaN";
        if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
        return v;
    };
    if (zarr_type == "float32") return real(*static_cast<const float*>(p));
    if (zarr_type == "float64") return real(*static_cast<const double*>(p));
    if (zarr_type == "int8") return *static_cast<const int8_t*>(p);
    if (zarr_type == "int16") return *static_cast<const int16_t*>(p);
    if (zarr_type == "int32") return *static_cast<const int32_t*>(p);
    if (zarr_type == "int64") return *static_cast<const int64_t*>(p);
    if (zarr_type == "uint8") return *static_cast<const uint8_t*>(p);
    if (zarr_type == "uint16") return *static_cast<const uint16_t*>(p);
    if (zarr_type == "uint32") return *static_cast<const uint32_t*>(p);
    return *static_cast<const uint64_t*>(p);
}

zarr3::Bytes NcFile::read_region(const std::string& var, const std::vector<uint64_t>& start,
                                 const std::vector<uint64_t>& count) const {
    return reader ? reader->read_region(path, var, start, count)
                  : zarr3virt::read_region(path, var, start, count);
}

const NcVar* NcFile::find(const std::string& name) const {
    for (const auto& v : vars)
        if (v.name == name) return &v;
    return nullptr;
}

NcFile read_nc(const std::string& path) {
    NcFile f;
    f.path = path;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
        throw Error(path + ": no such file");
    f.size = uint64_t(st.st_size);
    // Whole seconds, rounded up: Icechunk checks a reference's last-modified time as "not
    // modified since" at the file's full precision (a time rounded down fails any file with a
    // fraction of a second); the plugin's reader compares whole seconds.
    f.mtime = int64_t(st.st_mtime) + (st.st_mtim.tv_nsec > 0 ? 1 : 0);
    Hid file(open_file(path), H5Fclose);
    f.attributes = attributes_of(file, path);
    std::vector<std::string> names;
    hsize_t idx = 0;
    if (H5Literate(file, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_name, &names) < 0)
        throw Error(path + ": libhdf5 cannot list the root group");
    for (const auto& n : names) {
        { // H5Oopen + H5Iget_type: the same calls on libhdf5 1.10 to 1.14 (H5Oget_info's differ)
            Hid o(H5Oopen(file, n.c_str(), H5P_DEFAULT), H5Oclose);
            if (o < 0 || H5Iget_type(o) != H5I_DATASET) continue; // groups: not virtualized
        }
        if (auto v = read_var(file, n, path)) f.vars.push_back(std::move(*v));
    }
    return f;
}

zarr3::Bytes read_region(const std::string& path, const std::string& var,
                         const std::vector<uint64_t>& start, const std::vector<uint64_t>& count) {
    Hid file(open_file(path), H5Fclose);
    const std::string where = path + ": variable " + var;
    Hid d(H5Dopen2(file, var.c_str(), H5P_DEFAULT), H5Dclose);
    if (d < 0) throw Error(where + ": libhdf5 cannot open it");
    Hid type(H5Dget_type(d), H5Tclose);
    size_t size = 0;
    bool be = false;
    const std::string zt = zarr_type_of(type, size, be);
    uint64_t n = 1;
    for (uint64_t c : count)
        n *= c;
    zarr3::Bytes out(size_t(n) * size);
    if (n == 0) return out;
    Hid fspace(H5Dget_space(d), H5Sclose);
    std::vector<hsize_t> s(start.begin(), start.end()), c(count.begin(), count.end());
    if (!s.empty() &&
        H5Sselect_hyperslab(fspace, H5S_SELECT_SET, s.data(), nullptr, c.data(), nullptr) < 0)
        throw Error(where + ": region outside the variable");
    Hid mspace(s.empty() ? H5Screate(H5S_SCALAR)
                         : H5Screate_simple(int(c.size()), c.data(), nullptr),
               H5Sclose);
    if (H5Dread(d, native_of(zt), mspace, fspace, H5P_DEFAULT, out.data()) < 0)
        throw Error(where + ": libhdf5 cannot read its values (a filter missing from libhdf5?)");
    return out;
}

} // namespace zarr3virt
