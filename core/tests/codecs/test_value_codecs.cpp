// scale_offset and cast_value (array->array codecs from zarr-extensions), and zstd
// with a checksum.
#include "codecs/codec_test_util.hpp"

#include <cmath>
#include <cstring>
#include <gtest/gtest.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_codecs_test_value_codecs {

using namespace codectest;
using nlohmann::json;

namespace {

CodecChain chain(const json& aa, const ChunkSpec& s) {
    json codecs = aa;
    codecs.push_back(kBytes);
    return CodecChain::parse(codecs, s, "arr/zarr.json");
}

} // namespace

TEST(ScaleOffset, FloatRoundTripAndEncodedBytes) {
    const auto s = spec_of({4}, data_type_from_name("float64"));
    const auto c = chain(json::array({{{"name", "scale_offset"},
                                       {"configuration", {{"offset", 10}, {"scale", 4}}}}}),
                         s);
    const Bytes in = bytes_of<double>({10, 10.25, 12, -2});
    const Bytes enc = c.encode(in, s);
    EXPECT_EQ(values_of<double>(enc), (std::vector<double>{0, 1, 8, -48}));
    Bytes out(in.size());
    c.decode(enc, s, out.data());
    EXPECT_EQ(out, in);
}

TEST(ScaleOffset, IntegersExactOrError) {
    const auto s = spec_of({3}, data_type_from_name("int16"));
    const auto c = chain(json::array({{{"name", "scale_offset"},
                                       {"configuration", {{"offset", -5}, {"scale", 3}}}}}),
                         s);
    const Bytes enc = c.encode(bytes_of<int16_t>({-5, 0, 100}), s);
    EXPECT_EQ(values_of<int16_t>(enc), (std::vector<int16_t>{0, 15, 315}));
    Bytes out(6);
    c.decode(enc, s, out.data());
    EXPECT_EQ(values_of<int16_t>(out), (std::vector<int16_t>{-5, 0, 100}));
    // 20000 + 5 = 20005, * 3 overflows int16.
    EXPECT_NE(error_of([&] {
                  c.encode(bytes_of<int16_t>({20000, 0, 0}), s);
              }).find("range"),
              std::string::npos);
    // 7 is not a multiple of the scale: no exact decoding.
    EXPECT_NE(error_of([&] {
                  c.decode(bytes_of<int16_t>({7, 0, 0}), s, out.data());
              }).find("remainder"),
              std::string::npos);
}

TEST(ScaleOffset, Refusals) {
    const auto s = spec_of({3}, data_type_from_name("int16"));
    for (const json& cfg :
         {json{{"scale", 0}}, json{{"scale", 1.5}}, json{{"offset", 1}, {"x", 2}}})
        EXPECT_NE(error_of([&] {
                      chain(json::array({{{"name", "scale_offset"}, {"configuration", cfg}}}), s);
                  }).find("scale_offset"),
                  std::string::npos)
            << cfg.dump();
}

TEST(CastValue, FloatToUint8RoundingAndRange) {
    const auto s = spec_of({5}, data_type_from_name("float32"));
    const json cv = {{"name", "cast_value"},
                     {"configuration", {{"data_type", "uint8"}, {"out_of_range", "clamp"}}}};
    const auto c = chain(json::array({cv}), s);
    const Bytes enc = c.encode(bytes_of<float>({0.5f, 1.5f, 2.4f, -3.f, 300.f}), s);
    EXPECT_EQ(enc, (Bytes{0, 2, 2, 0, 255})); // nearest-even; clamped
    Bytes out(20);
    c.decode(enc, s, out.data());
    EXPECT_EQ(values_of<float>(out), (std::vector<float>{0, 2, 2, 0, 255}));
    // Default out_of_range is "error"; NaN never fits an integer.
    const json strict = {{"name", "cast_value"}, {"configuration", {{"data_type", "uint8"}}}};
    const auto c2 = chain(json::array({strict}), s);
    EXPECT_NE(error_of([&] {
                  c2.encode(bytes_of<float>({0, 0, 0, 0, 256.f}), s);
              }).find("range"),
              std::string::npos);
    EXPECT_NE(error_of([&] {
                  c2.encode(bytes_of<float>({0, 0, 0, 0, NAN}), s);
              }).find("NaN"),
              std::string::npos);
}

