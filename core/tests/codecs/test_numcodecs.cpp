// The numcodecs codecs zarr-python writes under "numcodecs.<id>" names: bitround, quantize,
// fixedscaleoffset, delta (array->array), shuffle, zlib, gzip, zstd, blosc (bytes->bytes).
// Expected values follow numcodecs' definitions worked out by hand; the zlib and gzip
// streams were made by Python's zlib and gzip modules.
#include "codecs/codec_test_util.hpp"

#include <bit>
#include <cstring>
#include <gtest/gtest.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_codecs_test_numcodecs {

using namespace codectest;
using nlohmann::json;

namespace {

json codec(const char* name, const json& config) {
    return {{"name", name}, {"configuration", config}};
}

// filters, bytes, then bytes->bytes codecs.
CodecChain chain(const json& filters, const ChunkSpec& s, const json& after = json::array()) {
    json codecs = filters;
    codecs.push_back(kBytes);
    for (const auto& c : after)
        codecs.push_back(c);
    return CodecChain::parse(codecs, s, "grp/arr/zarr.json");
}

template <typename T>
std::vector<T> round_trip(const CodecChain& c, const ChunkSpec& s, const std::vector<T>& in,
                          Bytes* encoded = nullptr) {
    const Bytes enc = c.encode(bytes_of(in), s);
    if (encoded) *encoded = enc;
    Bytes out(in.size() * sizeof(T));
    c.decode(enc, s, out.data());
    return values_of<T>(out);
}

} // namespace

TEST(NumcodecsBitRound, KeepsMantissaBitsRoundingHalfToEven) {
    const auto s = spec_of({5}, data_type_from_name("float32"));
    const auto c = chain(json::array({codec("numcodecs.bitround", {{"keepbits", 7}})}), s);
    // keepbits 7 of 23: the low 16 bits go. Below half rounds down, a tie goes to the even
    // neighbour (down from ...9E, up from ...9F), above half rounds up.
    const std::vector<uint32_t> in = {0x3F9E0651, 0x3F9E8000, 0x3F9F8000, 0x3F9E8001, 0xBF9F7FFF};
    Bytes enc;
    const auto out = round_trip(c, s, in, &enc);
    const std::vector<uint32_t> want = {0x3F9E0000, 0x3F9E0000, 0x3FA00000, 0x3F9F0000, 0xBF9F0000};
    EXPECT_EQ(values_of<uint32_t>(enc), want);
    EXPECT_EQ(out, want); // decoding is the identity
    // All mantissa bits kept: unchanged.
    const auto all = chain(json::array({codec("numcodecs.bitround", {{"keepbits", 23}})}), s);
    EXPECT_EQ(round_trip(all, s, in), in);
    // float64 and float16 round the same way at their own width.
    const auto s64 = spec_of({1}, data_type_from_name("float64"));
    const auto c64 = chain(json::array({codec("numcodecs.bitround", {{"keepbits", 1}})}), s64);
    EXPECT_EQ(round_trip(c64, s64, std::vector<double>{1.7}), std::vector<double>{1.5});
    const auto s16 = spec_of({1}, data_type_from_name("float16"));
    const auto c16 = chain(json::array({codec("numcodecs.bitround", {{"keepbits", 2}})}), s16);
    // 0x3E66 (1.6): mantissa 10 0110 0110 -> 2 bits kept, rest below half: 0x3E00 (1.5).
    EXPECT_EQ(round_trip(c16, s16, std::vector<uint16_t>{0x3E66}), std::vector<uint16_t>{0x3E00});
}

