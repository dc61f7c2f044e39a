// Zoomed-out reads: RasterIO with a buffer smaller than the window and
// nearest-neighbour sampling (a QGIS view of a whole raster without
// overviews). GDAL's generic path goes through the block cache row by row;
// here each band of source rows that holds sampled rows (one chunk row, or
// one inner chunk row of a shard) is read once at full resolution into a
// scratch buffer, every chunk decoded once, and sampled into the caller's
// buffer at exactly the source pixels GDAL's own sampling picks.
#include "mapping/gdal_types.hpp"
#include "classic/raster_dataset.hpp"

#include <algorithm>
#include <cstring>

namespace zarr3drv {

namespace {

constexpr uint64_t kScratchBudget = 64ull << 20; // bytes of one row band

// Source index of each of `n` buffer positions over [off, off + size) of an
// axis of `limit` pixels, as GDALRasterBand::IRasterIO's nearest-neighbour
// loop computes them (the x loop accumulates the increment; y multiplies).
std::vector<int> SampleX(double off, double size, int n, int limit) {
    const double inc = size / n;
    std::vector<int> v(static_cast<size_t>(n));
    double s = 0.5 * inc + off + 1e-10;
    for (int i = 0; i < n; ++i, s += inc)
        v[static_cast<size_t>(i)] =
            static_cast<int>(std::min(std::max(0.0, s), static_cast<double>(limit - 1)));
    return v;
}

std::vector<int> SampleY(double off, double size, int n, int limit) {
    const double inc = size / n;
    std::vector<int> v(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
        v[static_cast<size_t>(i)] = static_cast<int>(
            std::min(std::max(0.0, (i + 0.5) * inc + off + 1e-10), static_cast<double>(limit - 1)));
    return v;
}

} // namespace

bool Zarr3RasterDataset::ZoomedRead(int band, int x, int y, int w, int h, void* data, int bw,
                                    int bh, GDALDataType buf_type, GSpacing pixel, GSpacing line,
                                    const GDALRasterIOExtraArg* extra) {
    if (YAxis() == SIZE_MAX || bw > w || bh > h || bw <= 0 || bh <= 0) return false;
    if (extra && extra->eResampleAlg != GRIORA_NearestNeighbour) return false;
    const bool floating = extra && extra->bFloatingPointWindowValidity;
    const auto cols =
        SampleX(floating ? extra->dfXOff : x, floating ? extra->dfXSize : w, bw, nRasterXSize);
    const auto rows =
        SampleY(floating ? extra->dfYOff : y, floating ? extra->dfYSize : h, bh, nRasterYSize);
    const auto& m = array_->metadata();
    const size_t elem = m.dtype.size;
    const int c0 = *std::min_element(cols.begin(), cols.end());
    const int c1 = *std::max_element(cols.begin(), cols.end()) + 1;
    const auto& yaxis = m.grid.axis(YAxis());
    const uint64_t block = m.shard_layout() ? m.read_block_shape()[YAxis()] : 0;
    if (static_cast<uint64_t>(c1 - c0) * elem * (block ? block : yaxis.max_edge()) > kScratchBudget)
        return false;
    const bool same = buf_type == ExposedType() && SameRepresentation(m.dtype);
    const size_t exp = static_cast<size_t>(GDALGetDataTypeSizeBytes(ExposedType()));
    std::vector<GByte> scratch, native(static_cast<size_t>(bw) * elem),
        wide(static_cast<size_t>(bw) * exp);
    auto* out = static_cast<GByte*>(data);
    for (int j = 0; j < bh;) {
        // The row band holding source row rows[j]: its chunk (or inner chunk).
        const uint64_t r = static_cast<uint64_t>(rows[static_cast<size_t>(j)]);
        const uint64_t ci = yaxis.chunk_index(r);
        uint64_t b0 = yaxis.chunk_start(ci), b1 = b0 + yaxis.chunk_edge(ci);
        if (block) {
            b0 += (r - b0) / block * block;
            b1 = std::min(b1, b0 + block);
        }
        int j1 = j;
        while (j1 < bh && static_cast<uint64_t>(rows[static_cast<size_t>(j1)]) < b1)
            ++j1;
        const int r0 = rows[static_cast<size_t>(j)], r1 = rows[static_cast<size_t>(j1 - 1)] + 1;
        scratch.resize(static_cast<size_t>(r1 - r0) * static_cast<size_t>(c1 - c0) * elem);
        const auto row_bytes = static_cast<GSpacing>(c1 - c0) * static_cast<GSpacing>(elem);
        array_->read(Window(band, c0, r0, c1 - c0, r1 - r0), scratch.data(),
                     Strides(static_cast<GSpacing>(elem), row_bytes, 0));
        for (; j < j1; ++j) {
            const GByte* src = scratch.data() + (rows[static_cast<size_t>(j)] - r0) * row_bytes;
            GByte* dst = out + j * line;
            for (int i = 0; i < bw; ++i)
                std::memcpy(native.data() + static_cast<size_t>(i) * elem,
                            src + static_cast<size_t>(cols[static_cast<size_t>(i)] - c0) * elem,
                            elem);
            if (same && pixel == static_cast<GSpacing>(elem)) {
                std::memcpy(dst, native.data(), native.size());
                continue;
            }
            WidenToGDAL(m.dtype, native.data(), wide.data(), static_cast<size_t>(bw));
            GDALCopyWords64(wide.data(), ExposedType(), static_cast<int>(exp), dst, buf_type,
                            static_cast<int>(pixel), bw);
        }
    }
    return true;
}

} // namespace zarr3drv
