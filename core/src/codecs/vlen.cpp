// `string` chunks through a codec chain: transpose (the only array->array codec
// allowed) reorders the elements, vlen-utf8 (or sharding_indexed around it)
// turns them into bytes, bytes->bytes codecs follow.
#include "zarr3/codec.hpp"
#include "zarr3/limits.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace zarr3 {

namespace {

// The element order an array->array codec gives: out[k] is the index in `in`
// of output element k. Found by running the codec on the element indexes
// (uint64) of a chunk of the same shape.
std::vector<uint64_t> element_order(const ArrayToArrayCodec& c, const ChunkSpec& decoded,
                                    bool encoding) {
    ChunkSpec idx_spec{decoded.shape, data_type_from_name("uint64"), Bytes(8, 0)};
    const uint64_t n = decoded.num_elements();
    std::vector<uint64_t> ids(static_cast<size_t>(n));
    std::iota(ids.begin(), ids.end(), uint64_t{0});
    Bytes raw(ids.size() * 8);
    if (!raw.empty()) std::memcpy(raw.data(), ids.data(), raw.size());
    raw = encoding ? c.encode(std::move(raw), idx_spec) : c.decode(std::move(raw), idx_spec);
    if (!raw.empty()) std::memcpy(ids.data(), raw.data(), raw.size());
    return ids;
}

StringChunk reorder(StringChunk in, const std::vector<uint64_t>& order) {
    StringChunk out(in.size());
    for (size_t k = 0; k < order.size(); ++k)
        out[k] = std::move(in[static_cast<size_t>(order[k])]);
    return out;
}

// The chain's string codec; Error naming the array->bytes codec when it has
// none (`what`: "encode" or "decode").
const StringCodec& string_codec(const StringCodec* c, const ArrayToBytesCodec& ab, const char* what,
                                const ChunkSpec& spec) {
    if (!c)
        throw Error("codec \"" + ab.name() + "\" cannot " + what + " data type " + spec.dtype.name);
    return *c;
}

} // namespace

Bytes CodecChain::encode_strings(const StringChunk& values, const ChunkSpec& spec) const {
    if (values.size() != spec.num_elements())
        throw Error("string chunk: got " + std::to_string(values.size()) +
                    " values for a chunk of " + std::to_string(spec.num_elements()));
    Bytes out;
    if (aa_.empty()) {
        out = string_codec(strings_, *ab_, "encode", spec).encode_strings(values, spec);
    } else {
        ChunkSpec cur = spec;
        StringChunk v = values;
        for (const auto& c : aa_) {
            v = reorder(std::move(v), element_order(*c, cur, true));
            cur = c->encoded_spec(cur);
        }
        out = string_codec(strings_, *ab_, "encode", cur).encode_strings(v, cur);
    }
    for (const auto& c : bb_)
        out = c->encode(out);
    return out;
}

StringChunk CodecChain::decode_strings(ByteView encoded, const ChunkSpec& spec) const {
    std::vector<ChunkSpec> specs{spec};
    for (const auto& c : aa_)
        specs.push_back(c->encoded_spec(specs.back()));
    // No exact sizes: each bytes->bytes decoder is bounded by what the
    // codecs after it may produce at most (vlen-utf8: one decoded chunk).
    Bytes holder;
    const ByteView cur = undo_bytes_to_bytes(encoded, specs.back(), holder);
    StringChunk v =
        string_codec(strings_, *ab_, "decode", specs.back()).decode_strings(cur, specs.back());
    for (size_t k = aa_.size(); k-- > 0;)
        v = reorder(std::move(v), element_order(*aa_[k], specs[k], false));
    return v;
}

} // namespace zarr3
