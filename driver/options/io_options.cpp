#include "options/io_options.hpp"

#include "cpl_conv.h"
#include "gdal.h"
#include "gdal_executor.hpp"
#include "zarr3/sharding.hpp"

#include <cstdlib>
#include <map>
#include <mutex>

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

uint64_t ChunkCacheBound() {
    if (!CPLTestBool(CPLGetConfigOption("ZARR3_CHUNK_CACHE", "YES"))) return 0;
    if (const char* mb = CPLGetConfigOption("ZARR3_CHUNK_CACHE_MB", nullptr))
        return std::strtoull(mb, nullptr, 10) << 20;
    const GIntBig gdal_max = GDALGetCacheMax64();
    return gdal_max > 0 ? static_cast<uint64_t>(gdal_max) / 4 : 0;
}

namespace {

// The store an open built, under the adapters the arrays may be opened over.
zarr3::Store* BaseStore(zarr3::Store& store) {
    zarr3::Store* s = &store;
    while (auto* f = dynamic_cast<zarr3::ForwardingStore*>(s))
        s = f->inner().get();
    return s;
}

} // namespace

std::shared_ptr<zarr3::ChunkCache> DatasetChunkCache(zarr3::Store& store) {
    // A cache lives as long as an array of its dataset holds it (through its
    // read options); an array holds its store, so a live cache's store
    // address is never reused meanwhile.
    static std::mutex mu;
    static std::map<const zarr3::Store*, std::weak_ptr<zarr3::ChunkCache>> caches;
    const uint64_t bound = ChunkCacheBound();
    if (bound == 0) return nullptr;
    const zarr3::Store* base = BaseStore(store);
    std::lock_guard lk(mu);
    for (auto it = caches.begin(); it != caches.end();)
        it = it->second.expired() ? caches.erase(it) : std::next(it);
    if (auto live = caches[base].lock()) return live;
    auto cache = std::make_shared<zarr3::ChunkCache>(bound);
    caches[base] = cache;
    return cache;
}

void ConfigureArray(zarr3::Array& array) {
    zarr3::ReadOptions o = MakeReadOptions();
    o.chunk_cache = DatasetChunkCache(array.store());
    array.set_read_options(std::move(o));
}

} // namespace zarr3drv
