// Time-series maintenance on one array axis: appending a step (new chunk
// edge, run-length merged), planning new edges (fixed size, calendar months,
// an explicit list), compacting chunks into those edges without a moment
// where a reader sees a mix, and checking every stored chunk.
#pragma once

#include "zarr3/array.hpp"
#include "zarr3/cf_time.hpp"

#include <functional>
#include <string_view>

namespace zarr3 {

// Test hook: when the environment variable ZARR3_TEST_KILL_AT equals `step`,
// the process raises SIGKILL on itself (crash-safety tests); otherwise nothing.
void test_kill_point(const char* step);

// The metadata after appending `n` elements along `axis` as one new chunk
// edge of `n` (merged into the last run when equal). A regular axis whose
// chunks end exactly at the array length becomes an explicit axis (the grid
// becomes rectilinear, other axes written as bare integers). When the last
// chunk reaches past the array (overhang, as a trim inside a chunk leaves
// it), the append fills that chunk first and adds only the rest as a new
// edge. Error naming `where` when `n` is not a multiple of the inner chunk
// edge of a sharded array.
ArrayMetadata appended_metadata(const ArrayMetadata& m, size_t axis, uint64_t n,
                                const std::string& where);

// Edges for an axis of `length` elements.
// Fixed: chunks of `n` (the last one may overhang).
AxisPartition plan_fixed_edges(uint64_t length, uint64_t n);
// One chunk per calendar month of consecutive coordinate values (CF units).
// Error naming `where` (the coordinate) and the first pair out of order
// (indexes and dates) unless the values increase strictly: months of an
// unsorted axis are no runs of consecutive elements.
AxisPartition plan_monthly_edges(const std::vector<double>& values, const CfTimeUnits& units,
                                 const std::string& where = "coordinate");
// A JSON axis entry as in chunk_shapes: a bare integer or a list of edges and
// [edge, count] runs ("[[31,2],28]"). FormatError naming `where`.
AxisPartition parse_edges(std::string_view json, uint64_t length, const std::string& where);

// The metadata of `m` regrouped along `axis` into `edges` (set to the axis
// length), with the chunk key separator toggled ("/" <-> "."): every new
// chunk key differs from every old one, so the new chunks can be written
// while the old metadata still references the old ones. Error naming
// `where` when sharding forbids the edges or the keys cannot be told apart.
ArrayMetadata compacted_metadata(const ArrayMetadata& m, size_t axis, AxisPartition edges,
                                 const std::string& where);

// Chunks per axis that hold array elements (the rest of a run reaching past
// the end is never visited): O(log runs) per axis, whatever the grid says.
Shape chunks_in_extent(const ArrayMetadata& m);

// The stored chunk keys of encoding `enc` under array `path`: only names
// that parse as chunk keys of that encoding for rank bounds.size() ("c/i/j",
// "c.i.j", "i.j" or "i/j", canonical decimals) with every index below its
// bound, and that hold a value (not a folder). Anything else (other files,
// folders that merely look like chunks, another encoding's keys) is left out.
std::vector<std::string> chunk_namespace_keys(Store& store, const std::string& path,
                                              const ChunkKeyEncoding& enc, const Shape& bounds);
// Erases those keys (zarr.json and everything else stay); returns how many.
uint64_t erase_chunk_namespace(Store& store, const std::string& path, const ChunkKeyEncoding& enc,
                               const Shape& bounds);

// Replaces the entry `member` (a path relative to the group) of the inline
// consolidated metadata in the group zarr.json at `group_path` with `node`,
// when the group has consolidated metadata listing it (one atomic put).
// Returns whether the group was rewritten.
bool update_consolidated_entry(Store& store, const std::string& group_path,
                               const std::string& member, const nlohmann::json& node);

struct CompactResult {
    uint64_t old_chunks = 0;
    uint64_t new_chunks = 0;           // chunks of the new grid
    uint64_t kept_chunks = 0;          // of those, the stored object kept (not written again)
    bool unchanged = false;            // the edges were already these: nothing was written
    nlohmann::json old_axis, new_axis; // the axis' chunk_shapes entry before and after
};

// Regroups the chunks of `array` along `axis` into `edges`: (1) removes what
// a killed earlier compaction left in the new key namespace, (2) writes the
// new chunks there, (3) writes zarr.json (the switch: one atomic put),
// (4) removes the old chunks. Killed before (3), the old array is intact;
// after it, the new one is complete. Kill points: compact-chunks,
// compact-meta. Returns counts for the report.
// `after_switch(new metadata)` runs between (3) and (4): the place to update
// consolidated metadata of parent groups while the old chunks still exist.
//
// A chunk of the new grid that covers exactly what an old chunk covers
// (same origin, same edges) holds the same bytes: `link(old key, new key)`,
// when given, makes the new key name the stored object itself (a hard link:
// FileStore::link) and the chunk is not written again; when it returns
// false the chunk is written. Edges that are already the array's (over its
// extent) change nothing: `unchanged`, nothing written, no lock taken.
using ChunkLink = std::function<bool(const std::string& from, const std::string& to)>;
CompactResult compact_array(Array& array, size_t axis, AxisPartition edges,
                            const std::function<void(const ArrayMetadata&)>& after_switch = {},
                            const ChunkLink& link = {});

// The same inside a transaction: `target` is a writable store of the same
// hierarchy whose changes nobody sees before it commits (an Icechunk
// session), `array` is opened on the snapshot it is based on (read-only).
// The node's zarr.json is written with the new grid (same chunk key
// encoding); a chunk of the new grid with the same key, origin and edges as
// an old one keeps its reference (no new object), every other chunk is
// written anew (new objects: nothing is overwritten, readers of the old
// snapshot are undisturbed), and every other reference is erased, so none to
// an old chunk remains; the entries of consolidated metadata in the groups
// above are updated. Edges that are already the array's: `unchanged`,
// nothing staged (no commit to make). No lock, no switch file, no deletion:
// the commit is the switch. Kill point compact-chunks after the chunks.
CompactResult compact_array_into(const Array& array, Store& target, size_t axis,
                                 AxisPartition edges);

// Reads every stored chunk (every inner chunk and the index of a shard),
// checking checksums and shard indexes. Returns one "key: problem" line per
// bad chunk (empty when all are good).
std::vector<std::string> verify_array(const Array& array);

// The stored chunk keys of `array`'s encoding (chunk_namespace_keys, any
// index) past the chunks that hold array elements: what an interrupted write
// (a killed append) left beyond the array's end. Never read; sorted.
std::vector<std::string> chunks_outside_extent(const Array& array);

// The keys of `array`'s chunks that hold only elements at or past `start` on
// axis 0 (what an append from `start` writes; a chunk that also holds
// earlier elements is not among them), in index order. Computed from the
// grid, never listed.
std::vector<std::string> chunk_keys_from(const Array& array, uint64_t start);

// A human-readable grid summary: shape, data type, dimension names, chunk
// grid in run-length form, chunk key encoding, codecs, shard layout, fill.
std::string describe_array(const Array& array);

} // namespace zarr3
