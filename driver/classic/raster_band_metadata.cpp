// Band properties of the classic raster view (PAM: raster_pam.cpp).
//
// Attribute layout (array attributes, readable by any Zarr reader):
//   band_descriptions  ["Red", "Green", "Blue"]      one string per band
//   band_metadata      [{"WAVELENGTH": "665"}, ...]  one object per band
//   scale_factor, add_offset, units                  CF: the value all bands share
//   band_scale_factor, band_add_offset, band_units   one per band, instead of the
//                                                    CF attribute, when bands differ
//   band_color_interpretation ["Red", "Green", ...]  GDAL's names, one per band, when
//                                                    some band is neither Undefined nor Gray
// Bands are numbered as GDAL numbers them (the band axes flattened, slowest
// first). Lists are written only when some band has a value.
#include "classic/raster_dataset.hpp"

#include "mapping/array_mapping.hpp"

#include "cpl_string.h"

#include <algorithm>
#include <functional>

namespace zarr3drv {
namespace {

bool IsStatistics(const char* key) {
    return key && STARTS_WITH(key, "STATISTICS_");
}

std::string ItemText(const nlohmann::json& v) {
    return v.is_string() ? v.get<std::string>() : v.dump();
}

// Splits a KEY=VALUE item at the first '=' (else ':'); false when neither.
bool SplitItem(const char* item, std::string& key, std::string& value) {
    const std::string s = item ? item : "";
    size_t sep = s.find('=');
    if (sep == std::string::npos) sep = s.find(':');
    if (sep == std::string::npos || sep == 0) return false;
    key = s.substr(0, sep);
    value = s.substr(sep + 1);
    return true;
}

} // namespace

// ------------------------------------------------------------------ attributes

void Zarr3RasterDataset::LoadBandProps() {
    const size_t nb = static_cast<size_t>(nBands);
    band_props_.assign(nb, BandProps{});
    const std::string where = array_->describe();
    auto list = [&](const char* key) -> const nlohmann::json* {
        const auto it = attrs_.find(key);
        if (it == attrs_.end()) return nullptr;
        if (it->is_array() && it->size() == nb) return &*it;
        CPLError(CE_Warning, CPLE_AppDefined,
                 "%s: attribute %s ignored: expected a list of %zu values (one per band)",
                 where.c_str(), key, nb);
        return nullptr;
    };
    if (const auto* d = list("band_descriptions"))
        for (size_t i = 0; i < nb; ++i)
            if ((*d)[i].is_string()) band_props_[i].description = (*d)[i].get<std::string>();
    if (const auto* md = list("band_metadata"))
        for (size_t i = 0; i < nb; ++i)
            if ((*md)[i].is_object())
                for (const auto& [k, v] : (*md)[i].items())
                    if (!k.empty() && k.find('=') == std::string::npos)
                        band_props_[i].metadata.emplace_back(k, ItemText(v));
    auto numbers = [&](const char* per_band, const char* cf, std::optional<double> BandProps::*m) {
        if (const auto* l = list(per_band)) {
            for (size_t i = 0; i < nb; ++i)
                if ((*l)[i].is_number()) band_props_[i].*m = (*l)[i].get<double>();
        } else if (const auto v = NumberAttribute(attrs_, cf)) {
            for (auto& p : band_props_)
                p.*m = *v;
        }
    };
    numbers("band_scale_factor", "scale_factor", &BandProps::scale);
    numbers("band_add_offset", "add_offset", &BandProps::offset);
    if (const auto* c = list("band_color_interpretation"))
        for (size_t i = 0; i < nb; ++i)
            if ((*c)[i].is_string())
                band_props_[i].color =
                    GDALGetColorInterpretationByName((*c)[i].get<std::string>().c_str());
    if (const auto* u = list("band_units")) {
        for (size_t i = 0; i < nb; ++i)
            if ((*u)[i].is_string()) band_props_[i].unit = (*u)[i].get<std::string>();
    } else if (const auto it = attrs_.find("units"); it != attrs_.end() && it->is_string()) {
        for (auto& p : band_props_)
            p.unit = it->get<std::string>();
    }
}

// Stored descriptions and items over the derived ones (LoadBandCoordinates),
// except items derived from the coordinates (DIM_<d>_INDEX, <d>, <d>#units,
// NETCDF_DIM_<d>): a stored copy of one (older appends copied the source's)
// would contradict the coordinate.
void Zarr3RasterDataset::ApplyBandProps() {
    for (int b = 1; b <= nBands; ++b) {
        const BandProps& p = band_props_[static_cast<size_t>(b - 1)];
        GDALRasterBand* band = papoBands[b - 1];
        if (!p.description.empty()) band->GDALMajorObject::SetDescription(p.description.c_str());
        for (const auto& [k, v] : p.metadata)
            if (!p.derived.contains(k)) // the coordinates' value wins over a stale copy
                band->GDALMajorObject::SetMetadataItem(k.c_str(), v.c_str());
    }
}

void Zarr3RasterDataset::StoreBandProps() {
    for (const char* k :
         {"band_descriptions", "band_metadata", "scale_factor", "add_offset", "units",
          "band_scale_factor", "band_add_offset", "band_units", "band_color_interpretation"})
        attrs_.erase(k);
    if (band_props_.empty()) return;
    const auto any = [&](auto pred) {
        return std::any_of(band_props_.begin(), band_props_.end(), pred);
    };
    if (any([](const BandProps& p) { return !p.description.empty(); })) {
        auto& l = attrs_["band_descriptions"] = nlohmann::json::array();
        for (const auto& p : band_props_)
            l.push_back(p.description);
    }
    if (any([](const BandProps& p) {
            return p.color != GCI_Undefined && p.color != GCI_GrayIndex;
        })) {
        auto& l = attrs_["band_color_interpretation"] = nlohmann::json::array();
        for (const auto& p : band_props_)
            l.push_back(GDALGetColorInterpretationName(p.color));
    }
    if (any([](const BandProps& p) { return !p.metadata.empty(); })) {
        auto& l = attrs_["band_metadata"] = nlohmann::json::array();
        for (const auto& p : band_props_) {
            nlohmann::json o = nlohmann::json::object();
            for (const auto& [k, v] : p.metadata)
                o[k] = v;
            l.push_back(std::move(o));
        }
    }
    // One CF value when all bands agree, else one per band.
    auto numbers = [&](const char* cf, const char* per_band, std::optional<double> BandProps::*m,
                       double def) {
        const double first = (band_props_[0].*m).value_or(def);
        const bool same = !any([&](const BandProps& p) { return (p.*m).value_or(def) != first; });
        if (same) {
            if (first != def) attrs_[cf] = first;
            return;
        }
        auto& l = attrs_[per_band] = nlohmann::json::array();
        for (const auto& p : band_props_)
            l.push_back((p.*m).value_or(def));
    };
    numbers("scale_factor", "band_scale_factor", &BandProps::scale, 1.0);
    numbers("add_offset", "band_add_offset", &BandProps::offset, 0.0);
    const std::string& u0 = band_props_[0].unit;
    if (!any([&](const BandProps& p) { return p.unit != u0; })) {
        if (!u0.empty()) attrs_["units"] = u0;
    } else {
        auto& l = attrs_["band_units"] = nlohmann::json::array();
        for (const auto& p : band_props_)
            l.push_back(p.unit);
    }
}

// ------------------------------------------------------------------ band setters

void Zarr3RasterBand::SetDescription(const char* d) {
    if (!zds()->update_) {
        GDALPamRasterBand::SetDescription(d);
        return;
    }
    BandProps& p = props();
    const std::string v = d ? d : "";
    // The derived description ("band=0") is shown again, not stored.
    p.description = v == p.derived_description ? std::string() : v;
    GDALMajorObject::SetDescription(p.description.empty() ? p.derived_description.c_str()
                                                          : p.description.c_str());
    zds()->MarkBandsDirty();
}

CPLErr Zarr3RasterBand::SetMetadataItem(const char* name, const char* value, const char* domain) {
    const bool default_domain = domain == nullptr || domain[0] == '\0';
    if (!zds()->update_ || !default_domain || !name || IsStatistics(name))
        return GDALPamRasterBand::SetMetadataItem(name, value, domain);
    BandProps& p = props();
    const std::string key = name;
    if (const auto it = p.derived.find(key); it != p.derived.end()) {
        if (!value || it->second != value)
            CPLError(CE_Warning, CPLE_AppDefined,
                     "%s band %d: metadata item %s not written: it is derived from the band "
                     "axis coordinates",
                     zds()->array_->describe().c_str(), nBand, name);
        return CE_None;
    }
    if (key.find('=') != std::string::npos) {
        CPLError(CE_Warning, CPLE_AppDefined,
                 "%s band %d: metadata item name %s holds '='; not written",
                 zds()->array_->describe().c_str(), nBand, name);
        return CE_None;
    }
    std::erase_if(p.metadata, [&](const auto& kv) { return kv.first == key; });
    if (value) p.metadata.emplace_back(key, value);
    zds()->MarkBandsDirty();
    return GDALMajorObject::SetMetadataItem(name, value, domain);
}

CPLErr Zarr3RasterBand::SetMetadata(MetadataList md, const char* domain) {
    const bool default_domain = domain == nullptr || domain[0] == '\0';
    if (!zds()->update_ || !default_domain) return GDALPamRasterBand::SetMetadata(md, domain);
    // Replaces the stored items; derived items and statistics stay.
    BandProps& p = props();
    for (const auto& [k, v] : p.metadata)
        GDALMajorObject::SetMetadataItem(k.c_str(), nullptr);
    p.metadata.clear();
    zds()->MarkBandsDirty();
    std::string key, value;
    for (CSLConstList i = md; i && *i; ++i) {
        if (!SplitItem(*i, key, value)) {
            CPLError(CE_Warning, CPLE_AppDefined,
                     "%s band %d: metadata item \"%s\" is not KEY=VALUE; not written",
                     zds()->array_->describe().c_str(), nBand, *i);
            continue;
        }
        SetMetadataItem(key.c_str(), value.c_str());
    }
    return CE_None;
}

// ------------------------------------------------------------------ scale/offset/unit

double Zarr3RasterBand::GetOffset(int* success) {
    const auto& v = props().offset;
    if (success) *success = v.has_value();
    return v.value_or(0.0);
}

double Zarr3RasterBand::GetScale(int* success) {
    const auto& v = props().scale;
    if (success) *success = v.has_value();
    return v.value_or(1.0);
}

const char* Zarr3RasterBand::GetUnitType() {
    return props().unit.c_str();
}

CPLErr Zarr3RasterBand::SetOffset(double v) {
    if (!zds()->update_) return GDALRasterBand::SetOffset(v);
    props().offset = v;
    zds()->MarkBandsDirty();
    return CE_None;
}

CPLErr Zarr3RasterBand::SetScale(double v) {
    if (!zds()->update_) return GDALRasterBand::SetScale(v);
    props().scale = v;
    zds()->MarkBandsDirty();
    return CE_None;
}

GDALColorInterp Zarr3RasterBand::GetColorInterpretation() {
    const GDALColorInterp c = props().color;
    return c != GCI_Undefined ? c : GDALPamRasterBand::GetColorInterpretation();
}

// Stored in update mode (a palette index is not: Zarr3 stores no colour table).
CPLErr Zarr3RasterBand::SetColorInterpretation(GDALColorInterp ci) {
    if (!zds()->update_ || ci == GCI_PaletteIndex)
        return GDALPamRasterBand::SetColorInterpretation(ci);
    props().color = ci;
    zds()->MarkBandsDirty();
    return CE_None;
}

CPLErr Zarr3RasterBand::SetUnitType(const char* u) {
    if (!zds()->update_) return GDALRasterBand::SetUnitType(u);
    props().unit = u ? u : "";
    zds()->MarkBandsDirty();
    return CE_None;
}

} // namespace zarr3drv
