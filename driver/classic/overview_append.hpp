// Appends and overviews (issue 40.6): an append along the first axis of an
// array that is the base of a multiscales pyramid extends every level of the
// pyramid in the same append (the same lock; in a repository, the same
// commit), each level's new steps computed from the base's new steps with
// the level's recorded resampling, as gdaladdo computes them. A pyramid that
// cannot be extended (a level of unknown resampling, a stale level, a level
// that does not match the base) is removed in the same step instead, with a
// warning naming the level and why.
#pragma once

#include "classic/raster_overviews.hpp"

#include "zarr3/array.hpp"
#include "zarr3/store.hpp"

#include "gdal_priv.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace zarr3drv {

class AppendedOverviews {
  public:
    // The pyramid of `base` (its zarr.json as read under its lock, before an
    // append of `n` steps at its end), read now. Nothing is written.
    AppendedOverviews(std::shared_ptr<zarr3::Store> store, const zarr3::Array& base, uint64_t n);
    // The new steps of every level, computed from `grown` (the base with its
    // new length, its new chunks stored, not switched): chunks past each
    // level's end, invisible until Switch.
    void Write(const std::shared_ptr<zarr3::Array>& grown);
    // Each level's new length, or the pyramid removed with a warning naming
    // the level. Called before the base's switch: a kill in between leaves
    // levels longer than the base, which readers view at the base's length
    // and the next append overwrites.
    void Switch();
    // The chunk keys Write stored (a failed append removes them).
    std::vector<std::string> WrittenKeys() const;

  private:
    struct Level {
        std::shared_ptr<zarr3::Array> grown; // the level with its new length
        std::string method;                  // GDAL's resampling name
    };
    void Plan(const zarr3::Array& base);
    void WriteSteps(GDALDataset& view, const std::vector<size_t>& group, uint64_t b0, uint64_t nb);
    void Remove();

    std::shared_ptr<zarr3::Store> store_;
    std::string base_path_;
    uint64_t start_ = 0, n_ = 0;
    std::optional<PyramidOf> pyr_;
    std::vector<Level> levels_;         // finest first
    std::vector<std::string> accepted_; // level arrays that match the base (removable)
    std::string drop_;                  // non-empty: why the pyramid is removed
};

} // namespace zarr3drv
