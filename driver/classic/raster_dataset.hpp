// Classic raster view of one Zarr v3 array: X/Y are two axes, every other
// axis becomes bands. Reads and writes go through zarr3::Array.
#pragma once

#include "gdal_compat.hpp"
#include "gdal_pam.h"
#include "gdal_priv.h"
#include "mapping/array_mapping.hpp"
#include "mapping/band_axis_labels.hpp"
#include "ogr_spatialref.h"
#include "zarr3/array.hpp"

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace zarr3drv {

// Metadata domain holding the array's attributes as one JSON object (names
// such as proj:code that GDAL's KEY=VALUE form would split at the ':').
inline constexpr const char* kAttributesDomain = "json:ZARR3_ATTRIBUTES";

// Band properties kept in the array's attributes (raster_band_metadata.cpp):
// `band_descriptions`, `band_metadata`, CF `scale_factor`/`add_offset`/`units`
// (one value for all bands) or `band_scale_factor`/`band_add_offset`/
// `band_units` (one per band when they differ).
struct BandProps {
    std::string description;                                   // stored description ("" = none)
    std::vector<std::pair<std::string, std::string>> metadata; // stored items
    std::optional<double> scale, offset;
    std::string unit;
    GDALColorInterp color = GCI_Undefined; // band_color_interpretation
    // Shown but not stored: the description and items derived from the band
    // axis coordinates (LoadBandCoordinates).
    std::string derived_description;
    std::map<std::string, std::string> derived;
};

class Zarr3RasterBand;
class RasterCopy;
class OverviewBuilder;

class Zarr3RasterDataset final : public GDALPamDataset {
    friend class Zarr3RasterBand;
    friend class RasterCopy;      // raster_create.cpp
    friend class OverviewBuilder; // overview_build.cpp

  public:
    // Raster view of `array`. Throws zarr3::Error when the array cannot be
    // shown as a raster (rank 0, unsupported type).
    // `overview`: a level of a multiscales pyramid (raster_overviews.cpp),
    // opened without georeferencing or overviews of its own.
    // `band_limit`: refuse more bands than MaxBands() (ZARR3_MAX_BANDS); an
    // append's own views (raster_append.cpp) lift it: an append writes one
    // step of an array of any length.
    static std::unique_ptr<Zarr3RasterDataset> Open(std::shared_ptr<zarr3::Store> store,
                                                    std::shared_ptr<zarr3::Array> array,
                                                    bool update, bool overview = false,
                                                    bool band_limit = true);
    ~Zarr3RasterDataset() override;
#if ZARR3_HAVE_DATASET_CLOSE
    CPLErr Close(ZARR3_CLOSE_PARAMS) override;
#endif

    ZARR3_GEOTRANSFORM_OVERRIDES
    CPLErr GetGeoTransformArray(double* gt) const;
    CPLErr SetGeoTransformArray(const double* gt);
    const OGRSpatialReference* GetSpatialRef() const override;
    CPLErr SetSpatialRef(const OGRSpatialReference* srs) override;
    char** GetMetadataDomainList() override;
    // The ZARR3_CHUNK_CACHE domain (not listed; for tests and tuning): BYTES,
    // MAX_BYTES, ENTRIES, HITS, MISSES of the dataset's cache of decoded chunks.
    const char* GetMetadataItem(const char* name, const char* domain = "") override;
    // Also sets up PAM (`<store>.aux.xml`; one <Subdataset> per array opened
    // by a ZARR3:"store":/array name) and loads it (local stores only).
    void SetDescription(const char* name) override;
    CPLErr SetMetadata(MetadataList md, const char* domain = "") override;
    CPLErr SetMetadataItem(const char* name, const char* value, const char* domain = "") override;
    FlushCacheResult FlushCache(bool at_closing = false) override;
    CPLErr IRasterIO(GDALRWFlag rw, int x, int y, int w, int h, void* data, int bw, int bh,
                     GDALDataType buf_type, int band_count, ZARR3_BANDMAP band_map,
                     GSpacing pixel_space, GSpacing line_space, GSpacing band_space,
                     GDALRasterIOExtraArg* extra) override;
    // gdaladdo: multiscales levels beside the array (overview_build.cpp).
    CPLErr IBuildOverviews(const char* resampling, int n_overviews, const int* factors, int n_bands,
                           const int* bands, GDALProgressFunc progress, void* progress_data,
                           CSLConstList options) override;

    // ---- used by raster_create.cpp
    // Keeps zarr.json of the array (and the root group) unwritten until
    // Finalize(): a copy that fails leaves no valid-looking store.
    void DeferMetadata(std::string root_group_attrs_path) {
        stage_ = Stage::MetadataDeferred;
        root_group_path_ = std::move(root_group_attrs_path);
    }
    void SetCreated(std::string xdim, std::string ydim) {
        origin_ = Origin::Created;
        xdim_ = std::move(xdim);
        ydim_ = std::move(ydim);
    }
    // Flushes data, writes georeferencing and metadata. Throws on failure.
    void Finalize();
    void FinalizeMetadata(); // Finalize without the data flush
    void Abandon() {
        stage_ = Stage::Abandoned;
    }
    zarr3::Array& array() {
        return *array_;
    }
    // The store and array a copy of this dataset keeps the layout of (copy_source.cpp), when the
    // array's axes are [band,] y, x in that order (the order a classic copy writes); else null.
    std::shared_ptr<zarr3::Array> ClassicOrderArray() const {
        const size_t r = array_->metadata().rank();
        if (r < 2 || r > 3 || YAxis() != r - 2 || XAxis() != r - 1) return nullptr;
        if (r == 3 && (BandAxes().size() != 1 || BandAxes()[0] != 0)) return nullptr;
        return array_;
    }
    const std::shared_ptr<zarr3::Store>& store() const {
        return store_;
    }
    void SetNoDataRecorded(bool has) {
        nodata_recorded_ = has;
    }
    // The mapping's values (nodata, scale/offset/unit) from the array's metadata with the
    // attributes as they will be written (attrs_).
    void RefreshMapping() {
        zarr3::ArrayMetadata shown = array_->metadata();
        shown.attributes = attrs_;
        RefreshValues(mapping_, shown);
    }
    bool data_written() const {
        return data_written_;
    }

  protected:
    // PAM keeps only what zarr.json does not hold (statistics, histograms,
    // items set on a read-only dataset): the rest is filtered out here.
    CPLXMLNode* SerializeToXML(const char* vrt_path) override;

  private:
    Zarr3RasterDataset() = default;
    void Init(bool update, bool overview);
    // Multiscales levels as overviews (raster_overviews.cpp).
    void OpenOverviews();
    CPLErr FlushOverviews(bool at_closing); // CE_Failure when a level could not be stored
    uint64_t InitAxes(const std::string& where);
    void PublishMetadata();
    void PublishAttributesJson();
    void LoadBandCoordinates();
    void LabelBand(int band, const std::vector<BandAxisCoordinate>& axes,
                   const std::vector<std::optional<std::vector<std::string>>>& dates);
    // Band properties from / into the attributes (raster_band_metadata.cpp).
    void LoadBandProps();
    void ApplyBandProps();
    void StoreBandProps();
    // Whether attribute `key` shows in the default metadata domain.
    static bool IsPlainAttribute(const std::string& key);
    static bool IsBandPropsAttribute(const std::string& key);
    // Writes default-domain item `key` into the attributes (update mode);
    // false (after a warning) when it cannot be stored there.
    bool StoreMetadataItem(const std::string& key, const char* value);
    void MarkBandsDirty() {
        pending_.bands = true;
        MarkStalePam();
    }
    // An existing .aux.xml is rewritten at close: it may hold values set
    // read-only earlier that the attributes now replace.
    void MarkStalePam() {
        if (pam_.file_seen) MarkPamDirty();
    }
    zarr3::Selection Window(int band, int x, int y, int w, int h) const;
    std::vector<int64_t> Strides(GSpacing pixel, GSpacing line, GSpacing band) const;
    // Reads/writes a window of bands b0, b0+step, ... (1-based, count n, one
    // band axis) straight from/to the caller buffer. Returns false when the
    // request needs the generic path. `mode`: see zarr3::Array::WriteMode.
    bool DirectIO(GDALRWFlag rw, int x, int y, int w, int h, void* data, GDALDataType buf_type,
                  int b0, int bstep, int n, GSpacing pixel, GSpacing line, GSpacing band,
                  zarr3::Array::WriteMode mode = zarr3::Array::WriteMode::Now);
    // Writes the blocks GDAL holds for `band` before a direct read or write;
    // false (error reported) when some could not be stored.
    bool FlushedBlocks(GDALRasterBand* band);
    // Zoomed-out read (buffer smaller than the window, nearest neighbour,
    // GDAL's sampling) of one band: each chunk decoded once
    // (raster_zoom.cpp). Returns false when the request needs the generic path.
    bool ZoomedRead(int band, int x, int y, int w, int h, void* data, int bw, int bh,
                    GDALDataType buf_type, GSpacing pixel, GSpacing line,
                    const GDALRasterIOExtraArg* extra);
    void MarkDirty() {
        pending_.metadata = true;
    }
    // Axis roles and the exposed type, as the shared mapping gives them.
    size_t XAxis() const {
        return mapping_.axes.x;
    }
    size_t YAxis() const {
        return mapping_.axes.y;
    } // kNoAxis for a 1-D array
    const std::vector<size_t>& BandAxes() const {
        return mapping_.axes.bands;
    }
    GDALDataType ExposedType() const {
        return mapping_.type;
    }

    // ---- state
    // Where the dataset is in its life (one value, in this order):
    enum class Stage {
        Live,             // opened, or created with its zarr.json written
        MetadataDeferred, // created by a copy: zarr.json and the root group are
                          // written by the first Finalize(), so a failed copy
                          // leaves no valid-looking store
        Finalized,        // Finalize() wrote the metadata (it runs again on each flush)
        Abandoned,        // a failed copy: nothing more is written, PAM is not saved
        Closed,           // CloseDataset() ran: flushed, PAM saved, committed
    };
    // How it came to be: a created dataset may still change its fill value
    // (the nodata value) until data is written or it is finalized.
    enum class Origin { Opened, Created };
    // What Finalize() has to write besides the data.
    struct PendingWrites {
        bool metadata = false; // attributes or fill value changed
        bool georef = false;   // geotransform or CRS set
        bool bands = false;    // band properties changed
    };
    // PAM (raster_pam.cpp): set up once from the dataset name; whether an
    // .aux.xml existed when it was (then it is rewritten at close).
    struct PamState {
        bool set_up = false;
        bool file_seen = false;
    };
    bool Writes() const {
        return update_ && stage_ != Stage::Abandoned && stage_ != Stage::Closed;
    }
    // The end of the dataset's life (Close() on GDAL >= 3.7, else the
    // destructor): data and metadata, overviews, PAM, then the commit of an
    // Icechunk repository opened for update. CE_Failure when any failed.
    CPLErr CloseDataset();

    std::shared_ptr<zarr3::Store> store_;
    std::shared_ptr<zarr3::Array> array_;
    // Type, axis roles, nodata as the array is now (RefreshValues after the
    // fill value changes); scale/offset/unit per band are in band_props_.
    ArrayMapping mapping_;
    zarr3::Shape band_shape_; // the array's shape along BandAxes()
    bool band_limit_ = true;  // InitAxes refuses more than MaxBands() bands
    bool update_ = false;     // opened (or created) for writing
    Stage stage_ = Stage::Live;
    Origin origin_ = Origin::Opened;
    PendingWrites pending_;
    PamState pam_;
    bool data_written_ = false;   // some raster data was written
    bool nodata_recorded_ = true; // the fill value is the nodata value (gdal_zarr3:nodata)
    std::string root_group_path_;
    std::string xdim_ = "x", ydim_ = "y";
    std::optional<std::array<double, 6>> gt_;
    std::unique_ptr<OGRSpatialReference> srs_;
    nlohmann::json attrs_;
    std::vector<BandProps> band_props_;
    // Default-domain items that come from the attributes (not saved by PAM).
    std::map<std::string, std::string> zarr_md_;
    std::vector<std::unique_ptr<Zarr3RasterDataset>> overviews_; // finest first
    std::vector<std::string> stale_levels_; // level arrays with fewer steps than the base
};

class Zarr3RasterBand final : public GDALPamRasterBand {
  public:
    Zarr3RasterBand(Zarr3RasterDataset* ds, int band);

    CPLErr IReadBlock(int bx, int by, void* image) override;
    CPLErr IWriteBlock(int bx, int by, void* image) override;
    CPLErr IRasterIO(GDALRWFlag rw, int x, int y, int w, int h, void* data, int bw, int bh,
                     GDALDataType buf_type, GSpacing pixel_space, GSpacing line_space,
                     GDALRasterIOExtraArg* extra) override;
    double GetNoDataValue(int* success = nullptr) override;
    CPLErr SetNoDataValue(double v) override;
    int64_t GetNoDataValueAsInt64(int* success = nullptr) override;
    uint64_t GetNoDataValueAsUInt64(int* success = nullptr) override;
    CPLErr SetNoDataValueAsInt64(int64_t v) override;
    CPLErr SetNoDataValueAsUInt64(uint64_t v) override;
    double GetOffset(int* success = nullptr) override;
    double GetScale(int* success = nullptr) override;
    const char* GetUnitType() override;
    int GetOverviewCount() override;
    GDALRasterBand* GetOverview(int i) override;
    CPLErr SetOffset(double v) override;
    CPLErr SetScale(double v) override;
    CPLErr SetUnitType(const char* u) override;
    GDALColorInterp GetColorInterpretation() override;
    CPLErr SetColorInterpretation(GDALColorInterp ci) override;
    // Descriptions and default-domain items are stored in the attributes in
    // update mode (STATISTICS_* and other domains go to PAM); read-only: PAM.
    void SetDescription(const char* d) override;
    CPLErr SetMetadata(MetadataList md, const char* domain = "") override;
    CPLErr SetMetadataItem(const char* name, const char* value, const char* domain = "") override;

  protected:
    CPLXMLNode* SerializeToXML(const char* vrt_path) override;

  private:
    BandProps& props() { return zds()->band_props_[static_cast<size_t>(nBand - 1)]; }
    Zarr3RasterDataset* zds() { return static_cast<Zarr3RasterDataset*>(poDS); }
    CPLErr BlockIO(GDALRWFlag rw, int bx, int by, void* image);
    CPLErr SetFill(const zarr3::Bytes& fill, const nlohmann::json& as_json);
    CPLErr RecordNoData(const nlohmann::json& value);
    bool HasNoData() const;
};

// Store-level helpers (raster_create.cpp).
GDALDataset* Zarr3Create(const char* name, int xsize, int ysize, int nbands, GDALDataType type,
                         DriverOptionList options);
// A new raster in `store` (a repository's session: no folder to prepare,
// nothing to replace): the root group and the array are put at once; what
// the store does with them (a commit at close) is its own. Throws on error.
GDALDataset* Zarr3CreateInStore(std::shared_ptr<zarr3::Store> store, const std::string& root,
                                int xsize, int ysize, int nbands, GDALDataType type,
                                CSLConstList options);
// A copy of `src` into `store` (a repository's session), as Zarr3CreateCopy
// makes it (properties, pixels, a time series' first coordinate, overviews);
// nullptr after a CPLError, the session's changes discarded.
GDALDataset* Zarr3CreateCopyInStore(std::shared_ptr<zarr3::Store> store, const std::string& root,
                                    GDALDataset* src, int strict, CSLConstList options,
                                    GDALProgressFunc progress, void* progress_data);
GDALDataset* Zarr3CreateCopy(const char* name, GDALDataset* src, int strict,
                             DriverOptionList options, GDALProgressFunc progress,
                             void* progress_data);

} // namespace zarr3drv
