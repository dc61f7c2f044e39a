// The life cycle of a store folder: a copy into a new store (gdal_translate,
// gdalmdimtranslate) marks the folder as unfinished until its root zarr.json
// is written, so a folder left by a killed copy has no zarr.json and does not
// open; Identify still recognises such an incomplete store (marked, or, for
// folders left without the mark, holding nothing but Zarr store content), so
// that Driver.Delete / `gdalmanage delete` remove it and a re-run to the same
// name replaces it. Deleting removes only what a Zarr store contains and
// refuses folders holding anything else, naming those files.
#pragma once

#include "cpl_error.h"

#include <set>
#include <string>
#include <vector>

namespace zarr3drv {

// Writes the mark ("<root>/.zarr3-unfinished", holding this host and pid).
// The store folder a Create/CreateCopy target names (a trailing /zarr.json
// and slashes removed).
std::string StoreRoot(const char* name);

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

// What a folder holds, as far as deleting or replacing it is concerned.
struct FolderScan {
    enum class Kind {
        Missing,    // nothing there
        NotFolder,  // a file (or another non-folder)
        Empty,      // an empty folder
        Store,      // a root zarr.json and only store content
        Incomplete, // no root zarr.json, only store content (a killed copy)
        NoStore,    // only empty folders: no zarr.json, no chunk
        Foreign,    // holds something a Zarr store does not
    };
    Kind kind = Kind::Missing;
    bool marked = false;              // the unfinished mark is there
    std::vector<std::string> foreign; // relative paths (the first few) of foreign entries
    size_t foreign_count = 0;
    std::string nested_store; // a child folder "*.zarr" holding a zarr.json (a store of its own)
};

// Walks the folder `root` (never following symbolic links). `shallow` looks
// only at the mark and the top-level entries (for Identify): a folder
// without the mark is then Incomplete when its entries are store files and
// node folders holding a zarr.json or a "c" folder.
FolderScan ScanFolder(const std::string& root, bool shallow);

// Identify's test for a folder without a root zarr.json.
bool LooksLikeIncompleteStore(const std::string& root);

// A text naming the foreign entries of `scan` ("a.txt, sub/b.dat and 3 more").
std::string ForeignList(const FolderScan& scan);

// Driver.Delete / gdalmanage delete: removes a store (complete or
// incomplete) and the PAM side file "<root>.aux.xml"; refuses anything else
// with an error naming the reason and the fix.
CPLErr DeleteStore(const char* name);

// Before a Create / CreateCopy into `root`: nothing there or an empty folder
// is fine; an incomplete store left by a copy that is not running is
// removed; anything else is refused with an error naming the fix. False
// (error reported) when the target cannot be used.
bool PrepareTarget(const std::string& root);

} // namespace zarr3drv
