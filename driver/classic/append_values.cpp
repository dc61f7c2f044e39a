// Append values checked and converted into the target's meaning
// (append_values.hpp).
#include "classic/append_values.hpp"

#include "cpl_string.h"

#include <algorithm>

namespace zarr3drv {

namespace {

constexpr size_t kCheckBudget = 16u << 20; // doubles read at a time by the check

zarr3::Packing PackingOf(GDALRasterBand* b) {
    zarr3::Packing p;
    int has = FALSE;
    const double s = b->GetScale(&has);
    if (has) p.scale = s;
    const double o = b->GetOffset(&has);
    if (has) p.offset = o;
    const double nd = b->GetNoDataValue(&has);
    if (has) p.nodata = nd;
    return p;
}

zarr3::RepackRounding RoundingOf(CSLConstList options) {
    const char* v = CSLFetchNameValue(options, "APPEND_REPACK");
    if (!v || EQUAL(v, "EXACT")) return zarr3::RepackRounding::Exact;
    if (EQUAL(v, "NEAREST")) return zarr3::RepackRounding::Nearest;
    throw zarr3::Error(std::string("creation option APPEND_REPACK=") + v +
                       ": expected EXACT or NEAREST");
}

} // namespace

void AppendValues::Convert(double* v, size_t per_band) const {
    for (size_t b = 0; b < bands.size(); ++b)
        bands[b].convert(v + b * per_band, per_band);
}

AppendValues PlanAppendValues(GDALDataset* view, GDALDataset* src, const zarr3::DataType& target,
                              CSLConstList options, const std::string& where) {
    const auto rounding = RoundingOf(options);
    GDALRasterBand* last = view->GetRasterBand(view->GetRasterCount());
    const zarr3::Packing to = PackingOf(last);
    const std::string to_unit = last->GetUnitType() ? last->GetUnitType() : "";
    AppendValues out;
    bool any = false;
    for (int b = 1; b <= src->GetRasterCount(); ++b) {
        GDALRasterBand* sb = src->GetRasterBand(b);
        const std::string unit = sb->GetUnitType() ? sb->GetUnitType() : "";
        if (!unit.empty() && !to_unit.empty() && unit != to_unit)
            throw zarr3::Error(where + ": source band " + std::to_string(b) + " is in units \"" +
                               unit + "\", the array in \"" + to_unit +
                               "\"; convert the source first");
        const std::string w = where + ": source band " + std::to_string(b);
        out.bands.emplace_back(PackingOf(sb), to, target, rounding, w, "APPEND_REPACK=NEAREST");
        any = any || !out.bands.back().identity();
    }
    if (!any) out.bands.clear();
    return out;
}

void ReadSourceRows(GDALDataset* src, int y0, int w, int h, GDALDataType gt,
                    const AppendValues& values, std::vector<GByte>& buf) {
    const int n = src->GetRasterCount();
    if (!values.converts()) {
        if (src->RasterIO(GF_Read, 0, y0, w, h, buf.data(), w, h, gt, n, nullptr, 0, 0, 0,
                          nullptr) != CE_None)
            throw zarr3::Error("reading the source failed");
        return;
    }
    const size_t per_band = static_cast<size_t>(w) * static_cast<size_t>(h);
    std::vector<double> d(per_band * static_cast<size_t>(n));
    if (src->RasterIO(GF_Read, 0, y0, w, h, d.data(), w, h, GDT_Float64, n, nullptr, 0, 0, 0,
                      nullptr) != CE_None)
        throw zarr3::Error("reading the source failed");
    values.Convert(d.data(), per_band);
    GDALCopyWords64(d.data(), GDT_Float64, 8, buf.data(), gt, GDALGetDataTypeSizeBytes(gt),
                    static_cast<GPtrDiff_t>(d.size()));
}

void CheckAppendValues(GDALDataset* src, const AppendValues& values) {
    if (!values.converts()) return;
    const int n = src->GetRasterCount(), W = src->GetRasterXSize(), H = src->GetRasterYSize();
    const size_t row = static_cast<size_t>(W) * static_cast<size_t>(n);
    const int rows = static_cast<int>(
        std::clamp<size_t>(kCheckBudget / std::max<size_t>(1, row), 1, static_cast<size_t>(H)));
    std::vector<double> buf;
    for (int y0 = 0; y0 < H; y0 += rows) {
        const int h = std::min(rows, H - y0);
        buf.resize(row * static_cast<size_t>(h));
        if (src->RasterIO(GF_Read, 0, y0, W, h, buf.data(), W, h, GDT_Float64, n, nullptr, 0, 0, 0,
                          nullptr) != CE_None)
            throw zarr3::Error("reading the source failed");
        values.Convert(buf.data(), static_cast<size_t>(W) * static_cast<size_t>(h));
    }
}

} // namespace zarr3drv
