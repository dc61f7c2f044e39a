// Whole-store copies over the Store interface: every key under a prefix, and
// replacing one store's contents by another's (how the driver turns a plain
// copy into one Icechunk commit).
#pragma once

#include "zarr3/store.hpp"

#include <string>
#include <vector>

namespace zarr3 {

// Every key under `prefix` ("" = the whole store), sorted; a name whose
// listing is empty is a key. At most `max_keys` (Error naming the store
// beyond: a listing is never unbounded).
std::vector<std::string> list_keys(Store& store, const std::string& prefix = "",
                                   size_t max_keys = size_t(1) << 26);

// Makes `to` hold exactly the keys and values of `from`: every key of `from`
// is put (zarr.json documents first, parents before children, then the
// other keys), then the keys of `to` that `from` lacks are erased. Returns the
// number of keys put.
size_t replace_store_contents(Store& from, Store& to);

} // namespace zarr3
