// The `gzip` bytes->bytes codec, and the zlib format of `numcodecs.zlib` (and gzip under
// the name `numcodecs.gzip`): libdeflate when available, zlib otherwise.
#include "codecs/codecs_internal.hpp"

#include <algorithm>
#include <cstring>
#include <zlib.h>
#ifdef ZARR3_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

namespace zarr3::codecs {
namespace {

[[noreturn]] void too_big(uint64_t limit, bool exact) {
    throw FormatError(std::string("gzip: decoded data is larger than the ") +
                      (exact ? "expected " : "limit of ") + std::to_string(limit) + " bytes");
}

uint64_t initial_capacity(ByteView in, std::optional<uint64_t> expected, uint64_t max_size,
                          bool zlib) {
    if (expected) return *expected;
    uint64_t guess = std::max<uint64_t>(uint64_t(in.size()) * 4, 64 * 1024);
    if (!zlib && in.size() >= 18) { // ISIZE of the (last) member: size mod 2^32
        uint32_t isize;
        std::memcpy(&isize, in.data() + in.size() - 4, 4);
        guess = std::max<uint64_t>(guess, isize);
    }
    return std::min(guess, max_size);
}

#ifdef ZARR3_HAVE_LIBDEFLATE
struct DecompressorDeleter {
    void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
};

Bytes gzip_decode_libdeflate(ByteView in, std::optional<uint64_t> expected, uint64_t max_size,
                             bool zlib) {
    thread_local std::unique_ptr<libdeflate_decompressor, DecompressorDeleter> dec(
        libdeflate_alloc_decompressor());
    if (!dec) throw Error("gzip: out of memory allocating a decompressor");
    const uint64_t limit = expected ? *expected : max_size;
    if (expected && *expected > max_size) too_big(max_size, false);
    Bytes out(initial_capacity(in, expected, max_size, zlib));
    size_t in_pos = 0, out_pos = 0;
    const auto decompress = zlib ? libdeflate_zlib_decompress_ex : libdeflate_gzip_decompress_ex;
    for (;;) { // one gzip member (zlib stream) per iteration
        size_t consumed = 0, produced = 0;
        auto r = decompress(dec.get(), in.data() + in_pos, in.size() - in_pos, out.data() + out_pos,
                            out.size() - out_pos, &consumed, &produced);
        if (r == LIBDEFLATE_INSUFFICIENT_SPACE) {
            if (out.size() >= limit) too_big(limit, expected.has_value());
            out.resize(std::min<uint64_t>(limit, std::max<uint64_t>(out.size() * 2, 4096)));
            continue;
        }
        if (r != LIBDEFLATE_SUCCESS)
            throw FormatError("gzip: corrupt or truncated gzip stream (libdeflate error " +
                              std::to_string(int(r)) + ")");
        in_pos += consumed;
        out_pos += produced;
        if (in_pos >= in.size()) break;
    }
    if (expected && out_pos != *expected)
        throw FormatError("gzip: decoded " + std::to_string(out_pos) + " bytes, expected " +
                          std::to_string(*expected));
    out.resize(out_pos);
    return out;
}

struct CompressorDeleter {
    void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
};
#endif

class GzipCodec : public ConfiguredBytesCodec {
  public:
    GzipCodec(int level, bool zlib, std::string name, nlohmann::json config)
        : ConfiguredBytesCodec(std::move(name), std::move(config)), level_(level), zlib_(zlib) {}
    Bytes encode(ByteView decoded) const override {
#ifdef ZARR3_HAVE_LIBDEFLATE
        std::unique_ptr<libdeflate_compressor, CompressorDeleter> c(
            libdeflate_alloc_compressor(level_));
        if (!c)
            throw Error("gzip: cannot allocate a compressor for level " + std::to_string(level_));
        Bytes out(zlib_ ? libdeflate_zlib_compress_bound(c.get(), decoded.size())
                        : libdeflate_gzip_compress_bound(c.get(), decoded.size()));
        const auto compress = zlib_ ? libdeflate_zlib_compress : libdeflate_gzip_compress;
        size_t n = compress(c.get(), decoded.data(), decoded.size(), out.data(), out.size());
        if (n == 0) throw Error("gzip: compression failed");
        out.resize(n);
        return out;
#else
        return gzip_encode_zlib(decoded, level_, zlib_);
#endif
    }
    Bytes decode(ByteView encoded, std::optional<uint64_t> expected,
                 uint64_t max_size) const override {
#ifdef ZARR3_HAVE_LIBDEFLATE
        return gzip_decode_libdeflate(encoded, expected, max_size, zlib_);
#else
        return gzip_decode_zlib(encoded, expected, max_size, zlib_);
#endif
    }
#ifdef ZARR3_HAVE_LIBDEFLATE
    bool decode_into(ByteView in, uint8_t* out, uint64_t size) const override {
        // One gzip member of exactly `size` bytes: decode in place, else fall back.
        thread_local std::unique_ptr<libdeflate_decompressor, DecompressorDeleter> dec(
            libdeflate_alloc_decompressor());
        if (!dec) return false;
        size_t consumed = 0, produced = 0;
        const auto decompress =
            zlib_ ? libdeflate_zlib_decompress_ex : libdeflate_gzip_decompress_ex;
        const auto r = decompress(dec.get(), in.data(), in.size(), out, size, &consumed, &produced);
        return r == LIBDEFLATE_SUCCESS && consumed == in.size() && produced == size;
    }
#endif

