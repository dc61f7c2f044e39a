// Classic raster mode: the dataset-level view (axes -> X/Y/bands, metadata,
// georeferencing, finalizing writes). Which array a name opens and the
// subdataset lists: raster_open.cpp.
#include "classic/raster_dataset.hpp"
#include "zarr3/chunk_cache.hpp"

#include "mapping/band_axis_labels.hpp"

#include "error_boundary.hpp"
#include "limits.hpp"
#include "mapping/array_mapping.hpp"
#include "mapping/gdal_types.hpp"
#include "mapping/georef.hpp"
#include "mapping/temporal.hpp"
#include "options/io_options.hpp"
#include "storage/icechunk_commit.hpp"

#include "zarr3/hierarchy.hpp"

#include "cpl_string.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <type_traits>

namespace zarr3drv {
namespace {

std::string JsonItem(const nlohmann::json& v) {
    if (v.is_string()) return v.get<std::string>();
    return v.dump();
}

} // namespace

// ------------------------------------------------------------------ dataset

std::unique_ptr<Zarr3RasterDataset> Zarr3RasterDataset::Open(std::shared_ptr<zarr3::Store> store,
                                                             std::shared_ptr<zarr3::Array> array,
                                                             bool update, bool overview,
                                                             bool band_limit) {
    std::unique_ptr<Zarr3RasterDataset> ds(new Zarr3RasterDataset());
    ds->band_limit_ = band_limit;
    ds->store_ = std::move(store);
    ds->array_ = std::move(array);
    ConfigureArray(*ds->array_);
    ds->Init(update, overview);
    if (!overview) ds->OpenOverviews();
    return ds;
}

void Zarr3RasterDataset::Init(bool update, bool overview) {
    update_ = update;
    eAccess = update ? GA_Update : GA_ReadOnly;
    const auto& m = array_->metadata();
    const std::string where = array_->describe();
    if (m.rank() == 0) throw zarr3::Error(where + ": a 0-d array cannot be opened as a raster");
    mapping_ = MapArray(m, where);
    for (const auto& w : m.warnings)
        CPLError(CE_Warning, CPLE_AppDefined, "%s", w.c_str());
    const uint64_t nb = InitAxes(where);

    attrs_ = m.attributes.is_object() ? m.attributes : nlohmann::json::object();
    if (auto it = attrs_.find("gdal_zarr3:nodata"); it != attrs_.end() && *it == "none")
        nodata_recorded_ = false;

    for (int b = 1; b <= static_cast<int>(nb); ++b)
        SetBand(b, new Zarr3RasterBand(this, b));
    PublishMetadata();

    // Georeferencing.
    try {
        auto g = overview ? GeoRef{}
                          : ReadGeoRef(store_, *array_, XAxis(),
                                       YAxis() == SIZE_MAX ? XAxis() : YAxis());
        gt_ = g.gt;
        srs_ = std::move(g.srs);
    } catch (const std::exception& e) {
        CPLError(CE_Warning, CPLE_AppDefined, "%s: georeferencing ignored: %s", where.c_str(),
                 e.what());
    }
    LoadBandProps();
    if (!overview) LoadBandCoordinates();
    ApplyBandProps();
}

// X/Y axes and bands from the mapping's axis roles (X/Y typed by name, else
// the last two); the raster size and band count are checked against GDAL's
// limits. Returns the band count.
uint64_t Zarr3RasterDataset::InitAxes(const std::string& where) {
    const auto& m = array_->metadata();
    for (size_t a : BandAxes())
        band_shape_.push_back(m.shape[a]);
    const uint64_t w = m.shape[XAxis()], h = YAxis() == SIZE_MAX ? 1 : m.shape[YAxis()];
    if (w == 0 || h == 0) throw zarr3::Error(where + ": the array is empty");
    if (w > INT_MAX || h > INT_MAX)
        throw zarr3::Error(where + ": raster of " + std::to_string(w) + "x" + std::to_string(h) +
                           " is larger than GDAL's classic API allows");
    uint64_t nb = 1;
    for (auto n : band_shape_)
        nb = zarr3::checked_mul(nb, n, "band count");
    if (band_limit_ && nb > MaxBands())
        throw zarr3::Error(where + ": " + std::to_string(nb) +
                           " bands in the classic raster view, above the limit of " +
                           std::to_string(MaxBands()) +
                           " (ZARR3_MAX_BANDS); use the multidimensional API instead "
                           "(gdalmdiminfo, gdal.OpenEx(name, gdal.OF_MULTIDIM_RASTER))");
    nRasterXSize = static_cast<int>(w);
    nRasterYSize = static_cast<int>(h);
    if (YAxis() != SIZE_MAX && YAxis() < m.dimension_names.size() && m.dimension_names[YAxis()])
        ydim_ = *m.dimension_names[YAxis()];
    if (XAxis() < m.dimension_names.size() && m.dimension_names[XAxis()])
        xdim_ = *m.dimension_names[XAxis()];
    return nb;
}

// Plain attributes as metadata items (default domain), every attribute as
// one JSON object in the json:ZARR3_ATTRIBUTES domain, and the storage layout
// in the ZARR3 domain (`gdalinfo -mdd ZARR3`).
void Zarr3RasterDataset::PublishMetadata() {
    const auto& m = array_->metadata();
    CPLStringList md;
    zarr_md_.clear();
    for (const auto& [k, v] : attrs_.items())
        if (IsPlainAttribute(k)) {
            const std::string item = JsonItem(v);
            md.SetNameValue(k.c_str(), item.c_str());
            zarr_md_[k] = item;
        }
    GDALDataset::SetMetadata(md.List());
    PublishAttributesJson();

    CPLStringList z;
    z.SetNameValue("DATA_TYPE", m.dtype.name.c_str());
    z.SetNameValue("CHUNK_GRID", m.grid.to_json().dump().c_str());
    z.SetNameValue("CODECS", m.codecs_json.dump().c_str());
    if (const auto layout = m.shard_layout())
        z.SetNameValue("SHARD_CHUNK_SHAPE", layout->inner_chunk_shape_json.dump().c_str());
    nlohmann::json dn = nlohmann::json::array();
    for (const auto& d : m.dimension_names)
        dn.push_back(d ? nlohmann::json(*d) : nlohmann::json(nullptr));
    if (!m.dimension_names.empty()) z.SetNameValue("DIMENSION_NAMES", dn.dump().c_str());
    z.SetNameValue("ARRAY", ("/" + array_->path()).c_str());
    GDALDataset::SetMetadata(z.List(), "ZARR3");
}

void Zarr3RasterDataset::PublishAttributesJson() {
    const std::string text = attrs_.dump();
    const char* items[] = {text.c_str(), nullptr};
    GDALDataset::SetMetadata(const_cast<char**>(items), kAttributesDomain);
}

// Band metadata: index and coordinate value of each band along each band axis;
// descriptions show CF time coordinates as dates (band_axis_labels.hpp).
void Zarr3RasterDataset::LoadBandCoordinates() {
    const auto& m = array_->metadata();
    const std::string group = zarr3::parent_path(array_->path());
    std::vector<BandAxisCoordinate> axes(BandAxes().size());
    std::vector<std::optional<std::vector<std::string>>> dates(BandAxes().size());
    for (size_t k = 0; k < BandAxes().size(); ++k) {
        const size_t a = BandAxes()[k];
        auto& ax = axes[k];
        ax.name = zarr3::dimension_name(m, a);
        try {
            auto var = FindArrayUpwards(store_, group, ax.name);
            if (var && var->metadata().rank() == 1 && var->metadata().shape[0] == m.shape[a]) {
                ConfigureArray(*var);
                ax.values = ReadCoordinateValues(*var, 1000000);
                ax.counts = TemporalCoordinateCounts(*var, 1000000);
                if (ax.counts) ax.texts = TemporalCoordinateText(*ax.counts, var->metadata().dtype);
                ax.temporal_dtype = ax.counts.has_value();
                if (var->metadata().dtype.is_variable() && m.shape[a] <= 1000000) { // labels
                    ax.texts = var->read_strings(zarr3::Selection::all(var->metadata().shape));
                    ax.values.emplace();
                }
                const auto& attrs = var->metadata().attributes;
                auto u = attrs.find("units");
                if (u != attrs.end() && u->is_string()) ax.units = *u;
                auto c = attrs.find("calendar");
                if (c != attrs.end() && c->is_string()) ax.calendar = *c;
                ax.nc_units = ax.units.empty() && ax.temporal_dtype
                                  ? TemporalUnit(var->metadata().dtype)
                                  : ax.units;
                if (ax.values && !ax.texts) dates[k] = CfTimeLabels(*ax.values, ax.units);
            }
        } catch (const zarr3::Error& e) {
            CPLError(CE_Warning, CPLE_AppDefined, "%s; no band metadata from coordinate \"%s\"",
                     e.what(), ax.name.c_str());
            axes[k].values.reset();
            axes[k].texts.reset();
            axes[k].counts.reset();
        }
    }
    for (int b = 1; b <= nBands; ++b)
        LabelBand(b, axes, dates);
    const CPLStringList nc = NetcdfDimDatasetItems(axes);
    for (int i = 0; i < nc.size(); ++i) {
        char* key = nullptr;
        const char* value = CPLParseNameValue(nc[i], &key);
        // Over a stored item of the same name (a stale copy of a source's).
        if (key && value) GDALMajorObject::SetMetadataItem(key, value);
        CPLFree(key);
    }
}

// Band b's derived metadata (index, coordinate value and units per band axis,
// NETCDF_DIM_<name> for numeric axes) and derived description.
void Zarr3RasterDataset::LabelBand(
    int b, const std::vector<BandAxisCoordinate>& axes,
    const std::vector<std::optional<std::vector<std::string>>>& dates) {
    uint64_t rem = static_cast<uint64_t>(b - 1);
    std::vector<uint64_t> idx(BandAxes().size());
    for (size_t k = BandAxes().size(); k-- > 0;) {
        idx[k] = rem % band_shape_[k];
        rem /= band_shape_[k];
    }
    GDALRasterBand* band = papoBands[b - 1];
    auto& props = band_props_[static_cast<size_t>(b - 1)];
    std::string desc;
    for (size_t k = 0; k < axes.size(); ++k) {
        const auto& ax = axes[k];
        // A lone band axis without coordinate values (the "band" axis of a
        // multi-band copy): its index is the band number - 1, no item (GIS
        // tools such as rasterio would show it as a tag of every band).
        if (ax.values || axes.size() > 1)
            props.derived["DIM_" + ax.name + "_INDEX"] = std::to_string(idx[k]);
        std::string item = ax.name + "=";
        if (ax.values) {
            const std::string v =
                ax.texts ? (*ax.texts)[idx[k]] : CPLSPrintf("%.17g", (*ax.values)[idx[k]]);
            props.derived[ax.name] = v;
            if (!ax.units.empty()) props.derived[ax.name + "#units"] = ax.units;
            if (!ax.texts || ax.temporal_dtype)
                props.derived["NETCDF_DIM_" + ax.name] = AxisNumberText(ax, idx[k]);
            item += dates[k] ? (*dates[k])[idx[k]] : v;
        } else {
            item += std::to_string(idx[k]);
        }
        desc += (desc.empty() ? "" : ", ") + item;
    }
    for (const auto& [key, value] : props.derived)
        band->GDALMajorObject::SetMetadataItem(key.c_str(), value.c_str());
    props.derived_description = desc;
    band->GDALMajorObject::SetDescription(desc.c_str());
}

Zarr3RasterDataset::~Zarr3RasterDataset() {
    CloseDataset();
}

#if ZARR3_HAVE_DATASET_CLOSE
CPLErr Zarr3RasterDataset::Close(ZARR3_CLOSE_PARAMS) {
    CPLErr err = CloseDataset();
    if (GDALPamDataset::Close() != CE_None) err = CE_Failure;
    return err;
}
#endif

CPLErr Zarr3RasterDataset::CloseDataset() {
    if (stage_ == Stage::Closed) return CE_None;
    CPLErr err = CE_None;
    if (Writes()) {
        // Overviews first: everything is in the store before a commit.
        err = FlushOverviews(true);
        if (BaseFlushCache(*this, true) != CE_None) err = CE_Failure;
        if (!ErrorBoundary(array_->describe(), [&] { Finalize(); })) err = CE_Failure;
    }
    // PAM is saved here, while the members its band filter reads still
    // exist (~GDALPamDataset would save it after they are gone).
    if ((nPamFlags & GPF_DIRTY) && stage_ != Stage::Abandoned && TrySaveXML() != CE_None &&
        err == CE_None)
        err = CE_Warning;
    nPamFlags &= ~GPF_DIRTY;
    const bool wrote = Writes();
    stage_ = Stage::Closed;
    if (wrote && !CommitIfIcechunk(store_.get())) err = CE_Failure;
    return err;
}

void Zarr3RasterDataset::Finalize() {
    // The metadata is written even when some chunks could not be stored;
    // the storing error is thrown after it.
    std::exception_ptr data_error;
    try {
        array_->flush();
    } catch (...) {
        data_error = std::current_exception();
    }
    FinalizeMetadata();
    if (data_error) std::rethrow_exception(data_error);
}

void Zarr3RasterDataset::FinalizeMetadata() {
    const bool deferred = stage_ == Stage::MetadataDeferred;
    const bool write = deferred || pending_.metadata || pending_.georef;
    if (pending_.georef) {
        for (auto it = attrs_.begin(); it != attrs_.end();) {
            if (IsWrittenGeorefAttribute(it.key()))
                it = attrs_.erase(it);
            else
                ++it;
        }
        WriteGeoRef(store_, zarr3::parent_path(array_->path()), attrs_, gt_ ? gt_->data() : nullptr,
                    srs_.get(), static_cast<uint64_t>(nRasterXSize),
                    static_cast<uint64_t>(nRasterYSize), xdim_, ydim_, !array_->path().empty());
    }
    if (pending_.bands) StoreBandProps();
    if (!nodata_recorded_)
        attrs_[kNoDataAttribute] = "none";
    else if (auto it = attrs_.find(kNoDataAttribute); it != attrs_.end() && *it == "none")
        attrs_.erase(it); // a value recorded apart from the fill value (RecordNoData) stays
    if (write || attrs_ != array_->metadata().attributes) array_->set_attributes(attrs_);
    if (deferred) zarr3::Group::create(store_, root_group_path_);
    pending_ = {};
    if (stage_ != Stage::Abandoned) stage_ = Stage::Finalized;
    PublishAttributesJson();
}

FlushCacheResult Zarr3RasterDataset::FlushCache(bool at_closing) {
    // An overview that cannot be stored fails this flush too.
    CPLErr err = FlushOverviews(at_closing);
    if (const CPLErr base = BaseFlushCache(*this, at_closing); base > err) err = base;
    // PAM (.aux.xml) after the attributes, which decide what PAM keeps.
    // Chunks that could not be stored fail every flush until written again
    // (zarr3::Array::flush), also before the store's root is written.
    if (Writes())
        if (!ErrorBoundary(array_->describe(), [&] {
                stage_ == Stage::MetadataDeferred ? array_->flush() : Finalize();
            }))
            err = CE_Failure;
    if ((nPamFlags & GPF_DIRTY) && TrySaveXML() != CE_None && err == CE_None) err = CE_Warning;
    return ToFlushCacheResult(err);
}

CPLErr Zarr3RasterDataset::GetGeoTransformArray(double* gt) const {
    if (!gt_) {
        static constexpr double kDefault[6] = {0, 1, 0, 0, 0, 1};
        std::copy(std::begin(kDefault), std::end(kDefault), gt);
        return CE_Failure;
    }
    std::copy(gt_->begin(), gt_->end(), gt);
    return CE_None;
}

CPLErr Zarr3RasterDataset::SetGeoTransformArray(const double* gt) {
    if (!update_) {
        CPLError(CE_Failure, CPLE_NotSupported,
                 "%s: opened read-only; open in update mode to set the geotransform",
                 GetDescription());
        return CE_Failure;
    }
    std::array<double, 6> v;
    std::copy(gt, gt + 6, v.begin());
    gt_ = v;
    pending_.georef = true;
    return CE_None;
}

const OGRSpatialReference* Zarr3RasterDataset::GetSpatialRef() const {
    return srs_.get();
}

CPLErr Zarr3RasterDataset::SetSpatialRef(const OGRSpatialReference* srs) {
    if (!update_) return GDALDataset::SetSpatialRef(srs);
    srs_.reset(srs && !srs->IsEmpty() ? srs->Clone() : nullptr);
    if (srs_) srs_->SetAxisMappingStrategy(OAMS_TRADITIONAL_GIS_ORDER);
    pending_.georef = true;
    return CE_None;
}

char** Zarr3RasterDataset::GetMetadataDomainList() {
    return BuildMetadataDomainList(GDALDataset::GetMetadataDomainList(), TRUE, "ZARR3",
                                   kAttributesDomain, nullptr);
}

const char* Zarr3RasterDataset::GetMetadataItem(const char* name, const char* domain) {
    if (!domain || !name || !EQUAL(domain, "ZARR3_CHUNK_CACHE"))
        return GDALPamDataset::GetMetadataItem(name, domain);
    const zarr3::ChunkCache* cache = array_->read_options().chunk_cache.get();
    if (!cache) return nullptr;
    uint64_t v = 0;
    if (EQUAL(name, "BYTES"))
        v = cache->bytes();
    else if (EQUAL(name, "MAX_BYTES"))
        v = cache->max_bytes();
    else if (EQUAL(name, "ENTRIES"))
        v = cache->entries();
    else if (EQUAL(name, "HITS"))
        v = cache->hits();
    else if (EQUAL(name, "MISSES"))
        v = cache->misses();
    else
        return nullptr;
    return CPLSPrintf("%llu", static_cast<unsigned long long>(v));
}

CPLErr Zarr3RasterDataset::SetMetadata(MetadataList md, const char* domain) {
    if (domain && EQUAL(domain, kAttributesDomain)) {
        CPLError(CE_Failure, CPLE_NotSupported,
                 "%s: the %s metadata domain is read-only (set plain attributes in the default "
                 "domain, georeferencing with SetGeoTransform/SetSpatialRef)",
                 GetDescription(), kAttributesDomain);
        return CE_Failure;
    }
    if (!update_ || (domain != nullptr && domain[0] != '\0'))
        return GDALPamDataset::SetMetadata(md, domain);
    // GDAL's semantics: the list replaces the domain. Items are KEY=VALUE,
    // split at the first '=' (a ':' belongs to the key).
    std::map<std::string, std::string> items;
    for (CSLConstList p = md; p && *p; ++p) {
        std::string item = *p;
        size_t sep = item.find('=');
        if (sep == std::string::npos) sep = item.find(':');
        if (sep == std::string::npos || sep == 0) {
            CPLError(CE_Warning, CPLE_AppDefined,
                     "%s: metadata item \"%s\" is not KEY=VALUE; not written", GetDescription(),
                     item.c_str());
            continue;
        }
        items[item.substr(0, sep)] = item.substr(sep + 1);
    }
    for (auto it = attrs_.begin(); it != attrs_.end();) {
        if (IsPlainAttribute(it.key()) && !items.count(it.key())) {
            zarr_md_.erase(it.key());
            it = attrs_.erase(it);
        } else {
            ++it;
        }
    }
    CPLStringList shown;
    for (const auto& [k, v] : items)
        if (StoreMetadataItem(k, v.c_str())) shown.SetNameValue(k.c_str(), v.c_str());
    MarkDirty();
    MarkStalePam();
    return GDALDataset::SetMetadata(shown.List(), domain);
}

CPLErr Zarr3RasterDataset::SetMetadataItem(const char* name, const char* value,
                                           const char* domain) {
    if (domain && EQUAL(domain, kAttributesDomain)) return SetMetadata(nullptr, domain);
    if (!update_ || !name || (domain != nullptr && domain[0] != '\0'))
        return GDALPamDataset::SetMetadataItem(name, value, domain);
    if (!StoreMetadataItem(name, value)) return CE_None;
    MarkDirty();
    MarkStalePam();
    return GDALDataset::SetMetadataItem(name, value, domain);
}

bool Zarr3RasterDataset::StoreMetadataItem(const std::string& key, const char* value) {
    const char* why = nullptr;
    if (IsWrittenGeorefAttribute(key))
        why = "it is georeferencing (set it with SetGeoTransform/SetSpatialRef)";
    else if (IsBandPropsAttribute(key))
        why = "it is a band property (SetScale/SetOffset/SetUnitType/SetDescription or band "
              "metadata)";
    else if (key == "gdal_zarr3:nodata")
        why = "it is the nodata marker (SetNoDataValue)";
    if (why) {
        CPLError(CE_Warning, CPLE_AppDefined, "%s: metadata item %s not written: %s",
                 GetDescription(), key.c_str(), why);
        return false;
    }
    if (value) {
        attrs_[key] = value;
        zarr_md_[key] = value;
    } else {
        attrs_.erase(key);
        zarr_md_.erase(key);
    }
    return true;
}

bool Zarr3RasterDataset::IsPlainAttribute(const std::string& key) {
    if (key.empty() || key.find_first_of(":=") != std::string::npos) return false;
    // grid_mapping too: it points at the CRS variable, whose CRS GetSpatialRef
    // gives (as a plain item, rasterio's tags() and copies to other formats
    // would carry a pointer to a variable they do not have).
    if (IsWrittenGeorefAttribute(key)) return false;
    return !IsBandPropsAttribute(key);
}

bool Zarr3RasterDataset::IsBandPropsAttribute(const std::string& key) {
    static const char* const names[] = {
        "scale_factor",      "add_offset",      "units",
        "band_descriptions", "band_metadata",   "band_units",
        "band_scale_factor", "band_add_offset", "band_color_interpretation"};
    return std::any_of(std::begin(names), std::end(names), [&](const char* n) { return key == n; });
}

} // namespace zarr3drv
