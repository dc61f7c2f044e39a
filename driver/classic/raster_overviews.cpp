// Reading multiscales pyramids as GDAL overviews: the levels of the opened
// array are found through the multiscales attribute of an ancestor group,
// checked against the base (rank, type, axes, non-spatial sizes, declared
// spatial:shape) and opened as overview datasets. A pyramid that does not
// hold together gives one warning naming the store and the problem; the
// raster then opens without overviews.
#include "classic/raster_overviews.hpp"

#include "classic/raster_dataset.hpp"
#include "mapping/georef.hpp"

#include "zarr3/array.hpp"
#include "zarr3/hierarchy.hpp"
#include "zarr3/pyramid_place.hpp"

#include <algorithm>
#include <cctype>

namespace zarr3drv {
namespace {

constexpr size_t kMaxGroupsChecked = 256;

bool AtOrUnder(const std::string& path, const std::string& node) {
    return path == node || (path.size() > node.size() && path.compare(0, node.size(), node) == 0 &&
                            path[node.size()] == '/');
}

// Bases and levels of a layout (asset paths relative to the group). Strict
// when the attribute parses (each level paired with its own base); read
// leniently otherwise (levels are hidden even when the attribute is broken:
// the entries derived from something, the bases being the entries derived
// from nothing, else the first valid asset).
struct LevelSets {
    std::vector<std::pair<std::string, std::string>> levels; // (asset, its base asset)
    std::vector<std::string> bases;
};

LevelSets LayoutLevels(const nlohmann::json& attrs) {
    LevelSets out;
    try {
        const auto ms = zarr3::parse_multiscales(attrs, "");
        if (!ms) return out;
        for (size_t k = 0; k < ms->layout.size(); ++k) {
            const size_t r = zarr3::root_of(*ms, k);
            if (r == k)
                out.bases.push_back(ms->layout[k].asset);
            else
                out.levels.emplace_back(ms->layout[k].asset, ms->layout[r].asset);
        }
        return out;
    } catch (const zarr3::FormatError&) {
    }
    const auto& lay = attrs["multiscales"].value("layout", nlohmann::json());
    if (!lay.is_array()) return out;
    std::vector<std::string> derived;
    for (const auto& l : lay) {
        if (!l.is_object() || !l.contains("asset") || !l["asset"].is_string()) continue;
        const std::string a = l["asset"].get<std::string>();
        if (!zarr3::is_valid_key(a)) continue;
        if (!l.contains("derived_from") || l["derived_from"].is_null())
            out.bases.push_back(a);
        else
            derived.push_back(a);
    }
    if (out.bases.empty() && !derived.empty()) {
        out.bases.push_back(derived.front());
        derived.erase(derived.begin());
    }
    for (const auto& d : derived)
        for (const auto& b : out.bases)
            out.levels.emplace_back(d, b);
    return out;
}

// GDAL's level layout left beside a pyramid by earlier builds: `rel` is
// ovr_<f>x or ovr_<f>x_<k> holding an array named like a base of the layout
// (versions before issue 40.6 built ovr_2x_1 beside a stale ovr_2x).
bool IsLeftLevelGroup(const std::string& rel, const std::vector<std::string>& bases) {
    const auto slash = rel.find('/');
    if (slash == std::string::npos || rel.compare(0, 4, "ovr_") != 0) return false;
    const std::string name = rel.substr(slash + 1);
    if (std::find(bases.begin(), bases.end(), name) == bases.end()) return false;
    size_t i = 4;
    const auto digits = [&] {
        const size_t from = i;
        while (i < slash && std::isdigit(static_cast<unsigned char>(rel[i])))
            ++i;
        return i > from;
    };
    if (!digits() || i >= slash || rel[i++] != 'x') return false;
    if (i == slash) return true;
    return rel[i++] == '_' && digits() && i == slash;
}

} // namespace

std::string PyramidOf::ArrayPath(size_t k) const {
    std::string p = zarr3::join_key(group, ms.layout[k].asset);
    return suffix.empty() ? p : zarr3::join_key(p, suffix);
}

std::set<std::string> CoarserPyramidLevels(zarr3::Store& store,
                                           const std::vector<std::string>& array_paths) {
    std::set<std::string> groups;
    for (const auto& p : array_paths) {
        std::string g = p;
        for (int up = 0;
             up < zarr3::kMaxPyramidAncestors && !g.empty() && groups.size() < kMaxGroupsChecked;
             ++up) {
            g = zarr3::parent_path(g);
            groups.insert(g);
        }
    }
    std::set<std::string> hidden;
    for (const auto& g : groups) {
        std::optional<nlohmann::json> attrs;
        try {
            attrs = zarr3::group_attributes(store, g);
        } catch (const std::exception&) {
            continue;
        }
        if (!attrs || !attrs->contains("multiscales") || !(*attrs)["multiscales"].is_object())
            continue;
        // The arrays at or inside a level whose base is there, never one at
        // or inside a base: other arrays of the group stay subdatasets.
        const LevelSets sets = LayoutLevels(*attrs);
        const auto present = [&](const std::string& asset) {
            const std::string node = zarr3::join_key(g, asset);
            return std::any_of(array_paths.begin(), array_paths.end(),
                               [&](const std::string& p) { return AtOrUnder(p, node); });
        };
        for (const auto& p : array_paths) {
            const auto rel = zarr3::path_inside(p, g);
            if (!rel) continue;
            const bool in_base =
                std::any_of(sets.bases.begin(), sets.bases.end(),
                            [&](const std::string& b) { return AtOrUnder(*rel, b); });
            if (in_base) continue;
            for (const auto& [level, base] : sets.levels)
                if (AtOrUnder(*rel, level) && present(base)) {
                    hidden.insert(p);
                    break;
                }
            if (IsLeftLevelGroup(*rel, sets.bases) && present(zarr3::base_name(*rel)))
                hidden.insert(p);
        }
    }
    return hidden;
}

std::optional<PyramidOf> FindPyramid(zarr3::Store& store, const std::string& array_path) {
    auto place = zarr3::find_pyramid(store, array_path);
    if (!place) return std::nullopt;
    // Only the levels of the array's own base (several pyramids may share
    // the layout, one per variable).
    PyramidOf out;
    out.group = place->group;
    out.suffix = place->suffix;
    out.full_level = place->level;
    out.ms = zarr3::pyramid_of(place->ms, place->level, &out.level);
    out.full = std::move(place->ms);
    out.group_attributes = std::move(place->group_attributes);
    return out;
}

std::array<double, 6> AffineFromGeoTransform(const double* gt) {
    return {gt[1], gt[2], gt[0], gt[4], gt[5], gt[3]};
}

// ------------------------------------------------------------------ dataset

namespace {

// Why level array `lvl` cannot be an overview of `base`; "" when it can.
std::string LevelMismatch(const zarr3::ArrayMetadata& bm, const zarr3::ArrayMetadata& lm,
                          const zarr3::MultiscaleLevel& level, size_t ix, size_t iy) {
    if (lm.rank() != bm.rank())
        return "rank " + std::to_string(lm.rank()) + " instead of " + std::to_string(bm.rank());
    if (!(lm.dtype.name == bm.dtype.name)) return "data type " + lm.dtype.name;
    for (size_t a = 0; a < bm.rank(); ++a) {
        const bool spatial = a == ix || a == iy;
        if (!spatial && lm.shape[a] != bm.shape[a])
            return "axis " + std::to_string(a) + " has " + std::to_string(lm.shape[a]) +
                   " elements instead of " + std::to_string(bm.shape[a]);
        if (spatial && (lm.shape[a] == 0 || lm.shape[a] > bm.shape[a]))
            return "spatial axis " + std::to_string(a) + " of " + std::to_string(lm.shape[a]) +
                   " elements does not fit the base's " + std::to_string(bm.shape[a]);
    }
    if (level.spatial_shape.size() == 2 && iy != SIZE_MAX &&
        (level.spatial_shape[0] != lm.shape[iy] || level.spatial_shape[1] != lm.shape[ix]))
        return "spatial:shape [" + std::to_string(level.spatial_shape[0]) + ", " +
               std::to_string(level.spatial_shape[1]) + "] differs from the array's";
    return {};
}

// A level with fewer elements than the base along a non-spatial axis (the
// steps of appends made before appends extended the levels): "axis a has n
// steps, the array m"; nullopt otherwise.
std::optional<std::string> StaleSteps(const zarr3::ArrayMetadata& bm,
                                      const zarr3::ArrayMetadata& lm, size_t ix, size_t iy) {
    if (lm.rank() != bm.rank()) return std::nullopt;
    for (size_t a = 0; a < bm.rank(); ++a)
        if (a != ix && a != iy && lm.shape[a] < bm.shape[a])
            return "axis " + std::to_string(a) + " has " + std::to_string(lm.shape[a]) +
                   " steps, the array " + std::to_string(bm.shape[a]);
    return std::nullopt;
}

// A level longer than the base along a non-spatial axis (an append killed
// after switching the levels, before the base) is read at the base's length:
// the steps past it are the killed append's, the next append overwrites them.
void ViewAtBaseLength(const zarr3::ArrayMetadata& bm, zarr3::ArrayMetadata& lm, size_t ix,
                      size_t iy) {
    if (lm.rank() != bm.rank()) return;
    zarr3::Shape shape = lm.shape;
    for (size_t a = 0; a < bm.rank(); ++a)
        if (a != ix && a != iy && lm.shape[a] > bm.shape[a]) shape[a] = bm.shape[a];
    if (shape == lm.shape) return;
    lm.grid.resize(shape);
    lm.shape = shape;
}

} // namespace

void Zarr3RasterDataset::OpenOverviews() {
    stale_levels_.clear();
    std::optional<PyramidOf> pyr;
    const std::string store_name = store_->uri();
    try {
        pyr = FindPyramid(*store_, array_->path());
    } catch (const std::exception& e) {
        CPLError(CE_Warning, CPLE_AppDefined, "%s: opened without overviews: %s",
                 store_name.c_str(), e.what());
        return;
    }
    if (!pyr) return;
    const auto& bm = array_->metadata();
    const auto self = zarr3::level_scale_yx(pyr->ms, pyr->level);
    std::vector<std::unique_ptr<Zarr3RasterDataset>> levels;
    std::string problem;
    for (size_t k : zarr3::overview_order(pyr->ms)) {
        if (k == pyr->level) continue;
        const auto s = zarr3::level_scale_yx(pyr->ms, k);
        const bool declared = !pyr->ms.layout[k].scale.empty();
        if (declared && s[0] * s[1] <= self[0] * self[1]) continue; // finer than this array
        std::string path = pyr->ArrayPath(k);
        const std::string what =
            "multiscales level \"" + pyr->ms.layout[k].asset + "\" (/" + path + ")";
        try {
            auto j = zarr3::read_node_json(*store_, path);
            // A level group holding an array named like this one (GDAL's layout).
            if (j && pyr->suffix.empty() &&
                zarr3::node_type_of(*j, path) == zarr3::NodeType::Group) {
                path = zarr3::join_key(path, zarr3::base_name(array_->path()));
                j = zarr3::read_node_json(*store_, path);
            }
            if (!j || zarr3::node_type_of(*j, path) != zarr3::NodeType::Array) {
                problem = what + ": no such array";
                break;
            }
            auto lm = zarr3::parse_array_metadata(*j, store_name + "/" + path);
            if (!declared && lm.shape[XAxis()] >= bm.shape[XAxis()] &&
                (YAxis() == SIZE_MAX || lm.shape[YAxis()] >= bm.shape[YAxis()]))
                continue; // no scale given and not smaller: no overview of this array
            if (const auto stale = StaleSteps(bm, lm, XAxis(), YAxis())) {
                stale_levels_.push_back(path);
                if (problem.empty())
                    problem = what + " is stale: " + *stale +
                              " (an append since the overviews were built); run gdaladdo again "
                              "to rebuild them, or gdaladdo -clean";
                continue;
            }
            ViewAtBaseLength(bm, lm, XAxis(), YAxis());
            const std::string why = LevelMismatch(bm, lm, pyr->ms.layout[k], XAxis(), YAxis());
            if (!why.empty()) {
                problem = what + ": " + why;
                break;
            }
            if (lm.shape == bm.shape) continue; // an upsampled or same-size level
            levels.push_back(
                Open(store_, zarr3::Array::open(store_, path, lm), update_, /*overview=*/true));
        } catch (const std::exception& e) {
            problem = what + ": " + e.what();
            break;
        }
    }
    if (!problem.empty()) {
        CPLError(CE_Warning, CPLE_AppDefined, "%s: opened without overviews: %s",
                 store_name.c_str(), problem.c_str());
        return;
    }
    std::stable_sort(levels.begin(), levels.end(), [](const auto& a, const auto& b) {
        return static_cast<int64_t>(a->GetRasterXSize()) * a->GetRasterYSize() >
               static_cast<int64_t>(b->GetRasterXSize()) * b->GetRasterYSize();
    });
    overviews_ = std::move(levels);
}

CPLErr Zarr3RasterDataset::FlushOverviews(bool at_closing) {
    CPLErr err = CE_None;
    for (auto& o : overviews_)
        if (FlushCacheOf(*o, at_closing) != CE_None) err = CE_Failure;
    return err;
}

int Zarr3RasterBand::GetOverviewCount() {
    const auto& ov = zds()->overviews_;
    if (ov.empty()) return GDALPamRasterBand::GetOverviewCount();
    return static_cast<int>(ov.size());
}

GDALRasterBand* Zarr3RasterBand::GetOverview(int i) {
    const auto& ov = zds()->overviews_;
    if (ov.empty()) return GDALPamRasterBand::GetOverview(i);
    if (i < 0 || static_cast<size_t>(i) >= ov.size()) return nullptr;
    return ov[static_cast<size_t>(i)]->GetRasterBand(nBand);
}

} // namespace zarr3drv
