// sharding_indexed encoding: a whole shard, or an update of a stored shard
// that re-encodes only the inner chunks holding new elements.
#include "array/scratch.hpp"
#include "array/string_region.hpp"
#include "zarr3/sharding.hpp"
#include "zarr3/strided.hpp"

#include <cstring>

namespace zarr3 {

namespace {

// Calls fn(shard_offset, inner_offset, n) for each run of the last axis of
// region `r` (inner chunk `r.count`) of a shard laid out `shard` (C order);
// offsets are element indexes.
template <class Fn> void for_each_row(const Shape& shard, const Region& r, Fn&& fn) {
    const size_t rank = r.rank();
    if (rank == 0) {
        fn(uint64_t(0), uint64_t(0), uint64_t(1));
        return;
    }
    const auto ss = c_strides(shard, 1);
    const uint64_t row = r.count[rank - 1];
    std::vector<uint64_t> idx(rank - 1, 0);
    uint64_t inner_off = 0;
    while (true) {
        int64_t off = static_cast<int64_t>(r.start[rank - 1]);
        for (size_t d = 0; d + 1 < rank; ++d)
            off += static_cast<int64_t>(r.start[d] + idx[d]) * ss[d];
        fn(static_cast<uint64_t>(off), inner_off, row);
        inner_off += row;
        size_t d = rank - 1;
        while (d > 0) {
            --d;
            if (++idx[d] < r.count[d]) break;
            idx[d] = 0;
            if (d == 0) return;
        }
        if (rank == 1) return;
    }
}

struct Coverage {
    bool any = false;
    bool all = true;
};

Coverage coverage(const std::vector<uint8_t>& written, const Shape& shard, const Region& r) {
    Coverage c;
    for_each_row(shard, r, [&](uint64_t off, uint64_t, uint64_t n) {
        for (uint64_t i = 0; i < n; ++i) {
            const bool w = written[off + i] != 0;
            c.any |= w;
            c.all &= w;
        }
    });
    return c;
}

} // namespace

// One shard being encoded into `out`: inner chunks appended in C order, the
// index written last (at the start, into the room kept for it, or appended).
struct ShardingCodec::Encoder {
    const ShardingCodec& codec;
    const ChunkSpec& spec;
    std::shared_ptr<const Prepared> prep;
    Bytes& out;
    std::vector<uint64_t> entries;
    uint64_t stored = 0;

    Encoder(const ShardingCodec& c, const ChunkSpec& s, Bytes& o)
        : codec(c), spec(s), prep(c.prepare(s, "sharding_indexed encode")), out(o),
          entries(2 * prep->inner_chunks, kEmptyEntry) {
        out.clear();
        if (codec.location_ == IndexLocation::Start) out.resize(prep->index_size);
    }

    void append(uint64_t lin, ByteView enc) {
        entries[2 * lin] = out.size();
        entries[2 * lin + 1] = enc.size();
        out.insert(out.end(), enc.begin(), enc.end());
        ++stored;
    }

    // Encodes inner chunk `lin` from `inner` (skipped when all fill value).
    void encode_inner(uint64_t lin, const Bytes& inner, Bytes& scratch) {
        if (all_equal_to(inner, spec.fill_value)) return;
        codec.inner_.encode_into(inner, prep->inner_spec, scratch);
        append(lin, scratch);
    }

    // Region of inner chunk `pos` (chunk coordinates) in the shard.
    Region region(const Shape& pos) const {
        Region r;
        r.count = codec.inner_shape_;
        r.start.resize(pos.size());
        for (size_t a = 0; a < pos.size(); ++a)
            r.start[a] = pos[a] * codec.inner_shape_[a];
        return r;
    }

    // Calls fn(linear index, region) for every inner chunk in C order.
    template <class Fn> void each_inner(Fn&& fn) const {
        const Shape& cps = prep->chunks_per_shard;
        Shape pos(cps.size(), 0);
        for (uint64_t lin = 0; lin < prep->inner_chunks; ++lin) {
            fn(lin, region(pos));
            for (size_t a = cps.size(); a-- > 0;) { // advance the odometer
                if (++pos[a] < cps[a]) break;
                pos[a] = 0;
            }
        }
    }

