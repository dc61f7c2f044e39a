// Writing multiscales pyramids: gdaladdo (IBuildOverviews) and the
// OVERVIEWS creation option of CreateCopy. Each level is a new array beside
// the base in the base's group, with the base's data type, fill value,
// codecs, non-spatial axes and chunking (a rectilinear time axis keeps its
// edges; sharded bases give sharded levels); the group gets the
// multiscales attribute (layout, transform, spatial:shape/transform).
// GDAL's own resampling (GDALRegenerateOverviewsMultiBand) fills the levels.
#include "classic/overview_build.hpp"

#include "classic/raster_dataset.hpp"
#include "classic/raster_overviews.hpp"
#include "error_boundary.hpp"
#include "mapping/georef.hpp"
#include "storage/store_delete.hpp"

#include "zarr3/array_lock.hpp"
#include "zarr3/consolidated.hpp"
#include "zarr3/hierarchy.hpp"
#include "zarr3/multiscales.hpp"

#include "cpl_string.h"
#include "cpl_vsi.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>

namespace zarr3drv {

// The steps of IBuildOverviews on the base dataset (a friend of it).
// Layout as GDAL 3.13's Zarr driver writes it: level `ovr_<f>x` is a group
// beside the base array holding an array of the base's name; the layout
// lists the base array then the levels, each derived from the previous one
// with its relative scale, plus spatial:shape / spatial:transform.
class OverviewBuilder {
  public:
    explicit OverviewBuilder(Zarr3RasterDataset& ds) : ds_(ds) {}
    void Build(const std::string& resampling, const std::vector<int>& factors,
               GDALProgressFunc progress, void* progress_data, CSLConstList options);
    void Clean();

  private:
    struct Size {
        uint64_t w, h;
    };
    struct Level {
        std::string asset; // relative to the group
        Size size;
        std::string method;
    };
    zarr3::ArrayMetadata LevelMetadata(Size s, const std::string& where) const;
    nlohmann::json LevelAttributes(Size s) const;
    std::string NewLevel(int factor, Size s, const std::vector<Level>& levels) const;
    void WriteLayout(const std::vector<Level>& levels);
    std::string GroupPath() const { return zarr3::parent_path(ds_.array_->path()); }
    std::string GroupWhere() const {
        return ds_.store_->uri() + "/" + zarr3::join_key(GroupPath(), "zarr.json");
    }
    void CheckCanBuild();
    void CheckOpenedAsStored() const;
    std::vector<std::string> Doomed(const PyramidOf& pyr) const;
    std::string BaseName() const;

