// Remote NetCDF-4 / HDF5 files for `gdal driver zarr3 virtualize` through
// GDAL's multidimensional API (virtualize_gdal_reader.hpp).
#include "virtualize_gdal_reader.hpp"

#if ZARR3_HAVE_RAW_BLOCK_INFO

#include "zarr3/virtualize.hpp"

#include "cpl_string.h"
#include "cpl_vsi.h"
#include "gdal_priv.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <set>

namespace zarr3drv {

namespace {

using nlohmann::json;
using zarr3::Error;
using zarr3virt::NcFile;
using zarr3virt::NcVar;
namespace vz = zarr3::virtualize;

// The attributes netCDF and HDF5 keep for themselves, as the libhdf5 path
// leaves them out (cli/virtualize/nc_file.cpp).
const std::set<std::string> kInternalAttributes = {"CLASS",          "NAME",
                                                   "REFERENCE_LIST", "DIMENSION_LIST",
                                                   "_Netcdf4Dimid",  "_Netcdf4Coordinates",
                                                   "_FillValue",     "_nc3_strict",
                                                   "_NCProperties",  "_IsNetcdf4"};

// The last GDAL error's text, for messages.
std::string LastGdalError() {
    const char* m = CPLGetLastErrorMsg();
    return m && *m ? std::string(" (") + m + ")" : std::string();
}

std::string ZarrTypeOf(GDALDataType t) {
    switch (t) {
    case GDT_Byte:
        return "uint8";
    case GDT_Int8:
        return "int8";
    case GDT_UInt16:
        return "uint16";
    case GDT_Int16:
        return "int16";
    case GDT_UInt32:
        return "uint32";
    case GDT_Int32:
        return "int32";
    case GDT_UInt64:
        return "uint64";
    case GDT_Int64:
        return "int64";
    case GDT_Float32:
        return "float32";
    case GDT_Float64:
        return "float64";
    default:
        return "";
    }
}

// An attribute's value as the libhdf5 path gives it: text, a number, or a
// list of numbers (null for other types).
json AttributeValue(const GDALAttribute& a) {
    const auto& dt = a.GetDataType();
    if (dt.GetClass() == GEDTC_STRING) {
        if (a.GetTotalElementsCount() != 1) return nullptr;
        const char* s = a.ReadAsString();
        return s ? std::string(s) : std::string();
    }
    if (dt.GetClass() != GEDTC_NUMERIC) return nullptr;
    const std::string zt = ZarrTypeOf(dt.GetNumericDataType());
    if (zt.empty()) return nullptr;
    const size_t n = static_cast<size_t>(a.GetTotalElementsCount());
    const size_t size = dt.GetSize();
    std::vector<uint8_t> buf(size * std::max<size_t>(n, 1));
    const auto dims = a.GetDimensionsSize();
    const std::vector<GUInt64> start(std::max<size_t>(dims.size(), 1), 0); // never null
    std::vector<size_t> count(dims.begin(), dims.end());
    count.push_back(1);
    if (n == 0 || !a.Read(start.data(), count.data(), nullptr, nullptr, dt, buf.data()))
        return nullptr;
    json out = json::array();
    for (size_t i = 0; i < n; ++i)
        out.push_back(zarr3virt::number_json(zt, buf.data() + size * i));
    return n == 1 ? out[0] : out;
}

// Every attribute, netCDF's and HDF5's own included (SHOW_ALL: the HDF5
// driver's option), as `all`; `out` gets those the libhdf5 path keeps.
void ReadAttributes(const std::vector<std::shared_ptr<GDALAttribute>>& attrs, json& out,
                    json* all = nullptr) {
    for (const auto& a : attrs) {
        auto v = AttributeValue(*a);
        if (all) (*all)[a->GetName()] = v;
        if (!v.is_null() && !kInternalAttributes.count(a->GetName())) out[a->GetName()] = v;
    }
}

// The HDF5 filter of a name GDAL's raw block information gives
// ("DEFLATE", "SHUFFLE", ...); id 0 for one this tool does not know.
vz::Hdf5Filter FilterNamed(const std::string& name) {
    static const std::pair<const char*, unsigned> known[] = {
        {"DEFLATE", vz::kFilterDeflate},
        {"SHUFFLE", vz::kFilterShuffle},
        {"FLETCHER32", vz::kFilterFletcher32},
        {"SZIP", vz::kFilterSzip},
        {"NBIT", vz::kFilterNbit},
        {"SCALEOFFSET", vz::kFilterScaleOffset}};
    for (const auto& [n, id] : known)
        if (EQUAL(name.c_str(), n)) return {id, {}, ""};
    return {0, {}, name};
}

// The filters and byte order a block's information gives: FILTER (names,
// comma-separated, in pipeline order), then COMPRESSION.
void ReadBlockFilters(CSLConstList info, NcVar& v) {
    const CPLStringList items(CSLDuplicate(info));
    v.big_endian = EQUAL(items.FetchNameValueDef("ENDIANNESS", "LITTLE"), "BIG");
    v.filters.clear();
    if (const char* f = items.FetchNameValue("FILTER")) {
        const CPLStringList names(
            CSLTokenizeString2(f, ",", CSLT_STRIPLEADSPACES | CSLT_STRIPENDSPACES));
        for (int i = 0; i < names.size(); ++i)
            v.filters.push_back(FilterNamed(names[i]));
    }
    if (const char* c = items.FetchNameValue("COMPRESSION")) v.filters.push_back(FilterNamed(c));
}

// The raw block information of block `idx`; false when GDAL has none (its
// error kept as the last one, not shown).
bool RawBlockInfo(const GDALMDArray& a, const uint64_t* idx, GDALMDArrayRawBlockInfo& info) {
    CPLPushErrorHandler(CPLQuietErrorHandler);
    CPLErrorReset();
    const bool ok = a.GetRawBlockInfo(idx, info);
    CPLPopErrorHandler();
    return ok;
}

// The stored blocks of a chunked array, each by its raw block information.
void ReadChunks(const GDALMDArray& a, const std::string& path, NcVar& v, const std::string& where) {
    const size_t rank = v.shape.size();
    std::vector<uint64_t> n(rank), idx(rank, 0);
    for (size_t d = 0; d < rank; ++d)
        n[d] = (v.shape[d] + v.chunk_shape[d] - 1) / v.chunk_shape[d];
    if (std::any_of(n.begin(), n.end(), [](uint64_t x) { return x == 0; })) return;
    bool first = true;
    for (bool more = true; more;) {
        GDALMDArrayRawBlockInfo info;
        if (!RawBlockInfo(a, idx.data(), info))
            throw Error(where + ": GDAL gives no raw block information" + LastGdalError());
        if (info.pszFilename) {
            if (path != info.pszFilename)
                throw Error(where + ": a chunk stored in another file (" + info.pszFilename +
                            "), which cannot be referenced");
            if (first) ReadBlockFilters(info.papszInfo, v);
            first = false;
            std::vector<uint64_t> origin(rank);
            for (size_t d = 0; d < rank; ++d)
                origin[d] = idx[d] * v.chunk_shape[d];
            v.chunks.push_back({origin, info.nOffset, info.nSize, 0});
        }
        size_t d = rank;
        while (d > 0 && ++idx[d - 1] == n[d - 1])
            idx[--d] = 0;
        more = d > 0;
    }
}

// Layout, filters and chunk index of an array: chunked (a block size), or
// one block for the whole array (contiguous: referenced), or none GDAL can
// tell (inline data, or no raw block information): copied as a compact
// dataset. A scalar is never along the concatenated dimension: not asked.
void ReadLayout(const GDALMDArray& a, const std::string& path, NcVar& v, const std::string& where) {
    const auto block = a.GetBlockSize();
    const size_t rank = v.shape.size();
    const bool chunked = rank > 0 && block.size() == rank &&
                         std::all_of(block.begin(), block.end(), [](GUInt64 b) { return b > 0; });
    if (chunked) {
        v.layout = NcVar::Layout::Chunked;
        v.chunk_shape.assign(block.begin(), block.end());
        ReadChunks(a, path, v, where);
        return;
    }
    v.layout = NcVar::Layout::Contiguous;
    if (rank == 0) return;
    const std::vector<uint64_t> zero(rank, 0);
    GDALMDArrayRawBlockInfo info;
    if (!RawBlockInfo(a, zero.data(), info) || info.pabyInlineData) {
        v.layout = NcVar::Layout::Compact;
    } else if (info.pszFilename) {
        ReadBlockFilters(info.papszInfo, v);
        v.chunks.push_back({zero, info.nOffset, info.nSize, 0});
    }
}

// One array of the root group; nullopt for netCDF's dimension-only datasets.
// `netcdf4`: the file is libnetcdf's (its root has _NCProperties).
std::optional<NcVar> ReadVar(const GDALGroup& root, const std::string& name,
                             const std::string& path, bool netcdf4) {
    const std::string where = path + ": variable " + name;
    const auto a = root.OpenMDArray(name);
    if (!a) throw Error(where + ": GDAL cannot open it" + LastGdalError());
    NcVar v;
    v.name = name;
    json all = json::object();
    CPLStringList show_all(CSLSetNameValue(nullptr, "SHOW_ALL", "YES"));
    ReadAttributes(a->GetAttributes(show_all.List()), v.attributes, &all);
    const json label = all.value("NAME", json());
    if (label.is_string() &&
        label.get<std::string>().starts_with("This is a netCDF dimension but not"))
        return std::nullopt;
    v.dimension_scale = all.contains("CLASS");
    for (const auto& d : a->GetDimensions()) {
        v.dims.push_back(d->GetName());
        v.shape.push_back(d->GetSize());
    }
    const auto& dt = a->GetDataType();
    if (dt.GetClass() == GEDTC_NUMERIC) v.zarr_type = ZarrTypeOf(dt.GetNumericDataType());
    if (v.zarr_type.empty()) return v;
    v.element_size = dt.GetSize();
    if (const void* fill = a->GetRawNoDataValue())
        v.fill_value = zarr3virt::number_json(v.zarr_type, fill);
    else if (netcdf4 || all.contains("_Netcdf4Coordinates") || all.contains("_Netcdf4Dimid"))
        v.fill_value = vz::netcdf_default_fill(v.zarr_type); // what libnetcdf stored
    else
        v.fill_value = 0; // HDF5's default
    ReadLayout(*a, path, v, where);
    return v;
}

GDALDatasetUniquePtr OpenMultidim(const std::string& path) {
    // HDF5's: it reads through any GDAL file system (GDAL's netCDF driver only
    // where the platform lets it map remote files).
    static const char* const kDrivers[] = {"HDF5", nullptr};
    CPLErrorReset();
    GDALDatasetUniquePtr ds(GDALDataset::Open(
        path.c_str(), GDAL_OF_MULTIDIM_RASTER | GDAL_OF_READONLY, kDrivers, nullptr, nullptr));
    if (!ds)
        throw Error(path + ": GDAL's HDF5 driver cannot open it as a NetCDF-4 (HDF5) file" +
                    LastGdalError());
    return ds;
}

class GdalNcReader final : public zarr3virt::NcReader {
  public:
    NcFile read(const std::string& path) const override {
        NcFile f;
        f.path = path;
        VSIStatBufL st;
        if (VSIStatL(path.c_str(), &st) != 0 || !VSI_ISREG(st.st_mode))
            throw Error(path + ": no such file" + LastGdalError());
        f.size = static_cast<uint64_t>(st.st_size);
        f.mtime = static_cast<int64_t>(st.st_mtime);
        f.etag = ETagOf(path);
        const auto root = Opened(path).GetRootGroup();
        if (!root) throw Error(path + ": no root group" + LastGdalError());
        CPLStringList show_all(CSLSetNameValue(nullptr, "SHOW_ALL", "YES"));
        json all = json::object();
        ReadAttributes(root->GetAttributes(show_all.List()), f.attributes, &all);
        auto names = root->GetMDArrayNames();
        std::sort(names.begin(), names.end()); // the libhdf5 path's order (by name)
        for (const auto& n : names)
            if (auto v = ReadVar(*root, n, path, all.contains("_NCProperties")))
                f.vars.push_back(std::move(*v));
        return f;
    }