  private:
    int level_;
    bool zlib_;
};

} // namespace

Bytes gzip_decode_zlib(ByteView in, std::optional<uint64_t> expected, uint64_t max_size,
                       bool zlib) {
    if (expected && *expected > max_size) too_big(max_size, false);
    const uint64_t limit = expected ? *expected : max_size;
    z_stream s{};
    if (inflateInit2(&s, zlib ? MAX_WBITS : 16 + MAX_WBITS) != Z_OK)
        throw Error("gzip: inflateInit2 failed");
    struct Guard {
        z_stream* s;
        ~Guard() { inflateEnd(s); }
    } guard{&s};
    Bytes out(initial_capacity(in, expected, max_size, zlib));
    size_t in_pos = 0, out_pos = 0;
    constexpr size_t kStep = 1u << 30; // zlib's avail_* are 32-bit
    for (;;) {
        if (out_pos == out.size() && out.size() < limit)
            out.resize(std::min<uint64_t>(limit, std::max<uint64_t>(out.size() * 2, 4096)));
        // At the limit, inflate into a 1-byte probe: any output is too much.
        const bool probing = out_pos == out.size();
        uint8_t probe = 0;
        size_t avail_in = std::min<size_t>(in.size() - in_pos, kStep);
        size_t avail_out = probing ? 1 : std::min<size_t>(out.size() - out_pos, kStep);
        s.next_in = const_cast<Bytef*>(in.data() + in_pos);
        s.avail_in = uInt(avail_in);
        s.next_out = probing ? &probe : out.data() + out_pos;
        s.avail_out = uInt(avail_out);
        int r = inflate(&s, Z_NO_FLUSH);
        size_t consumed = avail_in - s.avail_in, produced = avail_out - s.avail_out;
        in_pos += consumed;
        if (probing && produced) too_big(limit, expected.has_value());
        if (!probing) out_pos += produced;
        if (r == Z_STREAM_END) {
            if (in_pos == in.size()) break;
            inflateReset(&s); // another gzip member follows
            continue;
        }
        if (r != Z_OK && r != Z_BUF_ERROR)
            throw FormatError("gzip: corrupt gzip stream (zlib error " + std::to_string(r) + ")");
        if (consumed == 0 && produced == 0)
            throw FormatError(in_pos == in.size() ? "gzip: truncated gzip stream"
                                                  : "gzip: corrupt gzip stream");
    }
    if (expected && out_pos != *expected)
        throw FormatError("gzip: decoded " + std::to_string(out_pos) + " bytes, expected " +
                          std::to_string(*expected));
    out.resize(out_pos);
    return out;
}

Bytes gzip_encode_zlib(ByteView in, int level, bool zlib) {
    z_stream s{};
    if (deflateInit2(&s, level, Z_DEFLATED, zlib ? MAX_WBITS : 16 + MAX_WBITS, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        throw Error("gzip: deflateInit2 failed");
    struct Guard {
        z_stream* s;
        ~Guard() { deflateEnd(s); }
    } guard{&s};
    Bytes out(deflateBound(&s, in.size()));
    size_t in_pos = 0, out_pos = 0;
    constexpr size_t kStep = 1u << 30;
    for (;;) {
        size_t avail_in = std::min<size_t>(in.size() - in_pos, kStep);
        size_t avail_out = std::min<size_t>(out.size() - out_pos, kStep);
        if (avail_out == 0) {
            out.resize(out.size() + 65536);
            avail_out = std::min<size_t>(out.size() - out_pos, kStep);
        }
        s.next_in = const_cast<Bytef*>(in.data() + in_pos);
        s.avail_in = uInt(avail_in);
        s.next_out = out.data() + out_pos;
        s.avail_out = uInt(avail_out);
        int flush = in_pos + avail_in == in.size() ? Z_FINISH : Z_NO_FLUSH;
        int r = deflate(&s, flush);
        in_pos += avail_in - s.avail_in;
        out_pos += avail_out - s.avail_out;
        if (r == Z_STREAM_END) break;
        if (r != Z_OK && r != Z_BUF_ERROR) throw Error("gzip: deflate failed");
    }
    out.resize(out_pos);
    return out;
}

std::shared_ptr<BytesToBytesCodec> make_gzip(const nlohmann::json& config,
                                             const std::string& where) {
    auto obj = config_object(config, "gzip", where, {"level"});
    int level = int(get_int(obj, "level", "gzip", where, 0, 9, std::nullopt));
    return std::make_shared<GzipCodec>(level, false, "gzip", nlohmann::json{{"level", level}});
}

std::shared_ptr<BytesToBytesCodec> make_deflate(bool zlib, int level, const std::string& name,
                                                const nlohmann::json& config) {
    return std::make_shared<GzipCodec>(level, zlib, name, config);
}

} // namespace zarr3::codecs
