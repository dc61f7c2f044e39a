// Replacing an existing local Zarr store by a new one of the same name (a
// re-run of gdal_translate, gdalwarp -overwrite, gdalmdimtranslate): the new
// store is built beside the old one under a hidden sibling name, then the two
// folders are exchanged in one step (Linux renameat2 RENAME_EXCHANGE), and
// the old store, now under the hidden name, is removed with the verified,
// link-safe removal of unfinished_copy.hpp. A failure or a kill before the
// exchange leaves the old store at the name; after it, the new one. Where the
// file system cannot exchange, two renames are used (old aside, new in place)
// and the next creation at that name puts an old store left aside back.
#pragma once

#include <string>

namespace zarr3drv {

// "<parent>/.<name>.zarr3-new": where the new store is built.
std::string StagingName(const std::string& root);
// "<parent>/.<name>.zarr3-old": where the two-rename swap puts the old store.
std::string AsideName(const std::string& root);

// `root` is a complete local Zarr v3 store holding nothing but store content
// and is no symbolic link: a new store may replace it. No error reported.
bool IsReplaceableStore(const std::string& root);

// A swap interrupted between its two renames: the name is missing and the
// old store is aside: put it back (true then). An old store left aside next
// to a store at the name (killed before its removal) is removed. Quiet.
bool RecoverInterruptedSwap(const std::string& root);

// Removes what a killed replacement of `root` left under the hidden names
// (not a running one's, nothing but store content). Quiet; for Delete.
void RemoveReplacementLeftovers(const std::string& root);

// Creates the staging folder of `root` (after removing what an earlier,
// killed replacement left there), marked as an unfinished copy of this
// process, and returns its name; zarr3::Error when it cannot be used (e.g.
// another replacement of the same store is running).
std::string BeginReplacement(const std::string& root);

// Puts the store built at `staging` in place of `root`, then removes the
// old one. zarr3::Error when nothing was swapped (the old store is still at
// `root`, the new one at `staging`); a failure to remove the old store after
// the swap is a warning naming the folder left.
void FinishReplacement(const std::string& root, const std::string& staging);

} // namespace zarr3drv
