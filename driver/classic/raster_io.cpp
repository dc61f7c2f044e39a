// Classic raster I/O: blocks, direct window reads/writes into the caller's
// buffer (each needed chunk decoded once, no block cache), nodata/scale/offset.
#include "classic/raster_dataset.hpp"

#include "error_boundary.hpp"
#include "mapping/gdal_types.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace zarr3drv {

// ------------------------------------------------------------------ dataset helpers

zarr3::Selection Zarr3RasterDataset::Window(int band, int x, int y, int w, int h) const {
    const size_t r = array_->metadata().rank();
    zarr3::Selection sel;
    sel.start.assign(r, 0);
    sel.count.assign(r, 1);
    sel.step.assign(r, 1);
    uint64_t rem = static_cast<uint64_t>(band - 1);
    for (size_t k = BandAxes().size(); k-- > 0;) {
        sel.start[BandAxes()[k]] = rem % band_shape_[k];
        rem /= band_shape_[k];
    }
    sel.start[XAxis()] = static_cast<uint64_t>(x);
    sel.count[XAxis()] = static_cast<uint64_t>(w);
    if (YAxis() != SIZE_MAX) {
        sel.start[YAxis()] = static_cast<uint64_t>(y);
        sel.count[YAxis()] = static_cast<uint64_t>(h);
    }
    return sel;
}

std::vector<int64_t> Zarr3RasterDataset::Strides(GSpacing pixel, GSpacing line,
                                                 GSpacing band) const {
    std::vector<int64_t> s(array_->metadata().rank(), 0);
    s[XAxis()] = static_cast<int64_t>(pixel);
    if (YAxis() != SIZE_MAX) s[YAxis()] = static_cast<int64_t>(line);
    if (BandAxes().size() == 1) s[BandAxes()[0]] = static_cast<int64_t>(band);
    return s;
}

bool Zarr3RasterDataset::DirectIO(GDALRWFlag rw, int x, int y, int w, int h, void* data,
                                  GDALDataType buf_type, int b0, int bstep, int n, GSpacing pixel,
                                  GSpacing line, GSpacing band, zarr3::Array::WriteMode mode) {
    if (n > 1 && BandAxes().size() != 1) return false;
    zarr3::Selection sel = Window(b0, x, y, w, h);
    if (n > 1) {
        sel.count[BandAxes()[0]] = static_cast<uint64_t>(n);
        sel.step[BandAxes()[0]] = bstep;
    }
    const auto& dt = array_->metadata().dtype;
    if (rw == GF_Write) data_written_ = true;
    // A chunk whose write failed to be stored holds old values: an error,
    // never the old values as a success.
    if (rw == GF_Read) array_->check_not_stale(sel);
    if (buf_type == ExposedType() && SameRepresentation(dt)) {
        const auto strides = Strides(pixel, line, band);
        if (rw == GF_Read)
            array_->read(sel, data, strides);
        else
            array_->write(sel, data, strides, mode);
        return true;
    }
    // Through a dense native buffer laid out [band][row][col].
    const size_t nat = dt.size;
    const size_t exp = static_cast<size_t>(GDALGetDataTypeSizeBytes(ExposedType()));
    const uint64_t total = zarr3::checked_mul(
        zarr3::checked_mul(static_cast<uint64_t>(n), static_cast<uint64_t>(w) * h, "window"),
        std::max(nat, exp), "window bytes");
    if (total > (1ull << 30)) return false; // let GDAL split it into blocks
    zarr3::Bytes tmp(static_cast<size_t>(
        zarr3::checked_mul(static_cast<uint64_t>(n) * w * h, nat, "window bytes")));
    const auto row_bytes = static_cast<GSpacing>(w) * static_cast<GSpacing>(nat);
    const auto strides =
        Strides(static_cast<GSpacing>(nat), row_bytes, row_bytes * static_cast<GSpacing>(h));
    std::vector<GByte> wide(static_cast<size_t>(w) * exp);
    auto* out = static_cast<GByte*>(data);
    if (rw == GF_Read) array_->read(sel, tmp.data(), strides);
    for (int k = 0; k < n; ++k)
        for (int r = 0; r < h; ++r) {
            uint8_t* row = tmp.data() + (static_cast<size_t>(k) * h + r) * w * nat;
            GByte* dst = out + k * band + r * line;
            if (rw == GF_Read) {
                WidenToGDAL(dt, row, wide.data(), static_cast<size_t>(w));
                GDALCopyWords64(wide.data(), ExposedType(), static_cast<int>(exp), dst, buf_type,
                                static_cast<int>(pixel), w);
            } else {
                GDALCopyWords64(dst, buf_type, static_cast<int>(pixel), wide.data(), ExposedType(),
                                static_cast<int>(exp), w);
                NarrowFromGDAL(dt, wide.data(), row, static_cast<size_t>(w));
            }
        }
    if (rw == GF_Write) array_->write(sel, tmp.data(), strides, mode);
    return true;
}

