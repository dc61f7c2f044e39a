// Classic raster mode: which array a name opens (one raster, or the list of
// the hierarchy's raster arrays as subdatasets).
#include "classic/raster_dataset.hpp"

#include "classic/raster_overviews.hpp"
#include "error_boundary.hpp"
#include "limits.hpp"
#include "mapping/gdal_types.hpp"
#include "multidim/md_group.hpp"
#include "storage/consolidation.hpp"
#include "storage/store_adapters.hpp"
#include "storage/vsi_store.hpp"
#include "zarr3_driver.hpp"

#include "zarr3/consolidated.hpp"
#include "zarr3/hierarchy.hpp"
#include "zarr3/icechunk.hpp"

#include "cpl_string.h"
#include "text_util.hpp"

#include <algorithm>
#include <cctype>

namespace zarr3drv {
namespace {

constexpr size_t kMaxSubdatasets = 10000;

// Arrays that describe other arrays rather than hold data.
bool IsAuxiliaryName(const std::string& name) {
    static const char* names[] = {"lat",  "lon", "latitude",    "longitude", "x",   "y",
                                  "time", "crs", "spatial_ref", "band",      "bnds"};
    const std::string n = Lower(zarr3::base_name(name));
    for (const char* a : names)
        if (n == a) return true;
    return false;
}

struct ArrayEntry {
    std::string path;
    zarr3::ArrayMetadata meta;
};

std::string Describe(const zarr3::ArrayMetadata& meta, const std::string& node) {
    std::string shape;
    for (size_t i = 0; i < meta.shape.size(); ++i)
        shape += (i ? "x" : "") + std::to_string(meta.shape[i]);
    return "[" + shape + "] /" + node + " (" + meta.dtype.name + ")";
}

// Arrays of the hierarchy under `top` (zarr3::walk_hierarchy: depth first,
// stopped at symbolic link cycles, kMaxWalkDepth and the node budget with a
// warning), at most kMaxSubdatasets. `per_node_requests`: WalkBudgetFor.
std::vector<ArrayEntry> WalkArrays(const zarr3::Group& top, bool per_node_requests) {
    std::vector<ArrayEntry> out;
    const std::string uri = top.store()->uri();
    auto visit = WalkVisitorFor(uri);
    visit.array = [&](const zarr3::Group& g, const std::string& name) {
        auto a = g.open_array(name);
        out.push_back({a->path(), a->metadata()});
        return out.size() < kMaxSubdatasets;
    };
    auto budget = WalkBudgetFor(uri, per_node_requests);
    zarr3::walk_hierarchy(top, budget, visit);
    return out;
}

// A remote group in which no array was found and without consolidated metadata: most likely
// a store that cannot be listed (HTTP; an object store without list permission), which
// hides every array. Warns naming the group and the ways to open its arrays.
void WarnUnlistedRemoteGroup(const zarr3::Store& store, const std::string& node,
                             const nlohmann::json& group_json) {
    if (!IsRemoteVSIPath(store.uri()) || zarr3::has_consolidated(group_json)) return;
    const std::string group = store.uri() + (node.empty() ? "" : "/" + node);
    CPLError(CE_Warning, CPLE_AppDefined,
             "%s: no array found in this group, which has no consolidated metadata; a store "
             "served over HTTP (or an object store without list permission) cannot be listed. "
             "Open an array by name (ZARR3:\"%s\":/%s), or write the store with consolidated "
             "metadata (CREATE_CONSOLIDATED_METADATA=YES, the default of this plugin's writes)",
             group.c_str(), store.uri().c_str(),
             node.empty() ? "array" : (node + "/array").c_str());
}

CPLStringList SubdatasetList(const OpenTarget& target, const std::vector<ArrayEntry>& arrays) {
    CPLStringList md;
    int n = 0;
    for (const auto& a : arrays) {
        ++n;
        md.SetNameValue(CPLSPrintf("SUBDATASET_%d_NAME", n),
                        SubdatasetName(target.root, a.path, target.version_query).c_str());
        md.SetNameValue(CPLSPrintf("SUBDATASET_%d_DESC", n), Describe(a.meta, a.path).c_str());
    }
    return md;
}

bool IsRasterCandidate(const ArrayEntry& a) {
    return a.meta.rank() >= 2 && a.meta.rank() <= 4 && !IsAuxiliaryName(a.path) &&
           GDALTypeFor(a.meta.dtype) != GDT_Unknown &&
           std::all_of(a.meta.shape.begin(), a.meta.shape.end(), [](uint64_t n) { return n > 0; });
}

class SubdatasetListDataset final : public GDALDataset {};

} // namespace
} // namespace zarr3drv