    Zarr3RasterDataset& ds_;
    std::set<std::string> taken_; // assets of the group's layout (other pyramids' too)
};

namespace {

uint64_t CeilDiv(uint64_t a, uint64_t b) {
    return (a + b - 1) / b;
}

} // namespace

void EraseMultiscales(nlohmann::json& attrs) {
    attrs.erase("multiscales");
    if (auto it = attrs.find("zarr_conventions"); it != attrs.end() && it->is_array()) {
        auto& l = *it;
        l.erase(std::remove_if(l.begin(), l.end(),
                               [](const nlohmann::json& c) {
                                   return c.is_object() &&
                                          c.value("uuid", "") == zarr3::kMultiscalesUuid;
                               }),
                l.end());
        if (l.empty()) attrs.erase("zarr_conventions");
    }
}

namespace {

// GDAL resampling name -> the convention's lower-case name.
std::string MethodName(std::string r) {
    for (auto& c : r)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (r.empty()) return "nearest";
    if (r == "cubicspline") return "cubic_spline";
    return r;
}

} // namespace

std::string OverviewBuilder::BaseName() const {
    return zarr3::base_name(ds_.array_->path());
}

// Creates group ovr_<factor>x (or a free variant) and its level array.
std::string OverviewBuilder::NewLevel(int factor, Size s, const std::vector<Level>& levels) const {
    std::string name;
    for (int k = 0;; ++k) {
        name = "ovr_" + std::to_string(factor) + "x" + (k ? "_" + std::to_string(k) : "");
        const std::string gpath = zarr3::join_key(GroupPath(), name);
        const bool used =
            taken_.count(name) > 0 || std::any_of(levels.begin(), levels.end(),
                                                  [&](const Level& l) { return l.asset == name; });
        if (!used && !zarr3::read_node_json(*ds_.store_, gpath)) break;
        if (k > 1000) throw zarr3::Error(ds_.array_->describe() + ": no free level name");
    }
    const std::string gpath = zarr3::join_key(GroupPath(), name);
    zarr3::Group::create(ds_.store_, gpath);
    const std::string path = zarr3::join_key(gpath, BaseName());
    zarr3::Array::create(ds_.store_, path,
                         LevelMetadata(s, ds_.store_->uri() + "/" + path + "/zarr.json"));
    return name;
}

// The base's metadata with the spatial axes shrunk: same type, fill value,
// codecs, names; non-spatial axes keep their partitions; spatial axes get
// regular chunks of the base's natural edge (shards: a multiple of the inner
// chunk), never larger than needed.
zarr3::ArrayMetadata OverviewBuilder::LevelMetadata(Size s, const std::string& where) const {
    const auto& bm = ds_.array_->metadata();
    zarr3::Shape shape = bm.shape;
    shape[ds_.XAxis()] = s.w;
    if (ds_.YAxis() != SIZE_MAX) shape[ds_.YAxis()] = s.h;
    const auto shard = bm.shard_layout();
    std::vector<zarr3::AxisPartition> axes;
    for (size_t a = 0; a < bm.rank(); ++a) {
        const auto& part = bm.grid.axis(a);
        if (a != ds_.XAxis() && a != ds_.YAxis()) {
            axes.push_back(part);
            continue;
        }
        uint64_t edge = std::max<uint64_t>(1, part.most_common_edge());
        if (shard) {
            const uint64_t inner = std::max<uint64_t>(1, shard->inner_chunk_shape[a]);
            edge = std::min(edge, CeilDiv(shape[a], inner) * inner);
            edge = std::max(inner, edge / inner * inner);
        } else {
            edge = std::min(edge, shape[a]);
        }
        axes.push_back(zarr3::AxisPartition::regular(edge, shape[a]));
    }
    const bool regular = std::all_of(axes.begin(), axes.end(),
                                     [](const zarr3::AxisPartition& p) { return p.is_regular(); });
    nlohmann::json j = zarr3::to_json(bm);
    j["shape"] = shape;
    if (regular) {
        zarr3::Shape edges;
        for (const auto& p : axes)
            edges.push_back(p.chunk_edge(0));
        j["chunk_grid"] = zarr3::ChunkGrid::make_regular(edges, shape).to_json();
    } else {
        j["chunk_grid"] = zarr3::ChunkGrid::make_rectilinear(axes).to_json();
    }
    j["attributes"] = LevelAttributes(s);
    return zarr3::parse_array_metadata(j, where);
}

// Attributes of a level: the base's CRS (proj:), band properties and nodata
// marker, with its own spatial:shape and spatial:transform.
nlohmann::json OverviewBuilder::LevelAttributes(Size s) const {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [k, v] : ds_.attrs_.items()) {
        const bool keep = k.rfind("proj:", 0) == 0 || k.rfind("spatial:", 0) == 0 ||
                          k == "zarr_conventions" || k == "gdal_zarr3:nodata" ||
                          k.rfind("band_", 0) == 0 || k == "scale_factor" || k == "add_offset" ||
                          k == "units";
        if (keep) out[k] = v;
    }
    out["spatial:shape"] = {s.h, s.w};
    if (ds_.gt_) {
        const auto& g = *ds_.gt_;
        const double sx = static_cast<double>(ds_.nRasterXSize) / static_cast<double>(s.w);
        const double sy = static_cast<double>(ds_.nRasterYSize) / static_cast<double>(s.h);
        const double gt[6] = {g[0], g[1] * sx, g[2] * sy, g[3], g[4] * sx, g[5] * sy};
        out["spatial:transform"] = AffineFromGeoTransform(gt);
    } else {
        out.erase("spatial:transform");
    }
    return out;
}