CPLErr Zarr3RasterDataset::IRasterIO(GDALRWFlag rw, int x, int y, int w, int h, void* data, int bw,
                                     int bh, GDALDataType buf_type, int band_count,
                                     ZARR3_BANDMAP band_map, GSpacing pixel_space,
                                     GSpacing line_space, GSpacing band_space,
                                     GDALRasterIOExtraArg* extra) {
    // Several bands along one band axis, no resampling, large window: one
    // read (or write) for all of them, so every chunk is decoded once.
    if (band_count > 1 && bw == w && bh == h && BandAxes().size() == 1 && nBands > 0) {
        auto* b1 = static_cast<Zarr3RasterBand*>(papoBands[0]);
        int bxs = 0, bys = 0;
        b1->GetBlockSize(&bxs, &bys);
        const int step = band_map[1] - band_map[0];
        bool arithmetic = step > 0;
        for (int i = 1; i < band_count && arithmetic; ++i)
            arithmetic = band_map[i] - band_map[i - 1] == step;
        const bool large = w >= std::min(bxs, nRasterXSize) && h >= std::min(bys, nRasterYSize);
        if (arithmetic && large && GDALGetDataTypeSizeBytes(buf_type) <= 16) {
            if (update_)
                for (int i = 0; i < band_count; ++i)
                    if (!FlushedBlocks(GetRasterBand(band_map[i]))) return CE_Failure;
            bool handled = false;
            if (!ErrorBoundary(array_->describe(), [&] {
                    handled = DirectIO(rw, x, y, w, h, data, buf_type, band_map[0], step,
                                       band_count, pixel_space, line_space, band_space);
                }))
                return CE_Failure;
            if (handled) return CE_None;
        }
    }
    return GDALDataset::IRasterIO(rw, x, y, w, h, data, bw, bh, buf_type, band_count, band_map,
                                  pixel_space, line_space, band_space, extra);
}

bool Zarr3RasterDataset::FlushedBlocks(GDALRasterBand* band) {
    if (band->FlushCache(false) == CE_None) return true;
    // The blocks GDAL held are gone from its cache: what follows (a read)
    // would see their old values.
    CPLError(CE_Failure, CPLE_FileIO, "%s: blocks written earlier could not be stored",
             array_->describe().c_str());
    return false;
}

// ------------------------------------------------------------------ band

Zarr3RasterBand::Zarr3RasterBand(Zarr3RasterDataset* ds, int band) {
    poDS = ds;
    nBand = band;
    eDataType = ds->ExposedType();
    eAccess = ds->eAccess;
    nRasterXSize = ds->GetRasterXSize();
    nRasterYSize = ds->GetRasterYSize();
    const auto& m = ds->array_->metadata();
    // Block: the inner chunk of a sharded array, else the chunk (most common
    // edge of a rectilinear axis).
    const zarr3::Shape block = m.read_block_shape();
    uint64_t bx = std::min<uint64_t>(block[ds->XAxis()], static_cast<uint64_t>(nRasterXSize));
    uint64_t by = ds->YAxis() == SIZE_MAX
                      ? 1
                      : std::min<uint64_t>(block[ds->YAxis()], static_cast<uint64_t>(nRasterYSize));
    while (bx * by > (uint64_t(1) << 24)) {
        if (bx >= by)
            bx = (bx + 1) / 2;
        else
            by = (by + 1) / 2;
    }
    nBlockXSize = static_cast<int>(bx);
    nBlockYSize = static_cast<int>(by);
}

