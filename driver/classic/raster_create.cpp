// Classic raster writing: Create, CreateCopy (gdal_translate -of Zarr3) and
// Delete. Layout: a root group, the data array ARRAY_NAME with dims
// [band,] y, x, plus georeferencing (georef.cpp).
#include "classic/copy_source.hpp"
#include "classic/overview_build.hpp"
#include "classic/raster_append.hpp"
#include "classic/raster_dataset.hpp"
#include "error_boundary.hpp"
#include "gdal_executor.hpp"
#include "mapping/gdal_types.hpp"
#include "mapping/georef.hpp"
#include "options/creation_options.hpp"
#include "options/io_options.hpp"
#include "storage/consolidation.hpp"
#include "storage/icechunk_commit.hpp"
#include "storage/path_guard.hpp"
#include "storage/store_replace.hpp"
#include "storage/unfinished_copy.hpp"
#include "storage/vsi_store.hpp"

#include "cpl_conv.h"
#include "cpl_string.h"
#include "cpl_vsi.h"
#include "zarr3/copy_layout.hpp"
#include "zarr3/hierarchy.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#ifdef __linux__
#include <sys/mman.h>
#endif

namespace zarr3drv {
namespace {

constexpr uint64_t kCopyBudget = 256ull << 20; // bytes per copied window

// The copy window's pixels: allocated once per copy, never zeroed (the
// source is read into it before use), 2 MiB aligned and advised for huge
// pages, so that first touches fault once per 2 MiB instead of once per
// 4 KiB (page faults cost more than the copy itself on virtual machines).
class WindowBuffer {
  public:
    static constexpr size_t kAlign = size_t(2) << 20;
    WindowBuffer() = default;
    WindowBuffer(const WindowBuffer&) = delete;
    WindowBuffer& operator=(const WindowBuffer&) = delete;
    ~WindowBuffer() { VSIFreeAligned(data_); }
    GByte* get(size_t n) {
        if (n <= size_) return data_;
        VSIFreeAligned(data_);
        size_ = 0;
        data_ = static_cast<GByte*>(VSIMallocAligned(kAlign, n));
        if (!data_) throw zarr3::Error("cannot allocate " + std::to_string(n) + " bytes");
        size_ = n;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        madvise(data_, n, MADV_HUGEPAGE); // advice only: failure is harmless
#endif
        return data_;
    }

