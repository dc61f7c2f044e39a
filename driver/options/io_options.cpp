#include "options/io_options.hpp"

#include "cpl_conv.h"
#include "gdal_executor.hpp"
#include "zarr3/sharding.hpp"

#include <cstdlib>

namespace zarr3drv {

zarr3::ReadOptions MakeReadOptions() {
    zarr3::ReadOptions o;
    const char* gap = CPLGetConfigOption("ZARR3_COALESCE_GAP", nullptr);
    if (gap) o.coalesce_gap = std::strtoull(gap, nullptr, 10);
    const char* mb = CPLGetConfigOption("ZARR3_SHARD_INDEX_CACHE_MB", nullptr);
    // The sharding codecs' index cache (process-wide) takes the size asked for.
    if (mb) zarr3::ShardIndexCache::global().set_max_bytes(std::strtoull(mb, nullptr, 10) << 20);
    o.executor = zarr3gdal::make_executor(); // GDAL_NUM_THREADS
    return o;
}

void ConfigureArray(zarr3::Array& array) {
    array.set_read_options(MakeReadOptions());
}

} // namespace zarr3drv
