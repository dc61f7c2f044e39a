// CRC-32C (Castagnoli): SSE4.2 instruction when the CPU has it, slicing-by-8
// tables otherwise; the crc32c bytes->bytes codec, and numcodecs' 32-bit checksum codecs
// (crc32c, and zlib's crc32 and adler32) on the same model.
#include "codecs/codecs_internal.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <zlib.h>

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

using ChecksumFn = uint32_t (*)(ByteView);

uint32_t crc32c_of(ByteView d) {
    return crc32c(d);
}
// zlib's crc32 or adler32 of `d`, fed in pieces (they take 32-bit lengths).
template <uLong (*F)(uLong, const Bytef*, uInt)> uint32_t zlib_checksum_of(ByteView d) {
    uLong c = F(0L, Z_NULL, 0);
    for (size_t off = 0; off < d.size(); off += size_t(1) << 30)
        c = F(c, d.data() + off, uInt(std::min<size_t>(d.size() - off, size_t(1) << 30)));
    return uint32_t(c);
}

// A 32-bit little-endian checksum of the value, after it (crc32c; numcodecs' crc32c) or
// before it (numcodecs' crc32 and adler32 by default), verified on decode.
class Checksum32Codec : public ConfiguredBytesCodec {
  public:
    Checksum32Codec(std::string name, ChecksumFn fn, bool at_start, nlohmann::json config)
        : ConfiguredBytesCodec(std::move(name), std::move(config)), fn_(fn), at_start_(at_start) {}
    Bytes encode(ByteView decoded) const override {
        Bytes out(decoded.size() + 4);
        const size_t body = at_start_ ? 4 : 0;
        if (!decoded.empty()) std::memcpy(out.data() + body, decoded.data(), decoded.size());
        const uint32_t c = fn_(decoded);
        std::memcpy(out.data() + (at_start_ ? 0 : decoded.size()), &c, 4); // little-endian host
        return out;
    }
    Bytes decode(ByteView encoded, std::optional<uint64_t> expected,
                 uint64_t max_size) const override {
        if (encoded.size() < 4)
            throw FormatError(name_ + ": encoded value of " + std::to_string(encoded.size()) +
                              " bytes is shorter than the 4-byte checksum");
        uint64_t n = encoded.size() - 4;
        if (expected && n != *expected)
            throw FormatError(name_ + ": decoded size " + std::to_string(n) + " differs from the " +
                              std::to_string(*expected) + " bytes expected");
        if (n > max_size)
            throw FormatError(name_ + ": decoded size " + std::to_string(n) +
                              " exceeds the limit of " + std::to_string(max_size) + " bytes");
        const ByteView body = encoded.subspan(at_start_ ? 4 : 0, n);
        uint32_t stored;
        std::memcpy(&stored, encoded.data() + (at_start_ ? 0 : n), 4);
        if (fn_(body) != stored) throw FormatError(name_ + " checksum mismatch");
        return Bytes(body.begin(), body.end());
    }
    std::optional<uint64_t> encoded_size(uint64_t n) const override { return n + 4; }

  private:
    ChecksumFn fn_;
    bool at_start_;
};

} // namespace

std::shared_ptr<BytesToBytesCodec> make_crc32c(const nlohmann::json& config,
                                               const std::string& where) {
    config_object(config, "crc32c", where, {});
    return std::make_shared<Checksum32Codec>("crc32c", &crc32c_of, false, nullptr);
}

std::shared_ptr<BytesToBytesCodec> make_numcodecs_checksum(const std::string& name,
                                                           const nlohmann::json& config,
                                                           const std::string& where) {
    const auto obj = config_object(config, name, where, {"location"});
    const bool crc32c = name == "numcodecs.crc32c";
    const std::string loc =
        get_choice(obj, "location", name, where, {"start", "end"}, crc32c ? "end" : "start");
    const ChecksumFn fn = crc32c                        ? &crc32c_of
                          : name == "numcodecs.adler32" ? &zlib_checksum_of<adler32>
                                                        : &zlib_checksum_of<crc32>;
    return std::make_shared<Checksum32Codec>(name, fn, loc == "start", obj);
}

} // namespace codecs

uint32_t crc32c(ByteView data, uint32_t seed) {
    if (codecs::crc32c_hw_available()) return codecs::crc32c_hw(data, seed);
    return codecs::crc32c_portable(data, seed);
}

} // namespace zarr3
