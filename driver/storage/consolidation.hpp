// Consolidated metadata on write (CREATE_CONSOLIDATED_METADATA, as GDAL's Zarr driver
// names it): a store wrapped by zarr3::consolidating_store keeps the root zarr.json's
// consolidated_metadata current through every later metadata write.
#pragma once

#include "cpl_port.h"
#include "zarr3/store.hpp"

#include <memory>

namespace zarr3drv {

// Consolidated metadata of a store the plugin creates: Yes (CREATE_CONSOLIDATED_METADATA=YES:
// a store refusing listings is an error), No (=NO), ByDefault (the option not given: written
// where the store lists what it holds, given up with a warning where it refuses listings).
enum class Consolidation { No, Yes, ByDefault };
// From CREATE_CONSOLIDATED_METADATA in the option lists (the first list that has it).
Consolidation ConsolidationAsked(CSLConstList options, CSLConstList more = nullptr);
// `store` wrapped to keep consolidated metadata current unless `mode` is No.
std::shared_ptr<zarr3::Store> ConsolidatingIf(std::shared_ptr<zarr3::Store> store,
                                              Consolidation mode);
inline std::shared_ptr<zarr3::Store> ConsolidatingIf(std::shared_ptr<zarr3::Store> store,
                                                     bool asked) {
    return ConsolidatingIf(std::move(store), asked ? Consolidation::Yes : Consolidation::No);
}
// Wrapped when the store's root zarr.json already carries consolidated metadata
// (an update open), so that later writes keep it current instead of dropping it.
std::shared_ptr<zarr3::Store> ConsolidatingIfPresent(std::shared_ptr<zarr3::Store> store);
// When the root zarr.json carries consolidated metadata, rewrites it from every
// node's zarr.json as stored now (never from the old consolidated copies),
// under the root's lock (zarr3::lock_array). Call after a write's switch.
// `known`: the path of a node just written, which the listing must show
// (zarr3::write_consolidated; a store refusing listings is an error).
void RefreshConsolidated(zarr3::Store& store, const std::string& known = {});

} // namespace zarr3drv
