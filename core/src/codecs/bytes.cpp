// The `bytes` array->bytes codec (legacy name `endian`): element bytes in
// little- or big-endian order.
#include "codecs/codecs_internal.hpp"

#include <cstring>

namespace zarr3::codecs {
namespace {

template <typename T> void swap_copy_t(uint8_t* dst, const uint8_t* src, uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) {
        T v;
        std::memcpy(&v, src + i * sizeof(T), sizeof(T));
        if constexpr (sizeof(T) == 2)
            v = __builtin_bswap16(v);
        else if constexpr (sizeof(T) == 4)
            v = __builtin_bswap32(v);
        else
            v = __builtin_bswap64(v);
        std::memcpy(dst + i * sizeof(T), &v, sizeof(T));
    }
}

// Copies `nbytes` bytes reversing every `unit`-byte group. dst may equal src.
void swap_copy(uint8_t* dst, const uint8_t* src, uint64_t nbytes, uint32_t unit) {
    uint64_t n = nbytes / unit;
    switch (unit) {
    case 2:
        swap_copy_t<uint16_t>(dst, src, n);
        return;
    case 4:
        swap_copy_t<uint32_t>(dst, src, n);
        return;
    case 8:
        swap_copy_t<uint64_t>(dst, src, n);
        return;
    default:
        for (uint64_t i = 0; i < n; ++i) {
            uint8_t* d = dst + i * unit;
            const uint8_t* s = src + i * unit;
            for (uint32_t a = 0, b = unit - 1; a < b; ++a, --b) {
                uint8_t x = s[a];
                d[a] = s[b];
                d[b] = x;
            }
        }
    }
}

class BytesCodec : public ArrayToBytesCodec {
  public:
    BytesCodec(std::optional<bool> big, std::string where) : big_(big), where_(std::move(where)) {}

    std::string name() const override { return "bytes"; }

    Bytes encode(ByteView decoded, const ChunkSpec& spec) const override {
        Bytes out;
        encode_into(decoded, spec, out);
        return out;
    }

    void encode_into(ByteView decoded, const ChunkSpec& spec, Bytes& out) const override {
        uint64_t n = spec.num_bytes();
        if (decoded.size() != n)
            throw Error(prefix(where_, "bytes") + "encode got " + std::to_string(decoded.size()) +
                        " bytes for a chunk of " + std::to_string(n) + " bytes");
        out.resize(n);
        if (needs_swap(spec))
            swap_copy(out.data(), decoded.data(), n, spec.dtype.swap_unit);
        else if (n)
            std::memcpy(out.data(), decoded.data(), n);
    }

    void decode(ByteView encoded, const ChunkSpec& spec, uint8_t* out) const override {
        uint64_t n = spec.num_bytes();
        if (encoded.size() != n)
            throw FormatError("bytes codec: encoded chunk has " + std::to_string(encoded.size()) +
                              " bytes, expected " + std::to_string(n) + " (shape x " +
                              spec.dtype.name + ")");
        if (needs_swap(spec))
            swap_copy(out, encoded.data(), n, spec.dtype.swap_unit);
        else if (n)
            std::memcpy(out, encoded.data(), n);
    }

    std::optional<uint64_t> encoded_size(const ChunkSpec& spec) const override {
        return spec.num_bytes();
    }

    bool is_plain_copy(const ChunkSpec& spec) const override { return !needs_swap(spec); }

    nlohmann::json to_json() const override {
        return {{"name", "bytes"},
                {"configuration", {{"endian", big_.value_or(false) ? "big" : "little"}}}};
    }

  private:
    bool needs_swap(const ChunkSpec& spec) const {
        return big_.value_or(false) && spec.dtype.swap_unit > 1;
    }
    std::optional<bool> big_;
    std::string where_;
};

} // namespace

std::shared_ptr<ArrayToBytesCodec> make_bytes(const nlohmann::json& config, const ChunkSpec& spec,
                                              const std::string& where) {
    auto obj = config_object(config, "bytes", where, {"endian"});
    std::optional<bool> big;
    if (obj.contains("endian")) {
        big = get_choice(obj, "endian", "bytes", where, {"little", "big"}, std::nullopt) == "big";
    } else if (spec.dtype.size != 1 && spec.dtype.kind != DTypeKind::Raw) {
        throw FormatError(prefix(where, "bytes") +
                          "configuration member \"endian\" (\"little\" or \"big\") is required "
                          "for data type " +
                          spec.dtype.name);
    }
    return std::make_shared<BytesCodec>(big, where);
}

} // namespace zarr3::codecs
