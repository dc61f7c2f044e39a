// Unit tests of the individual codecs (the chain is in test_codec_chain.cpp).
#include "codecs/codec_test_util.hpp"
#include "codecs/codecs_internal.hpp"
#include "zarr3/codec.hpp"

#include <algorithm>
#include <cstring>
#include <gtest/gtest.h>
#include <numeric>
#include <random>
#include <zlib.h>
#include <zstd.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_codecs_test_codecs {

using namespace zarr3;
using nlohmann::json;
using namespace codectest;

namespace {

// Compressible: small alphabet with runs.
Bytes sample(size_t n, uint32_t seed = 1) {
    Bytes b = random_bytes(n, seed, 4);
    for (size_t i = 0; i < n; ++i)
        if (i % 7 < 3) b[i] = uint8_t(i / 64);
    return b;
}

Bytes u8(std::initializer_list<int> v) {
    Bytes b;
    for (int x : v)
        b.push_back(uint8_t(x));
    return b;
}

// ------------------------------------------------------------------ crc32c

TEST(Crc32c, CheckValue) {
    const char* s = "123456789";
    ByteView v(reinterpret_cast<const uint8_t*>(s), 9);
    EXPECT_EQ(crc32c(v), 0xE3069283u);
    EXPECT_EQ(codecs::crc32c_portable(v, 0), 0xE3069283u);
    if (codecs::crc32c_hw_available()) {
        EXPECT_EQ(codecs::crc32c_hw(v, 0), 0xE3069283u);
    }
    EXPECT_EQ(crc32c(ByteView{}), 0u);
    // 32 bytes of zeros (RFC 3720 B.4): 0x8A9136AA
    Bytes zeros(32, 0);
    EXPECT_EQ(crc32c(zeros), 0x8A9136AAu);
    Bytes ones(32, 0xff);
    EXPECT_EQ(crc32c(ones), 0x62A8AB43u);
}

TEST(Crc32c, ImplementationsAgreeAndChain) {
    Bytes data = random_bytes(5000, 7);
    for (size_t n : {0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 4999}) {
        ByteView v(data.data() + 1, n); // unaligned start
        uint32_t p = codecs::crc32c_portable(v, 0);
        if (codecs::crc32c_hw_available()) {
            EXPECT_EQ(codecs::crc32c_hw(v, 0), p) << n;
        }
        EXPECT_EQ(crc32c(v), p);
        // Chaining: crc(a+b) == crc(b, seed = crc(a)).
        size_t h = n / 3;
        EXPECT_EQ(crc32c(v.subspan(h), crc32c(v.first(h))), p) << n;
    }
}

TEST(Crc32cCodec, RoundTripAndMismatch) {
    auto c = make_bytes_to_bytes("crc32c", nullptr, "t");
    Bytes data = sample(1000);
    Bytes enc = c->encode(data);
    ASSERT_EQ(enc.size(), 1004u);
    EXPECT_EQ(*c->encoded_size(1000), 1004u);
    uint32_t crc = crc32c(data);
    EXPECT_EQ(enc[1000], crc & 0xff);
    EXPECT_EQ(enc[1003], crc >> 24);
    EXPECT_EQ(c->decode(enc, 1000, kMaxChunkBytes), data);
    EXPECT_EQ(c->decode(enc, std::nullopt, kMaxChunkBytes), data);
    Bytes bad = enc;
    bad[500] ^= 1;
    EXPECT_NE(
        error_of([&] { c->decode(bad, 1000, kMaxChunkBytes); }).find("crc32c checksum mismatch"),
        std::string::npos);
    bad = enc;
    bad[1002] ^= 0x80;
    EXPECT_NE(error_of([&] { c->decode(bad, 1000, kMaxChunkBytes); }).find("mismatch"),
              std::string::npos);
    EXPECT_NE(error_of([&] {
                  c->decode(u8({1, 2, 3}), std::nullopt, 100);
              }).find("crc32c"),
              std::string::npos);
    EXPECT_NE(error_of([&] { c->decode(enc, 999, kMaxChunkBytes); }).find("crc32c"),
              std::string::npos);
    EXPECT_EQ(c->to_json(), json({{"name", "crc32c"}}));
    EXPECT_NE(error_of([&] {
                  make_bytes_to_bytes("crc32c", {{"x", 1}}, "t");
              }).find("crc32c"),
              std::string::npos);
}

// ------------------------------------------------------------------ bytes

TEST(BytesCodec, BigEndianKnownVectors) {
    json big = {{"endian", "big"}};
    {
        auto s = spec_of({2}, int16_t_());
        auto c = make_array_to_bytes("bytes", big, s, "t");
        Bytes enc = u8({0x00, 0x01, 0xFF, 0xFE});
        int16_t out[2];
        c->decode(enc, s, reinterpret_cast<uint8_t*>(out));
        EXPECT_EQ(out[0], 1);
        EXPECT_EQ(out[1], -2);
        EXPECT_EQ(c->encode(ByteView(reinterpret_cast<uint8_t*>(out), 4), s), enc);
    }
    {
        auto s = spec_of({2}, dt("float32", DTypeKind::Float, 4, 4));
        auto c = make_array_to_bytes("bytes", big, s, "t");
        Bytes enc = u8({0x3F, 0x80, 0x00, 0x00, 0xC0, 0x49, 0x0F, 0xDB});
        float out[2];
        c->decode(enc, s, reinterpret_cast<uint8_t*>(out));
        EXPECT_EQ(out[0], 1.0f);
        EXPECT_FLOAT_EQ(out[1], -3.14159265f);
        EXPECT_EQ(c->encode(ByteView(reinterpret_cast<uint8_t*>(out), 8), s), enc);
    }
    {
        auto s = spec_of({1}, dt("complex64", DTypeKind::Complex, 8, 4));
        auto c = make_array_to_bytes("bytes", big, s, "t");
        Bytes enc = u8({0x3F, 0x80, 0x00, 0x00, 0xC0, 0x00, 0x00, 0x00}); // (1, -2)
        float out[2];
        c->decode(enc, s, reinterpret_cast<uint8_t*>(out));
        EXPECT_EQ(out[0], 1.0f);
        EXPECT_EQ(out[1], -2.0f);
    }
    {
        auto s = spec_of({3}, dt("float16", DTypeKind::Float, 2, 2));
        auto c = make_array_to_bytes("bytes", big, s, "t");
        Bytes enc = u8({0x3C, 0x00, 0xC0, 0x00, 0x7C, 0x00}); // 1.0, -2.0, +inf
        uint16_t out[3];
        c->decode(enc, s, reinterpret_cast<uint8_t*>(out));
        EXPECT_EQ(out[0], 0x3C00);
        EXPECT_EQ(out[1], 0xC000);
        EXPECT_EQ(out[2], 0x7C00);
    }
    {
        auto s = spec_of({1}, dt("complex128", DTypeKind::Complex, 16, 8));
        auto c = make_array_to_bytes("endian", big, s, "t"); // legacy name
        double in[2] = {1.5, -0.25};
        Bytes enc = c->encode(ByteView(reinterpret_cast<uint8_t*>(in), 16), s);
        EXPECT_EQ(enc[0], 0x3F);
        EXPECT_EQ(enc[1], 0xF8);
        EXPECT_EQ(enc[8], 0xBF);
        EXPECT_EQ(enc[9], 0xD0);
        double out[2];
        c->decode(enc, s, reinterpret_cast<uint8_t*>(out));
        EXPECT_EQ(out[0], 1.5);
        EXPECT_EQ(out[1], -0.25);
    }
}

TEST(BytesCodec, LittleEndianSizesAndConfig) {
    auto s = spec_of({3, 2}, int32_t_());
    auto c = make_array_to_bytes("bytes", {{"endian", "little"}}, s, "t");
    Bytes data = random_bytes(24, 3);
    EXPECT_EQ(c->encode(data, s), data);
    EXPECT_EQ(*c->encoded_size(s), 24u);
    Bytes out(24);
    c->decode(data, s, out.data());
    EXPECT_EQ(out, data);
    EXPECT_NE(error_of([&] { c->decode(ByteView(data).first(20), s, out.data()); }).find("bytes"),
              std::string::npos);
    EXPECT_EQ(c->to_json(), json::parse(R"({"name":"bytes","configuration":{"endian":"little"}})"));
    // endian may be omitted only for single-byte and raw types
    EXPECT_NE(error_of([&] { make_array_to_bytes("bytes", nullptr, s, "t"); }).find("endian"),
              std::string::npos);
    EXPECT_NO_THROW(make_array_to_bytes("bytes", nullptr, spec_of({4}, uint8_t_()), "t"));
    EXPECT_NO_THROW(make_array_to_bytes("bytes", json::object(),
                                        spec_of({4}, dt("r24", DTypeKind::Raw, 3, 1)), "t"));
    std::string e = error_of([&] { make_array_to_bytes("bytes", {{"endian", "middle"}}, s, "t"); });
    EXPECT_NE(e.find("\"bytes\""), std::string::npos) << e;
    EXPECT_NE(e.find("endian"), std::string::npos) << e;
    e = error_of([&] { make_array_to_bytes("bytes", {{"endian", "big"}, {"order", 1}}, s, "t"); });
    EXPECT_NE(e.find("order"), std::string::npos) << e;
}

// ------------------------------------------------------------------ transpose

Bytes naive_transpose(const Bytes& in, const Shape& shape, const std::vector<size_t>& order,
                      size_t elem) {
    size_t rank = shape.size();
    Shape oshape(rank);
    for (size_t k = 0; k < rank; ++k)
        oshape[k] = shape[order[k]];
    uint64_t n = std::accumulate(shape.begin(), shape.end(), uint64_t(1), std::multiplies<>());
    Bytes out(n * elem);
    std::vector<uint64_t> j(rank, 0);
    for (uint64_t o = 0; o < n; ++o) {
        // j is the encoded index; i[order[k]] = j[k]
        uint64_t src = 0;
        for (size_t a = 0; a < rank; ++a) {
            uint64_t ia = 0;
            for (size_t k = 0; k < rank; ++k)
                if (order[k] == a) ia = j[k];
            src = src * shape[a] + ia;
        }
        std::memcpy(out.data() + o * elem, in.data() + src * elem, elem);
        for (size_t k = rank; k-- > 0;) {
            if (++j[k] < oshape[k]) break;
            j[k] = 0;
        }
    }
    return out;
}

void check_transpose(const Shape& shape, std::vector<size_t> order, size_t elem) {
    auto s = spec_of(shape, dt("r" + std::to_string(elem * 8), DTypeKind::Raw, uint32_t(elem), 1));
    json jo = json::array();
    for (size_t o : order)
        jo.push_back(o);
    auto c = make_array_to_array("transpose", {{"order", jo}}, s, "t");
    Bytes data = random_bytes(s.num_bytes(), uint32_t(shape.size() * 131 + elem));
    Bytes expect = naive_transpose(data, shape, order, elem);
    Bytes enc = c->encode(data, s);
    EXPECT_EQ(enc, expect) << "elem " << elem << " order " << jo.dump();
    ChunkSpec es = c->encoded_spec(s);
    for (size_t k = 0; k < shape.size(); ++k)
        EXPECT_EQ(es.shape[k], shape[order[k]]);
    EXPECT_EQ(c->decode(enc, s), data);
}

TEST(TransposeCodec, TwoDAndThreeDVersusNaive) {
    for (size_t elem : {1, 2, 3, 4, 8, 16}) {
        check_transpose({70, 45}, {1, 0}, elem);
        check_transpose({70, 45}, {0, 1}, elem);
        std::vector<size_t> p{0, 1, 2};
        do {
            check_transpose({9, 40, 37}, p, elem);
        } while (std::next_permutation(p.begin(), p.end()));
    }
    check_transpose({1, 5, 1, 6}, {3, 2, 1, 0}, 4);
    check_transpose({3, 4, 5, 6}, {2, 0, 3, 1}, 2);
    check_transpose({0, 4}, {1, 0}, 4);
    check_transpose({7}, {0}, 8);
}

TEST(TransposeCodec, LegacyOrdersAndErrors) {
    auto s = spec_of({2, 3, 4}, int16_t_());
    auto f = make_array_to_array("transpose", {{"order", "F"}}, s, "t");
    EXPECT_EQ(f->encoded_spec(s).shape, (Shape{4, 3, 2}));
    EXPECT_EQ(f->to_json()["configuration"]["order"], json({2, 1, 0}));
    auto cc = make_array_to_array("transpose", {{"order", "C"}}, s, "t");
    Bytes d = random_bytes(48, 9);
    EXPECT_EQ(cc->encode(d, s), d);
    for (json bad : {json({0, 1}), json({0, 1, 1}), json({0, 1, 3}), json({0, -1, 2}),
                     json({0, 1.5, 2}), json("X"), json(3)}) {
        std::string e = error_of([&] {
            make_array_to_array("transpose", {{"order", bad}}, s, "t");
        });
        EXPECT_NE(e.find("transpose"), std::string::npos) << e;
        EXPECT_EQ(e.find("NOT A"), std::string::npos) << e;
    }
    EXPECT_NE(error_of([&] { make_array_to_array("transpose", nullptr, s, "t"); }).find("order"),
              std::string::npos);
}

// ------------------------------------------------------------------ gzip

Bytes zlib_gzip(ByteView in, int level) {
    z_stream s{};
    EXPECT_EQ(deflateInit2(&s, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    Bytes out(deflateBound(&s, in.size()));
    s.next_in = const_cast<Bytef*>(in.data());
    s.avail_in = uInt(in.size());
    s.next_out = out.data();
    s.avail_out = uInt(out.size());
    EXPECT_EQ(deflate(&s, Z_FINISH), Z_STREAM_END);
    out.resize(s.total_out);
    deflateEnd(&s);
    return out;
}

TEST(GzipCodec, DecodesZlibStreamKnownVector) {
    // python: gzip.compress(b"hello zarr hello zarr", mtime=0)
    Bytes v = u8({0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xcb,
                  0x48, 0xcd, 0xc9, 0xc9, 0x57, 0xa8, 0x4a, 0x2c, 0x2a, 0x52, 0xc8,
                  0x80, 0x33, 0x01, 0xed, 0x5b, 0xda, 0xfc, 0x15, 0x00, 0x00, 0x00});
    std::string want = "hello zarr hello zarr";
    auto c = make_bytes_to_bytes("gzip", {{"level", 5}}, "t");
    for (auto exp : {std::optional<uint64_t>(21), std::optional<uint64_t>()}) {
        Bytes d = c->decode(v, exp, kMaxChunkBytes);
        EXPECT_EQ(std::string(d.begin(), d.end()), want);
        d = codecs::gzip_decode_zlib(v, exp, kMaxChunkBytes);
        EXPECT_EQ(std::string(d.begin(), d.end()), want);
    }
    Bytes big = sample(300000);
    Bytes z = zlib_gzip(big, 6);
    EXPECT_EQ(c->decode(z, big.size(), kMaxChunkBytes), big);
    EXPECT_EQ(c->decode(z, std::nullopt, kMaxChunkBytes), big);
    EXPECT_EQ(codecs::gzip_decode_zlib(z, std::nullopt, kMaxChunkBytes), big);
}

TEST(GzipCodec, RoundTripAllLevelsBothImplementations) {
    Bytes data = sample(100000, 5);
    for (int level = 0; level <= 9; ++level) {
        auto c = make_bytes_to_bytes("gzip", {{"level", level}}, "t");
        Bytes enc = c->encode(data);
        ASSERT_GE(enc.size(), 18u);
        EXPECT_EQ(enc[0], 0x1f);
        EXPECT_EQ(enc[1], 0x8b);
        if (level > 0) {
            EXPECT_LT(enc.size(), data.size());
        }
        EXPECT_EQ(c->decode(enc, data.size(), kMaxChunkBytes), data);
        EXPECT_EQ(codecs::gzip_decode_zlib(enc, std::nullopt, kMaxChunkBytes), data);
        Bytes enc2 = codecs::gzip_encode_zlib(data, level);
        EXPECT_EQ(c->decode(enc2, std::nullopt, kMaxChunkBytes), data);
        EXPECT_EQ(c->to_json(), json({{"name", "gzip"}, {"configuration", {{"level", level}}}}));
    }
    auto c = make_bytes_to_bytes("gzip", {{"level", 1}}, "t");
    EXPECT_EQ(c->decode(c->encode({}), 0, kMaxChunkBytes), Bytes{});
    // two members
    Bytes a = sample(5000, 1), b = sample(7000, 2);
    Bytes two = c->encode(a);
    Bytes eb = c->encode(b);
    two.insert(two.end(), eb.begin(), eb.end());
    Bytes ab = a;
    ab.insert(ab.end(), b.begin(), b.end());
    EXPECT_EQ(c->decode(two, std::nullopt, kMaxChunkBytes), ab);
    EXPECT_EQ(c->decode(two, ab.size(), kMaxChunkBytes), ab);
    EXPECT_EQ(codecs::gzip_decode_zlib(two, std::nullopt, kMaxChunkBytes), ab);
}

TEST(GzipCodec, RefusesOversizeTruncatedAndGarbage) {
    auto c = make_bytes_to_bytes("gzip", {{"level", 6}}, "t");
    Bytes data(1 << 20, 0); // compresses to ~1 KB
    Bytes enc = c->encode(data);
    using DecodeFn = std::function<Bytes(ByteView, std::optional<uint64_t>, uint64_t)>;
    std::vector<DecodeFn> fns = {
        [&](ByteView i, std::optional<uint64_t> e, uint64_t m) { return c->decode(i, e, m); },
        [](ByteView i, std::optional<uint64_t> e, uint64_t m) {
            return codecs::gzip_decode_zlib(i, e, m);
        }};
    for (auto& fn : fns) {
        EXPECT_NE(error_of([&] { fn(enc, 1000, kMaxChunkBytes); }).find("gzip"), std::string::npos);
        EXPECT_NE(error_of([&] { fn(enc, (1 << 20) + 1, kMaxChunkBytes); }).find("gzip"),
                  std::string::npos);
        EXPECT_NE(error_of([&] { fn(enc, std::nullopt, 4096); }).find("gzip"), std::string::npos);
        EXPECT_NE(error_of([&] {
                      fn(ByteView(enc).first(enc.size() / 2), std::nullopt, 1 << 22);
                  }).find("gzip"),
                  std::string::npos);
        EXPECT_NE(error_of([&] {
                      fn(ByteView(enc).first(enc.size() - 3), data.size(), 1 << 22);
                  }).find("gzip"),
                  std::string::npos);
        EXPECT_NE(error_of([&] { fn(random_bytes(500, 3), std::nullopt, 1 << 22); }).find("gzip"),
                  std::string::npos);
        EXPECT_NE(error_of([&] { fn({}, std::nullopt, 1 << 22); }).find("gzip"), std::string::npos);
        EXPECT_EQ(fn(enc, std::nullopt, 1 << 20), data); // exactly at the limit is fine
    }
}

// ------------------------------------------------------------------ zstd

TEST(ZstdCodec, RoundTripWithChecksum) {
    Bytes data = sample(200000, 8);
    for (bool checksum : {false, true}) {
        for (int level : {-5, 0, 1, 3, 19}) {
            auto c = make_bytes_to_bytes("zstd", {{"level", level}, {"checksum", checksum}}, "t");
            Bytes enc = c->encode(data);
            EXPECT_LT(enc.size(), data.size());
            // Frame header descriptor (byte 4) bit 2 = content checksum flag.
            EXPECT_EQ((enc[4] >> 2) & 1, checksum ? 1 : 0);
            EXPECT_EQ(ZSTD_getFrameContentSize(enc.data(), enc.size()), data.size());
            EXPECT_EQ(c->decode(enc, data.size(), kMaxChunkBytes), data);
            EXPECT_EQ(c->decode(enc, std::nullopt, kMaxChunkBytes), data);
            EXPECT_EQ(c->to_json()["configuration"]["checksum"], checksum);
        }
    }
    // A corrupted checksum is detected.
    auto c = make_bytes_to_bytes("zstd", {{"level", 3}, {"checksum", true}}, "t");
    Bytes enc = c->encode(data);
    enc[enc.size() - 1] ^= 0xff;
    EXPECT_NE(error_of([&] { c->decode(enc, data.size(), kMaxChunkBytes); }).find("zstd"),
              std::string::npos);
}

Bytes zstd_without_content_size(ByteView in) {
    ZSTD_CCtx* c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 0);
    Bytes out(ZSTD_compressBound(in.size()));
    size_t n = ZSTD_compress2(c, out.data(), out.size(), in.data(), in.size());
    ZSTD_freeCCtx(c);
    EXPECT_FALSE(ZSTD_isError(n));
    out.resize(n);
    return out;
}

TEST(ZstdCodec, StreamingDecodeWithoutContentSize) {
    auto c = make_bytes_to_bytes("zstd", nullptr, "t");
    Bytes data = sample(500000, 4);
    Bytes enc = zstd_without_content_size(data);
    ASSERT_EQ(ZSTD_getFrameContentSize(enc.data(), enc.size()), ZSTD_CONTENTSIZE_UNKNOWN);
    EXPECT_EQ(c->decode(enc, std::nullopt, kMaxChunkBytes), data);
    EXPECT_EQ(c->decode(enc, data.size(), kMaxChunkBytes), data);
    EXPECT_EQ(c->decode(enc, std::nullopt, data.size()), data);
    EXPECT_NE(error_of([&] { c->decode(enc, std::nullopt, data.size() - 1); }).find("zstd"),
              std::string::npos);
    EXPECT_NE(error_of([&] { c->decode(enc, data.size() - 1, kMaxChunkBytes); }).find("zstd"),
              std::string::npos);
    EXPECT_NE(error_of([&] { c->decode(enc, data.size() + 1, kMaxChunkBytes); }).find("zstd"),
              std::string::npos);
    EXPECT_NE(error_of([&] {
                  c->decode(ByteView(enc).first(enc.size() - 5), std::nullopt, kMaxChunkBytes);
              }).find("zstd"),
              std::string::npos);
    // Two concatenated frames.
    Bytes two = c->encode(data);
    Bytes more = c->encode(ByteView(data).first(1000));
    two.insert(two.end(), more.begin(), more.end());
    Bytes d = c->decode(two, std::nullopt, kMaxChunkBytes);
    ASSERT_EQ(d.size(), data.size() + 1000);
    EXPECT_TRUE(std::equal(data.begin(), data.end(), d.begin()));
}

TEST(ZstdCodec, RefusesFramesClaimingTooMuch) {
    auto c = make_bytes_to_bytes("zstd", {{"level", 1}, {"checksum", false}}, "t");
    // Handmade frame: magic, FHD = single segment + 8-byte content size 2^40,
    // then one raw last block holding a single byte.
    Bytes f = u8({0x28, 0xB5, 0x2F, 0xFD, 0xE0, 0, 0, 0, 0, 0, 1, 0, 0, 0x09, 0, 0, 0x41});
    EXPECT_EQ(ZSTD_getFrameContentSize(f.data(), f.size()), 1ull << 40);
    EXPECT_NE(error_of([&] { c->decode(f, std::nullopt, kMaxChunkBytes); }).find("limit"),
              std::string::npos);
    EXPECT_NE(error_of([&] { c->decode(f, 1, kMaxChunkBytes); }).find("differs"),
              std::string::npos);
    Bytes data = sample(1000);
    Bytes enc = c->encode(data);
    EXPECT_NE(error_of([&] { c->decode(enc, 500, kMaxChunkBytes); }).find("zstd"),
              std::string::npos);
    EXPECT_NE(error_of([&] { c->decode(enc, std::nullopt, 999); }).find("zstd"), std::string::npos);
    EXPECT_NE(error_of([&] {
                  c->decode(ByteView(enc).first(enc.size() - 2), 1000, kMaxChunkBytes);
              }).find("zstd"),
              std::string::npos);
    EXPECT_NE(error_of([&] {
                  c->decode(random_bytes(300, 5), std::nullopt, kMaxChunkBytes);
              }).find("zstd"),
              std::string::npos);
    EXPECT_NE(error_of([&] { c->decode({}, std::nullopt, kMaxChunkBytes); }).find("zstd"),
              std::string::npos);
}

// ------------------------------------------------------------------ blosc

TEST(BloscCodec, EveryCompressorAndShuffle) {
    Bytes data(100000);
    for (size_t i = 0; i < data.size() / 4; ++i) {
        uint32_t v = uint32_t(i / 16);
        std::memcpy(data.data() + 4 * i, &v, 4);
    }
    int tested = 0;
    for (const char* cname : {"lz4", "lz4hc", "blosclz", "zstd", "snappy", "zlib"}) {
        for (const char* shuffle : {"noshuffle", "shuffle", "bitshuffle"}) {
            for (int typesize : {1, 4, 8}) {
                json cfg = {{"cname", cname},
                            {"clevel", 5},
                            {"shuffle", shuffle},
                            {"typesize", typesize},
                            {"blocksize", 0}};
                auto c = make_bytes_to_bytes("blosc", cfg, "t");
                EXPECT_EQ(c->to_json()["configuration"], cfg);
                Bytes enc;
                try {
                    enc = c->encode(data);
                } catch (const Error& e) {
                    // Only acceptable reason: compressor not compiled in.
                    EXPECT_NE(std::string(e.what()).find("not compiled"), std::string::npos);
                    continue;
                }
                // (snappy does not shrink this input: blosc then stores it memcpy'ed)
                if (std::string(cname) != "snappy") {
                    EXPECT_LT(enc.size(), data.size()) << cname << " " << shuffle;
                }
                EXPECT_EQ(c->decode(enc, data.size(), kMaxChunkBytes), data) << cname;
                EXPECT_EQ(c->decode(enc, std::nullopt, kMaxChunkBytes), data) << cname;
                ++tested;
            }
        }
    }
    EXPECT_GE(tested, 4 * 3 * 3); // lz4, lz4hc, blosclz, zlib/zstd at least
    auto c = make_bytes_to_bytes("blosc",
                                 {{"cname", "lz4"}, {"clevel", 0}, {"shuffle", "noshuffle"}}, "t");
    EXPECT_EQ(c->decode(c->encode({}), 0, kMaxChunkBytes), Bytes{});
    EXPECT_EQ(c->decode(c->encode(data), data.size(), kMaxChunkBytes), data);
    c = make_bytes_to_bytes("blosc",
                            {{"cname", "zstd"},
                             {"clevel", 9},
                             {"shuffle", "bitshuffle"},
                             {"typesize", 4},
                             {"blocksize", 16384}},
                            "t");
    EXPECT_EQ(c->decode(c->encode(data), data.size(), kMaxChunkBytes), data);
}

TEST(BloscCodec, RefusesHugeHeaderTruncatedAndGarbage) {
    auto c = make_bytes_to_bytes(
        "blosc", {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "shuffle"}, {"typesize", 4}}, "t");
    Bytes data = sample(65536, 2);
    Bytes enc = c->encode(data);
    Bytes huge = enc;
    uint32_t claim = 0x7FFFFF00u; // header bytes 4..7: decoded size
    std::memcpy(huge.data() + 4, &claim, 4);
    EXPECT_NE(error_of([&] { c->decode(huge, std::nullopt, 1 << 20); }).find("blosc"),
              std::string::npos);
    EXPECT_NE(error_of([&] { c->decode(huge, data.size(), kMaxChunkBytes); }).find("blosc"),
              std::string::npos);
    EXPECT_NE(error_of([&] { c->decode(enc, std::nullopt, 1000); }).find("limit"),
              std::string::npos);
    EXPECT_NE(error_of([&] { c->decode(enc, 1000, kMaxChunkBytes); }).find("expected"),
              std::string::npos);
    EXPECT_NE(error_of([&] {
                  c->decode(ByteView(enc).first(enc.size() - 10), data.size(), kMaxChunkBytes);
              }).find("blosc"),
              std::string::npos);
    EXPECT_NE(error_of([&] {
                  c->decode(ByteView(enc).first(10), std::nullopt, kMaxChunkBytes);
              }).find("blosc"),
              std::string::npos);
    EXPECT_NE(error_of([&] {
                  c->decode(random_bytes(400, 9), std::nullopt, kMaxChunkBytes);
              }).find("blosc"),
              std::string::npos);
}

// Random corruption of valid encodings: a FormatError or a correct size, never a crash.
TEST(BytesToBytes, RandomCorruptionNeverCrashes) {
    std::vector<std::shared_ptr<BytesToBytesCodec>> cs = {
        make_bytes_to_bytes("gzip", {{"level", 3}}, "t"),
        make_bytes_to_bytes("zstd", {{"level", 3}, {"checksum", true}}, "t"),
        make_bytes_to_bytes(
            "blosc", {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "shuffle"}, {"typesize", 2}},
            "t"),
        make_bytes_to_bytes(
            "blosc", {{"cname", "zstd"}, {"clevel", 5}, {"shuffle", "bitshuffle"}, {"typesize", 4}},
            "t"),
        make_bytes_to_bytes("crc32c", nullptr, "t")};
    Bytes data = sample(20000, 3);
    std::mt19937 rng(42);
    for (auto& c : cs) {
        Bytes enc = c->encode(data);
        for (int i = 0; i < 300; ++i) {
            Bytes bad = enc;
            int flips = 1 + int(rng() % 4);
            for (int k = 0; k < flips; ++k)
                bad[rng() % bad.size()] ^= uint8_t(1 + rng() % 255);
            if (rng() % 3 == 0) bad.resize(rng() % bad.size());
            auto exp = rng() % 2 ? std::optional<uint64_t>(data.size()) : std::nullopt;
            try {
                Bytes d = c->decode(bad, exp, 1 << 20);
                if (exp) {
                    EXPECT_EQ(d.size(), data.size()) << c->name();
                }
                EXPECT_LE(d.size(), 1u << 20);
            } catch (const FormatError&) {
            }
        }
    }
}

} // namespace

}  // namespace ut_codecs_test_codecs