CPLErr Zarr3RasterBand::BlockIO(GDALRWFlag rw, int bx, int by, void* image) {
    auto* ds = zds();
    const int x = bx * nBlockXSize, y = by * nBlockYSize;
    const int w = std::min(nBlockXSize, nRasterXSize - x);
    const int h = std::min(nBlockYSize, nRasterYSize - y);
    const GSpacing esize = GDALGetDataTypeSizeBytes(eDataType);
    bool ok = false;
    ErrorBoundary(ds->array_->describe(), [&] {
        // Blocks written from GDAL's cache come one at a time: batched, so
        // that they are encoded in parallel (errors at the batch or flush).
        ok = ds->DirectIO(rw, x, y, w, h, image, eDataType, nBand, 1, 1, esize, esize * nBlockXSize,
                          0, zarr3::Array::WriteMode::Batched);
    });
    return ok ? CE_None : CE_Failure;
}

CPLErr Zarr3RasterBand::IReadBlock(int bx, int by, void* image) {
    return BlockIO(GF_Read, bx, by, image);
}

CPLErr Zarr3RasterBand::IWriteBlock(int bx, int by, void* image) {
    if (!zds()->update_) {
        CPLError(CE_Failure, CPLE_NoWriteAccess, "%s: opened read-only",
                 zds()->array_->describe().c_str());
        return CE_Failure;
    }
    return BlockIO(GF_Write, bx, by, image);
}

CPLErr Zarr3RasterBand::IRasterIO(GDALRWFlag rw, int x, int y, int w, int h, void* data, int bw,
                                  int bh, GDALDataType buf_type, GSpacing pixel_space,
                                  GSpacing line_space, GDALRasterIOExtraArg* extra) {
    auto* ds = zds();
    const bool large =
        w >= std::min(nBlockXSize, nRasterXSize) && h >= std::min(nBlockYSize, nRasterYSize);
    if (bw == w && bh == h && large && (rw == GF_Read || ds->update_)) {
        if (ds->update_ && !ds->FlushedBlocks(this)) return CE_Failure;
        bool handled = false;
        if (!ErrorBoundary(ds->array_->describe(), [&] {
                handled = ds->DirectIO(rw, x, y, w, h, data, buf_type, nBand, 1, 1, pixel_space,
                                       line_space, 0);
            }))
            return CE_Failure;
        if (handled) return CE_None;
    }
    // Zoomed out without overviews (with them, GDAL's generic path reads
    // the best overview): each chunk decoded once.
    if (rw == GF_Read && (bw < w || bh < h) && GetOverviewCount() == 0) {
        if (ds->update_ && !ds->FlushedBlocks(this)) return CE_Failure;
        bool handled = false;
        if (!ErrorBoundary(ds->array_->describe(), [&] {
                ds->array_->check_not_stale(ds->Window(nBand, x, y, w, h));
                handled = ds->ZoomedRead(nBand, x, y, w, h, data, bw, bh, buf_type, pixel_space,
                                         line_space, extra);
            }))
            return CE_Failure;
        if (handled) return CE_None;
    }
    return GDALRasterBand::IRasterIO(rw, x, y, w, h, data, bw, bh, buf_type, pixel_space,
                                     line_space, extra);
}

// ------------------------------------------------------------------ nodata

// The nodata value is the fill value as the shared mapping exposes it
// (ArrayMapping::nodata), unless the store records that it is none.
bool Zarr3RasterBand::HasNoData() const {
    const auto* ds = static_cast<const Zarr3RasterDataset*>(poDS);
    return ds->nodata_recorded_ && !ds->mapping_.nodata.empty();
}

double Zarr3RasterBand::GetNoDataValue(int* success) {
    if (success) *success = FALSE;
    if (!HasNoData()) return 0;
    if (success) *success = TRUE;
    return *zds()->mapping_.NoDataAsDouble();
}

int64_t Zarr3RasterBand::GetNoDataValueAsInt64(int* success) {
    if (success) *success = FALSE;
    if (eDataType != GDT_Int64 || !HasNoData()) return std::numeric_limits<int64_t>::min();
    int64_t v;
    std::memcpy(&v, zds()->mapping_.nodata.data(), 8);
    if (success) *success = TRUE;
    return v;
}

uint64_t Zarr3RasterBand::GetNoDataValueAsUInt64(int* success) {
    if (success) *success = FALSE;
    if (eDataType != GDT_UInt64 || !HasNoData()) return std::numeric_limits<uint64_t>::max();
    uint64_t v;
    std::memcpy(&v, zds()->mapping_.nodata.data(), 8);
    if (success) *success = TRUE;
    return v;
}

CPLErr Zarr3RasterBand::SetNoDataValueAsInt64(int64_t v) {
    zarr3::Bytes b(8);
    std::memcpy(b.data(), &v, 8);
    if (eDataType != GDT_Int64) return SetNoDataValue(static_cast<double>(v));
    return SetFill(b, v);
}

