// Extension data types: numpy.datetime64 / numpy.timedelta64, fixed_length_utf32,
// null_terminated_bytes; refusals that name the type.
#include "zarr3/dtype.hpp"

#include "codecs/codec_test_util.hpp"

#include <cstring>
#include <gtest/gtest.h>
#include <limits>
#include <nlohmann/json.hpp>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_metadata_test_dtype_ext {

using namespace zarr3;
using nlohmann::json;

namespace {

using codectest::error_of;

int64_t as_i64(const Bytes& b) {
    int64_t v = 0;
    EXPECT_EQ(b.size(), 8u);
    std::memcpy(&v, b.data(), 8);
    return v;
}

json time_type(const char* name, const char* unit, int scale) {
    return {{"name", name}, {"configuration", {{"unit", unit}, {"scale_factor", scale}}}};
}

} // namespace

TEST(DTypeExt, DateTimeAndTimeDelta) {
    const DataType dt = parse_data_type(time_type("numpy.datetime64", "s", 10), "a/zarr.json");
    EXPECT_EQ(dt.kind, DTypeKind::Int);
    EXPECT_EQ(dt.size, 8u);
    EXPECT_EQ(dt.swap_unit, 8u);
    EXPECT_EQ(dt.time_unit, "s");
    EXPECT_EQ(dt.time_scale, 10u);
    EXPECT_TRUE(dt.is_datetime());
    EXPECT_EQ(data_type_to_json(dt), time_type("numpy.datetime64", "s", 10));
    const DataType td = parse_data_type(time_type("numpy.timedelta64", "μs", 1), "a");
    EXPECT_EQ(td.time_unit, "us");
    EXPECT_FALSE(td.is_datetime());
    EXPECT_TRUE(td.is_temporal());
    EXPECT_FALSE(dt == td);
    EXPECT_FALSE(dt == parse_data_type(time_type("numpy.datetime64", "ms", 10), "a"));
    EXPECT_EQ(as_i64(parse_fill_value("NaT", dt, "a")), kNaT);
    EXPECT_EQ(as_i64(parse_fill_value(-5, dt, "a")), -5);
    EXPECT_EQ(as_i64(parse_fill_value(json(int64_t(INT64_MIN)), dt, "a")), kNaT);
    const Bytes nat = parse_fill_value("NaT", dt, "a");
    EXPECT_EQ(fill_value_to_json(nat, dt), json("NaT"));
    EXPECT_EQ(fill_value_to_json(parse_fill_value(1700000000, dt, "a"), dt), json(1700000000));
}

TEST(DTypeExt, DateTimeRefusals) {
    const std::vector<std::pair<json, std::string>> bad = {
        {json("numpy.datetime64"), "configuration"},
        {time_type("numpy.datetime64", "fortnight", 1), "unit"},
        {time_type("numpy.datetime64", "s", 0), "scale_factor"},
        {json{{"name", "numpy.datetime64"}, {"configuration", {{"unit", "s"}}}}, "scale_factor"},
        {json{{"name", "numpy.timedelta64"},
              {"configuration", {{"unit", "s"}, {"scale_factor", 1}, {"x", 1}}}},
         "configuration.x"},
    };
    for (const auto& [j, member] : bad) {
        const std::string msg = error_of([&] { parse_data_type(j, "t/zarr.json"); });
        EXPECT_NE(msg.find("t/zarr.json"), std::string::npos) << msg;
        EXPECT_NE(msg.find(member), std::string::npos) << msg;
        EXPECT_EQ(msg.find("takes no configuration"), std::string::npos) << msg;
    }
    const DataType dt = parse_data_type(time_type("numpy.datetime64", "D", 1), "a");
    EXPECT_NE(error_of([&] { parse_fill_value("now", dt, "a"); }).find("NaT"), std::string::npos);
    EXPECT_NE(error_of([&] { parse_fill_value(1.5, dt, "a"); }).find("fill_value"),
              std::string::npos);
}

TEST(DTypeExt, FixedLengthUtf32) {
    const json j = {{"name", "fixed_length_utf32"}, {"configuration", {{"length_bytes", 12}}}};
    const DataType dt = parse_data_type(j, "a");
    EXPECT_EQ(dt.kind, DTypeKind::Utf32);
    EXPECT_EQ(dt.size, 12u);
    EXPECT_EQ(dt.swap_unit, 4u);
    EXPECT_EQ(data_type_to_json(dt), j);
    const Bytes f = parse_fill_value("é€", dt, "a");
    const Bytes expect = {0xe9, 0, 0, 0, 0xac, 0x20, 0, 0, 0, 0, 0, 0};
    EXPECT_EQ(f, expect);
    EXPECT_EQ(fill_value_to_json(f, dt), json("é€"));
    EXPECT_NE(error_of([&] { parse_fill_value("abcd", dt, "a"); }).find("more than"),
              std::string::npos);
    EXPECT_NE(error_of([&] { parse_fill_value("\xff", dt, "a"); }).find("UTF-8"),
              std::string::npos);
    for (int bad : {0, 6, -4})
        EXPECT_NE(error_of([&] {
                      parse_data_type(json{{"name", "fixed_length_utf32"},
                                           {"configuration", {{"length_bytes", bad}}}},
                                      "a");
                  }).find("length_bytes"),
                  std::string::npos);
    // A zero ends the text.
    const uint8_t raw[] = {'w', 0, 0, 0, 'x', 0, 0, 0, 0, 0, 0, 0, 'y', 0, 0, 0};
    EXPECT_EQ(utf32_to_utf8(raw, sizeof raw), "wx");
    uint8_t out[8];
    EXPECT_THROW(utf8_to_utf32("\xc0\x80", out, 8), Error);     // overlong
    EXPECT_THROW(utf8_to_utf32("\xed\xa0\x80", out, 8), Error); // surrogate
}