// The multiscales attribute of the base's group: the base, then `levels`
// (finest first), each derived from the previous one.
void OverviewBuilder::WriteLayout(const std::vector<Level>& levels) {
    const size_t r = ds_.array_->metadata().rank();
    const size_t ix = ds_.XAxis(), iy = ds_.YAxis();
    Size prev{static_cast<uint64_t>(ds_.nRasterXSize), static_cast<uint64_t>(ds_.nRasterYSize)};
    zarr3::Multiscales ms;
    zarr3::MultiscaleLevel base;
    base.asset = BaseName();
    base.scale.assign(r, 1.0);
    base.spatial_shape = {prev.h, prev.w};
    if (ds_.gt_) base.spatial_transform = AffineFromGeoTransform(ds_.gt_->data());
    ms.layout.push_back(base);
    for (const auto& lv : levels) {
        zarr3::MultiscaleLevel l;
        l.asset = lv.asset;
        l.derived_from = ms.layout.back().asset;
        l.resampling_method = lv.method;
        l.scale.assign(r, 1.0);
        l.translation.assign(r, 0.0);
        l.scale[ix] = static_cast<double>(prev.w) / static_cast<double>(lv.size.w);
        if (iy != SIZE_MAX)
            l.scale[iy] = static_cast<double>(prev.h) / static_cast<double>(lv.size.h);
        l.spatial_shape = {lv.size.h, lv.size.w};
        const auto attrs = LevelAttributes(lv.size);
        if (auto it = attrs.find("spatial:transform"); it != attrs.end())
            l.spatial_transform = it->get<std::array<double, 6>>();
        ms.layout.push_back(std::move(l));
        prev = lv.size;
    }
    auto group = zarr3::Group::open(ds_.store_, GroupPath());
    nlohmann::json attrs = group->metadata().attributes;
    // Other pyramids of the group (one per variable) stay as they are.
    if (const auto old = zarr3::parse_multiscales(attrs, GroupWhere())) {
        zarr3::Multiscales merged = *old;
        for (size_t k = 0; k < old->layout.size(); ++k)
            if (old->layout[k].asset == base.asset) {
                merged = zarr3::without_pyramid_of(*old, k).value_or(zarr3::Multiscales{});
                break;
            }
        for (auto& l : ms.layout)
            merged.layout.push_back(std::move(l));
        ms = std::move(merged);
    }
    zarr3::write_multiscales(attrs, ms);
    (void)zarr3::parse_multiscales(attrs, GroupWhere()); // never write a layout that does not hold
    // The spatial convention (registered above) names the axes that
    // spatial:shape counts; GDAL 3.13 drops levels whose shape it cannot match.
    if (iy != SIZE_MAX) attrs["spatial:dimensions"] = {ds_.ydim_, ds_.xdim_};
    group->set_attributes(attrs);
}

void OverviewBuilder::Build(const std::string& resampling, const std::vector<int>& factors,
                            GDALProgressFunc progress, void* progress_data, CSLConstList options) {
    const std::string where = ds_.array_->describe();
    CheckCanBuild();
    ds_.FlushCache(false);
    const uint64_t W = static_cast<uint64_t>(ds_.nRasterXSize);
    const uint64_t H = static_cast<uint64_t>(ds_.nRasterYSize);
    // The existing levels (also stale ones) are replaced by the requested
    // ones: removed as -clean removes them, then built afresh (in a
    // repository, all in one commit).
    if (const auto pyr = FindPyramid(*ds_.store_, ds_.array_->path())) {
        Clean();
        taken_.clear();
        for (const auto& l : pyr->full.layout)
            if (zarr3::root_of(pyr->full, &l - pyr->full.layout.data()) !=
                zarr3::root_of(pyr->full, pyr->full_level))
                taken_.insert(l.asset);
    }
    std::vector<Level> levels;
    std::vector<Size> wanted;
    for (int f : factors) {
        if (f < 2) throw zarr3::Error(where + ": overview factor " + std::to_string(f) + " < 2");
        const Size s{CeilDiv(W, static_cast<uint64_t>(f)),
                     ds_.YAxis() == SIZE_MAX ? 1 : CeilDiv(H, static_cast<uint64_t>(f))};
        wanted.push_back(s);
        const bool dup = std::any_of(levels.begin(), levels.end(), [&](const Level& l) {
            return l.size.w == s.w && l.size.h == s.h;
        });
        if (!dup) levels.push_back({NewLevel(f, s, levels), s, MethodName(resampling)});
    }
    std::stable_sort(levels.begin(), levels.end(), [](const Level& a, const Level& b) {
        return a.size.w * a.size.h > b.size.w * b.size.h;
    });
    WriteLayout(levels);
    ds_.overviews_.clear();
    ds_.OpenOverviews();
    // Regenerate the requested levels from the full resolution.
    const int nb = ds_.nBands;
    std::vector<GDALRasterBand*> src(static_cast<size_t>(nb));
    std::vector<std::vector<GDALRasterBand*>> dst(static_cast<size_t>(nb));
    for (int b = 0; b < nb; ++b) {
        src[static_cast<size_t>(b)] = ds_.GetRasterBand(b + 1);
        for (const auto& o : ds_.overviews_)
            for (const Size& s : wanted)
                if (static_cast<uint64_t>(o->nRasterXSize) == s.w &&
                    static_cast<uint64_t>(o->nRasterYSize) == s.h) {
                    dst[static_cast<size_t>(b)].push_back(o->GetRasterBand(b + 1));
                    break;
                }
    }
    if (dst[0].empty()) throw zarr3::Error(where + ": the new levels did not open");
    std::vector<GDALRasterBand**> ptrs;
    for (auto& d : dst)
        ptrs.push_back(d.data());
    if (GDALRegenerateOverviewsMultiBand(nb, src.data(), static_cast<int>(dst[0].size()),
                                         ptrs.data(), resampling.c_str(), progress, progress_data,
                                         options) != CE_None)
        throw zarr3::Error(where + ": computing the overviews failed");
    if (ds_.FlushOverviews(false) != CE_None)
        throw zarr3::Error(where + ": the overview levels could not be stored");
}

