// Undoing appends: an array shrunk along its append axis (axis 0), with its
// coordinate array and every level of its multiscales pyramid.
#pragma once

#include "zarr3/array.hpp"
#include "zarr3/store.hpp"

#include <memory>
#include <string>
#include <vector>

namespace zarr3 {

// The metadata of `m` with axis `axis` cut to `length` elements. Refused
// (Error naming `where`) unless 1 <= length < the axis length. A regular
// axis keeps its chunk edge. A rectilinear axis loses the chunks lying
// wholly past `length`; the chunk holding the last element keeps its edge
// (its stored bytes stay valid, the elements past the end are not visible:
// the spec's overhang), and the next append fills it first
// (appended_metadata).
ArrayMetadata trimmed_metadata(const ArrayMetadata& m, size_t axis, uint64_t length,
                               const std::string& where);

// The array paths of the other levels of the multiscales pyramid whose
// base is the array at `array_path` (the `multiscales` attribute of the
// nearest of its three parent groups listing it; GDAL's layout, a level
// group holding an array named like the base, included). Empty when the
// array is in no pyramid. FormatError for a malformed attribute.
std::vector<std::string> pyramid_levels(Store& store, const std::string& array_path);

struct TrimResult {
    uint64_t old_length = 0, new_length = 0;
    std::vector<std::string> arrays; // every array trimmed, the data array first
    uint64_t erased = 0;             // chunk keys erased
};

// Trims the array at `path` of `store` along axis 0 (named `dim`) to
// `length`, with its pyramid levels and the coordinate array named `dim` (in
// its group or the nearest group above; never shorter than another array of
// that group using the dimension). Under the locks of the data array, its
// levels, then the coordinate (the order of appends). Writes, in order: the
// levels' zarr.json, the data array's (the switch), the coordinate's, then
// erases the chunks lying wholly past the new length: a process killed at
// any step leaves a store that opens with the old or the new length and
// the same values (a coordinate longer than its arrays and chunks past the
// end are what killed appends leave too; the next append overwrites them).
// Consolidated metadata in the groups above is updated. Works on any
// writable store, an Icechunk session included (its erases drop
// references; the caller commits).
TrimResult trim_array(const std::shared_ptr<Store>& store, const std::string& path,
                      const std::string& dim, uint64_t length);

} // namespace zarr3
