// A copy into a new store (gdal_translate, gdalmdimtranslate) marks the
// folder as unfinished until its root zarr.json is written: a folder left by
// a killed copy has the mark and no zarr.json, so it does not open, and both
// a re-run to the same name and Driver.Delete / gdalmanage delete accept it.
#pragma once

#include <set>
#include <string>

namespace zarr3drv {

// Writes the mark ("<root>/.zarr3-unfinished", holding this host and pid).
void MarkUnfinished(const std::string& root);
// Removes the mark (after the root zarr.json is written).
void ClearUnfinished(const std::string& root);
// The folder has the mark and no zarr.json: what a killed copy leaves.
bool IsUnfinishedCopy(const std::string& root);
// IsUnfinishedCopy, and the copy that left it is not running on this host.
bool IsAbandonedCopy(const std::string& root);
// Removes what a failed copy created: the folder, or, when the folder
// existed before (`folder_existed`), the entries not named in `kept` (what
// was there before). Links are never followed.
void RemoveCreated(const std::string& root, bool folder_existed,
                   const std::set<std::string>& kept = {});
// Names in a folder (without "." and "..").
std::set<std::string> FolderEntries(const std::string& root);

} // namespace zarr3drv
