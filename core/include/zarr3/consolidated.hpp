// Inline consolidated metadata, as zarr-python 3 writes it: the root group's zarr.json
// carries {"consolidated_metadata": {"kind": "inline", "must_understand": false,
// "metadata": {"<path>": <that node's zarr.json>, ...}}} for every node below the root
// (paths relative to the root, "/"-separated). Reading is metadata.cpp's
// (GroupMetadata::consolidated); this writes it and keeps it current.
#pragma once

#include "zarr3/store.hpp"

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

namespace zarr3 {

// Every node below the root, path -> zarr.json (nested groups without their own
// consolidated_metadata). Unreadable nodes are left out. Error past kMaxConsolidatedNodes.
// `known`: the path of a node known to be stored ("" for none); an Error when the listing
// does not show it (a store refusing listings, such as an S3 bucket without list permission,
// lists nothing: its consolidated metadata would hide every node).
nlohmann::json collect_consolidated(Store& store, const std::string& known = {});
// The Error collect_consolidated throws when the listing does not show `known`.
class ListingRefused : public Error {
  public:
    using Error::Error;
};
// Rewrites the root group's zarr.json with consolidated metadata of the current hierarchy
// (`known`: as for collect_consolidated; nothing is written when it is not listed).
// Error when the root is not a group.
void write_consolidated(Store& store, const std::string& known = {});
// True when `root_json` (a root zarr.json) carries consolidated metadata.
bool has_consolidated(const nlohmann::json& root_json);
// A store that keeps the root's consolidated metadata current: a write of the root
// zarr.json gets the consolidated metadata added, and a write or erase of any other
// node's zarr.json refreshes the root's.
// `on_refused` unset: a listing that does not show a node just stored (ListingRefused) is an
// error of the write. Set: consolidation is then given up instead (consolidation by default,
// not asked for): the root zarr.json is written (or rewritten) without consolidated_metadata,
// `on_refused` is called once with the reason, and later writes are forwarded unchanged.
std::shared_ptr<Store> consolidating_store(std::shared_ptr<Store> inner,
                                           std::function<void(const std::string&)> on_refused = {});

constexpr size_t kMaxConsolidatedNodes = 100000;

} // namespace zarr3
