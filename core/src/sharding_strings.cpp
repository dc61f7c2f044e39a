// sharding_indexed around vlen-utf8: decoding a whole `string` shard (its
// index, then every stored inner chunk through the inner codecs).
#include "sharding_detail.hpp"
#include "string_region.hpp"
#include "zarr3/limits.hpp"

namespace zarr3 {

StringChunk ShardingCodec::decode_strings(ByteView encoded, const ChunkSpec& spec) const {
    const std::string what = "shard";
    const auto prep = prepare(spec, "sharding_indexed");
    const uint64_t isz = prep->index_size;
    if (encoded.size() < isz)
        throw FormatError(
            "sharding_indexed: shard is truncated: " + std::to_string(encoded.size()) +
            " bytes, smaller than its " + std::to_string(isz) + "-byte index");
    const ByteView enc_index =
        location_ == IndexLocation::Start ? encoded.first(isz) : encoded.last(isz);
    const auto idx = parse_index(enc_index, prep->chunks_per_shard, encoded.size(), what);
    const uint64_t n = spec.num_elements();
    check_decoded_chunk_size(checked_mul(n, sizeof(std::string), "string shard"), spec.shape,
                             "sharding_indexed shard of strings");
    const std::string fill(spec.fill_value.begin(), spec.fill_value.end());
    StringChunk out(static_cast<size_t>(n), fill);
    Region whole;
    whole.start.assign(spec.shape.size(), 0);
    whole.count = spec.shape;
    const auto strides = c_strides(spec.shape, 1);
    bool all = false;
    const auto tasks = detail::plan_inner_reads(prep->chunks_per_shard, inner_shape_, spec.shape,
                                                whole, strides, &all, what);
    for (const auto& t : tasks) {
        if (idx->empty(t.lin)) continue; // fill value
        StringChunk inner;
        try {
            inner = inner_.decode_strings(encoded.subspan(idx->offset(t.lin), idx->nbytes(t.lin)),
                                          prep->inner_spec);
        } catch (const FormatError& e) {
            throw FormatError("sharding_indexed " +
                              detail::inner_chunk_name(prep->chunks_per_shard, t.lin) + ": " +
                              e.what());
        }
        for_each_region_element(
            inner_shape_, t.sub, t.out_offset, strides, [&](uint64_t src, int64_t dst) {
                out[static_cast<size_t>(dst)] = std::move(inner[static_cast<size_t>(src)]);
            });
    }
    return out;
}

} // namespace zarr3