    void finish() {
        Bytes raw(entries.size() * 8);
        std::memcpy(raw.data(), entries.data(), raw.size()); // host is little-endian
        const Bytes index = codec.index_codecs_.encode(raw, prep->index_spec);
        if (index.size() != prep->index_size)
            throw Error("sharding_indexed encode: index codecs produced " +
                        std::to_string(index.size()) + " bytes, expected " +
                        std::to_string(prep->index_size));
        if (codec.location_ == IndexLocation::Start) {
            if (!index.empty()) std::memcpy(out.data(), index.data(), index.size());
        } else {
            out.insert(out.end(), index.begin(), index.end());
        }
    }
};

Bytes ShardingCodec::encode(ByteView decoded, const ChunkSpec& spec) const {
    Bytes out;
    encode_into(decoded, spec, out);
    return out;
}

void ShardingCodec::encode_into(ByteView decoded, const ChunkSpec& spec, Bytes& out) const {
    if (decoded.size() != spec.num_bytes())
        throw Error("sharding_indexed encode: got " + std::to_string(decoded.size()) +
                    " bytes for a shard of " + std::to_string(spec.num_bytes()));
    encode_view(
        StridedView{const_cast<uint8_t*>(decoded.data()), c_strides(spec.shape, spec.dtype.size)},
        spec, out);
}

uint64_t ShardingCodec::encode_view(const StridedView& shard, const ChunkSpec& spec,
                                    Bytes& out) const {
    if (shard.strides.size() != spec.shape.size())
        throw Error("sharding_indexed encode: a view of rank " +
                    std::to_string(shard.strides.size()) + " for a shard of rank " +
                    std::to_string(spec.shape.size()));
    Encoder e(*this, spec, out);
    const Region whole{Shape(inner_shape_.size(), 0), inner_shape_, {}};
    ScratchLease tmp_lease, enc_lease;
    Bytes& tmp = tmp_lease.get();
    tmp.resize(e.prep->inner_spec.num_bytes());
    e.each_inner([&](uint64_t lin, const Region& r) {
        StridedView at{shard.data, shard.strides};
        for (size_t d = 0; d < r.rank(); ++d)
            at.data += static_cast<int64_t>(r.start[d]) * shard.strides[d];
        copy_region_in(tmp.data(), inner_shape_, spec.dtype.size, whole, at);
        e.encode_inner(lin, tmp, enc_lease.get());
    });
    e.finish();
    return e.stored;
}

uint64_t ShardingCodec::encode_update(ByteView decoded, const ChunkSpec& spec, const Update& update,
                                      Bytes& out) const {
    if (decoded.size() != spec.num_bytes() || update.written.size() != spec.num_elements())
        throw Error("sharding_indexed encode: update sizes do not match the shard");
    Encoder e(*this, spec, out);
    const uint64_t isz = e.prep->index_size;
    if (update.stored.size() < isz)
        throw FormatError(update.what + ": stored shard of " +
                          std::to_string(update.stored.size()) +
                          " bytes is shorter than its index (" + std::to_string(isz) + " bytes)");
    const ByteView index_bytes =
        location_ == IndexLocation::Start ? update.stored.first(isz) : update.stored.last(isz);
    const auto old =
        parse_index(index_bytes, e.prep->chunks_per_shard, update.stored.size(), update.what);
    const size_t elem = spec.dtype.size;
    const auto inner_strides = c_strides(inner_shape_, elem);
    ScratchLease tmp_lease, old_lease, enc_lease;
    Bytes& tmp = tmp_lease.get();
    Bytes& prev = old_lease.get();
    tmp.resize(e.prep->inner_spec.num_bytes());
    e.each_inner([&](uint64_t lin, const Region& r) {
        const Coverage c = coverage(update.written, spec.shape, r);
        if (!c.any) { // untouched: its stored bytes, as they are
            if (!old->empty(lin))
                e.append(lin, update.stored.subspan(old->offset(lin), old->nbytes(lin)));
            return;
        }
        copy_region_out(decoded.data(), spec.shape, elem, r,
                        StridedView{tmp.data(), inner_strides});
        if (!c.all && !old->empty(lin)) { // unwritten elements from the stored chunk
            prev.resize(tmp.size());
            inner_.decode(update.stored.subspan(old->offset(lin), old->nbytes(lin)),
                          e.prep->inner_spec, prev.data());
            for_each_row(spec.shape, r, [&](uint64_t off, uint64_t in_off, uint64_t n) {
                for (uint64_t i = 0; i < n; ++i)
                    if (!update.written[off + i])
                        std::memcpy(tmp.data() + (in_off + i) * elem,
                                    prev.data() + (in_off + i) * elem, elem);
            });
        }
        e.encode_inner(lin, tmp, enc_lease.get());
    });
    e.finish();
    return e.stored;
}

Bytes StringShardingCodec::encode_strings(const StringChunk& values, const ChunkSpec& spec) const {
    if (values.size() != spec.num_elements())
        throw Error("sharding_indexed encode: got " + std::to_string(values.size()) +
                    " values for a shard of " + std::to_string(spec.num_elements()));
    Bytes out;
    Encoder e(*this, spec, out);
    const std::string fill(spec.fill_value.begin(), spec.fill_value.end());
    const auto inner_strides = c_strides(inner_shape_, 1);
    StringChunk inner(static_cast<size_t>(e.prep->inner_spec.num_elements()));
    e.each_inner([&](uint64_t lin, const Region& r) {
        bool all_fill = true;
        for_each_region_element(spec.shape, r, 0, inner_strides, [&](uint64_t src, int64_t dst) {
            const std::string& v = values[static_cast<size_t>(src)];
            all_fill = all_fill && v == fill;
            inner[static_cast<size_t>(dst)] = v;
        });
        if (!all_fill) e.append(lin, inner_.encode_strings(inner, e.prep->inner_spec));
    });
    e.finish();
    return out;
}

} // namespace zarr3