// Everything that would make gdaladdo fail half way, checked before
// anything is written.
void OverviewBuilder::CheckCanBuild() {
    const std::string where = ds_.array_->describe();
    if (ds_.array_->path().empty())
        throw zarr3::Error(where + ": the array is the store root; overviews need a group");
    // A malformed attribute throws here (naming the group and the member).
    const auto pyr = FindPyramid(*ds_.store_, ds_.array_->path());
    if (pyr && !pyr->suffix.empty())
        throw zarr3::Error(where + ": its multiscales pyramid (in /" + pyr->group +
                           ") is laid out as groups holding every array of a level; gdaladdo "
                           "does not rewrite such a pyramid (the other arrays would lose their "
                           "levels): nothing changed");
    if (pyr && pyr->level != zarr3::base_level(pyr->ms))
        throw zarr3::Error(where + ": is a level of a multiscales pyramid, not its base " +
                           "(build the overviews of /" + pyr->ArrayPath(0) + ")");
    CheckOpenedAsStored();
    auto group = zarr3::Group::open(ds_.store_, GroupPath());
    if (const auto ms = zarr3::parse_multiscales(group->metadata().attributes, GroupWhere()))
        for (const auto& l : ms->layout)
            taken_.insert(l.asset);
}

// The levels are planned from the array as this dataset opened it: that
// must be the array stored now, not an older shape (consolidated metadata
// left behind by another tool's append, or an append since the open).
void OverviewBuilder::CheckOpenedAsStored() const {
    zarr3::NodeSnapshot seen;
    const auto now = zarr3::open_array_fresh(ds_.store_, ds_.array_->path(), seen);
    using zarr3::shape_text;
    const auto& was = ds_.array_->metadata().shape;
    if (now->metadata().shape != was)
        throw zarr3::Error(ds_.array_->describe() + " changed since it was opened (shape " +
                           shape_text(was) + " -> " + shape_text(now->metadata().shape) +
                           "; consolidated metadata out of date, or an append since the open): "
                           "reopen it; nothing changed");
}

// The array paths -clean removes: the levels of this array's own pyramid
// that the reader opened as its overviews (zarr3::clean_set decides).
std::vector<std::string> OverviewBuilder::Doomed(const PyramidOf& pyr) const {
    const auto& full = pyr.full;
    const size_t root = zarr3::root_of(full, pyr.full_level);
    std::vector<std::string> paths;
    for (size_t k = 0; k < full.layout.size(); ++k) {
        std::string p = zarr3::join_key(pyr.group, full.layout[k].asset);
        if (k != root && zarr3::root_of(full, k) == root) {
            // GDAL's layout: a level group holding an array named like the base.
            const auto j = zarr3::read_node_json(*ds_.store_, p);
            if (j && zarr3::node_type_of(*j, p) == zarr3::NodeType::Group)
                p = zarr3::join_key(p, BaseName());
        }
        paths.push_back(p);
    }
    // Stale levels too (fewer steps than the base): the reader refused them
    // only for that, they are this array's levels.
    std::vector<std::string> accepted = ds_.stale_levels_;
    for (const auto& o : ds_.overviews_)
        accepted.push_back(o->array_->path());
    return zarr3::clean_set(full, root, paths, accepted);
}

