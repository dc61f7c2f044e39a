// Creation options (classic Create/CreateCopy and multidim CreateMDArray) ->
// zarr3::ArrayMetadata. Shared by raster_*.cpp and md_*.cpp.
#pragma once

#include "cpl_string.h"
#include "zarr3/copy_layout.hpp"
#include "zarr3/metadata.hpp"

#include <optional>
#include <string>
#include <vector>

namespace zarr3drv {

struct ArrayCreateRequest {
    zarr3::Shape shape;
    zarr3::DataType dtype;
    std::optional<zarr3::Bytes> fill;         // little-endian element; default 0 / NaN? -> 0
    std::vector<std::string> dimension_names; // empty = none (DIMENSION_NAMES option overrides)
};

// Builds array metadata from creation options through zarr3::ArrayBuilder:
// CHUNK_SHAPES (JSON, one entry per axis: bare integer, or list of integers
// and [edge,count] runs, e.g. [[31,28,31,30],256,256]; the grammar is
// zarr3::ChunkGrid::parse_chunk_shapes; fewer entries than axes pad the
// leading axes with 1, like BLOCKSIZE), BLOCKSIZE (regular, comma separated,
// slowest axis first), SHARD_CHUNK_SHAPE (inner chunk shape; the outer grid
// becomes the shard grid), COMPRESS=NONE|ZSTD|GZIP|BLOSC, ZSTD_LEVEL,
// GZIP_LEVEL, BLOSC_CNAME, BLOSC_CLEVEL, BLOSC_SHUFFLE (NONE|BYTE|BIT as GDAL's
// Zarr driver, or the zarr.json names), DIMENSION_NAMES. Options that the
// chosen COMPRESS ignores are validated, then ignored with a warning.
// Throws zarr3::Error naming the option and the expected form on bad values,
// before anything is written.
zarr3::ArrayMetadata BuildArrayMetadata(const ArrayCreateRequest& req, CSLConstList options);

// The parts of a copy's layout the options name (zarr3::copy_layout keeps the source's others): the
// grid (CHUNK_SHAPES, BLOCKSIZE, BLOCKXSIZE, BLOCKYSIZE), the sharding (SHARD_CHUNK_SHAPE), the
// codecs (COMPRESS and its level options, DISCARD_LSB).
zarr3::CopyOverrides CopyOverridesFrom(CSLConstList options);

} // namespace zarr3drv