GDALDataset* Zarr3OpenClassic(GDALOpenInfo* poOpenInfo, std::shared_ptr<zarr3::Store> store,
                              const zarr3drv::OpenTarget& target) {
    using namespace zarr3drv;
    const bool update = poOpenInfo->eAccess == GA_Update;
    const std::string node = target.has_array ? target.array_path : std::string();
    const std::string where = store->uri() + "/" + zarr3::join_key(node, "zarr.json");
    std::unique_ptr<GDALDataset> ds;
    ErrorBoundary(where, [&] {
        if (!node.empty()) zarr3::validate_key(node);
        auto j = zarr3::read_node_json(*store, node);
        if (!j) throw zarr3::Error(where + ": not found");
        std::vector<ArrayEntry> arrays;
        std::shared_ptr<zarr3::Array> chosen;
        if (zarr3::node_type_of(*j, where) == zarr3::NodeType::Array) {
            auto meta = zarr3::parse_array_metadata(*j, where);
            arrays.push_back({node, meta});
            const bool usable = meta.rank() >= 1 && GDALTypeFor(meta.dtype) != GDT_Unknown;
            if (usable || target.has_array) chosen = zarr3::Array::open(store, node, meta);
        } else {
            // A node whose zarr.json does not parse is skipped with a warning.
            const auto listing = MakeListingStore(store);
            const auto top = zarr3::Group::open(AsStore(listing), node);
            WarnInvalidConsolidatedKeys(*top); // as the multidimensional open does
            // An Icechunk snapshot holds every node's metadata: no request per node.
            const bool snapshot =
                dynamic_cast<const zarr3::icechunk::IcechunkStore*>(store.get()) != nullptr;
            arrays = WalkArrays(*top, !snapshot);
            if (arrays.empty() && !snapshot) WarnUnlistedRemoteGroup(*store, node, *j);
            // Rasters only: coordinate (1-D) and auxiliary arrays are no
            // subdatasets, as in GDAL's own driver.
            // Coarser levels of a multiscales pyramid are overviews of its base.
            std::vector<std::string> paths;
            for (const auto& a : arrays)
                paths.push_back(a.path);
            const auto levels = CoarserPyramidLevels(*store, paths);
            std::erase_if(arrays, [&](const ArrayEntry& a) {
                return !IsRasterCandidate(a) || levels.count(a.path) > 0;
            });
            // Nothing else to show: the broken node was the data; an error.
            if (arrays.empty() && !SkippedNodes(*listing).empty())
                throw zarr3::Error(
                    where + ": no data array could be read: " + SkippedNodes(*listing).front());
            if (arrays.size() == 1)
                chosen = zarr3::Array::open(store, arrays[0].path, arrays[0].meta);
        }
        if (chosen) {
            ds = Zarr3RasterDataset::Open(store, chosen, update);
        } else {
            if (update)
                throw zarr3::Error(where + ": no single data array to update; open one of its "
                                           "subdatasets (ZARR3:\"path\":/array) in update mode");
            ds = std::make_unique<SubdatasetListDataset>();
        }
        // A dataset that is one raster lists no subdatasets (not even itself).
        const CPLStringList md = chosen ? CPLStringList() : SubdatasetList(target, arrays);
        if (!md.empty()) ds->SetMetadata(AsMetadataList(md.List()), "SUBDATASETS");
    });
    if (!ds) return nullptr;
    ds->SetDescription(poOpenInfo->pszFilename);
    return ds.release();
}