// gdaladdo -clean: the array's own pyramid leaves the multiscales attribute
// (other pyramids of the group stay), then the level arrays the reader
// accepted as its overviews are removed, each checked first to hold only
// store content and to be reached through no symbolic link; a level group
// left empty goes too, each by its store key (store_delete.hpp; in a
// repository: deleted in the session, one commit with the attribute change).
// Nothing else is removed: never the base, another array, a level the reader
// refused, or anything outside the store.
void OverviewBuilder::Clean() {
    const std::string where = ds_.array_->describe();
    const auto pyr = FindPyramid(*ds_.store_, ds_.array_->path()); // malformed: throws
    if (!pyr) {
        ds_.overviews_.clear();
        return;
    }
    if (!pyr->suffix.empty())
        throw zarr3::Error(where + ": its multiscales pyramid (in /" + pyr->group +
                           ") is laid out as groups holding every array of a level; -clean does "
                           "not remove them: nothing removed");
    if (pyr->level != zarr3::base_level(pyr->ms))
        throw zarr3::Error(where + ": is a level of a multiscales pyramid, not its base; run " +
                           "-clean on /" + pyr->ArrayPath(zarr3::base_level(pyr->ms)) +
                           ": nothing removed");
    const auto doomed = Doomed(*pyr);
    for (const auto& p : doomed)
        CheckNodeRemovable(*ds_.store_, p); // throws naming the path: nothing changed yet
    // The overview datasets close before anything changes: in a repository
    // each one's close commits the shared session, which would split -clean
    // into two commits (the attribute, then the deletions).
    ds_.overviews_.clear();
    auto group = zarr3::Group::open(ds_.store_, pyr->group);
    nlohmann::json attrs = group->metadata().attributes;
    if (auto rest = zarr3::without_pyramid_of(pyr->full, pyr->full_level))
        zarr3::write_multiscales(attrs, *rest);
    else
        EraseMultiscales(attrs);
    group->set_attributes(attrs);
    for (const auto& p : doomed) {
        RemoveNode(*ds_.store_, p);
        // The level group (GDAL's layout) when nothing else is left in it.
        const std::string parent = zarr3::parent_path(p);
        const bool level_group =
            std::any_of(pyr->full.layout.begin(), pyr->full.layout.end(), [&](const auto& l) {
                return zarr3::join_key(pyr->group, l.asset) == parent;
            });
        if (level_group && parent != pyr->group) RemoveGroupIfEmpty(*ds_.store_, parent);
    }
    // The folders went without the store: consolidated metadata, when the root has it, must
    // not list the removed levels. The dataset's store is then consolidating (an update open of
    // such a root): the root's zarr.json written through it again is consolidated afresh.
    if (const auto r = zarr3::read_node_json(*ds_.store_, ""); r && zarr3::has_consolidated(*r)) {
        const std::string text = r->dump(2);
        ds_.store_->put("zarr.json", zarr3::ByteView(reinterpret_cast<const uint8_t*>(text.data()),
                                                     text.size()));
    }
}

CPLErr Zarr3RasterDataset::IBuildOverviews(const char* resampling, int n_overviews,
                                           const int* factors, int n_bands, const int* bands,
                                           GDALProgressFunc progress, void* progress_data,
                                           CSLConstList options) {
    const std::string where = array_->describe();
    if (!update_) {
        CPLError(CE_Failure, CPLE_NoWriteAccess,
                 "%s: opened read-only; open in update mode to build overviews", where.c_str());
        return CE_Failure;
    }
    if (n_bands != nBands) {
        CPLError(CE_Failure, CPLE_NotSupported,
                 "%s: overviews are built for all bands at once (one array)", where.c_str());
        return CE_Failure;
    }
    (void)bands;
    if (!progress) progress = GDALDummyProgress;
    OverviewBuilder b(*this);
    const std::vector<int> f(factors, factors + std::max(0, n_overviews));
    const bool ok = ErrorBoundary(where, [&] {
        if (n_overviews == 0)
            b.Clean();
        else
            b.Build(resampling ? resampling : "NEAREST", f, progress, progress_data, options);
    });
    return ok ? CE_None : CE_Failure;
}

} // namespace zarr3drv

