// sharding_indexed: the requests a partial read will make, planned ahead so
// that a reader can fetch them for many shards at once (read_ahead),
// and the shard indexes such a fetch brings back.
#include "codecs/cached_read.hpp"
#include "codecs/sharding/sharding_detail.hpp"

namespace zarr3 {

namespace {

bool same_range(const ByteRange& a, const ByteRange& b) {
    if (a.index() != b.index()) return false;
    if (const auto* s = std::get_if<RangeSuffix>(&a)) return s->length == range_length(b);
    const auto& fa = std::get<RangeFromStart>(a);
    const auto& fb = std::get<RangeFromStart>(b);
    return fa.offset == fb.offset && fa.length == fb.length;
}

} // namespace

std::optional<PlannedRequest>
ShardingCodec::plan_partial(const ByteSource& src, const ChunkSpec& spec, const Region& region,
                            const std::vector<int64_t>& out_strides, const ReadOptions& opt) const {
    const std::string what = src.describe();
    const auto prep = prepare(spec, what);
    bool all = false;
    const auto tasks = detail::plan_inner_reads(prep->chunks_per_shard, inner_shape_, spec.shape,
                                                region, out_strides, &all, what);
    if (tasks.empty()) return std::nullopt;
    // read_partial reads the whole shard, unless through the chunk cache.
    if (all && !(opt.chunk_cache && !src.cache_key().empty())) return PlannedRequest{};
    std::shared_ptr<const ShardIndex> idx;
    if (index_cache_) {
        const std::string cache_key = src.cache_key();
        if (!cache_key.empty()) idx = index_cache_->get(cache_key);
        if (idx && idx->chunks_per_shard != prep->chunks_per_shard) idx.reset();
    }
    if (!idx) return PlannedRequest{{index_range(*prep)}};
    // Inner chunks held decoded are left out, as read_partial leaves them.
    std::vector<bool> skip;
    if (opt.chunk_cache)
        skip = detail::cached_inner_mask(*opt.chunk_cache, src.cache_key(), *idx, tasks,
                                         prep->inner_spec.num_bytes());
    detail::InnerFetch f = detail::plan_inner_fetch(*idx, tasks, opt.coalesce_gap, &skip);
    // No data: read_partial only confirms the cached index (no bytes).
    if (f.ranges.empty()) return std::nullopt;
    return PlannedRequest{std::move(f.ranges)};
}

bool ShardingCodec::absorb_prefetched(const ByteSource& src, const PlannedRequest& request,
                                      const BatchAnswer& answer, const ChunkSpec& spec) const {
    if (!index_cache_ || answer.error || !answer.data || !answer.version.known()) return false;
    const std::string cache_key = src.cache_key();
    if (cache_key.empty()) return false;
    const std::string what = src.describe();
    const auto prep = prepare(spec, what);
    if (request.ranges.size() != 1 || answer.data->size() != 1 ||
        !same_range(request.ranges[0], index_range(*prep)))
        return false;
    try {
        auto parsed = parse_index((*answer.data)[0], prep->chunks_per_shard, answer.total, what);
        parsed->version = answer.version;
        index_cache_->put(cache_key, std::move(parsed));
    } catch (const Error&) {
        return false; // read_partial meets the same index and reports it
    }
    return true;
}

} // namespace zarr3