TEST(NumcodecsQuantize, RoundsToTheBinaryStepNumcodecsPicksForTheDigits) {
    const auto s = spec_of({4}, data_type_from_name("float64"));
    // digits 2: a step of 1/128 (2^7 >= 10^2); 1.5/128 is a tie and goes to 2/128.
    const auto c =
        chain(json::array({codec("numcodecs.quantize", {{"digits", 2}, {"dtype", "<f8"}})}), s);
    Bytes enc;
    const auto out = round_trip(c, s, std::vector<double>{3.14159, 1.5 / 128, -2.71828, 0}, &enc);
    const std::vector<double> want = {402 / 128.0, 2 / 128.0, -348 / 128.0, 0};
    EXPECT_EQ(values_of<double>(enc), want);
    EXPECT_EQ(out, want);
    // digits -1: 2^bits with bits = ceil(log2(10^-1)) = -3, a step of 8.
    const auto coarse =
        chain(json::array({codec("numcodecs.quantize", {{"digits", -1}, {"dtype", "<f8"}})}), s);
    EXPECT_EQ(round_trip(coarse, s, std::vector<double>{37, 3.9, 4.1, -13}),
              (std::vector<double>{40, 0, 8, -16}));
}

TEST(NumcodecsFixedScaleOffset, PacksFloatsIntoSmallIntegers) {
    const auto s = spec_of({4}, data_type_from_name("float64"));
    const auto c =
        chain(json::array(
                  {codec("numcodecs.fixedscaleoffset",
                         {{"offset", 1000}, {"scale", 10}, {"dtype", "<f8"}, {"astype", "|u1"}})}),
              s);
    Bytes enc;
    const auto out = round_trip(c, s, std::vector<double>{1000, 1000.1, 1012.75, 1025.5}, &enc);
    // (x - 1000) * 10 rounded half to even: 0, 1, 127.5 -> 128, 255.
    EXPECT_EQ(enc, (Bytes{0, 1, 128, 255}));
    EXPECT_EQ(out, (std::vector<double>{1000, 1000 + 1 / 10.0, 1000 + 128 / 10.0, 1025.5}));
    // 1026 packs to 260: beyond uint8, refused naming the codec.
    const std::string msg = error_of([&] { c.encode(bytes_of<double>({1026, 0, 0, 0}), s); });
    EXPECT_NE(msg.find("numcodecs.fixedscaleoffset"), std::string::npos) << msg;
    EXPECT_NE(msg.find("out of range"), std::string::npos) << msg;
}

TEST(NumcodecsFixedScaleOffset, IntegerResultsTruncateTowardsZeroAsNumpy) {
    const auto s = spec_of({3}, data_type_from_name("int32"));
    const auto c = chain(json::array({codec("numcodecs.fixedscaleoffset",
                                            {{"offset", 0}, {"scale", 2}, {"astype", "i1"}})}),
                         s);
    // Stored -3, 3, 4 decode as -1.5 -> -1, 1.5 -> 1, 2.
    const Bytes stored = {static_cast<uint8_t>(-3), 3, 4};
    const Bytes enc = c.encode(bytes_of<int32_t>({-1, 1, 2}), s);
    EXPECT_EQ(enc, (Bytes{static_cast<uint8_t>(-2), 2, 4}));
    std::vector<int32_t> out(3);
    // Decode the hand-made stored bytes through the chain (bytes codec: same layout).
    c.decode(stored, s, reinterpret_cast<uint8_t*>(out.data()));
    EXPECT_EQ(out, (std::vector<int32_t>{-1, 1, 2}));
}

TEST(NumcodecsDelta, IntegersWrapLikeNumpy) {
    const auto s = spec_of({5}, data_type_from_name("int16"));
    const auto c = chain(json::array({codec("numcodecs.delta", {{"dtype", "<i2"}})}), s);
    const std::vector<int16_t> in = {5, 7, 4, -32768, 32767};
    Bytes enc;
    EXPECT_EQ(round_trip(c, s, in, &enc), in);
    // -32768 - 4 and 32767 - (-32768) wrap around in int16.
    EXPECT_EQ(values_of<int16_t>(enc), (std::vector<int16_t>{5, 2, -3, 32764, -1}));
    // Differences stored in a narrower type.
    const auto s32 = spec_of({3}, data_type_from_name("int32"));
    const auto c8 =
        chain(json::array({codec("numcodecs.delta", {{"dtype", "int32"}, {"astype", "i1"}})}), s32);
    EXPECT_EQ(round_trip(c8, s32, std::vector<int32_t>{100, 101, 99}, &enc),
              (std::vector<int32_t>{100, 101, 99}));
    EXPECT_EQ(enc, (Bytes{100, 1, static_cast<uint8_t>(-2)}));
}

