// Time-series appends through gdal_translate (-co APPEND_DIM=<dim>
// [-co APPEND_COORD=<value>]): the source's bands become new indices along
// <dim> of the matching array of an existing store, one new chunk per append,
// the coordinate array <dim> extended. Order: chunks, then the coordinate,
// then the data array's zarr.json last (a killed append leaves the array as
// it was; the coordinate may hold values past the array's length, which
// readers of the array ignore and the next append overwrites).
#pragma once

#include "gdal_compat.hpp"
#include "gdal_priv.h"

#include "zarr3/store.hpp"

#include <memory>
#include <string>

namespace zarr3drv {

// APPEND_DIM is set.
bool IsAppendRequest(CSLConstList options);
// APPEND_DIM is set and `name` is an existing store: the copy appends.
bool AppendsToExistingStore(const char* name, CSLConstList options);

// CreateCopy into an existing store with APPEND_DIM. nullptr with a CPLError
// naming the store and the problem; the store is then unchanged.
GDALDataset* Zarr3AppendCopy(const char* name, GDALDataset* src, CSLConstList options,
                             GDALProgressFunc progress, void* progress_data);

// The same append into `store` (an Icechunk session, whose commit the caller
// makes: icechunk_append.cpp); `root` names it in errors. The dataset
// returned reads the session.
GDALDataset* Zarr3AppendInto(const std::string& root, std::shared_ptr<zarr3::Store> store,
                             GDALDataset* src, CSLConstList options, GDALProgressFunc progress,
                             void* progress_data);

// A metadata item of the source about its own position along <dim> or
// another band axis, which an append does not copy (the store's coordinate
// dates each step, and the item would contradict it): <dim>, <dim>#units
// (any <dim>#...), DIM_<name>_INDEX, NETCDF_DIM_*; with `value` (dataset
// items) also a date item read as the step's date (TIFFTAG_DATETIME, DATE...).
bool IsSourcePositionItem(const std::string& key, const std::string& dim,
                          const char* value = nullptr);

// What an append adds along <dim>, for a commit message: ": 2024-01-04", or
// ": 2024-01-04 to 2024-01-06 (3 steps)"; "" when the steps have no values.
std::string AppendedStepsText(GDALDataset* src, CSLConstList options);

// The first append (the store does not exist yet), before anything is
// written: the coordinate values (APPEND_COORD or the source's date) parse
// and are strictly increasing (dates) or monotonic (numbers). zarr3::Error.
void CheckFirstAppend(GDALDataset* src, CSLConstList options);

// The first append (the store does not exist yet): writes the coordinate
// array <dim> with the values of the source's bands, if there are values
// (APPEND_COORD or a date in the source's metadata).
void WriteFirstCoordinate(const std::shared_ptr<zarr3::Store>& store, GDALDataset* src,
                          CSLConstList options);

} // namespace zarr3drv
