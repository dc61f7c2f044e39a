// Chunk grids: regular and rectilinear (run-length encoded per axis).
#pragma once

#include "zarr3/common.hpp"

#include <nlohmann/json.hpp>
#include <string_view>

namespace zarr3 {

// One axis of a chunk grid, kept in run-length form: memory O(runs), lookups
// O(log runs). A regular axis is a single run whose count follows the length.
class AxisPartition {
  public:
    struct Run {
        uint64_t start_element; // first element covered by the run
        uint64_t start_chunk;   // index of the run's first chunk
        uint64_t edge;          // chunk edge length (>= 1)
        uint64_t count;         // number of chunks (>= 1)
    };

    AxisPartition() = default;
    // Regular axis: ceil(length / edge) chunks of `edge`. `bare` marks a
    // rectilinear axis written as a bare integer (round-trips as such).
    static AxisPartition regular(uint64_t edge, uint64_t length, bool bare = false);
    // Explicit edges as (edge, count) pairs; throws Error (naming `where`) on
    // zero edges/counts or overflowing sums.
    static AxisPartition from_runs(const std::vector<std::pair<uint64_t, uint64_t>>& runs,
                                   const std::string& where = "chunk grid");

    bool is_regular() const { return regular_; }
    uint64_t num_chunks() const;
    uint64_t extent() const; // sum of all edges (elements covered, >= length)
    uint64_t length() const { return length_; }
    uint64_t chunk_index(uint64_t element) const; // precondition: element < extent()
    uint64_t chunk_start(uint64_t chunk) const;   // precondition: chunk < num_chunks()
    uint64_t chunk_edge(uint64_t chunk) const;    // full edge, including overhang
    const std::vector<Run>& runs() const { return runs_; }
    uint64_t most_common_edge() const;
    uint64_t max_edge() const;

    // Append `count` chunks of `edge` at the end (merging with the last run).
    void append(uint64_t edge, uint64_t count = 1);
    // Room for `runs` runs (callers bound it by input they already hold).
    void reserve(size_t runs) { runs_.reserve(runs); }
    // Change the array length. Regular axes recompute their chunk count;
    // explicit axes keep every edge and, when growing past extent(), append
    // one edge covering the new elements.
    void set_length(uint64_t length);

    // Compact JSON: a bare integer for a bare/regular axis, otherwise a list of
    // bare integers (count 1) and [edge, count] pairs (count > 1).
    nlohmann::json to_json() const;
    // The same, a regular or bare axis as a list too ([edge] or
    // [[edge, count]], at least one chunk): the form of a rectilinear grid
    // that every known reader parses.
    nlohmann::json to_list_json() const;

  private:
    std::vector<Run> runs_;
    uint64_t length_ = 0;
    bool regular_ = false;
    bool bare_ = false;
    uint64_t edge_ = 0; // edge of a regular/bare axis (kept when it has no chunks)
};

enum class GridKind { Regular, Rectilinear };

class ChunkGrid {
  public:
    ChunkGrid() = default;
    // Parses {"name": "regular"|"rectilinear"|"rectangular", "configuration": ...}
    // against the array shape. Throws FormatError naming `where`.
    static ChunkGrid parse(const nlohmann::json& j, const Shape& shape, const std::string& where);
    // The CHUNK_SHAPES text: a JSON list with one entry per array axis, each
    // a bare integer edge or a list of edges and [edge, count] runs, e.g.
    // "[[31,28,31,30],256,256]" ("[]" for a 0-d array); the same per-axis
    // grammar as a rectilinear grid's chunk_shapes. Every entry a bare
    // integer gives a regular grid, anything else a rectilinear one. Throws
    // FormatError naming `where`, the axis and what was expected. With
    // `pad_leading`, fewer entries than axes are allowed: the missing leading
    // (slowest) axes get chunk edge 1, as GDAL's BLOCKSIZE does for band axes.
    static ChunkGrid parse_chunk_shapes(std::string_view text, const Shape& shape,
                                        const std::string& where, bool pad_leading = false);
    static ChunkGrid make_regular(const Shape& chunk_shape, const Shape& array_shape);
    static ChunkGrid make_rectilinear(std::vector<AxisPartition> axes);

    GridKind kind() const { return kind_; }
    size_t rank() const { return axes_.size(); }
    const AxisPartition& axis(size_t i) const { return axes_[i]; }
    AxisPartition& axis(size_t i) { return axes_[i]; }
    Shape grid_shape() const;                                   // chunks per axis
    Shape chunk_shape(const std::vector<uint64_t>& idx) const;  // full edges of that chunk
    Shape chunk_origin(const std::vector<uint64_t>& idx) const; // first element of that chunk
    void resize(const Shape& new_shape);
    nlohmann::json to_json() const;

  private:
    GridKind kind_ = GridKind::Regular;
    std::vector<AxisPartition> axes_;
};

} // namespace zarr3
