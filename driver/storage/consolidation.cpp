// CREATE_CONSOLIDATED_METADATA and keeping consolidated metadata current on update.
#include "storage/consolidation.hpp"

#include "cpl_string.h"
#include "zarr3/array.hpp"
#include "zarr3/array_lock.hpp"
#include "zarr3/consolidated.hpp"

namespace zarr3drv {

Consolidation ConsolidationAsked(CSLConstList options, CSLConstList more) {
    for (CSLConstList list : {options, more})
        if (const char* v = CSLFetchNameValue(list, "CREATE_CONSOLIDATED_METADATA"))
            return CPLTestBool(v) ? Consolidation::Yes : Consolidation::No;
    return Consolidation::ByDefault;
}

std::shared_ptr<zarr3::Store> ConsolidatingIf(std::shared_ptr<zarr3::Store> store,
                                              Consolidation mode) {
    switch (mode) {
    case Consolidation::No:
        return store;
    case Consolidation::Yes:
        return zarr3::consolidating_store(std::move(store));
    case Consolidation::ByDefault:
        break;
    }
    return zarr3::consolidating_store(std::move(store), [](const std::string& why) {
        CPLError(CE_Warning, CPLE_AppDefined,
                 "%s. The store is written without consolidated metadata: readers that cannot "
                 "list it (HTTP) open its arrays by name (ZARR3:\"url\":/array)",
                 why.c_str());
    });
}

std::shared_ptr<zarr3::Store> ConsolidatingIfPresent(std::shared_ptr<zarr3::Store> store) {
    bool present = false;
    try {
        const auto root = zarr3::read_node_json(*store, "");
        present = root && zarr3::has_consolidated(*root);
    } catch (const std::exception&) {
        // an unreadable root is reported by the open itself
    }
    return ConsolidatingIf(std::move(store), present);
}

void RefreshConsolidated(zarr3::Store& store, const std::string& known) {
    const auto lock = zarr3::lock_array(store, "");
    const auto root = zarr3::read_node_json(store, "");
    if (root && zarr3::has_consolidated(*root)) zarr3::write_consolidated(store, known);
}

} // namespace zarr3drv