CPLErr Zarr3RasterBand::SetNoDataValueAsUInt64(uint64_t v) {
    zarr3::Bytes b(8);
    std::memcpy(b.data(), &v, 8);
    if (eDataType != GDT_UInt64) return SetNoDataValue(static_cast<double>(v));
    return SetFill(b, v);
}

CPLErr Zarr3RasterBand::SetNoDataValue(double v) {
    const auto& dt = zds()->array_->metadata().dtype;
    if (!GDALDataTypeIsComplex(eDataType) && !GDALDataTypeIsFloating(eDataType) && !std::isnan(v)) {
        double back = 0;
        GByte tmp[16] = {};
        GDALCopyWords64(&v, GDT_Float64, 0, tmp, eDataType, 0, 1);
        GDALCopyWords64(tmp, eDataType, 0, &back, GDT_Float64, 0, 1);
        if (back != v) {
            CPLError(CE_Failure, CPLE_AppDefined, "%s: nodata %.17g is not representable as %s",
                     zds()->array_->describe().c_str(), v, GDALGetDataTypeName(eDataType));
            return CE_Failure;
        }
    }
    if (std::isnan(v) && !GDALDataTypeIsFloating(eDataType)) {
        CPLError(CE_Failure, CPLE_AppDefined, "%s: NaN nodata needs a floating point type",
                 zds()->array_->describe().c_str());
        return CE_Failure;
    }
    GByte wide[16] = {};
    GDALCopyWords64(&v, GDT_Float64, 0, wide, eDataType, 0, 1);
    zarr3::Bytes b(dt.size);
    NarrowFromGDAL(dt, wide, b.data(), 1);
    nlohmann::json as_json = v;
    if (std::isnan(v)) as_json = "NaN";
    if (std::isinf(v)) as_json = v > 0 ? "Infinity" : "-Infinity";
    return SetFill(b, as_json);
}

// Once the array holds data, the fill value stays (unwritten chunks read as it): a new
// nodata value is recorded apart (kNoDataAttribute, written at close), as the shared
// mapping reads it.
CPLErr Zarr3RasterBand::RecordNoData(const nlohmann::json& value) {
    auto* ds = zds();
    ds->attrs_[kNoDataAttribute] = value;
    ds->RefreshMapping();
    ds->nodata_recorded_ = true;
    ds->MarkDirty();
    return CE_None;
}

// The fill value is the nodata value: it may change only before any data is
// written (chunks equal to the fill value are not stored); after, `as_json` (the
// value asked for) is recorded apart (RecordNoData).
CPLErr Zarr3RasterBand::SetFill(const zarr3::Bytes& fill, const nlohmann::json& as_json) {
    auto* ds = zds();
    if (!ds->update_) {
        CPLError(CE_Failure, CPLE_NoWriteAccess, "%s: opened read-only",
                 ds->array_->describe().c_str());
        return CE_Failure;
    }
    const auto& m = ds->array_->metadata();
    if (m.fill_value == fill && !m.fill_value_null) {
        ds->attrs_.erase(kNoDataAttribute);
        ds->RefreshMapping();
        ds->nodata_recorded_ = true;
        ds->MarkDirty();
        return CE_None;
    }
    using DS = Zarr3RasterDataset;
    const bool fresh = ds->origin_ == DS::Origin::Created && ds->stage_ != DS::Stage::Finalized;
    if (m.fill_value != fill && (ds->data_written_ || !fresh)) return RecordNoData(as_json);
    return ErrorBoundary(ds->array_->describe(),
                         [&] {
                             zarr3::ArrayMetadata nm = m;
                             nm.fill_value = fill;
                             nm.fill_value_null = false;
                             ds->array_->flush();
                             ds->array_ = zarr3::Array::open(ds->store_, ds->array_->path(), nm);
                             // Stored now: the attributes written at close
                             // go on top of zarr.json as stored (which a
                             // copy writes last: then not yet).
                             if (ds->stage_ != DS::Stage::MetadataDeferred)
                                 ds->array_->write_metadata();
                             ds->attrs_.erase(kNoDataAttribute);
                             ds->RefreshMapping();
                             ds->nodata_recorded_ = true;
                             ds->MarkDirty();
                         })
               ? CE_None
               : CE_Failure;
}

// CF scale/offset/units and the other band properties: raster_band_metadata.cpp.

} // namespace zarr3drv
