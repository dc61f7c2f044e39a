// CRC-32C (Castagnoli): SSE4.2 instruction when the CPU has it, slicing-by-8
// tables otherwise; and the crc32c bytes->bytes codec.
#include "codecs/codecs_internal.hpp"

#include <array>
#include <cstring>

namespace zarr3 {
namespace codecs {
namespace {

constexpr uint32_t kPoly = 0x82F63B78u; // reflected Castagnoli polynomial

using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables make_tables() {
    Tables t{};
    for (uint32_t i = 0; i < 256; ++i) {
        uint32_t c = i;
        for (int k = 0; k < 8; ++k)
            c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
        t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
        for (size_t s = 1; s < 8; ++s)
            t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
    return t;
}

constexpr Tables kTables = make_tables();

} // namespace

uint32_t crc32c_portable(ByteView data, uint32_t seed) {
    uint32_t crc = ~seed;
    const uint8_t* p = data.data();
    size_t n = data.size();
    while (n >= 8) {
        uint64_t w;
        std::memcpy(&w, p, 8);
        w ^= crc;
        crc = kTables[7][w & 0xff] ^ kTables[6][(w >> 8) & 0xff] ^ kTables[5][(w >> 16) & 0xff] ^
              kTables[4][(w >> 24) & 0xff] ^ kTables[3][(w >> 32) & 0xff] ^
              kTables[2][(w >> 40) & 0xff] ^ kTables[1][(w >> 48) & 0xff] ^
              kTables[0][(w >> 56) & 0xff];
        p += 8;
        n -= 8;
    }
    while (n--)
        crc = (crc >> 8) ^ kTables[0][(crc ^ *p++) & 0xff];
    return ~crc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
bool crc32c_hw_available() {
    static const bool ok = __builtin_cpu_supports("sse4.2");
    return ok;
}

__attribute__((target("sse4.2"))) uint32_t crc32c_hw(ByteView data, uint32_t seed) {
    uint64_t crc = ~seed;
    const uint8_t* p = data.data();
    size_t n = data.size();
    while (n >= 8) {
        uint64_t w;
        std::memcpy(&w, p, 8);
        crc = __builtin_ia32_crc32di(crc, w);
        p += 8;
        n -= 8;
    }
    uint32_t c = static_cast<uint32_t>(crc);
    while (n--)
        c = __builtin_ia32_crc32qi(c, *p++);
    return ~c;
}
#else
bool crc32c_hw_available() {
    return false;
}
uint32_t crc32c_hw(ByteView data, uint32_t seed) {
    return crc32c_portable(data, seed);
}
#endif

namespace {

class Crc32cCodec : public BytesToBytesCodec {
  public:
    std::string name() const override { return "crc32c"; }
    Bytes encode(ByteView decoded) const override {
        Bytes out(decoded.size() + 4);
        if (!decoded.empty()) std::memcpy(out.data(), decoded.data(), decoded.size());
        uint32_t c = crc32c(decoded);
        std::memcpy(out.data() + decoded.size(), &c, 4); // little-endian host
        return out;
    }
    Bytes decode(ByteView encoded, std::optional<uint64_t> expected,
                 uint64_t max_size) const override {
        if (encoded.size() < 4)
            throw FormatError("crc32c: encoded value of " + std::to_string(encoded.size()) +
                              " bytes is shorter than the 4-byte checksum");
        uint64_t n = encoded.size() - 4;
        if (expected && n != *expected)
            throw FormatError("crc32c: decoded size " + std::to_string(n) + " differs from the " +
                              std::to_string(*expected) + " bytes expected");
        if (n > max_size)
            throw FormatError("crc32c: decoded size " + std::to_string(n) +
                              " exceeds the limit of " + std::to_string(max_size) + " bytes");
        ByteView body = encoded.first(n);
        uint32_t stored;
        std::memcpy(&stored, encoded.data() + n, 4);
        if (crc32c(body) != stored) throw FormatError("crc32c checksum mismatch");
        return Bytes(body.begin(), body.end());
    }
    std::optional<uint64_t> encoded_size(uint64_t n) const override { return n + 4; }
    nlohmann::json to_json() const override { return {{"name", "crc32c"}}; }
};

} // namespace

std::shared_ptr<BytesToBytesCodec> make_crc32c(const nlohmann::json& config,
                                               const std::string& where) {
    config_object(config, "crc32c", where, {});
    return std::make_shared<Crc32cCodec>();
}

} // namespace codecs

uint32_t crc32c(ByteView data, uint32_t seed) {
    if (codecs::crc32c_hw_available()) return codecs::crc32c_hw(data, seed);
    return codecs::crc32c_portable(data, seed);
}

} // namespace zarr3
