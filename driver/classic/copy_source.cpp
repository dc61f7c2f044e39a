// A classic copy's source array and region (copy_source.hpp).
#include "classic/copy_source.hpp"

#include "classic/raster_dataset.hpp"

#include "cpl_minixml.h"
#include "cpl_string.h"

#include <cstring>

namespace zarr3drv {
namespace {

// One band's source window: file, band, source offset and size (destination at 0,0, same size).
struct BandWindow {
    std::string file;
    int band = 0;
    int x = 0, y = 0, w = 0, h = 0;
};

// The window of a VRTRasterBand holding exactly one unscaled source copied pixel for pixel.
std::optional<BandWindow> WindowOf(const CPLXMLNode* band, int width, int height) {
    const CPLXMLNode* source = nullptr;
    for (const CPLXMLNode* c = band->psChild; c; c = c->psNext) {
        if (c->eType != CXT_Element) continue;
        if (EQUAL(c->pszValue, "SimpleSource") || EQUAL(c->pszValue, "ComplexSource")) {
            if (source) return std::nullopt;
            source = c;
        }
    }
    if (!source) return std::nullopt;
    for (const char* scaled :
         {"ScaleOffset", "ScaleRatio", "LUT", "Exponent", "ColorTableComponent"})
        if (CPLGetXMLNode(source, scaled)) return std::nullopt;
    BandWindow win;
    win.file = CPLGetXMLValue(source, "SourceFilename", "");
    win.band = atoi(CPLGetXMLValue(source, "SourceBand", "0"));
    win.x = atoi(CPLGetXMLValue(source, "SrcRect.xOff", "-1"));
    win.y = atoi(CPLGetXMLValue(source, "SrcRect.yOff", "-1"));
    win.w = atoi(CPLGetXMLValue(source, "SrcRect.xSize", "0"));
    win.h = atoi(CPLGetXMLValue(source, "SrcRect.ySize", "0"));
    const bool same = win.w == width && win.h == height &&
                      atoi(CPLGetXMLValue(source, "DstRect.xOff", "-1")) == 0 &&
                      atoi(CPLGetXMLValue(source, "DstRect.yOff", "-1")) == 0 &&
                      atoi(CPLGetXMLValue(source, "DstRect.xSize", "0")) == width &&
                      atoi(CPLGetXMLValue(source, "DstRect.ySize", "0")) == height;
    if (!same || win.file.empty() || win.band < 1 || win.x < 0 || win.y < 0) return std::nullopt;
    return win;
}

// The bands of a VRT as one window of consecutive bands of one file (the first band's window).
std::optional<BandWindow> VRTWindow(GDALDataset* src, int& nbands) {
    CSLConstList xml = src->GetMetadata("xml:VRT"); // char** before GDAL 3.13
    if (!xml || !xml[0]) return std::nullopt;
    std::unique_ptr<CPLXMLNode, decltype(&CPLDestroyXMLNode)> root(CPLParseXMLString(xml[0]),
                                                                   CPLDestroyXMLNode);
    const CPLXMLNode* ds = root ? CPLGetXMLNode(root.get(), "=VRTDataset") : nullptr;
    if (!ds) return std::nullopt;
    std::optional<BandWindow> first;
    nbands = 0;
    for (const CPLXMLNode* c = ds->psChild; c; c = c->psNext) {
        if (c->eType != CXT_Element || !EQUAL(c->pszValue, "VRTRasterBand")) continue;
        if (CPLGetXMLNode(c, "subClass")) return std::nullopt; // derived, warped, ...
        auto w = WindowOf(c, src->GetRasterXSize(), src->GetRasterYSize());
        if (!w) return std::nullopt;
        if (!first)
            first = w;
        else if (w->file != first->file || w->band != first->band + nbands || w->x != first->x ||
                 w->y != first->y)
            return std::nullopt;
        ++nbands;
    }
    return nbands == src->GetRasterCount() ? first : std::nullopt;
}

// The dataset gdal_translate made a VRT over, opened with this plugin (closed at the end of the
// copy, the array held by the CopySource).
std::optional<CopySource> FromVRT(GDALDataset* src) {
    if (!src->GetDriver() || !EQUAL(src->GetDriver()->GetDescription(), "VRT")) return std::nullopt;
    int nbands = 0;
    const auto win = VRTWindow(src, nbands);
    if (!win) return std::nullopt;
    const char* const drivers[] = {"Zarr3", nullptr};
    CPLErrorHandlerPusher quiet(CPLQuietErrorHandler);
    CPLErrorStateBackuper keep;
    struct Closer {
        void operator()(GDALDataset* d) const { GDALClose(GDALDataset::ToHandle(d)); }
    };
    std::unique_ptr<GDALDataset, Closer> under(GDALDataset::FromHandle(GDALOpenEx(
        win->file.c_str(), GDAL_OF_RASTER | GDAL_OF_READONLY, drivers, nullptr, nullptr)));
    auto* z = dynamic_cast<Zarr3RasterDataset*>(under.get());
    auto array = z ? z->ClassicOrderArray() : nullptr;
    if (!array) return std::nullopt;
    CopySource out{z->store(), array, {}};
    const auto u = [](int v) { return static_cast<uint64_t>(v); };
    if (array->metadata().rank() == 3) {
        if (nbands > 1 || array->metadata().shape[0] == 1)
            out.ranges.push_back({u(win->band - 1), u(win->band - 1 + nbands)});
        else
            return std::nullopt; // one band of many: the copy is 2-D
    }
    out.ranges.push_back({u(win->y), u(win->y + win->h)});
    out.ranges.push_back({u(win->x), u(win->x + win->w)});
    return out;
}

} // namespace

std::optional<CopySource> FindCopySource(GDALDataset* src, CSLConstList options) {
    if (CSLFetchNameValue(options, "APPEND_DIM")) return std::nullopt;
    if (auto* z = dynamic_cast<Zarr3RasterDataset*>(src)) {
        auto array = z->ClassicOrderArray();
        if (!array) return std::nullopt;
        CopySource out{z->store(), array, {}};
        for (uint64_t n : array->metadata().shape)
            out.ranges.push_back({0, n});
        return out;
    }
    return FromVRT(src);
}

} // namespace zarr3drv
