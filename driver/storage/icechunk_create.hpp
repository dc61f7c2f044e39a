// Creating Icechunk repositories with the driver: `-co ICECHUNK=YES` or an
// `ICECHUNK:` output name. A copy is written straight into a session on the
// branch (every layout the plugin writes: the classic and multidimensional
// copies run over the session as over a folder) and committed as ONE commit
// before CreateCopy returns; an existing repository of that name gets the
// copy as a new commit on top of its history. Create and the
// multidimensional Create give a dataset over a session that commits when it
// closes (icechunk_commit.hpp).
#pragma once

#include "gdal_compat.hpp"
#include "gdal_priv.h"

#include <string>

namespace zarr3drv {

// Whether the output `name` / `options` ask for an Icechunk repository.
bool WantsIcechunk(const char* name, CSLConstList options);

GDALDataset* IcechunkCreateCopy(const char* name, GDALDataset* src, int strict,
                                CSLConstList options, GDALProgressFunc progress,
                                void* progress_data);
GDALDataset* IcechunkCreateMultidim(const char* name, CSLConstList options);
// Create: a raster of the size given replaces what the branch holds; closing
// the dataset commits it (message COMMIT_MESSAGE, default "gdal-zarr3: create").
GDALDataset* IcechunkCreate(const char* name, int xsize, int ysize, int bands, GDALDataType type,
                            CSLConstList options);

// -co APPEND_DIM into an existing repository (icechunk_append.cpp): the
// append (raster_append.cpp) in a session, then ONE commit (message
// COMMIT_MESSAGE, default "gdal-zarr3: append along <dim>"); lost to another
// writer's commit, it is made again on the new tip (at most
// ZARR3_ICECHUNK_APPEND_RETRIES times, default 8).
bool AppendsToRepository(const char* name, CSLConstList options);
GDALDataset* IcechunkAppendCopy(const char* name, GDALDataset* src, CSLConstList options,
                                GDALProgressFunc progress, void* progress_data);

} // namespace zarr3drv