TEST(DTypeExt, NullTerminatedBytes) {
    const json j = {{"name", "null_terminated_bytes"}, {"configuration", {{"length_bytes", 5}}}};
    const DataType dt = parse_data_type(j, "a");
    EXPECT_EQ(dt.kind, DTypeKind::NullTerminatedBytes);
    EXPECT_EQ(dt.size, 5u);
    EXPECT_EQ(data_type_to_json(dt), j);
    const Bytes f = parse_fill_value("YWJj", dt, "a"); // "abc"
    EXPECT_EQ(f, (Bytes{'a', 'b', 'c', 0, 0}));
    EXPECT_EQ(fill_value_to_json(f, dt), json("YWJj"));
    EXPECT_EQ(fill_value_to_json(parse_fill_value("", dt, "a"), dt), json(""));
    EXPECT_NE(error_of([&] { parse_fill_value("YWJjZGVmZw==", dt, "a"); }).find("more than"),
              std::string::npos);
}

TEST(DTypeExt, RefusalsNameTheType) {
    for (const char* name : {"float8_e4m3fn", "variable_length_bytes", "bfloat16", "raw_bytes"}) {
        const std::string msg = error_of([&] { parse_data_type(json(name), "arr/zarr.json"); });
        EXPECT_NE(msg.find("unsupported data type \"" + std::string(name) + "\""),
                  std::string::npos)
            << msg;
        EXPECT_NE(msg.find("arr/zarr.json"), std::string::npos) << msg;
    }
    EXPECT_NE(error_of([] {
                  parse_data_type(
                      json{{"name", "raw_bytes"}, {"configuration", {{"length_bytes", 4}}}}, "arr");
              }).find("unsupported data type \"raw_bytes\""),
              std::string::npos);
    EXPECT_NE(error_of([] {
                  parse_data_type(json{{"name", "int8"}, {"configuration", {{"x", 1}}}}, "arr");
              }).find("takes no configuration"),
              std::string::npos);
}

// Invalid UTF-32 code points (surrogates, past U+10FFFF) are refused with an
// error naming the code point and its place, never read as U+FFFD (issue 33,
// "also seen"; numpy refuses code points past U+10FFFF as well).
TEST(DtypeExt, InvalidUtf32CodePointsAreRefused) {
    const uint8_t surrogate[] = {'a', 0, 0, 0, 0x00, 0xd8, 0, 0};
    const uint8_t too_big[] = {0x00, 0x00, 0x11, 0x00};
    const uint8_t huge[] = {0xff, 0xff, 0xff, 0xff};
    const auto msg = error_of([&] { utf32_to_utf8(surrogate, sizeof surrogate); });
    EXPECT_NE(msg.find("U+D800"), std::string::npos) << msg;
    EXPECT_NE(msg.find("character 1"), std::string::npos) << msg;
    EXPECT_NE(error_of([&] { utf32_to_utf8(too_big, sizeof too_big); }).find("U+110000"),
              std::string::npos);
    EXPECT_THROW(utf32_to_utf8(huge, sizeof huge), FormatError);
    // The highest valid code points still decode.
    const uint8_t edge[] = {0xff, 0xff, 0x10, 0x00, 0xff, 0xd7, 0, 0, 0x00, 0xe0, 0, 0};
    EXPECT_EQ(utf32_to_utf8(edge, sizeof edge), "\xf4\x8f\xbf\xbf\xed\x9f\xbf\xee\x80\x80");
}

// Temporal values in scaled units are int64 counts kept exactly, never
// converted: extremes of a "10 ms"/"10 us" unit stay themselves and only
// int64 min is NaT (issue 33 #16 class).
TEST(DtypeExt, ScaledTemporalExtremesStayExact) {
    for (const char* name : {"numpy.timedelta64", "numpy.datetime64"})
        for (const char* unit : {"ms", "us", "ns", "Y"}) {
            const DataType dt = parse_data_type(
                json{{"name", name}, {"configuration", {{"unit", unit}, {"scale_factor", 10}}}},
                "t/zarr.json");
            for (int64_t v :
                 {int64_t{922337203685477579}, int64_t{-922337203685477579},
                  std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min() + 1}) {
                const Bytes b = parse_fill_value(json(v), dt, "t/zarr.json");
                int64_t got = 0;
                std::memcpy(&got, b.data(), 8);
                EXPECT_EQ(got, v) << name << " " << unit;
                EXPECT_EQ(fill_value_to_json(b, dt), json(v)) << name << " " << unit;
            }
            const Bytes nat = parse_fill_value(json("NaT"), dt, "t/zarr.json");
            EXPECT_EQ(fill_value_to_json(nat, dt), json("NaT"));
        }
}

}  // namespace ut_metadata_test_dtype_ext