TEST(NumcodecsDelta, FloatsInTheirOwnArithmetic) {
    const auto s = spec_of({3}, data_type_from_name("float32"));
    const auto c = chain(json::array({codec("numcodecs.delta", {{"dtype", "<f4"}})}), s);
    Bytes enc;
    EXPECT_EQ(round_trip(c, s, std::vector<float>{1.5f, 2.25f, -1.0f}, &enc),
              (std::vector<float>{1.5f, 2.25f, -1.0f}));
    EXPECT_EQ(values_of<float>(enc), (std::vector<float>{1.5f, 0.75f, -3.25f}));
}

TEST(NumcodecsShuffle, GroupsByteKOfEveryElement) {
    const auto s = spec_of({3}, data_type_from_name("uint32"));
    const auto c =
        chain(json::array(), s, json::array({codec("numcodecs.shuffle", {{"elementsize", 4}})}));
    Bytes enc;
    const auto out =
        round_trip(c, s, std::vector<uint32_t>{0x03020100, 0x07060504, 0x0B0A0908}, &enc);
    EXPECT_EQ(enc, (Bytes{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
    EXPECT_EQ(out, (std::vector<uint32_t>{0x03020100, 0x07060504, 0x0B0A0908}));
    const auto bad = make_bytes_to_bytes("numcodecs.shuffle", {{"elementsize", 8}}, "a/zarr.json");
    const std::string msg = error_of([&] { bad->decode(Bytes(12, 0), 12, 1 << 20); });
    EXPECT_NE(msg.find("not a whole number of 8-byte elements"), std::string::npos) << msg;
}

TEST(NumcodecsCompressors, ZlibGzipZstdBloscDecodeOtherWritersAndKeepTheirNames) {
    // zlib.compress(b"hello hello hello world", 1) and gzip.compress(b"numcodecs gzip", mtime=0).
    const Bytes zlib_stream = {120, 1,   203, 72,  205, 201, 201, 87,  200, 64, 34,
                               203, 243, 139, 114, 82,  0,   104, 125, 8,   197};
    const Bytes gzip_stream = {31,  139, 8,   0,  0,  0,  0,  0,  2,  3,   203, 43,
                               205, 77,  206, 79, 73, 77, 46, 86, 72, 175, 202, 44,
                               0,   0,   81,  85, 1,  26, 14, 0,  0,  0};
    const auto text = [](const Bytes& b) { return std::string(b.begin(), b.end()); };
    const auto z = make_bytes_to_bytes("numcodecs.zlib", {{"level", 1}}, "a/zarr.json");
    EXPECT_EQ(text(z->decode(zlib_stream, std::nullopt, 1 << 20)), "hello hello hello world");
    const auto g = make_bytes_to_bytes("numcodecs.gzip", {{"level", 5}}, "a/zarr.json");
    EXPECT_EQ(text(g->decode(gzip_stream, 14, 1 << 20)), "numcodecs gzip");
    const auto zs =
        make_bytes_to_bytes("numcodecs.zstd", {{"level", 3}, {"checksum", false}}, "a/zarr.json");
    const auto bl = make_bytes_to_bytes(
        "numcodecs.blosc", {{"cname", "zstd"}, {"clevel", 3}, {"shuffle", -1}, {"blocksize", 0}},
        "a/zarr.json");
    Bytes data(5000);
    for (size_t i = 0; i < data.size(); ++i)
        data[i] = static_cast<uint8_t>(i % 251);
    for (const auto* c : {z.get(), g.get(), zs.get(), bl.get()}) {
        const Bytes enc = c->encode(data);
        EXPECT_EQ(c->decode(enc, data.size(), 1 << 20), data) << c->name();
    }
    EXPECT_EQ(z->encode(data)[0], 0x78); // a zlib header, not gzip's 1f 8b
    EXPECT_EQ(z->to_json(), codec("numcodecs.zlib", {{"level", 1}}));
    EXPECT_EQ(g->to_json(), codec("numcodecs.gzip", {{"level", 5}}));
    EXPECT_EQ(zs->to_json(), codec("numcodecs.zstd", {{"level", 3}, {"checksum", false}}));
    EXPECT_EQ(bl->to_json()["name"], "numcodecs.blosc");
    // Blosc header: version 2, flags with the bit shuffle (0x04) for numcodecs' automatic
    // shuffle on bytes, typesize 1.
    const Bytes frame = bl->encode(data);
    EXPECT_EQ(frame[2] & 0x04, 0x04);
    EXPECT_EQ(frame[3], 1);
    EXPECT_NE(error_of([] {
                  make_bytes_to_bytes("numcodecs.blosc", {{"shuffle", 3}}, "a/zarr.json");
              }).find("shuffle"),
              std::string::npos);
    // A damaged stream is an error, not data.
    Bytes cut(zlib_stream.begin(), zlib_stream.end() - 6);
    EXPECT_FALSE(error_of([&] { z->decode(cut, std::nullopt, 1 << 20); }).empty());
}

TEST(NumcodecsLz4, SizeHeaderThenOneBlock) {
    // python3-lz4: lz4.block.compress(b"abcabcabcabcabcabc hello", store_size=True), numcodecs'
    // own layout.
    const Bytes frame = {24, 0, 0, 0, 59, 97, 98, 99, 3, 0, 96, 32, 104, 101, 108, 108, 111};
    const std::string text = "abcabcabcabcabcabc hello";
    const auto c = make_bytes_to_bytes("numcodecs.lz4", {{"acceleration", 1}}, "a/zarr.json");
    const Bytes got = c->decode(frame, std::nullopt, 1 << 20);
    EXPECT_EQ(std::string(got.begin(), got.end()), text);
    const Bytes data(text.begin(), text.end());
    const Bytes enc = c->encode(data);
    EXPECT_EQ(Bytes(enc.begin(), enc.begin() + 4), (Bytes{24, 0, 0, 0}));
    EXPECT_EQ(c->decode(enc, data.size(), 1 << 20), data);
    EXPECT_EQ(c->to_json(), codec("numcodecs.lz4", {{"acceleration", 1}}));
    // A header larger than the limit, a wrong expected size, a cut block: errors.
    EXPECT_NE(error_of([&] { c->decode(frame, std::nullopt, 10); }).find("numcodecs.lz4"),
              std::string::npos);
    EXPECT_NE(error_of([&] { c->decode(frame, 23, 1 << 20); }).find("23 bytes expected"),
              std::string::npos);
    const Bytes cut(frame.begin(), frame.end() - 3);
    EXPECT_NE(error_of([&] { c->decode(cut, std::nullopt, 1 << 20); }).find("corrupt"),
              std::string::npos);
}

TEST(NumcodecsChecksums, Crc32Adler32Crc32cWhereNumcodecsPutsThem) {
    const std::string text = "numcodecs checksum";
    const Bytes data(text.begin(), text.end());
    const auto le = [](uint32_t v) {
        return Bytes{uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)};
    };
    const auto cat = [](Bytes a, const Bytes& b) {
        a.insert(a.end(), b.begin(), b.end());
        return a;
    };
    // zlib.crc32 and zlib.adler32 of the text (Python); crc32c's own function.
    struct Case {
        const char* name;
        json config;
        Bytes want;
    };
    const std::vector<Case> cases = {
        {"numcodecs.crc32", json::object(), cat(le(0x23a90bd2), data)},
        {"numcodecs.adler32", json::object(), cat(le(0x448a0735), data)},
        {"numcodecs.crc32", {{"location", "end"}}, cat(data, le(0x23a90bd2))},
        {"numcodecs.crc32c", json::object(), cat(data, le(crc32c(data)))},
        {"numcodecs.crc32c", {{"location", "start"}}, cat(le(crc32c(data)), data)},
    };
    for (const auto& c : cases) {
        const auto codec = make_bytes_to_bytes(c.name, c.config, "a/zarr.json");
        EXPECT_EQ(codec->encode(data), c.want) << c.name << " " << c.config.dump();
        EXPECT_EQ(codec->decode(c.want, data.size(), 1 << 20), data) << c.name;
        Bytes bad = c.want;
        bad[6] ^= 1;
        EXPECT_NE(error_of([&] {
                      codec->decode(bad, data.size(), 1 << 20);
                  }).find(std::string(c.name) + " checksum mismatch"),
                  std::string::npos);
        EXPECT_EQ(codec->to_json()["name"], c.name);
    }
    EXPECT_NE(error_of([] {
                  make_bytes_to_bytes("numcodecs.adler32", {{"location", "middle"}}, "a/zarr.json");
              }).find("location"),
              std::string::npos);
}

TEST(NumcodecsChain, DeltaShuffleZlibRoundTripAndMetadataAsWritten) {
    const auto s = spec_of({4, 8}, data_type_from_name("int32"));
    const json filters = json::array({codec("numcodecs.delta", {{"dtype", "<i4"}})});
    const json after = json::array({codec("numcodecs.shuffle", {{"elementsize", 4}}),
                                    codec("numcodecs.zlib", {{"level", 1}})});
    const auto c = chain(filters, s, after);
    std::vector<int32_t> in(32);
    for (size_t i = 0; i < in.size(); ++i)
        in[i] = static_cast<int32_t>(100000 + 3 * i * i);
    EXPECT_EQ(round_trip(c, s, in), in);
    json want = filters;
    want.push_back(kBytes);
    for (const auto& a : after)
        want.push_back(a);
    EXPECT_EQ(c.to_json(), want);
}

TEST(NumcodecsRefusals, NameTheCodecTheArrayAndTheProblem) {
    const auto f32 = spec_of({4}, data_type_from_name("float32"));
    const auto i16 = spec_of({4}, data_type_from_name("int16"));
    struct Case {
        json filter;
        ChunkSpec spec;
        const char* says;
    };
    const std::vector<Case> cases = {
        {codec("numcodecs.bitround", {{"keepbits", 7}}), i16, "floating-point"},
        {codec("numcodecs.bitround", {{"keepbits", 24}}), f32, "keepbits"},
        {codec("numcodecs.bitround", json::object()), f32, "keepbits"},
        {codec("numcodecs.fixedscaleoffset", {{"scale", 10}, {"dtype", "<f8"}}), f32,
         "not the data type"},
        {codec("numcodecs.fixedscaleoffset", {{"scale", 0}}), f32, "non-zero"},
        {codec("numcodecs.fixedscaleoffset", {{"scale", 1}, {"astype", ">i2"}}), f32, "big-endian"},
        {codec("numcodecs.fixedscaleoffset", {{"scale", 1}, {"astype", "S4"}}), f32,
         "unknown numpy dtype"},
        {codec("numcodecs.delta", {{"dtype", "<f4"}, {"astype", "<i4"}}), f32, "not supported"},
        {codec("numcodecs.delta", {{"elementsize", 4}}), i16, "unknown configuration member"},
        {codec("numcodecs.quantize", {{"digits", 2}, {"astype", "<f2"}}), f32, "not supported"},
        {codec("numcodecs.quantize", {{"digits", 2}}), i16, "not supported"},
    };
    for (const auto& c : cases) {
        const std::string msg = error_of([&] { chain(json::array({c.filter}), c.spec); });
        EXPECT_NE(msg.find(c.filter["name"].get<std::string>()), std::string::npos) << msg;
        EXPECT_NE(msg.find("grp/arr/zarr.json"), std::string::npos) << msg;
        EXPECT_NE(msg.find(c.says), std::string::npos) << msg;
    }
}

}  // namespace ut_codecs_test_numcodecs