    zarr3::Bytes read_region(const std::string& path, const std::string& var,
                             const std::vector<uint64_t>& start,
                             const std::vector<uint64_t>& count) const override {
        const std::string where = path + ": variable " + var;
        const auto a = Opened(path).GetRootGroup()->OpenMDArray(var);
        if (!a) throw Error(where + ": GDAL cannot open it" + LastGdalError());
        const auto& dt = a->GetDataType();
        uint64_t n = 1;
        for (uint64_t c : count)
            n *= c;
        zarr3::Bytes out(static_cast<size_t>(n) * dt.GetSize());
        if (n == 0) return out;
        std::vector<GUInt64> s(start.begin(), start.end());
        std::vector<size_t> c(count.begin(), count.end());
        s.push_back(0); // never null (a scalar); past the array's dimensions: not read
        c.push_back(1);
        if (!a->Read(s.data(), c.data(), nullptr, nullptr, dt, out.data()))
            throw Error(where + ": GDAL cannot read its values" + LastGdalError());
        return out;
    }

    zarr3::Bytes read_bytes(const std::string& path, uint64_t offset,
                            uint64_t size) const override {
        VSILFILE* fp = VSIFOpenL(path.c_str(), "rb");
        if (!fp) throw Error(path + ": cannot open" + LastGdalError());
        zarr3::Bytes out(static_cast<size_t>(size));
        const bool ok = VSIFSeekL(fp, offset, SEEK_SET) == 0 &&
                        VSIFReadL(out.data(), 1, out.size(), fp) == out.size();
        VSIFCloseL(fp);
        if (!ok)
            throw Error(path + ": cannot read " + std::to_string(size) + " bytes at " +
                        std::to_string(offset) + LastGdalError());
        return out;
    }

  private:
    // Each file opened once (a run reads its coordinates and copied chunks
    // one after the other, on one thread).
    GDALDataset& Opened(const std::string& path) const {
        std::lock_guard<std::mutex> lock(mu_);
        auto& ds = open_[path];
        if (!ds) ds = OpenMultidim(path);
        return *ds;
    }

    mutable std::mutex mu_;
    mutable std::map<std::string, GDALDatasetUniquePtr> open_;

    // The ETag the server reports (empty when none), unquoted.
    static std::string ETagOf(const std::string& path) {
        const CPLStringList headers(VSIGetFileMetadata(path.c_str(), "HEADERS", nullptr));
        for (const char* key : {"ETag", "etag", "ETAG"})
            if (const char* v = headers.FetchNameValue(key)) {
                std::string s = v;
                if (s.starts_with("W/")) s = s.substr(2);
                if (s.size() >= 2 && s.front() == '"' && s.back() == '"')
                    s = s.substr(1, s.size() - 2);
                return s;
            }
        return {};
    }
};

} // namespace

std::shared_ptr<const zarr3virt::NcReader> GdalRemoteNcReader() {
    return std::make_shared<GdalNcReader>();
}

} // namespace zarr3drv

#endif
