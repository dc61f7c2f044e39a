// sharding_indexed around vlen-utf8: decoding a whole `string` shard (its
// index, then every stored inner chunk through the inner codecs), and reading
// a region of one (the index, then only the inner chunks it needs). The text
// a shard decodes to is counted in bytes against ZARR3_MAX_CHUNK_BYTES.
#include "store/chunk_bounds.hpp"
#include "codecs/sharding/sharding_detail.hpp"
#include "array/string_region.hpp"
#include "zarr3/limits.hpp"

namespace zarr3 {

namespace {

// Bytes of decoded text (and string objects) kept from one shard, checked
// against the decoded-chunk cap as each inner chunk is decoded.
class TextBudget {
  public:
    TextBudget(uint64_t elements, const ChunkSpec& spec, std::string what)
        : spec_(spec), what_(std::move(what)) {
        add(checked_mul(elements, sizeof(std::string), "string shard"));
    }
    void add(uint64_t n) {
        used_ = checked_add(used_, n, "string shard text");
        check_decoded_chunk_size(used_, spec_.shape, what_);
    }

  private:
    const ChunkSpec& spec_;
    std::string what_;
    uint64_t used_ = 0;
};

uint64_t text_bytes(const StringChunk& v) {
    uint64_t n = 0;
    for (const auto& s : v)
        n += s.size();
    return n;
}

} // namespace

StringChunk StringShardingCodec::decode_strings(ByteView encoded, const ChunkSpec& spec) const {
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
    TextBudget budget(n, spec, "sharding_indexed shard of strings");
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
        budget.add(text_bytes(inner));
        for_each_region_element(
            inner_shape_, t.sub, t.out_offset, strides, [&](uint64_t src, int64_t dst) {
                out[static_cast<size_t>(dst)] = std::move(inner[static_cast<size_t>(src)]);
            });
    }
    return out;
}

namespace {

// The tasks of one fetch: consecutive inner chunks whose stored bytes add up
// to at most `cap` (each alone is at most the inner bound, itself <= cap).
std::vector<std::vector<detail::InnerTask>> batches_of(const std::vector<detail::InnerTask>& tasks,
                                                       const ShardIndex& idx, uint64_t cap) {
    std::vector<std::vector<detail::InnerTask>> out(1);
    uint64_t sum = 0;
    for (const auto& t : tasks) {
        const uint64_t nb = idx.empty(t.lin) ? 0 : idx.nbytes(t.lin);
        if (sum + nb > cap && !out.back().empty()) {
            out.emplace_back();
            sum = 0;
        }
        sum += nb;
        out.back().push_back(t);
    }
    return out;
}

} // namespace

bool StringShardingCodec::read_strings_region(ByteSource& src, const ChunkSpec& spec,
                                              const Region& region, std::vector<std::string>& out,
                                              int64_t view_offset,
                                              const std::vector<int64_t>& view_strides) const {
    const std::string what = src.describe();
    const auto prep = prepare(spec, what);
    const Shape& cps = prep->chunks_per_shard;
    bool all = false;
    const auto tasks =
        detail::plan_inner_reads(cps, inner_shape_, spec.shape, region, view_strides, &all, what);
    if (tasks.empty()) return true;
    std::optional<uint64_t> shard_size;
    ObjectVersion version;
    auto got = src.read_ranges({index_range(*prep)}, shard_size, version);
    if (!got) return false;
    if (got->size() != 1)
        throw FormatError("shard " + what + ": store returned " + std::to_string(got->size()) +
                          " ranges for 1 requested");
    const auto idx = parse_index((*got)[0], cps, shard_size, what);
    const uint64_t bound = max_stored_chunk_bytes(inner_, prep->inner_spec);
    for (const auto& t : tasks)
        if (!idx->empty(t.lin) && idx->nbytes(t.lin) > bound)
            throw FormatError("shard " + what + ": index entry of " +
                              detail::inner_chunk_name(cps, t.lin) + " claims " +
                              std::to_string(idx->nbytes(t.lin)) + " bytes, more than the " +
                              std::to_string(bound) +
                              " bytes its codecs can produce (at most the decoded-chunk limit, "
                              "ZARR3_MAX_CHUNK_BYTES); refused before reading");
    TextBudget budget(checked_product(region.count, "region size"), spec,
                      what + " (string shard region)");
    const std::string fill(spec.fill_value.begin(), spec.fill_value.end());
    for (const auto& batch : batches_of(tasks, *idx, max_decoded_chunk_bytes())) {
        const detail::InnerFetch f = detail::plan_inner_fetch(*idx, batch, 0);
        std::vector<Bytes> fetched;
        if (!f.ranges.empty()) {
            std::optional<uint64_t> total;
            ObjectVersion now;
            auto data = src.read_ranges(f.ranges, total, now);
            if (!data) return false;
            if (versions_differ(version, now))
                throw ObjectChanged("shard " + what + " changed while it was read; read again");
            if (data->size() != f.ranges.size())
                throw FormatError("shard " + what + ": store returned " +
                                  std::to_string(data->size()) + " ranges for " +
                                  std::to_string(f.ranges.size()) + " requested");
            fetched = std::move(*data);
        }
        std::vector<std::optional<ByteView>> enc(batch.size());
        for (size_t w = 0; w < f.wanted.size(); ++w) {
            const auto [r, off] = f.placement[w];
            if (off + f.wanted[w].nbytes > fetched[r].size())
                throw FormatError("shard " + what + " is truncated: a range returned " +
                                  std::to_string(fetched[r].size()) + " bytes");
            enc[f.wanted_task[w]] = ByteView(fetched[r]).subspan(off, f.wanted[w].nbytes);
        }
        for (size_t i = 0; i < batch.size(); ++i) {
            const auto& t = batch[i];
            const int64_t at = view_offset + t.out_offset;
            if (!enc[i]) {
                for_each_region_element(inner_shape_, t.sub, at, view_strides,
                                        [&](uint64_t, int64_t dst) { out[size_t(dst)] = fill; });
                continue;
            }
            StringChunk inner;
            try {
                inner = inner_.decode_strings(*enc[i], prep->inner_spec);
            } catch (const FormatError& e) {
                throw FormatError("shard " + what + " " + detail::inner_chunk_name(cps, t.lin) +
                                  ": " + e.what());
            }
            uint64_t kept = 0;
            for_each_region_element(inner_shape_, t.sub, at, view_strides,
                                    [&](uint64_t s, int64_t dst) {
                                        kept += inner[size_t(s)].size();
                                        out[size_t(dst)] = std::move(inner[size_t(s)]);
                                    });
            budget.add(kept);
        }
    }
    return true;
}

} // namespace zarr3
