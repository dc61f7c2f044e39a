// The `vlen-utf8` array->bytes codec (zarr-python / numcodecs VLenUTF8) of `string`
// arrays: a little-endian uint32 element count, then per element (C order) a
// little-endian uint32 byte length and that many bytes of UTF-8.
#include "codecs/codecs_internal.hpp"
#include "zarr3/limits.hpp"

#include <algorithm>
#include <cstring>

namespace zarr3::codecs {
namespace {

constexpr const char* kName = "vlen-utf8";

uint32_t load_u32(const uint8_t* p) {
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

void store_u32(Bytes& out, uint64_t v) {
    for (int i = 0; i < 4; ++i)
        out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

[[noreturn]] void bad(const std::string& msg) {
    throw FormatError(std::string(kName) + ": " + msg);
}

class VlenUtf8Codec : public ArrayToBytesCodec, public StringCodec {
  public:
    std::string name() const override { return kName; }

    Bytes encode(ByteView, const ChunkSpec& spec) const override {
        throw Error(std::string(kName) + " encodes string arrays only, not " + spec.dtype.name);
    }
    void decode(ByteView, const ChunkSpec& spec, uint8_t*) const override {
        throw Error(std::string(kName) + " decodes string arrays only, not " + spec.dtype.name);
    }
    // The text has no size fixed by the chunk shape: bytes->bytes codecs before
    // this one may produce up to one decoded chunk's worth.
    uint64_t max_encoded_size(const ChunkSpec&) const override {
        return std::min<uint64_t>(max_decoded_chunk_bytes(), kMaxChunkBytes);
    }
    Bytes encode_strings(const StringChunk& values, const ChunkSpec& spec) const override;
    StringChunk decode_strings(ByteView encoded, const ChunkSpec& spec) const override;
    nlohmann::json to_json() const override {
        return {{"name", kName}, {"configuration", nlohmann::json::object()}};
    }
};

Bytes VlenUtf8Codec::encode_strings(const StringChunk& values, const ChunkSpec& spec) const {
    const uint64_t n = spec.num_elements();
    if (values.size() != n)
        throw Error(std::string(kName) + " encode: got " + std::to_string(values.size()) +
                    " values for a chunk of " + std::to_string(n) + " elements");
    if (n > UINT32_MAX) bad("a chunk of " + std::to_string(n) + " elements is over 2^32-1");
    uint64_t total = 4;
    for (size_t i = 0; i < values.size(); ++i) {
        const std::string& v = values[i];
        if (const size_t at = invalid_utf8_at(v); at != std::string::npos)
            throw Error(std::string(kName) + " encode: element " + std::to_string(i) +
                        " is not valid UTF-8 (byte " + std::to_string(at) + ")");
        total += 4 + static_cast<uint64_t>(v.size());
        if (v.size() > UINT32_MAX || total > kMaxChunkBytes)
            throw Error(std::string(kName) + " encode: the chunk's text exceeds " +
                        std::to_string(kMaxChunkBytes) + " bytes");
    }
    Bytes out;
    out.reserve(static_cast<size_t>(total));
    store_u32(out, n);
    for (const std::string& v : values) {
        store_u32(out, v.size());
        out.insert(out.end(), v.begin(), v.end());
    }
    return out;
}

StringChunk VlenUtf8Codec::decode_strings(ByteView encoded, const ChunkSpec& spec) const {
    const uint64_t n = spec.num_elements();
    const uint64_t size = encoded.size();
    if (size < 4) bad("truncated: " + std::to_string(size) + " bytes, no element count");
    const uint32_t count = load_u32(encoded.data());
    if (count != n)
        bad("the chunk holds " + std::to_string(count) + " elements, expected " +
            std::to_string(n) + " (the chunk's shape)");
    // Every element takes at least its 4-byte length: check before allocating.
    if ((size - 4) / 4 < n)
        bad("truncated: " + std::to_string(n) + " elements need at least " +
            std::to_string(4 + 4 * n) + " bytes, got " + std::to_string(size));
    check_decoded_chunk_size(
        checked_add(checked_mul(n, sizeof(std::string), "string chunk"), size, "string chunk"),
        spec.shape, std::string(kName) + " chunk");
    StringChunk out(static_cast<size_t>(n));
    uint64_t pos = 4;
    for (uint64_t i = 0; i < n; ++i) {
        if (size - pos < 4)
            bad("truncated: no length for element " + std::to_string(i) + " at byte " +
                std::to_string(pos));
        const uint32_t len = load_u32(encoded.data() + pos);
        pos += 4;
        if (len > size - pos)
            bad("element " + std::to_string(i) + " has length " + std::to_string(len) +
                ", past the end of the " + std::to_string(size) + "-byte chunk (at byte " +
                std::to_string(pos) + ")");
        std::string& s = out[static_cast<size_t>(i)];
        s.assign(reinterpret_cast<const char*>(encoded.data() + pos), len);
        if (const size_t at = invalid_utf8_at(s); at != std::string::npos)
            bad("element " + std::to_string(i) + " is not valid UTF-8 (byte " + std::to_string(at) +
                " of its " + std::to_string(len) + ")");
        pos += len;
    }
    if (pos != size)
        bad(std::to_string(size - pos) + " bytes after the last of the " + std::to_string(n) +
            " elements");
    return out;
}

} // namespace

std::shared_ptr<ArrayToBytesCodec> make_vlen_utf8(const nlohmann::json& config,
                                                  const std::string& where) {
    config_object(config, kName, where, {});
    return std::make_shared<VlenUtf8Codec>();
}

} // namespace zarr3::codecs
