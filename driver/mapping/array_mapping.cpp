// The one Zarr array -> GDAL mapping (see array_mapping.hpp).
#include "mapping/array_mapping.hpp"
#include "mapping/temporal.hpp"

#include "mapping/gdal_types.hpp"
#include "mapping/georef.hpp"
#include "text_util.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>

namespace zarr3drv {
namespace {

std::string Str(const nlohmann::json& j, const char* key) {
    if (!j.is_object()) return {};
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

} // namespace

// ---------------------------------------------------------------- axis roles

std::string DimensionTypeFromName(const std::string& name) {
    const std::string n = Lower(name);
    if (n == "x" || n == "lon" || n == "longitude" || n == "easting")
        return GDAL_DIM_TYPE_HORIZONTAL_X;
    if (n == "y" || n == "lat" || n == "latitude" || n == "northing")
        return GDAL_DIM_TYPE_HORIZONTAL_Y;
    if (n == "time" || n == "t" || n == "date") return GDAL_DIM_TYPE_TEMPORAL;
    if (n == "z" || n == "level" || n == "depth" || n == "height" || n == "lev" || n == "plev")
        return GDAL_DIM_TYPE_VERTICAL;
    return {};
}

AxisRoles AxisRolesFromTypes(const std::vector<std::string>& dim_types) {
    AxisRoles roles;
    const size_t r = dim_types.size();
    if (r == 0) return roles;
    std::optional<size_t> fx, fy;
    for (size_t i = 0; i < r; ++i) {
        if (!fx && dim_types[i] == GDAL_DIM_TYPE_HORIZONTAL_X) fx = i;
        if (!fy && dim_types[i] == GDAL_DIM_TYPE_HORIZONTAL_Y) fy = i;
    }
    if (r == 1) {
        roles.x = 0;
    } else if (fx && fy) {
        roles.x = *fx;
        roles.y = *fy;
    } else {
        roles.x = r - 1;
        roles.y = r - 2;
    }
    for (size_t i = 0; i < r; ++i)
        if (i != roles.x && i != roles.y) roles.bands.push_back(i);
    return roles;
}

AxisRoles AxisRolesOf(const zarr3::ArrayMetadata& m) {
    std::vector<std::string> types(m.rank());
    for (size_t i = 0; i < m.rank() && i < m.dimension_names.size(); ++i)
        if (m.dimension_names[i]) types[i] = DimensionTypeFromName(*m.dimension_names[i]);
    return AxisRolesFromTypes(types);
}

// --------------------------------------------------- georeferencing attributes

bool IsInterpretedGeorefAttribute(const std::string& key) {
    static const char* const names[] = {"_CRS",
                                        "proj:code",
                                        "proj:wkt2",
                                        "proj:projjson",
                                        "spatial:transform",
                                        "spatial:dimensions",
                                        "spatial:transform_type"};
    return std::any_of(std::begin(names), std::end(names), [&](const char* n) { return key == n; });
}

bool IsWrittenGeorefAttribute(const std::string& key) {
    return StartsWith(key, "spatial:") || StartsWith(key, "proj:") || key == "_CRS" ||
           key == "zarr_conventions" || key == "grid_mapping";
}

// ------------------------------------------------------------------- values

std::optional<double> NumberAttribute(const nlohmann::json& attrs, const char* name) {
    if (!attrs.is_object()) return std::nullopt;
    const auto it = attrs.find(name);
    if (it == attrs.end()) return std::nullopt;
    if (it->is_number()) return it->get<double>();
    if (it->is_array() && it->size() == 1 && it->front().is_number())
        return it->front().get<double>();
    return std::nullopt;
}

std::optional<double> ArrayMapping::NoDataAsDouble() const {
    if (nodata.empty()) return std::nullopt;
    if (type == GDT_Int64) {
        int64_t v;
        std::memcpy(&v, nodata.data(), 8);
        return static_cast<double>(v);
    }
    if (type == GDT_UInt64) {
        uint64_t v;
        std::memcpy(&v, nodata.data(), 8);
        return static_cast<double>(v);
    }
    double v = 0;
    GDALCopyWords64(nodata.data(), type, 0, &v, GDT_Float64, 0, 1);
    return v;
}

// A nodata value recorded apart from the fill value (gdal_zarr3:nodata as a number, or
// "NaN", "Infinity", "-Infinity"), in GDAL type `type`; empty when there is none.
static std::vector<GByte> RecordedNoData(const nlohmann::json& attrs, GDALDataType type) {
    if (!attrs.is_object()) return {};
    const auto it = attrs.find(kNoDataAttribute);
    if (it == attrs.end()) return {};
    std::vector<GByte> out(static_cast<size_t>(GDALGetDataTypeSizeBytes(type)));
    if (type == GDT_Int64 && it->is_number_integer()) {
        const int64_t v = it->get<int64_t>();
        std::memcpy(out.data(), &v, 8);
    } else if (type == GDT_UInt64 && it->is_number_unsigned()) {
        const uint64_t v = it->get<uint64_t>();
        std::memcpy(out.data(), &v, 8);
    } else if (it->is_number() || *it == "NaN" || *it == "Infinity" || *it == "-Infinity") {
        const double v = it->is_number()     ? it->get<double>()
                         : *it == "NaN"      ? std::numeric_limits<double>::quiet_NaN()
                         : *it == "Infinity" ? std::numeric_limits<double>::infinity()
                                             : -std::numeric_limits<double>::infinity();
        GDALCopyWords64(&v, GDT_Float64, 0, out.data(), type, 0, 1);
    } else {
        return {}; // "none" (no nodata) is the classic view's
    }
    return out;
}

void RefreshValues(ArrayMapping& mapping, const zarr3::ArrayMetadata& m) {
    mapping.nodata.clear();
    if (!mapping.text && !m.fill_value_null && m.fill_value.size() == m.dtype.size) {
        mapping.nodata.resize(static_cast<size_t>(GDALGetDataTypeSizeBytes(mapping.type)));
        WidenToGDAL(m.dtype, m.fill_value.data(), mapping.nodata.data(), 1);
    }
    if (!mapping.text && mapping.type != GDT_Unknown)
        if (auto recorded = RecordedNoData(m.attributes, mapping.type); !recorded.empty())
            mapping.nodata = std::move(recorded);
    mapping.scale = NumberAttribute(m.attributes, "scale_factor");
    mapping.offset = NumberAttribute(m.attributes, "add_offset");
    mapping.unit = Str(m.attributes, "units");
    if (mapping.unit.empty()) mapping.unit = TemporalUnit(m.dtype); // datetime64, timedelta64
}

ArrayMapping MapArray(const zarr3::ArrayMetadata& m, const std::string& where, bool allow_text) {
    ArrayMapping mapping;
    mapping.type = GDALTypeFor(m.dtype);
    mapping.text = allow_text && IsTextType(m.dtype);
    if (mapping.type == GDT_Unknown && !mapping.text)
        throw zarr3::Error(where + ": " + UnsupportedTypeReason(m.dtype));
    mapping.axes = AxisRolesOf(m);
    RefreshValues(mapping, m);
    return mapping;
}

// ---------------------------------------------------------------------- CRS

std::string GridMappingName(const nlohmann::json& attrs) {
    std::string gm = Str(attrs, "grid_mapping");
    if (const size_t c = gm.find(':'); c != std::string::npos) gm = gm.substr(0, c);
    while (!gm.empty() && std::isspace(static_cast<unsigned char>(gm.back())))
        gm.pop_back();
    return gm;
}

void ResolveCRS(ArrayMapping& mapping, const nlohmann::json& attrs,
                const nlohmann::json* group_attrs, const NodeAttributesLookup& lookup) {
    mapping.srs.reset();
    mapping.srs_source.clear();
    std::string source;
    auto srs = CRSFromAttributes(attrs, source);
    if (!srs && group_attrs) srs = CRSFromAttributes(*group_attrs, source);
    const std::string gm = srs ? std::string() : GridMappingName(attrs);
    if (!gm.empty() && lookup) {
        if (const auto va = lookup(gm))
            for (const char* k : {"crs_wkt", "spatial_ref"})
                if ((srs = ParseCRS(Str(*va, k)))) {
                    source = std::string("grid_mapping ") + k;
                    break;
                }
    }
    if (!srs) return;
    mapping.srs = std::shared_ptr<OGRSpatialReference>(std::move(srs));
    mapping.srs_source = source;
}

} // namespace zarr3drv