  private:
    GByte* data_ = nullptr;
    size_t size_ = 0;
};

struct Prepared {
    std::string root, array_name, xdim, ydim;
    zarr3::ArrayMetadata meta;
    bool root_existed = false; // an empty folder was there before (kept on failure)
    bool leftover = false;     // a killed copy's unfinished folder: replaced
    Consolidation consolidated =
        Consolidation::No;   // CREATE_CONSOLIDATED_METADATA (consolidation.hpp)
    std::string target;      // replacing the store there: `root` is the staging folder
    std::string num_threads; // NUM_THREADS: threads encoding chunks (else GDAL_NUM_THREADS)
};

// NUM_THREADS (as GDAL's GTiff and COG drivers): the threads encoding the chunks of `ds`.
void ApplyNumThreads(Zarr3RasterDataset& ds, const Prepared& p) {
    if (p.num_threads.empty()) return;
    const int n = zarr3gdal::resolve_num_threads(p.num_threads.c_str());
    if (n == 1 && !EQUAL(p.num_threads.c_str(), "1"))
        CPLError(CE_Warning, CPLE_IllegalArg,
                 "%s: NUM_THREADS=%s is neither a number nor ALL_CPUS; chunks are encoded on 1 "
                 "thread",
                 p.root.c_str(), p.num_threads.c_str());
    CPLDebug("Zarr3", "%s: NUM_THREADS=%s: %d threads encode the chunks", p.root.c_str(),
             p.num_threads.c_str(), n);
    ds.array().set_executor(zarr3gdal::make_executor(p.num_threads.c_str()));
}

// Why `name` cannot name the data array (empty when it can): not a plain
// store key, or one of the names the plugin writes beside the array.
std::string ArrayNameProblem(const std::string& name, const std::string& xdim,
                             const std::string& ydim) {
    try {
        zarr3::validate_key(name);
    } catch (const std::exception& e) {
        return e.what();
    }
    if (name.find('/') != std::string::npos || name == "zarr.json" ||
        IsGeoRefArrayName(name, xdim, ydim))
        return "expected a plain name other than zarr.json, spatial_ref and the x/y dimension "
               "names";
    return {};
}

// The array name when ARRAY_NAME is not given: the store name without its
// extension, or "data" when that name cannot name the array.
std::string DefaultArrayName(const std::string& root, const std::string& xdim,
                             const std::string& ydim) {
    const std::string base = CPLGetBasename(root.c_str());
    return ArrayNameProblem(base, xdim, ydim).empty() ? base : "data";
}

// The copy keeps `src`'s grid, sharding and codecs but for the parts the options name
// (zarr3::copy_layout), and its dimension names unless DIMENSION_NAMES is given.
void KeepLayout(ArrayCreateRequest& req, const zarr3::ArrayMetadata& src) {
    if (src.rank() != req.shape.size()) return;
    std::vector<std::string> names;
    for (const auto& n : src.dimension_names)
        if (n) names.push_back(*n);
    if (names.size() == req.shape.size()) req.dimension_names = names;
}

// Validates the request and builds the metadata of the store at `root`.
// `kept`: the source array whose layout a copy keeps (null: the options' and defaults only).
Prepared PrepareMetadata(std::string root, int xsize, int ysize, int nbands, GDALDataType type,
                         CSLConstList options, bool strict, const CopySource* kept = nullptr) {
    Prepared p;
    p.root = std::move(root);
    if (p.root.empty()) throw zarr3::Error("empty output name");
    p.consolidated = ConsolidationAsked(options);
    p.num_threads = CSLFetchNameValueDef(options, "NUM_THREADS", "");
    if (xsize < 1 || ysize < 1 || nbands < 1)
        throw zarr3::Error(p.root + ": a raster needs at least 1x1 pixels and one band");
    std::string warning;
    ArrayCreateRequest req;
    req.dtype = ZarrTypeFor(type, !strict, &warning);
    if (!warning.empty()) CPLError(CE_Warning, CPLE_AppDefined, "%s", warning.c_str());
    const char* append_dim = CSLFetchNameValue(options, "APPEND_DIM"); // raster_append.hpp
    for (const char* k : {"APPEND_COORD", "APPEND_ORDER", "APPEND_REPACK"})
        if (!append_dim && CSLFetchNameValue(options, k))
            throw zarr3::Error(std::string("creation option ") + k +
                               " needs APPEND_DIM (the dimension the source bands are appended "
                               "along)");
    if (nbands > 1 || append_dim) {
        req.shape = {static_cast<uint64_t>(nbands), static_cast<uint64_t>(ysize),
                     static_cast<uint64_t>(xsize)};
        req.dimension_names = {append_dim ? append_dim : "band", "y", "x"};
    } else {
        req.shape = {static_cast<uint64_t>(ysize), static_cast<uint64_t>(xsize)};
        req.dimension_names = {"y", "x"};
    }
    if (kept) KeepLayout(req, kept->array->metadata());
    p.meta = BuildArrayMetadata(req, options);
    if (kept)
        p.meta = zarr3::copy_layout(kept->array->metadata(), kept->ranges, p.meta,
                                    CopyOverridesFrom(options));
    const auto& dn = p.meta.dimension_names;
    const size_t r = req.shape.size();
    p.xdim = dn.size() == r && dn[r - 1] ? *dn[r - 1] : "x";
    p.ydim = dn.size() == r && dn[r - 2] ? *dn[r - 2] : "y";
    const char* given_name = CSLFetchNameValue(options, "ARRAY_NAME");
    p.array_name = given_name ? given_name : DefaultArrayName(p.root, p.xdim, p.ydim);
    if (const std::string why = ArrayNameProblem(p.array_name, p.xdim, p.ydim); !why.empty())
        throw zarr3::Error("creation option ARRAY_NAME=" + p.array_name + ": " + why);
    return p;
}

// Validates everything and builds the metadata; nothing is written here.
// What is at the store's folder decides: created, a killed copy's leftover
// replaced, or an existing store replaced once the new one is complete.
Prepared Prepare(const char* name, int xsize, int ysize, int nbands, GDALDataType type,
                 CSLConstList options, bool strict, const CopySource* kept = nullptr) {
    Prepared p =
        PrepareMetadata(StoreRoot(name), xsize, ysize, nbands, type, options, strict, kept);
    VSIStatBufL st;
    if (VSIStatL(p.root.c_str(), &st) == 0) {
        const bool empty_dir = VSI_ISDIR(st.st_mode) && [&] {
            char** l = VSIReadDir(p.root.c_str());
            bool e = true;
            for (char** q = l; q && *q; ++q)
                if (strcmp(*q, ".") != 0 && strcmp(*q, "..") != 0) e = false;
            CSLDestroy(l);
            return e;
        }();
        p.leftover = !empty_dir && IsAbandonedCopy(p.root);
        if (!empty_dir && !p.leftover) {
            // An existing store is replaced once the new one is complete.
            if (!IsReplaceableStore(p.root))
                throw zarr3::Error(p.root + ": already exists and is not a Zarr store that can "
                                            "be replaced; delete it first");
            p.target = p.root;
            p.root = BeginReplacement(p.target);
            return p;
        }
        p.root_existed = empty_dir;
    }
    return p;
}

// The store's folder. A local store's parent folder must exist (as GTiff
// requires: a typo in a path is an error, not a new tree of folders); the
// error names the OS cause. Virtual file systems (/vsimem/, object stores)
// have no real folders: their parents are created as needed.
void MakeStoreFolder(const std::string& root) {
    const bool local = !STARTS_WITH(root.c_str(), "/vsi");
    errno = 0;
    if (VSIMkdir(root.c_str(), 0755) == 0) return;
    const int err = errno;
    VSIStatBufL st;
    if (VSIStatL(root.c_str(), &st) == 0 && VSI_ISDIR(st.st_mode)) return;
    if (!local && VSIMkdirRecursive(root.c_str(), 0755) == 0) return;
    std::string parent = CPLGetPath(root.c_str());
    if (parent.empty()) parent = ".";
    if (local && VSIStatL(parent.c_str(), &st) != 0)
        throw zarr3::Error(root + ": cannot create the store: the folder " + parent +
                           " does not exist");
    throw zarr3::Error(root + ": cannot create the folder" +
                       (err ? std::string(" (") + std::strerror(err) + ")" : std::string()));
}

// `existing`: the store was built and swapped into place (a replacement by
// Create): only opened.
std::unique_ptr<Zarr3RasterDataset> CreateDataset(const Prepared& p, bool deferred,
                                                  bool existing = false) {
    if (p.leftover) RemoveCreated(p.root, false);
    if (!existing) MakeStoreFolder(p.root);
    // A .aux.xml left by an earlier store of this name would describe the
    // old data (GDAL's Create removes it through Delete the same way).
    VSIUnlink((p.root + ".aux.xml").c_str());
    auto store = ConsolidatingIf(std::make_shared<VSIStore>(p.root, true), p.consolidated);
    std::shared_ptr<zarr3::Array> array;
    // A copy writes its root zarr.json last; until then a killed copy's
    // folder does not open, and re-runs and Delete recognise it.
    if (deferred) MarkUnfinished(p.root);
    if (deferred || existing) {
        array = zarr3::Array::open(store, p.array_name, p.meta);
    } else {
        zarr3::Group::create(store, "");
        array = zarr3::Array::create(store, p.array_name, p.meta, true);
    }
    auto ds = Zarr3RasterDataset::Open(store, array, true);
    ApplyNumThreads(*ds, p);
    ds->SetCreated(p.xdim, p.ydim);
    ds->SetNoDataRecorded(false);
    if (deferred) ds->DeferMetadata("");
    ds->SetDescription(p.root.c_str());
    return ds;
}

// Element ranges [start, end) of the chunks along one axis, clipped to `length`.
std::vector<std::pair<uint64_t, uint64_t>> Segments(const zarr3::AxisPartition& ax,
                                                    uint64_t length) {
    std::vector<std::pair<uint64_t, uint64_t>> out;
    for (const auto& run : ax.runs())
        for (uint64_t k = 0; k < run.count; ++k) {
            const uint64_t s = run.start_element + k * run.edge;
            if (s >= length) return out;
            out.emplace_back(s, std::min(length, s + run.edge));
        }
    return out;
}

// Merges neighbouring segments while `fits(len)` holds (at least one each).
std::vector<std::pair<uint64_t, uint64_t>>
Merge(const std::vector<std::pair<uint64_t, uint64_t>>& segs, uint64_t max_len) {
    std::vector<std::pair<uint64_t, uint64_t>> out;
    for (const auto& s : segs) {
        if (!out.empty() && s.second - out.back().first <= max_len)
            out.back().second = s.second;
        else
            out.push_back(s);
    }
    return out;
}

// Puts the store built at the staging folder `p.root` in place of
// `p.target`; on an error before the swap the new store is removed and the
// old one stays.
void SwapIn(Prepared& p) {
    try {
        FinishReplacement(p.target, p.root);
    } catch (...) {
        RemoveCreated(p.root, false);
        throw;
    }
    p.root = p.target;
    p.target.clear();
}

} // namespace

GDALDataset* Zarr3Create(const char* name, int xsize, int ysize, int nbands, GDALDataType type,
                         DriverOptionList options) {
    std::unique_ptr<Zarr3RasterDataset> ds;
    ErrorBoundary(StoreRoot(name), [&] {
        Prepared p = Prepare(name, xsize, ysize, nbands, type, options, true);
        if (p.target.empty()) {
            ds = CreateDataset(p, false);
            return;
        }
        // The caller fills the dataset after Create returns: the new (empty)
        // store replaces the old one now, in one step.
        try {
            CreateDataset(p, false).reset();
        } catch (...) {
            RemoveCreated(p.root, false);
            throw;
        }
        SwapIn(p);
        ds = CreateDataset(p, false, true);
    });
    return ds.release();
}

// A new dataset in `store` (no folder to prepare): the root group and the
// array are put at once.
std::unique_ptr<Zarr3RasterDataset> NewDatasetInStore(const std::shared_ptr<zarr3::Store>& store,
                                                      const Prepared& p) {
    zarr3::Group::create(store, "");
    auto array = zarr3::Array::create(store, p.array_name, p.meta, true);
    auto ds = Zarr3RasterDataset::Open(store, array, true);
    ApplyNumThreads(*ds, p);
    ds->SetCreated(p.xdim, p.ydim);
    ds->SetNoDataRecorded(false);
    ds->SetDescription(p.root.c_str());
    return ds;
}

GDALDataset* Zarr3CreateInStore(std::shared_ptr<zarr3::Store> store, const std::string& root,
                                int xsize, int ysize, int nbands, GDALDataType type,
                                CSLConstList options) {
    return NewDatasetInStore(store,
                             PrepareMetadata(root, xsize, ysize, nbands, type, options, true))
        .release();
}

// The steps of Zarr3CreateCopy on the new dataset (a friend of it).
class RasterCopy {
  public:
    // nodata, georeferencing, dataset metadata, and each band's description,
    // metadata and scale/offset/unit.
    // `append_dim`: the first step of a time series (-co APPEND_DIM): the
    // source's band descriptions and its items about its own position are
    // left out (IsSourcePositionItem; the coordinate dates the step).
    static void CopyProperties(GDALDataset* src, Zarr3RasterDataset& ds, const char* append_dim);
    static void CopyBandProperties(GDALRasterBand* sb, GDALRasterBand* db, const char* append_dim);
    // Pixels in windows of whole chunks (shards), all bands of a band chunk.
    static void CopyPixels(GDALDataset* src, Zarr3RasterDataset& ds, GDALProgressFunc progress,
                           void* progress_data);
};

void RasterCopy::CopyProperties(GDALDataset* src, Zarr3RasterDataset& ds, const char* append_dim) {
    GDALRasterBand* sb = src->GetRasterBand(1);
    GDALRasterBand* db = ds.GetRasterBand(1);
    int has = FALSE;
    if (sb->GetRasterDataType() == GDT_Int64) {
        const int64_t v = sb->GetNoDataValueAsInt64(&has);
        if (has && db->SetNoDataValueAsInt64(v) != CE_None) throw zarr3::Error("cannot set nodata");
    } else if (sb->GetRasterDataType() == GDT_UInt64) {
        const uint64_t v = sb->GetNoDataValueAsUInt64(&has);
        if (has && db->SetNoDataValueAsUInt64(v) != CE_None)
            throw zarr3::Error("cannot set nodata");
    } else {
        const double v = sb->GetNoDataValue(&has);
        if (has && db->SetNoDataValue(v) != CE_None) throw zarr3::Error("cannot set nodata");
    }
    double gt[6];
    if (DatasetGeoTransform(src, gt) == CE_None) SetDatasetGeoTransform(&ds, gt);
    if (const OGRSpatialReference* srs = src->GetSpatialRef()) ds.SetSpatialRef(srs);
    CPLStringList md;
    for (CSLConstList i = src->GetMetadata(); i && *i; ++i) {
        char* key = nullptr;
        const char* value = CPLParseNameValue(*i, &key);
        if (!append_dim || !key || !value || !IsSourcePositionItem(key, append_dim, value))
            md.AddString(*i);
        CPLFree(key);
    }
    if (!md.empty()) ds.SetMetadata(AsMetadataList(md.List()));
    for (int b = 1; b <= src->GetRasterCount(); ++b)
        CopyBandProperties(src->GetRasterBand(b), ds.GetRasterBand(b), append_dim);
}

// Description, default-domain metadata (statistics go to PAM) and
// scale/offset/unit of one band; what cannot be stored gives a warning.
void RasterCopy::CopyBandProperties(GDALRasterBand* sb, GDALRasterBand* db,
                                    const char* append_dim) {
    if (sb->GetDescription()[0] && !append_dim) db->SetDescription(sb->GetDescription());
    for (CSLConstList i = sb->GetMetadata(); i && *i; ++i) {
        // KEY=VALUE split at the first '=': a key may hold ':'.
        const char* eq = strchr(*i, '=');
        const std::string key = eq ? std::string(*i, static_cast<size_t>(eq - *i)) : "";
        if (append_dim && eq && IsSourcePositionItem(key, append_dim)) continue;
        if (eq && eq != *i)
            db->SetMetadataItem(key.c_str(), eq + 1);
        else
            CPLError(CE_Warning, CPLE_AppDefined,
                     "band %d: metadata item \"%s\" is not KEY=VALUE; not written", sb->GetBand(),
                     *i);
    }
    int has_v = FALSE;
    const double scale = sb->GetScale(&has_v);
    if (has_v && scale != 1.0) db->SetScale(scale);
    const double offset = sb->GetOffset(&has_v);
    if (has_v && offset != 0.0) db->SetOffset(offset);
    if (sb->GetUnitType() && sb->GetUnitType()[0]) db->SetUnitType(sb->GetUnitType());
    const GDALColorInterp ci = sb->GetColorInterpretation();
    if (ci == GCI_PaletteIndex)
        CPLError(CE_Warning, CPLE_NotSupported,
                 "band %d: colour interpretation Palette is not kept, nor the color table: the "
                 "color table is not written (Zarr3 stores none)",
                 sb->GetBand());
    else if (sb->GetColorTable())
        CPLError(CE_Warning, CPLE_NotSupported,
                 "band %d: the color table is not written (Zarr3 stores none)", sb->GetBand());
    else if (ci != GCI_Undefined && !append_dim) // a time series' bands are time steps
        db->SetColorInterpretation(ci);
    if (CSLCount(sb->GetCategoryNames()) > 0)
        CPLError(CE_Warning, CPLE_NotSupported,
                 "band %d: the category names are not written (Zarr3 stores none)", sb->GetBand());
}

void RasterCopy::CopyPixels(GDALDataset* src, Zarr3RasterDataset& ds, GDALProgressFunc progress,
                            void* progress_data) {
    const int nb = ds.GetRasterCount();
    const GDALDataType etype = ds.GetRasterBand(1)->GetRasterDataType();
    const auto& m = ds.array_->metadata();
    const size_t esize = static_cast<size_t>(GDALGetDataTypeSizeBytes(etype));
    const uint64_t W = static_cast<uint64_t>(ds.GetRasterXSize());
    const uint64_t H = static_cast<uint64_t>(ds.GetRasterYSize());
    std::vector<std::pair<uint64_t, uint64_t>> bsegs = {{0, 1}};
    if (ds.BandAxes().size() == 1)
        bsegs = Segments(m.grid.axis(ds.BandAxes()[0]), static_cast<uint64_t>(nb));
    const auto ysegs_all = Segments(m.grid.axis(ds.YAxis()), H);
    uint64_t max_band_seg = 1;
    for (const auto& s : bsegs)
        max_band_seg = std::max(max_band_seg, s.second - s.first);
    const uint64_t row_bytes = W * esize * max_band_seg;
    std::vector<std::pair<uint64_t, uint64_t>> xsegs = {{0, W}};
    if (row_bytes * (ysegs_all.empty() ? 1 : ysegs_all[0].second - ysegs_all[0].first) >
        kCopyBudget)
        xsegs = Segments(m.grid.axis(ds.XAxis()), W);
    uint64_t max_w = 0;
    for (const auto& s : xsegs)
        max_w = std::max(max_w, s.second - s.first);
    const auto ysegs =
        Merge(ysegs_all, std::max<uint64_t>(1, kCopyBudget / (max_w * esize * max_band_seg)));
    const double total = static_cast<double>(W) * static_cast<double>(H) * nb;
    double done = 0;
    WindowBuffer buf;
    std::vector<int> bands;
    if (!progress(0.0, "", progress_data)) throw zarr3::Error("copy cancelled by the user");
    for (const auto& bs : bsegs)
        for (const auto& ys : ysegs)
            for (const auto& xs : xsegs) {
                const int n = static_cast<int>(bs.second - bs.first);
                const int w = static_cast<int>(xs.second - xs.first);
                const int h = static_cast<int>(ys.second - ys.first);
                GByte* pixels = buf.get(static_cast<size_t>(n) * w * h * esize);
                bands.resize(static_cast<size_t>(n));
                for (int i = 0; i < n; ++i)
                    bands[static_cast<size_t>(i)] = static_cast<int>(bs.first) + 1 + i;
                const GSpacing ps = static_cast<GSpacing>(esize), ls = ps * w, bsp = ls * h;
                CPLErrorReset();
                if (src->RasterIO(GF_Read, static_cast<int>(xs.first), static_cast<int>(ys.first),
                                  w, h, pixels, w, h, etype, n, bands.data(), ps, ls, bsp,
                                  nullptr) != CE_None) {
                    const std::string why = CPLGetLastErrorMsg(); // the source's own words
                    throw zarr3::Error("reading the source failed" +
                                       (why.empty() ? "" : ": " + why));
                }
                ds.DirectIO(GF_Write, static_cast<int>(xs.first), static_cast<int>(ys.first), w, h,
                            pixels, etype, bands[0], 1, n, ps, ls, bsp);
                done += static_cast<double>(n) * w * h;
                if (!progress(std::min(1.0, done / total), "", progress_data))
                    throw zarr3::Error("copy cancelled by the user");
            }
}

namespace {
// The type of a copy of `src`: the union of its bands' types. False (after a
// CPLError naming `root`) for a source without bands.
bool CopyType(const std::string& root, GDALDataset* src, GDALDataType& type) {
    const int nb = src->GetRasterCount();
    if (nb == 0) {
        CPLError(CE_Failure, CPLE_NotSupported, "%s: the source has no raster bands", root.c_str());
        return false;
    }
    type = src->GetRasterBand(1)->GetRasterDataType();
    for (int b = 2; b <= nb; ++b)
        type = GDALDataTypeUnion(type, src->GetRasterBand(b)->GetRasterDataType());
    return true;
}

// What a copy checks before it writes anything (throws).
void CheckCopy(GDALDataset* src, CSLConstList options) {
    CheckOverviewOptions(options);
    if (IsAppendRequest(options)) CheckFirstAppend(src, options);
}

// The source's coordinate array of its band axis (the array named as that dimension, found upwards
// from it) when the copy's band axis has that name (`dim`) and nothing in `store` holds the name;
// else null.
std::shared_ptr<zarr3::Array> BandCoordinate(const std::shared_ptr<zarr3::Store>& store,
                                             Zarr3RasterDataset& ds, const CopySource& src,
                                             std::string& dim) {
    const auto& sm = src.array->metadata();
    const auto& dm = ds.array().metadata();
    if (sm.rank() != 3 || dm.rank() != 3 || dm.dimension_names.size() != 3) return nullptr;
    dim = dm.dimension_names[0].value_or("");
    if (dim.empty() || dim == ds.array().path() || zarr3::read_node_json(*store, dim))
        return nullptr;
    auto var = FindArrayUpwards(src.store, zarr3::parent_path(src.array->path()),
                                zarr3::dimension_name(sm, 0));
    if (!var || var->metadata().rank() != 1 || var->metadata().shape[0] != sm.shape[0])
        return nullptr;
    ConfigureArray(*var);
    return var;
}

// `var` copied with its attributes (units, calendar) and the values of the copied bands
// (src.ranges[0]) to `dim` at the new store's root (zarr3::region_metadata).
void CopyBandCoordinate(const std::shared_ptr<zarr3::Store>& store, zarr3::Array& var,
                        const CopySource& src, const std::string& dim) {
    const zarr3::AxisRange range = src.ranges[0];
    const auto meta = zarr3::region_metadata(var.metadata(), {range});
    auto out = zarr3::Array::create(store, dim, meta, false);
    const zarr3::Selection from{{range.start}, {range.end - range.start}, {}};
    const auto all = zarr3::Selection::all(meta.shape);
    if (meta.dtype.is_variable()) {
        out->write_strings(all, var.read_strings(from));
    } else {
        std::vector<uint8_t> values(static_cast<size_t>(meta.shape[0]) * meta.dtype.size);
        var.read(from, values.data());
        out->write(all, values.data());
    }
    out->flush();
}

// The copy's steps on the new dataset: properties, pixels, the first
// coordinate of a time series (written into `store`), metadata, overviews.
// `kept`: the source array whose layout the copy keeps; its band coordinate is
// copied, and then the source's items about the bands' positions (NETCDF_DIM_*,
// dates as descriptions) are left out as for a time series: the coordinate gives them.
void FillCopy(Zarr3RasterDataset& ds, const std::shared_ptr<zarr3::Store>& store, GDALDataset* src,
              const std::optional<CopySource>& kept, CSLConstList options,
              GDALProgressFunc progress, void* progress_data) {
    std::string dim;
    const auto coord = kept ? BandCoordinate(store, ds, *kept, dim) : nullptr;
    const char* position_dim = CSLFetchNameValue(options, "APPEND_DIM");
    if (coord) position_dim = dim.c_str();
    RasterCopy::CopyProperties(src, ds, position_dim);
    RasterCopy::CopyPixels(src, ds, progress, progress_data);
    if (IsAppendRequest(options)) WriteFirstCoordinate(store, src, options);
    if (coord) CopyBandCoordinate(store, *coord, *kept, dim);
    ds.Finalize();
    BuildCopyOverviews(ds, options, progress, progress_data);
}
} // namespace

GDALDataset* Zarr3CreateCopyInStore(std::shared_ptr<zarr3::Store> store, const std::string& root,
                                    GDALDataset* src, int strict, CSLConstList options,
                                    GDALProgressFunc progress, void* progress_data) {
    GDALDataType type = GDT_Unknown;
    if (!CopyType(root, src, type)) return nullptr;
    std::unique_ptr<Zarr3RasterDataset> ds;
    const bool ok = ErrorBoundary(root, [&] {
        CheckCopy(src, options);
        const auto kept = FindCopySource(src, options);
        ds = NewDatasetInStore(store,
                               PrepareMetadata(root, src->GetRasterXSize(), src->GetRasterYSize(),
                                               src->GetRasterCount(), type, options, strict != 0,
                                               kept ? &*kept : nullptr));
        FillCopy(*ds, store, src, kept, options, progress ? progress : GDALDummyProgress,
                 progress_data);
    });
    if (ok) return ds.release();
    DiscardIfIcechunk(store.get()); // before the dataset's close could commit part of it
    if (ds) ds->Abandon();
    return nullptr;
}

GDALDataset* Zarr3CreateCopy(const char* name, GDALDataset* src, int strict,
                             DriverOptionList options, GDALProgressFunc progress,
                             void* progress_data) {
    if (!progress) progress = GDALDummyProgress;
    GDALDataType type = GDT_Unknown;
    if (!CopyType(StoreRoot(name), src, type)) return nullptr;
    Prepared p;
    std::optional<CopySource> kept;
    if (!ErrorBoundary(StoreRoot(name), [&] {
            CheckCopy(src, options);
            kept = FindCopySource(src, options);
            p = Prepare(name, src->GetRasterXSize(), src->GetRasterYSize(), src->GetRasterCount(),
                        type, options, strict != 0, kept ? &*kept : nullptr);
        }))
        return nullptr;

    std::unique_ptr<Zarr3RasterDataset> ds;
    const bool ok = ErrorBoundary(p.root, [&] {
        ds = CreateDataset(p, true);
        FillCopy(*ds, std::make_shared<VSIStore>(p.root, true), src, kept, options, progress,
                 progress_data);
        ClearUnfinished(p.root);
    });
    if (!ok) {
        if (ds) ds->Abandon();
        ds.reset();
        RemoveCreated(p.root, p.root_existed);
        return nullptr;
    }
    if (p.target.empty()) return ds.release();
    // A replacement: the complete new store takes the old one's place,
    // unless closing it reported an error (the old store stays then).
    CPLErrorReset();
    ds.reset();
    if (CPLGetLastErrorType() >= CE_Failure) {
        RemoveCreated(p.root, false);
        return nullptr;
    }
    const std::string target = p.target;
    if (!ErrorBoundary(target, [&] { SwapIn(p); })) return nullptr;
    const char* const drivers[] = {"Zarr3", nullptr};
    return GDALDataset::FromHandle(
        GDALOpenEx(target.c_str(), GDAL_OF_RASTER | GDAL_OF_UPDATE | GDAL_OF_VERBOSE_ERROR, drivers,
                   nullptr, nullptr));
}

} // namespace zarr3drv
