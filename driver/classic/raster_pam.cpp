// PAM (.aux.xml) of the classic raster view: set up from the dataset name
// (local stores only; one <Subdataset> per array opened by a
// ZARR3:"store":/array name), and filtered when saved. PAM keeps what the
// attributes do not: statistics, histograms, other metadata domains and
// anything set on a dataset opened read-only.
#include "classic/raster_dataset.hpp"
#include "zarr3/icechunk.hpp"

#include "open_target.hpp"
#include "storage/icechunk_commit.hpp"
#include "storage/vsi_store.hpp"

#include "cpl_minixml.h"
#include "cpl_string.h"

#include <algorithm>
#include <functional>

namespace zarr3drv {
namespace {

// An item as PAM serializes it: GDAL splits KEY=VALUE at the first ':' or
// '=' (so "proj:like=a=b" is saved as key "proj", value "like=a=b").
std::pair<std::string, std::string> PamForm(const std::string& key, const std::string& value) {
    const std::string item = key + "=" + value;
    char* k = nullptr;
    const char* v = CPLParseNameValue(item.c_str(), &k);
    std::pair<std::string, std::string> out(k ? k : "", v ? v : "");
    CPLFree(k);
    return out;
}

bool SameAsPam(const std::string& key, const std::string& value, const std::string& pam_key,
               const std::string& pam_value) {
    return PamForm(key, value) == std::make_pair(pam_key, pam_value);
}

bool HasElementChild(const CPLXMLNode* node) {
    for (const CPLXMLNode* c = node ? node->psChild : nullptr; c; c = c->psNext)
        if (c->eType == CXT_Element) return true;
    return false;
}

// Unlinks and destroys the children of `parent` for which `drop` is true.
void RemoveChildrenIf(CPLXMLNode* parent, const std::function<bool(CPLXMLNode*)>& drop) {
    CPLXMLNode* prev = nullptr;
    for (CPLXMLNode* c = parent->psChild; c;) {
        CPLXMLNode* next = c->psNext;
        if (drop(c)) {
            if (prev)
                prev->psNext = next;
            else
                parent->psChild = next;
            c->psNext = nullptr;
            CPLDestroyXMLNode(c);
        } else {
            prev = c;
        }
        c = next;
    }
}

// Removes from the PAM tree `node` the <Metadata> elements whose domain
// `drop_domain` names and the default-domain <MDI> items `drop_item` names;
// <Metadata> elements left empty go too.
void FilterMetadata(CPLXMLNode* node, const std::function<bool(const std::string&)>& drop_domain,
                    const std::function<bool(const std::string&, const std::string&)>& drop_item) {
    RemoveChildrenIf(node, [&](CPLXMLNode* c) {
        if (c->eType != CXT_Element || !EQUAL(c->pszValue, "Metadata")) return false;
        const std::string domain = CPLGetXMLValue(c, "domain", "");
        if (drop_domain(domain)) return true;
        if (!domain.empty()) return false;
        RemoveChildrenIf(c, [&](CPLXMLNode* i) {
            return i->eType == CXT_Element && EQUAL(i->pszValue, "MDI") &&
                   drop_item(CPLGetXMLValue(i, "key", ""), CPLGetXMLValue(i, nullptr, ""));
        });
        return !HasElementChild(c);
    });
}

} // namespace

void Zarr3RasterDataset::SetDescription(const char* name) {
    GDALMajorObject::SetDescription(name);
    if (pam_.set_up || !name || !name[0]) return;
    pam_.set_up = true;
    OpenTarget t;
    CPLPushErrorHandler(CPLQuietErrorHandler);
    const bool ok = ParseOpenTarget(name, t);
    CPLPopErrorHandler();
    // Remote stores: no .aux.xml requests (no GET beside the store).
    // Icechunk repositories: one .aux.xml beside the repository would serve
    // every version of it (statistics of main shown for a tag); none.
    const bool icechunk = IsIcechunkStore(store_.get());
    if (!ok || t.root.empty() || IsRemoteVSIPath(t.root) || icechunk) {
        nPamFlags |= GPF_DISABLED | GPF_NOSAVE;
        return;
    }
    SetPhysicalFilename(t.root.c_str());
    if (t.has_array) SetSubdatasetName(("/" + t.array_path).c_str());
    if (origin_ == Origin::Created) return;
    TryLoadXML();
    VSIStatBufL st;
    const char* pam = BuildPamFilename();
    pam_.file_seen = pam && VSIStatL(pam, &st) == 0;
    // PAM sets each band it lists to its saved description, "" when it saved
    // none (it never saves the description the attributes give).
    for (int b = 1; b <= nBands; ++b) {
        const BandProps& p = band_props_[static_cast<size_t>(b - 1)];
        GDALRasterBand* band = papoBands[b - 1];
        if (band->GetDescription()[0] == '\0') {
            const std::string& shown =
                p.description.empty() ? p.derived_description : p.description;
            band->GDALMajorObject::SetDescription(shown.c_str());
        }
    }
}

CPLXMLNode* Zarr3RasterDataset::SerializeToXML(const char* vrt_path) {
    CPLXMLNode* tree = GDALPamDataset::SerializeToXML(vrt_path);
    if (!tree) return nullptr;
    FilterMetadata(
        tree,
        [](const std::string& d) {
            return d == "ZARR3" || d == kAttributesDomain || d == "SUBDATASETS";
        },
        [&](const std::string& k, const std::string& v) {
            return std::any_of(zarr_md_.begin(), zarr_md_.end(), [&](const auto& kv) {
                return SameAsPam(kv.first, kv.second, k, v);
            });
        });
    // Nothing left: no file (GDAL then removes it). A subdataset keeps an
    // empty entry instead, so the other arrays' entries in the file stay.
    const char* sub = GetSubdatasetName();
    if (!HasElementChild(tree) && !(sub && sub[0])) {
        CPLDestroyXMLNode(tree);
        return nullptr;
    }
    return tree;
}

CPLXMLNode* Zarr3RasterBand::SerializeToXML(const char* vrt_path) {
    CPLXMLNode* tree = GDALPamRasterBand::SerializeToXML(vrt_path);
    if (!tree) return nullptr;
    const BandProps& p = props();
    const std::string shown = p.description.empty() ? p.derived_description : p.description;
    CPLXMLNode* prev = nullptr;
    for (CPLXMLNode* c = tree->psChild; c; prev = c, c = c->psNext)
        if (c->eType == CXT_Element && EQUAL(c->pszValue, "Description") &&
            shown == CPLGetXMLValue(c, nullptr, "")) {
            (prev ? prev->psNext : tree->psChild) = c->psNext;
            c->psNext = nullptr;
            CPLDestroyXMLNode(c);
            break;
        }
    FilterMetadata(
        tree, [](const std::string&) { return false; },
        [&](const std::string& k, const std::string& v) {
            const auto same = [&](const auto& kv) { return SameAsPam(kv.first, kv.second, k, v); };
            return std::any_of(p.derived.begin(), p.derived.end(), same) ||
                   std::any_of(p.metadata.begin(), p.metadata.end(), same);
        });
    if (!HasElementChild(tree)) {
        CPLDestroyXMLNode(tree);
        return nullptr;
    }
    return tree;
}

} // namespace zarr3drv
