// The `zstd` bytes->bytes codec.
#include "codecs/codecs_internal.hpp"

#include <algorithm>
#include <utility>
#include <zstd.h>

namespace zarr3::codecs {
namespace {

struct DCtxDeleter {
    void operator()(ZSTD_DCtx* c) const { ZSTD_freeDCtx(c); }
};
struct CCtxDeleter {
    void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};

ZSTD_DCtx* dctx() {
    thread_local std::unique_ptr<ZSTD_DCtx, DCtxDeleter> c(ZSTD_createDCtx());
    if (!c) throw Error("zstd: cannot allocate a decompression context");
    ZSTD_DCtx_reset(c.get(), ZSTD_reset_session_and_parameters);
    return c.get();
}

[[noreturn]] void fail(const std::string& what, size_t code) {
    throw FormatError("zstd: " + what + " (" + ZSTD_getErrorName(code) + ")");
}

// The one streaming decode loop. `room(pos)` gives where output byte `pos`
// goes and how many bytes fit there; with no room left a one-byte probe
// checks that nothing more decodes (else FormatError: larger than
// `bound`). Returns the number of bytes decoded.
template <class Room> size_t stream(ByteView in, Room&& room, const std::string& bound) {
    ZSTD_DCtx* d = dctx();
    ZSTD_inBuffer ib{in.data(), in.size(), 0};
    size_t out_pos = 0;
    for (;;) {
        const auto [dst, avail] = room(out_pos);
        const bool probing = avail == 0;
        uint8_t probe = 0;
        ZSTD_outBuffer ob{probing ? &probe : dst, probing ? size_t(1) : avail, 0};
        const size_t in_before = ib.pos;
        const size_t last = ZSTD_decompressStream(d, &ob, &ib);
        if (ZSTD_isError(last)) fail("corrupt compressed data", last);
        if (probing && ob.pos) throw FormatError("zstd: decoded data is larger than the " + bound);
        if (!probing) out_pos += ob.pos;
        if (ib.pos == ib.size && last == 0) return out_pos;
        if (ob.pos == 0 && ib.pos == in_before) {
            if (ib.pos == ib.size) throw FormatError("zstd: truncated compressed data");
            throw FormatError("zstd: corrupt compressed data (no progress)");
        }
    }
}

void check_decoded(size_t got, uint64_t expected) {
    if (got != expected)
        throw FormatError("zstd: decoded " + std::to_string(got) + " bytes, expected " +
                          std::to_string(expected));
}

// Streaming decode of exactly `size` bytes into `out` (FormatError otherwise).
void decode_stream_into(ByteView in, uint8_t* out, uint64_t size) {
    auto room = [&](size_t pos) { return std::pair<uint8_t*, size_t>{out + pos, size - pos}; };
    check_decoded(stream(in, room, "expected " + std::to_string(size) + " bytes"), size);
}

// How many bytes the frames decode to, at most `limit` (FormatError past
// it), decoded into a small scratch buffer that is overwritten.
size_t decoded_size(ByteView in, uint64_t limit) {
    std::vector<uint8_t> scratch(256 * 1024);
    auto room = [&](size_t pos) {
        const uint64_t left = limit - std::min<uint64_t>(limit, pos);
        return std::pair<uint8_t*, size_t>{scratch.data(),
                                           size_t(std::min<uint64_t>(left, scratch.size()))};
    };
    return stream(in, room, "limit of " + std::to_string(limit) + " bytes");
}

// Streaming decode when the frames do not state their content size. With
// no expected size either, a first pass counts the decoded bytes (refused
// past `limit` before anything that large is allocated) and a second
// decodes into exactly that many: the memory is the result's, never a
// growing buffer's copies (a decompression bomb costs time up to the
// limit, not memory).
Bytes decode_stream(ByteView in, std::optional<uint64_t> expected, uint64_t limit) {
    const uint64_t n = expected ? *expected : decoded_size(in, limit);
    Bytes out(n);
    decode_stream_into(in, out.data(), n);
    return out;
}

class ZstdCodec : public BytesToBytesCodec {
  public:
    ZstdCodec(int level, bool checksum) : level_(level), checksum_(checksum) {}
    std::string name() const override { return "zstd"; }

    Bytes encode(ByteView decoded) const override {
        Bytes out;
        encode_into(decoded, out);
        return out;
    }