TEST(CastValue, WrapRoundingModesAndScalarMap) {
    const auto s = spec_of({4}, data_type_from_name("float64"));
    const json cv = {{"name", "cast_value"},
                     {"configuration",
                      {{"data_type", "int8"},
                       {"rounding", "towards-negative"},
                       {"out_of_range", "wrap"},
                       {"scalar_map",
                        {{"encode", json::array({json::array({"NaN", -128})})},
                         {"decode", json::array({json::array({-128, "NaN"})})}}}}}};
    const auto c = chain(json::array({cv}), s);
    const Bytes enc = c.encode(bytes_of<double>({-0.5, 129.9, NAN, 2.7}), s);
    EXPECT_EQ(values_of<int8_t>(enc), (std::vector<int8_t>{-1, -127, -128, 2}));
    Bytes out(32);
    c.decode(enc, s, out.data());
    const auto back = values_of<double>(out);
    EXPECT_EQ(back[0], -1);
    EXPECT_EQ(back[1], -127);
    EXPECT_TRUE(std::isnan(back[2]));
    EXPECT_EQ(back[3], 2);
}

TEST(CastValue, ScaleOffsetThenCastAsZarrPythonWrites) {
    // float32 temperatures -> (x - 250) * 10 -> uint16 (232.5 rounds to even: 232)
    const auto s = spec_of({3}, data_type_from_name("float32"));
    const json codecs = json::array(
        {{{"name", "scale_offset"}, {"configuration", {{"offset", 250}, {"scale", 10}}}},
         {{"name", "cast_value"}, {"configuration", {{"data_type", "uint16"}}}}});
    const auto c = chain(codecs, s);
    const Bytes enc = c.encode(bytes_of<float>({250.f, 273.25f, 300.5f}), s);
    EXPECT_EQ(values_of<uint16_t>(enc), (std::vector<uint16_t>{0, 232, 505}));
    Bytes out(12);
    c.decode(enc, s, out.data());
    const auto back = values_of<float>(out);
    EXPECT_FLOAT_EQ(back[1], 273.2f);
    EXPECT_FLOAT_EQ(back[2], 300.5f);
}

TEST(CastValue, Refusals) {
    const auto s = spec_of({3}, data_type_from_name("float32"));
    for (const json& cfg :
         {json{{"rounding", "up"}, {"data_type", "uint8"}}, json::object(),
          json{{"data_type", "float16"}, {"out_of_range", "wrap"}}, json{{"data_type", "bool"}}})
        EXPECT_NE(error_of([&] {
                      chain(json::array({{{"name", "cast_value"}, {"configuration", cfg}}}), s);
                  }).find("cast_value"),
                  std::string::npos)
            << cfg.dump();
}

TEST(Zstd, ChecksumWrittenAndVerified) {
    const auto s = spec_of({256}, data_type_from_name("uint8"));
    json codecs = json::array(
        {kBytes, {{"name", "zstd"}, {"configuration", {{"level", 3}, {"checksum", true}}}}});
    const auto c = CodecChain::parse(codecs, s, "arr/zarr.json");
    Bytes in(256);
    for (size_t i = 0; i < in.size(); ++i)
        in[i] = static_cast<uint8_t>(i * 7);
    Bytes enc = c.encode(in, s);
    ASSERT_GT(enc.size(), 8u);
    EXPECT_EQ(enc[4] & 0x04, 0x04); // frame header: content checksum flag
    Bytes out(256);
    c.decode(enc, s, out.data());
    EXPECT_EQ(out, in);
    enc[enc.size() - 1] ^= 0xff; // the checksum itself
    EXPECT_NE(error_of([&] { c.decode(enc, s, out.data()); }).find("checksum"), std::string::npos);
}

TEST(CodecRefusals, NameTheCodecAndTheArray) {
    const auto s = spec_of({4}, data_type_from_name("float32"));
    for (const char* name : {"numcodecs.lzma", "pcodec", "zfp", "numcodecs.bz2", "bitround",
                             "optional", "vlen-bytes", "numcodecs.packbits"}) {
        const std::string msg = error_of([&] {
            CodecChain::parse(json::array({{{"name", name}}, kBytes}), s, "grp/arr/zarr.json");
        });
        EXPECT_NE(msg.find(std::string("\"") + name + "\""), std::string::npos) << msg;
        EXPECT_NE(msg.find("grp/arr/zarr.json"), std::string::npos) << msg;
        EXPECT_NE(msg.find("not supported"), std::string::npos) << msg;
    }
}

}  // namespace ut_codecs_test_value_codecs
