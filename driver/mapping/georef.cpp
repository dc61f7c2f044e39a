// Georeferencing read/write for classic rasters (see georef.hpp).
#include "mapping/georef.hpp"

#include "mapping/array_mapping.hpp"
#include "options/creation_options.hpp"
#include "zarr3/common.hpp"
#include "zarr3/hierarchy.hpp"

#include "cpl_conv.h"
#include "cpl_error.h"
#include "cpl_string.h"
#include "text_util.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>

namespace zarr3drv {
namespace {

std::string Str(const nlohmann::json& j, const char* key) {
    if (!j.is_object()) return {};
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// spatial:transform [a,b,c,d,e,f] (Affine order) -> GDAL order.
std::optional<std::array<double, 6>> TransformFromAttributes(const nlohmann::json& attrs) {
    if (!attrs.is_object()) return std::nullopt;
    auto it = attrs.find("spatial:transform");
    if (it == attrs.end() || !it->is_array() || it->size() < 6) return std::nullopt;
    double v[6];
    for (size_t i = 0; i < 6; ++i) {
        if (!(*it)[i].is_number()) return std::nullopt;
        v[i] = (*it)[i].get<double>();
    }
    const std::string tt = Str(attrs, "spatial:transform_type");
    if (!tt.empty() && tt != "affine") return std::nullopt;
    std::array<double, 6> gt = {v[2], v[0], v[1], v[5], v[3], v[4]};
    if (Str(attrs, "spatial:registration") == "node") { // transform gives cell centres
        gt[0] -= 0.5 * (gt[1] + gt[2]);
        gt[3] -= 0.5 * (gt[4] + gt[5]);
    }
    return gt;
}

std::optional<std::array<double, 6>> ParseGeoTransformString(const std::string& s) {
    const CPLStringList parts(CSLTokenizeString2(s.c_str(), " ,", 0));
    if (parts.size() != 6) return std::nullopt;
    std::array<double, 6> gt{};
    for (int i = 0; i < 6; ++i) {
        char* end = nullptr;
        gt[static_cast<size_t>(i)] = CPLStrtod(parts[i], &end);
        if (end == parts[i] || *end != '\0') return std::nullopt;
    }
    return gt;
}

// Regular spacing of cell centres: (first, step).
std::optional<std::pair<double, double>> RegularSpacing(const std::vector<double>& v) {
    if (v.size() < 2) return std::nullopt;
    const double step = (v.back() - v.front()) / static_cast<double>(v.size() - 1);
    if (!(step != 0) || !std::isfinite(step)) return std::nullopt;
    for (size_t i = 1; i < v.size(); ++i)
        if (std::fabs(v[i] - v[i - 1] - step) > 1e-4 * std::fabs(step)) return std::nullopt;
    return std::make_pair(v.front(), step);
}

std::optional<std::string> DimName(const zarr3::ArrayMetadata& m, size_t axis) {
    if (axis < m.dimension_names.size() && m.dimension_names[axis] &&
        !m.dimension_names[axis]->empty())
        return m.dimension_names[axis];
    return std::nullopt;
}

std::string Wkt(const OGRSpatialReference& srs, const char* format) {
    char* w = nullptr;
    const char* opts[] = {format, nullptr};
    std::string out;
    CPLErrorStateBackuper keep;
    CPLErrorHandlerPusher quiet(CPLQuietErrorHandler);
    if (srs.exportToWkt(&w, opts) == OGRERR_NONE && w) out = w;
    CPLFree(w);
    return out;
}

zarr3::Bytes NaN64() {
    const double nan = std::nan("");
    zarr3::Bytes b(8);
    std::memcpy(b.data(), &nan, 8);
    return b;
}

void WriteCoordinate(const std::shared_ptr<zarr3::Store>& store, const std::string& group,
                     const std::string& name, double first, double step, uint64_t n,
                     nlohmann::json attrs) {
    ArrayCreateRequest req;
    req.shape = {n};
    req.dtype = zarr3::data_type_from_name("float64");
    req.fill = NaN64();
    req.dimension_names = {name};
    auto meta = BuildArrayMetadata(req, nullptr);
    meta.attributes = std::move(attrs);
    auto a = zarr3::Array::create(store, zarr3::join_key(group, name), meta, true);
    std::vector<double> v(static_cast<size_t>(n));
    for (uint64_t i = 0; i < n; ++i)
        v[static_cast<size_t>(i)] = first + step * static_cast<double>(i);
    if (n) a->write(zarr3::Selection::all(req.shape), v.data());
    a->flush();
}

} // namespace

std::unique_ptr<OGRSpatialReference> CRSFromAttributes(const nlohmann::json& attrs,
                                                       std::string& source) {
    if (!attrs.is_object()) return nullptr;
    for (const char* k : {"proj:wkt2", "proj:code"})
        if (auto v = Str(attrs, k); !v.empty())
            if (auto s = ParseCRS(v)) {
                source = k;
                return s;
            }
    if (auto it = attrs.find("proj:projjson"); it != attrs.end() && !it->is_null())
        if (auto s = ParseCRS(it->is_string() ? it->get<std::string>() : it->dump())) {
            source = "proj:projjson";
            return s;
        }
    if (auto it = attrs.find("proj:epsg"); it != attrs.end() && it->is_number_integer())
        if (auto s = ParseCRS("EPSG:" + std::to_string(it->get<int64_t>()))) {
            source = "proj:epsg";
            return s;
        }
    if (auto it = attrs.find("_CRS"); it != attrs.end() && it->is_object()) {
        for (const char* k : {"wkt", "url"})
            if (auto v = Str(*it, k); !v.empty())
                if (auto s = ParseCRS(v)) {
                    source = "_CRS";
                    return s;
                }
        if (auto p = it->find("projjson"); p != it->end())
            if (auto s = ParseCRS(p->is_string() ? p->get<std::string>() : p->dump())) {
                source = "_CRS";
                return s;
            }
    }
    return nullptr;
}

std::unique_ptr<OGRSpatialReference> ParseCRS(const std::string& definition) {
    if (definition.empty() || definition.size() > (1u << 20)) return nullptr;
    auto srs = std::make_unique<OGRSpatialReference>();
    CPLErrorStateBackuper keep_state;
    CPLErrorHandlerPusher quiet(CPLQuietErrorHandler);
    const char* opts[] = {"ALLOW_NETWORK_ACCESS=NO", "ALLOW_FILE_ACCESS=NO", nullptr};
    if (srs->SetFromUserInput(definition.c_str(), opts) != OGRERR_NONE) return nullptr;
    srs->SetAxisMappingStrategy(OAMS_TRADITIONAL_GIS_ORDER);
    return srs;
}

std::shared_ptr<zarr3::Array> FindArrayUpwards(const std::shared_ptr<zarr3::Store>& store,
                                               const std::string& group, const std::string& name) {
    if (name.empty() || name.find('/') != std::string::npos) return nullptr;
    std::shared_ptr<zarr3::Array> found;
    // The search ends at the nearest group holding an array of that name, at
    // a name no node can have, or at a node present but unreadable.
    zarr3::nearest_ancestor_path(group, [&](const std::string& g) {
        const std::string path = zarr3::join_key(g, name);
        if (!zarr3::is_valid_key(path)) return true; // nothing to find
        const std::string where = store->uri() + "/" + path + "/zarr.json";
        try {
            auto j = zarr3::read_node_json(*store, path);
            if (!j || zarr3::node_type_of(*j, where) != zarr3::NodeType::Array) return false;
            found = zarr3::Array::open(store, path, zarr3::parse_array_metadata(*j, where));
        } catch (const zarr3::Error& e) {
            // Present but unreadable: said, and the raster opens without it.
            CPLError(CE_Warning, CPLE_AppDefined, "%s; not used as coordinate variable \"%s\"",
                     e.what(), name.c_str());
        }
        return true;
    });
    return found;
}

std::optional<std::vector<double>> ReadCoordinateValues(const zarr3::Array& a,
                                                        uint64_t max_elements) {
    const auto& m = a.metadata();
    if (m.rank() != 1 || m.shape[0] > max_elements) return std::nullopt;
    const auto k = m.dtype.kind;
    if (k != zarr3::DTypeKind::Int && k != zarr3::DTypeKind::UInt && k != zarr3::DTypeKind::Float)
        return std::nullopt;
    const size_t n = static_cast<size_t>(m.shape[0]);
    zarr3::Bytes raw(n * m.dtype.size);
    if (n) a.read(zarr3::Selection::all(m.shape), raw.data());
    std::vector<double> out(n);
    for (size_t i = 0; i < n; ++i) {
        const uint8_t* p = raw.data() + i * m.dtype.size;
        double v = 0;
        switch (m.dtype.size) {
        case 1:
            v = k == zarr3::DTypeKind::Int ? static_cast<int8_t>(*p) : *p;
            break;
        case 2: {
            uint16_t u;
            std::memcpy(&u, p, 2);
            v = k == zarr3::DTypeKind::Float ? zarr3::half_to_float(u)
                : k == zarr3::DTypeKind::Int ? static_cast<int16_t>(u)
                                             : u;
            break;
        }
        case 4: {
            uint32_t u;
            std::memcpy(&u, p, 4);
            float f;
            std::memcpy(&f, p, 4);
            v = k == zarr3::DTypeKind::Float ? f
                : k == zarr3::DTypeKind::Int ? static_cast<int32_t>(u)
                                             : u;
            break;
        }
        case 8: {
            uint64_t u;
            std::memcpy(&u, p, 8);
            double d;
            std::memcpy(&d, p, 8);
            v = k == zarr3::DTypeKind::Float ? d
                : k == zarr3::DTypeKind::Int ? static_cast<double>(static_cast<int64_t>(u))
                                             : static_cast<double>(u);
            break;
        }
        default:
            return std::nullopt;
        }
        out[i] = v;
    }
    return out;
}

namespace {

// EPSG:4326 when the X/Y coordinate arrays are named lon/longitude and
// lat/latitude and hold degrees.
std::unique_ptr<OGRSpatialReference> LonLatCRS(const zarr3::Array& xa, const zarr3::Array& ya,
                                               const std::string& xn, const std::string& yn) {
    const std::string xu = Lower(Str(xa.metadata().attributes, "units"));
    const std::string yu = Lower(Str(ya.metadata().attributes, "units"));
    const std::string xl = Lower(xn), yl = Lower(yn);
    if ((xl == "lon" || xl == "longitude") && (yl == "lat" || yl == "latitude") &&
        xu.find("degree") != std::string::npos && yu.find("degree") != std::string::npos)
        return ParseCRS("EPSG:4326");
    return nullptr;
}

// Regular 1-D coordinate arrays (cell centres) named after the X/Y axes:
// the transform when g has none, the CRS for lon/lat in degrees.
void GeoRefFromCoordinates(GeoRef& g, const std::shared_ptr<zarr3::Store>& store,
                           const zarr3::Array& array, const std::string& group, size_t ix,
                           size_t iy) {
    const auto& m = array.metadata();
    const auto xn = DimName(m, ix), yn = DimName(m, iy);
    if (g.gt || !xn || !yn || ix >= m.rank() || iy >= m.rank()) return;
    auto xa = FindArrayUpwards(store, group, *xn);
    auto ya = FindArrayUpwards(store, group, *yn);
    if (!xa || !ya || xa->metadata().rank() != 1 || ya->metadata().rank() != 1 ||
        xa->metadata().shape[0] != m.shape[ix] || ya->metadata().shape[0] != m.shape[iy])
        return;
    const auto xv = ReadCoordinateValues(*xa);
    const auto yv = ReadCoordinateValues(*ya);
    const auto xs = xv ? RegularSpacing(*xv) : std::nullopt;
    const auto ys = yv ? RegularSpacing(*yv) : std::nullopt;
    if (xs && ys) {
        g.gt = std::array<double, 6>{xs->first - 0.5 * xs->second, xs->second, 0.0,
                                     ys->first - 0.5 * ys->second, 0.0,        ys->second};
        g.gt_source = "coordinate arrays";
    }
    if (!g.srs)
        if ((g.srs = LonLatCRS(*xa, *ya, *xn, *yn)))
            g.srs_source = "longitude/latitude coordinates";
}

} // namespace

GeoRef ReadGeoRef(const std::shared_ptr<zarr3::Store>& store, const zarr3::Array& array, size_t ix,
                  size_t iy) {
    GeoRef g;
    const auto& attrs = array.metadata().attributes;
    const std::string group = zarr3::parent_path(array.path());
    nlohmann::json gattrs;
    if (!array.path().empty()) {
        try {
            if (auto j = zarr3::read_node_json(*store, group); j && j->is_object())
                gattrs = j->value("attributes", nlohmann::json::object());
        } catch (const zarr3::Error& e) {
            CPLError(CE_Warning, CPLE_AppDefined,
                     "%s; the group's georeferencing attributes are not used", e.what());
        }
    }
    // The CF grid_mapping variable, looked up at most once (CRS and transform).
    std::optional<std::optional<nlohmann::json>> gm_attrs;
    const NodeAttributesLookup grid_mapping = [&](const std::string& name) {
        if (!gm_attrs) {
            auto var = FindArrayUpwards(store, group, name);
            gm_attrs =
                var ? std::optional<nlohmann::json>(std::in_place, var->metadata().attributes)
                    : std::nullopt;
        }
        return *gm_attrs;
    };

    ArrayMapping crs;
    ResolveCRS(crs, attrs, &gattrs, grid_mapping);
    if (crs.srs) {
        g.srs = std::make_unique<OGRSpatialReference>(*crs.srs);
        g.srs->SetAxisMappingStrategy(OAMS_TRADITIONAL_GIS_ORDER);
        g.srs_source = crs.srs_source;
    }
    g.gt = TransformFromAttributes(attrs);
    if (g.gt) g.gt_source = "spatial:transform";
    if (!g.gt) {
        g.gt = TransformFromAttributes(gattrs);
        if (g.gt) g.gt_source = "spatial:transform (group)";
    }
    if (const std::string gm = GridMappingName(attrs); !g.gt && !gm.empty())
        if (const auto va = grid_mapping(gm))
            if (auto gt = ParseGeoTransformString(Str(*va, "GeoTransform"))) {
                g.gt = gt;
                g.gt_source = "grid_mapping GeoTransform";
            }
    GeoRefFromCoordinates(g, store, array, group, ix, iy);
    return g;
}

bool IsGeoRefArrayName(const std::string& name, const std::string& xdim, const std::string& ydim) {
    return name == "spatial_ref" || name == xdim || name == ydim;
}

namespace {

// Well-known text of `srs` in both flavours written (WKT1 falls back to WKT2).
struct CRSText {
    std::string wkt2, wkt1;
    explicit CRSText(const OGRSpatialReference& srs)
        : wkt2(Wkt(srs, "FORMAT=WKT2_2019")), wkt1(Wkt(srs, "FORMAT=WKT1_GDAL")) {
        if (wkt1.empty()) wkt1 = wkt2;
    }
    const std::string& best() const { return wkt2.empty() ? wkt1 : wkt2; }
};

// GeoZarr geo-proj attributes (proj:code, proj:wkt2) and GDAL's _CRS.
void WriteProjAttributes(nlohmann::json& attrs, nlohmann::json& conventions,
                         const OGRSpatialReference& srs, const CRSText& text) {
    conventions.push_back(
        {{"schema_url", "https://raw.githubusercontent.com/zarr-conventions/geo-proj/refs/tags/v1/"
                        "schema.json"},
         {"spec_url", "https://github.com/zarr-conventions/geo-proj/blob/v1/README.md"},
         {"uuid", "f17cb550-5864-4468-aeb7-f3180cfb622f"},
         {"name", "proj:"},
         {"description", "Coordinate reference system information for geospatial data"}});
    const char* auth = srs.GetAuthorityName(nullptr);
    const char* code = srs.GetAuthorityCode(nullptr);
    if (auth && code) attrs["proj:code"] = std::string(auth) + ":" + code;
    if (!text.wkt2.empty()) attrs["proj:wkt2"] = text.wkt2;
    nlohmann::json crs = {{"wkt", text.best()}};
    if (auth && code && EQUAL(auth, "EPSG"))
        crs["url"] = std::string("http://www.opengis.net/def/crs/EPSG/0/") + code;
    attrs["_CRS"] = crs;
}

// GeoZarr spatial attributes: dimensions, shape, affine transform, bbox.
void WriteSpatialAttributes(nlohmann::json& attrs, nlohmann::json& conventions, const double* gt,
                            uint64_t width, uint64_t height, const std::string& xdim,
                            const std::string& ydim) {
    conventions.push_back(
        {{"schema_url", "https://raw.githubusercontent.com/zarr-conventions/spatial/refs/tags/v1/"
                        "schema.json"},
         {"spec_url", "https://github.com/zarr-conventions/spatial/blob/v1/README.md"},
         {"uuid", "689b58e2-cf7b-45e0-9fff-9cfc0883d6b4"},
         {"name", "spatial"},
         {"description", "Spatial coordinate information"}});
    attrs["spatial:dimensions"] = {ydim, xdim};
    attrs["spatial:shape"] = {height, width};
    attrs["spatial:transform_type"] = "affine";
    attrs["spatial:transform"] = {gt[1], gt[2], gt[0], gt[4], gt[5], gt[3]};
    attrs["spatial:registration"] = "pixel";
    const double w = static_cast<double>(width), h = static_cast<double>(height);
    const double xs[4] = {gt[0], gt[0] + w * gt[1], gt[0] + h * gt[2],
                          gt[0] + w * gt[1] + h * gt[2]};
    const double ys[4] = {gt[3], gt[3] + w * gt[4], gt[3] + h * gt[5],
                          gt[3] + w * gt[4] + h * gt[5]};
    attrs["spatial:bbox"] = {*std::min_element(xs, xs + 4), *std::min_element(ys, ys + 4),
                             *std::max_element(xs, xs + 4), *std::max_element(ys, ys + 4)};
}

// CF coordinate variables (cell centres) of an axis-aligned grid.
void WriteCFCoordinates(const std::shared_ptr<zarr3::Store>& store, const std::string& group,
                        const double* gt, const OGRSpatialReference* srs, uint64_t width,
                        uint64_t height, const std::string& xdim, const std::string& ydim) {
    nlohmann::json xa = {{"axis", "X"}}, ya = {{"axis", "Y"}};
    if (srs && srs->IsGeographic()) {
        xa.update({{"standard_name", "longitude"},
                   {"long_name", "longitude"},
                   {"units", "degrees_east"}});
        ya.update(
            {{"standard_name", "latitude"}, {"long_name", "latitude"}, {"units", "degrees_north"}});
    } else if (srs && srs->IsProjected()) {
        const double to_m = srs->GetLinearUnits();
        xa.update({{"standard_name", "projection_x_coordinate"},
                   {"long_name", "x coordinate of projection"}});
        ya.update({{"standard_name", "projection_y_coordinate"},
                   {"long_name", "y coordinate of projection"}});
        if (to_m == 1.0) {
            xa["units"] = "m";
            ya["units"] = "m";
        }
    }
    WriteCoordinate(store, group, xdim, gt[0] + 0.5 * gt[1], gt[1], width, xa);
    WriteCoordinate(store, group, ydim, gt[3] + 0.5 * gt[5], gt[5], height, ya);
}

// The 0-d CF grid_mapping variable `spatial_ref` (crs_wkt, spatial_ref,
// GeoTransform).
void WriteGridMappingVariable(const std::shared_ptr<zarr3::Store>& store, const std::string& group,
                              const double* gt, const OGRSpatialReference* srs,
                              const CRSText* text) {
    nlohmann::json sattrs = nlohmann::json::object();
    if (srs && text) {
        sattrs["crs_wkt"] = text->best();
        sattrs["spatial_ref"] = text->wkt1;
        if (srs->IsGeographic()) sattrs["grid_mapping_name"] = "latitude_longitude";
    }
    if (gt)
        sattrs["GeoTransform"] = CPLSPrintf("%.17g %.17g %.17g %.17g %.17g %.17g", gt[0], gt[1],
                                            gt[2], gt[3], gt[4], gt[5]);
    ArrayCreateRequest req;
    req.dtype = zarr3::data_type_from_name("int32");
    auto meta = BuildArrayMetadata(req, nullptr);
    meta.attributes = sattrs;
    zarr3::Array::create(store, zarr3::join_key(group, "spatial_ref"), meta, true);
}

} // namespace

void WriteGeoRef(const std::shared_ptr<zarr3::Store>& store, const std::string& group,
                 nlohmann::json& attrs, const double* gt, const OGRSpatialReference* srs,
                 uint64_t width, uint64_t height, const std::string& xdim, const std::string& ydim,
                 bool write_cf_arrays) {
    if (!gt && !srs) return;
    nlohmann::json conventions = nlohmann::json::array();
    std::optional<CRSText> text;
    if (srs) {
        text.emplace(*srs);
        WriteProjAttributes(attrs, conventions, *srs, *text);
    }
    if (gt) WriteSpatialAttributes(attrs, conventions, gt, width, height, xdim, ydim);
    attrs["zarr_conventions"] = conventions;
    if (!write_cf_arrays) return;
    if (gt && gt[2] == 0 && gt[4] == 0)
        WriteCFCoordinates(store, group, gt, srs, width, height, xdim, ydim);
    WriteGridMappingVariable(store, group, gt, srs, text ? &*text : nullptr);
    attrs["grid_mapping"] = "spatial_ref";
}

} // namespace zarr3drv