    // One context per thread, reused; the output is sized to the bound in
    // the caller's reused buffer and trimmed.
    void encode_into(ByteView decoded, Bytes& out) const override {
        thread_local std::unique_ptr<ZSTD_CCtx, CCtxDeleter> c(ZSTD_createCCtx());
        if (!c) throw Error("zstd: cannot allocate a compression context");
        ZSTD_CCtx_reset(c.get(), ZSTD_reset_session_and_parameters);
        ZSTD_CCtx_setParameter(c.get(), ZSTD_c_compressionLevel, level_);
        ZSTD_CCtx_setParameter(c.get(), ZSTD_c_checksumFlag, checksum_ ? 1 : 0);
        out.resize(ZSTD_compressBound(decoded.size()));
        size_t n = ZSTD_compress2(c.get(), out.data(), out.size(), decoded.data(), decoded.size());
        if (ZSTD_isError(n))
            throw Error(std::string("zstd: compression failed (") + ZSTD_getErrorName(n) + ")");
        out.resize(n);
    }

    Bytes decode(ByteView in, std::optional<uint64_t> expected, uint64_t max_size) const override {
        if (expected && *expected > max_size)
            throw FormatError("zstd: expected size " + std::to_string(*expected) +
                              " exceeds the limit of " + std::to_string(max_size) + " bytes");
        const uint64_t limit = expected ? *expected : max_size;
        unsigned long long stated = ZSTD_getFrameContentSize(in.data(), in.size());
        if (stated == ZSTD_CONTENTSIZE_ERROR)
            throw FormatError("zstd: not a valid zstd frame (" + std::to_string(in.size()) +
                              " bytes)");
        // Several frames (or trailing data): stream, bounded by the limit.
        size_t frame = ZSTD_findFrameCompressedSize(in.data(), in.size());
        if (stated == ZSTD_CONTENTSIZE_UNKNOWN || ZSTD_isError(frame) || frame != in.size())
            return decode_stream(in, expected, limit);
        if (expected && stated != *expected)
            throw FormatError("zstd: frame content size " + std::to_string(stated) +
                              " differs from the " + std::to_string(*expected) + " bytes expected");
        if (stated > max_size)
            throw FormatError("zstd: frame content size " + std::to_string(stated) +
                              " exceeds the limit of " + std::to_string(max_size) + " bytes");
        Bytes out(stated);
        size_t n = ZSTD_decompressDCtx(dctx(), out.data(), out.size(), in.data(), in.size());
        if (ZSTD_isError(n)) fail("corrupt compressed data", n);
        if (n != stated)
            throw FormatError("zstd: decoded " + std::to_string(n) +
                              " bytes but the frame states " + std::to_string(stated));
        return out;
    }

    bool decode_into(ByteView in, uint8_t* out, uint64_t size) const override {
        const unsigned long long stated = ZSTD_getFrameContentSize(in.data(), in.size());
        const size_t frame = ZSTD_findFrameCompressedSize(in.data(), in.size());
        // One frame stating exactly `size` bytes: decode in place.
        if (stated == size && frame == in.size()) {
            const size_t n = ZSTD_decompressDCtx(dctx(), out, size, in.data(), in.size());
            return !ZSTD_isError(n) && n == size;
        }
        // Frames without a stated size (streaming writers such as numcodecs),
        // or several frames: stream straight into `out`, never into a copy.
        // Errors are reported here, so that the caller does not allocate the
        // chunk a second time only to fail again.
        if (stated != ZSTD_CONTENTSIZE_UNKNOWN && (ZSTD_isError(frame) || frame == in.size()))
            return false; // one frame stating another size: decode() names both sizes
        decode_stream_into(in, out, size);
        return true;
    }

    nlohmann::json to_json() const override {
        return {{"name", "zstd"}, {"configuration", {{"level", level_}, {"checksum", checksum_}}}};
    }

  private:
    int level_;
    bool checksum_;
};

} // namespace

std::shared_ptr<BytesToBytesCodec> make_zstd(const nlohmann::json& config,
                                             const std::string& where) {
    auto obj = config_object(config, "zstd", where, {"level", "checksum"});
    int level = int(get_int(obj, "level", "zstd", where, ZSTD_minCLevel(), ZSTD_maxCLevel(), 0));
    bool checksum = get_bool(obj, "checksum", "zstd", where, false);
    return std::make_shared<ZstdCodec>(level, checksum);
}

} // namespace zarr3::codecs