// ------------------------------------------------------------------ creation options

namespace zarr3drv {
namespace {

const char* const kResamplings[] = {"NEAREST", "AVERAGE", "BILINEAR", "CUBIC", "CUBICSPLINE",
                                    "LANCZOS", "MODE",    "RMS",      "GAUSS", "MIN",
                                    "MAX",     "MED",     "Q1",       "Q3",    "SUM"};

bool AutoOverviews(CSLConstList options) {
    const char* v = CSLFetchNameValueDef(options, "OVERVIEWS", "NONE");
    return EQUAL(v, "AUTO") || EQUAL(v, "IGNORE_EXISTING");
}

} // namespace

void CheckOverviewOptions(CSLConstList options) {
    const char* ov = CSLFetchNameValueDef(options, "OVERVIEWS", "NONE");
    if (!EQUAL(ov, "NONE") && !EQUAL(ov, "AUTO") && !EQUAL(ov, "IGNORE_EXISTING"))
        throw zarr3::Error(std::string("creation option OVERVIEWS=") + ov +
                           ": expected NONE, AUTO or IGNORE_EXISTING");
    if (const char* n = CSLFetchNameValue(options, "OVERVIEW_COUNT")) {
        char* end = nullptr;
        const long v = std::strtol(n, &end, 10);
        if (end == n || *end != '\0' || v < 0 || v > 30)
            throw zarr3::Error(std::string("creation option OVERVIEW_COUNT=") + n +
                               ": expected an integer from 0 to 30");
    }
    if (const char* r = CSLFetchNameValue(options, "OVERVIEW_RESAMPLING")) {
        const bool known = std::any_of(std::begin(kResamplings), std::end(kResamplings),
                                       [&](const char* k) { return EQUAL(k, r); });
        if (!known)
            throw zarr3::Error(std::string("creation option OVERVIEW_RESAMPLING=") + r +
                               ": expected one of NEAREST, AVERAGE, BILINEAR, CUBIC, "
                               "CUBICSPLINE, LANCZOS, MODE, RMS, GAUSS, MIN, MAX, MED, Q1, Q3, "
                               "SUM");
    }
}

void BuildCopyOverviews(Zarr3RasterDataset& ds, CSLConstList options, GDALProgressFunc progress,
                        void* progress_data) {
    const char* count = CSLFetchNameValue(options, "OVERVIEW_COUNT");
    if (!AutoOverviews(options) && !count) return;
    if (count && std::atoi(count) == 0) return;
    // As the COG driver: halve until the level fits in one block, or
    // OVERVIEW_COUNT levels.
    int bx = 0, by = 0;
    ds.GetRasterBand(1)->GetBlockSize(&bx, &by);
    std::vector<int> factors;
    const int W = ds.GetRasterXSize(), H = ds.GetRasterYSize();
    const int wanted = count ? std::atoi(count) : -1;
    for (int f = 2; f <= (1 << 29); f *= 2) {
        const int prev_w = (W + f / 2 - 1) / (f / 2), prev_h = (H + f / 2 - 1) / (f / 2);
        if (wanted >= 0 ? static_cast<int>(factors.size()) >= wanted : prev_w <= bx && prev_h <= by)
            break;
        factors.push_back(f);
        if ((W + f - 1) / f <= 1 && (H + f - 1) / f <= 1) break;
    }
    if (factors.empty()) return;
    const char* resampling = CSLFetchNameValueDef(options, "OVERVIEW_RESAMPLING", "AVERAGE");
    std::vector<int> bands(static_cast<size_t>(ds.GetRasterCount()));
    for (size_t i = 0; i < bands.size(); ++i)
        bands[i] = static_cast<int>(i) + 1;
    if (ds.BuildOverviews(resampling, static_cast<int>(factors.size()), factors.data(),
                          static_cast<int>(bands.size()), bands.data(), progress, progress_data,
                          nullptr) != CE_None)
        throw zarr3::Error("building the overviews (creation option OVERVIEWS) failed");
}

} // namespace zarr3drv
