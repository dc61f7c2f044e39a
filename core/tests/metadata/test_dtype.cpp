// Data types, fill values and IEEE half conversions.
#include "zarr3/dtype.hpp"

#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_metadata_test_dtype {

using namespace zarr3;
using nlohmann::json;

namespace {

Bytes fill(const json& j, const std::string& type) {
    return parse_fill_value(j, data_type_from_name(type), "t/zarr.json");
}

template <typename T> T as(const Bytes& b) {
    T v;
    EXPECT_EQ(b.size(), sizeof(T));
    std::memcpy(&v, b.data(), sizeof(T));
    return v;
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const FormatError& e) {
        return e.what();
    } catch (const std::exception& e) {
        return std::string("WRONG EXCEPTION TYPE: ") + e.what();
    }
    return "NO EXCEPTION";
}

} // namespace

TEST(DType, CoreTypes) {
    struct E {
        const char* name;
        DTypeKind kind;
        uint32_t size, swap;
    } table[] = {{"bool", DTypeKind::Bool, 1, 1},
                 {"int8", DTypeKind::Int, 1, 1},
                 {"int16", DTypeKind::Int, 2, 2},
                 {"int32", DTypeKind::Int, 4, 4},
                 {"int64", DTypeKind::Int, 8, 8},
                 {"uint8", DTypeKind::UInt, 1, 1},
                 {"uint16", DTypeKind::UInt, 2, 2},
                 {"uint32", DTypeKind::UInt, 4, 4},
                 {"uint64", DTypeKind::UInt, 8, 8},
                 {"float16", DTypeKind::Float, 2, 2},
                 {"float32", DTypeKind::Float, 4, 4},
                 {"float64", DTypeKind::Float, 8, 8},
                 {"complex64", DTypeKind::Complex, 8, 4},
                 {"complex128", DTypeKind::Complex, 16, 8},
                 {"r8", DTypeKind::Raw, 1, 1},
                 {"r24", DTypeKind::Raw, 3, 1},
                 {"r65536", DTypeKind::Raw, 8192, 1}};
    for (const auto& e : table) {
        const DataType a = parse_data_type(json(e.name), "t");
        const DataType b =
            parse_data_type(json{{"name", e.name}, {"configuration", json::object()}}, "t");
        EXPECT_EQ(a.name, e.name);
        EXPECT_EQ(a.kind, e.kind) << e.name;
        EXPECT_EQ(a.size, e.size) << e.name;
        EXPECT_EQ(a.swap_unit, e.swap) << e.name;
        EXPECT_EQ(b.size, e.size);
        EXPECT_EQ(data_type_to_json(a), json(e.name));
    }
}

TEST(DType, UnknownTypesRefused) {
    for (const char* bad : {"vlen-bytes", "numpy.datetime64", "r0", "r7", "r12", "r", "r08", "r-8",
                            "r65544", "int128", "Float32", ""}) {
        const std::string msg = error_of([&] { parse_data_type(json(bad), "x/zarr.json"); });
        EXPECT_NE(msg.find("x/zarr.json"), std::string::npos) << msg;
        EXPECT_NE(msg.find("data_type"), std::string::npos) << msg;
        EXPECT_NE(msg.find(std::string("\"") + bad + "\""), std::string::npos) << msg;
    }
    EXPECT_NE(error_of([] { parse_data_type(json(5), "x"); }).find("data_type"), std::string::npos);
    EXPECT_NE(error_of([] {
                  parse_data_type(json{{"nom", "int8"}}, "x");
              }).find("data_type"),
              std::string::npos);
    EXPECT_THROW(data_type_from_name("string"), Error);
}

TEST(DType, IntegerFills) {
    EXPECT_EQ(as<int8_t>(fill(-128, "int8")), -128);
    EXPECT_EQ(as<int8_t>(fill(127, "int8")), 127);
    EXPECT_EQ(as<uint8_t>(fill(255, "uint8")), 255);
    EXPECT_EQ(as<int16_t>(fill(-32768, "int16")), -32768);
    EXPECT_EQ(as<uint16_t>(fill(65535, "uint16")), 65535);
    EXPECT_EQ(as<int32_t>(fill(-7, "int32")), -7);
    EXPECT_EQ(as<int64_t>(fill(std::numeric_limits<int64_t>::min(), "int64")),
              std::numeric_limits<int64_t>::min());
    EXPECT_EQ(as<int64_t>(fill(std::numeric_limits<int64_t>::max(), "int64")),
              std::numeric_limits<int64_t>::max());
    const json big = json::parse("18446744073709551615");
    EXPECT_EQ(as<uint64_t>(fill(big, "uint64")), 18446744073709551615ull);
    EXPECT_EQ(as<int32_t>(fill(json::parse("12.0"), "int32")), 12);
    // Out of range or wrong type.
    for (auto [j, t] :
         std::vector<std::pair<json, const char*>>{{128, "int8"},
                                                   {-129, "int8"},
                                                   {256, "uint8"},
                                                   {-1, "uint8"},
                                                   {65536, "uint16"},
                                                   {-1, "uint64"},
                                                   {json::parse("9223372036854775808"), "int64"},
                                                   {json::parse("18446744073709551616"), "uint64"},
                                                   {json::parse("1.5"), "int32"},
                                                   {"NaN", "int32"},
                                                   {true, "int8"},
                                                   {json::array({1, 2}), "int16"}}) {
        const std::string msg =
            error_of([&] { parse_fill_value(j, data_type_from_name(t), "f.json"); });
        EXPECT_NE(msg.find("f.json"), std::string::npos) << msg;
        EXPECT_NE(msg.find("fill_value"), std::string::npos) << msg;
    }
    EXPECT_NE(error_of([] { fill(128, "int8"); }).find("out of range"), std::string::npos);
}

TEST(DType, BoolFills) {
    EXPECT_EQ(fill(true, "bool"), Bytes{1});
    EXPECT_EQ(fill(false, "bool"), Bytes{0});
    EXPECT_THROW(fill(1, "bool"), FormatError);
    EXPECT_THROW(fill("true", "bool"), FormatError);
    EXPECT_EQ(fill_value_to_json(Bytes{1}, data_type_from_name("bool")), json(true));
}

TEST(DType, FloatFills) {
    EXPECT_EQ(as<uint32_t>(fill("0x7fc00000", "float32")), 0x7fc00000u);
    EXPECT_EQ(as<uint32_t>(fill("0x7FC00001", "float32")), 0x7fc00001u);
    EXPECT_EQ(as<uint16_t>(fill("0x7d00", "float16")), 0x7d00u);
    EXPECT_EQ(as<uint64_t>(fill("0x7ff8000000000001", "float64")), 0x7ff8000000000001ull);
    EXPECT_TRUE(std::isnan(as<float>(fill("NaN", "float32"))));
    EXPECT_EQ(as<double>(fill("Infinity", "float64")), INFINITY);
    EXPECT_EQ(as<double>(fill("-Infinity", "float64")), -INFINITY);
    EXPECT_EQ(as<uint16_t>(fill("-Infinity", "float16")), 0xfc00u);
    EXPECT_EQ(as<uint16_t>(fill("NaN", "float16")), 0x7e00u);
    EXPECT_EQ(as<double>(fill(0.1, "float64")), 0.1);
    EXPECT_EQ(as<float>(fill(0.1, "float32")), 0.1f);
    EXPECT_EQ(as<float>(fill(-3, "float32")), -3.0f);
    EXPECT_EQ(as<uint16_t>(fill(1.0, "float16")), 0x3c00u);
    EXPECT_EQ(as<uint16_t>(fill(65504, "float16")), 0x7bffu);
    EXPECT_EQ(as<uint16_t>(fill(-2.0, "float16")), 0xc000u);
    // Wrong width, bad strings, overflow.
    for (auto [j, t] : std::vector<std::pair<json, const char*>>{{"0x7fc0", "float32"},
                                                                 {"0x7fc000000", "float32"},
                                                                 {"0x7fcg0000", "float32"},
                                                                 {"0x7e00", "float64"},
                                                                 {"nan", "float32"},
                                                                 {"inf", "float64"},
                                                                 {true, "float32"},
                                                                 {nullptr, "float64"},
                                                                 {1e300, "float32"},
                                                                 {70000, "float16"}}) {
        const std::string msg =
            error_of([&] { parse_fill_value(j, data_type_from_name(t), "f.json"); });
        EXPECT_NE(msg.find("f.json: fill_value"), std::string::npos) << j.dump() << " " << msg;
    }
}

TEST(DType, ComplexFills) {
    const Bytes c = fill(json::array({1.5, "-Infinity"}), "complex64");
    ASSERT_EQ(c.size(), 8u);
    float re, im;
    std::memcpy(&re, c.data(), 4);
    std::memcpy(&im, c.data() + 4, 4);
    EXPECT_EQ(re, 1.5f);
    EXPECT_EQ(im, -INFINITY);
    const Bytes d = fill(json::array({"NaN", "0x3ff0000000000000"}), "complex128");
    double dre, dim;
    std::memcpy(&dre, d.data(), 8);
    std::memcpy(&dim, d.data() + 8, 8);
    EXPECT_TRUE(std::isnan(dre));
    EXPECT_EQ(dim, 1.0);
    EXPECT_THROW(fill(json::array({1.0}), "complex64"), FormatError);
    EXPECT_THROW(fill(1.0, "complex64"), FormatError);
    EXPECT_NE(error_of([] {
                  fill(json::array({1.0, "x"}), "complex128");
              }).find("fill_value[1]"),
              std::string::npos);
    EXPECT_EQ(fill_value_to_json(d, data_type_from_name("complex128")), json::array({"NaN", 1.0}));
}

TEST(DType, RawFills) {
    EXPECT_EQ(fill(json::array({1, 2, 255}), "r24"), (Bytes{1, 2, 255}));
    EXPECT_THROW(fill(json::array({1, 2}), "r24"), FormatError);
    EXPECT_THROW(fill(json::array({1, 2, 256}), "r24"), FormatError);
    EXPECT_THROW(fill(json::array({1, 2, -1}), "r24"), FormatError);
    EXPECT_EQ(fill_value_to_json(Bytes{1, 2, 255}, data_type_from_name("r24")),
              json::array({1, 2, 255}));
}

TEST(DType, FillValueRoundTrip) {
    const std::vector<std::pair<const char*, json>> cases = {
        {"bool", true},
        {"int8", -5},
        {"int16", -32768},
        {"int64", std::numeric_limits<int64_t>::min()},
        {"uint64", json::parse("18446744073709551615")},
        {"uint32", 4294967295u},
        {"float32", "NaN"},
        {"float32", "0x7fc00001"},
        {"float32", "0xffc00000"},
        {"float16", "0x7d00"},
        {"float16", "Infinity"},
        {"float64", "-Infinity"},
        {"float64", 0.1},
        {"float64", -0.0},
        {"float32", 0.5},
        {"complex64", json::array({"NaN", 2.0})},
        {"complex128", json::array({"0x7ff0000000000001", "-Infinity"})},
    };
    for (const auto& [t, j] : cases) {
        const DataType dt = data_type_from_name(t);
        const json back = fill_value_to_json(parse_fill_value(j, dt, "w"), dt);
        EXPECT_EQ(back, j) << t << " " << j.dump() << " -> " << back.dump();
        EXPECT_EQ(parse_fill_value(back, dt, "w"), parse_fill_value(j, dt, "w"));
    }
    EXPECT_TRUE(fill_value_to_json(fill(json::parse("18446744073709551615"), "uint64"),
                                   data_type_from_name("uint64"))
                    .is_number_unsigned());
    EXPECT_EQ(fill_value_to_json(fill("0x7fc00001", "float32"), data_type_from_name("float32")),
              json("0x7fc00001"));
    EXPECT_EQ(fill_value_to_json(fill("0x7fc00000", "float32"), data_type_from_name("float32")),
              json("NaN"));
}

TEST(Half, ExhaustiveRoundTrip) {
    for (uint32_t h = 0; h < 65536; ++h) {
        const float f = half_to_float(static_cast<uint16_t>(h));
        ASSERT_EQ(float_to_half(f), h) << std::hex << h;
    }
}

TEST(Half, KnownValues) {
    EXPECT_EQ(half_to_float(0x3c00), 1.0f);
    EXPECT_EQ(half_to_float(0xc000), -2.0f);
    EXPECT_EQ(half_to_float(0x7bff), 65504.0f);
    EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));
    EXPECT_EQ(half_to_float(0x03ff), std::ldexp(1023.0f, -24));
    EXPECT_EQ(half_to_float(0x0400), std::ldexp(1.0f, -14));
    EXPECT_EQ(half_to_float(0x7c00), INFINITY);
    EXPECT_EQ(half_to_float(0xfc00), -INFINITY);
    EXPECT_TRUE(std::isnan(half_to_float(0x7e00)));
    EXPECT_TRUE(std::signbit(half_to_float(0x8000)));
}

TEST(Half, Rounding) {
    // Ties to even in the normal range: 1 + 2^-11 lies halfway between 1 and 1 + 2^-10.
    EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
    EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
    EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3c01);
    // Overflow: 65520 is the halfway point to 2^16 and rounds to infinity.
    EXPECT_EQ(float_to_half(65519.0f), 0x7bff);
    EXPECT_EQ(float_to_half(65520.0f), 0x7c00);
    EXPECT_EQ(float_to_half(-1e10f), 0xfc00);
    // Subnormals: 2^-25 is halfway between 0 and the smallest subnormal (ties to 0).
    EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000);
    EXPECT_EQ(float_to_half(std::ldexp(1.5f, -25)), 0x0001);
    EXPECT_EQ(float_to_half(std::ldexp(3.0f, -25)), 0x0002); // 1.5 ulp -> even (2)
    EXPECT_EQ(float_to_half(-std::ldexp(1.0f, -30)), 0x8000);
    // Largest subnormal rounding up into the smallest normal.
    EXPECT_EQ(float_to_half(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -26)), 0x0400);
    EXPECT_EQ(float_to_half(std::ldexp(1.0f, -149)), 0x0000);
    // NaN payloads survive.
    EXPECT_EQ(float_to_half(std::bit_cast<float>(0x7fc00000u)), 0x7e00);
    EXPECT_EQ(float_to_half(std::bit_cast<float>(0xffa00000u)), 0xfd00);
    EXPECT_EQ(float_to_half(std::bit_cast<float>(0x7f800001u)) & 0x7c00, 0x7c00);
    EXPECT_NE(float_to_half(std::bit_cast<float>(0x7f800001u)) & 0x3ff, 0);
    // A sweep against a simple reference: round half to even over all halves' midpoints.
    for (uint32_t h = 0; h < 0x7bff; ++h) {
        const double lo = half_to_float(static_cast<uint16_t>(h));
        const double hi = half_to_float(static_cast<uint16_t>(h + 1));
        const float mid = static_cast<float>((lo + hi) / 2); // exact in float
        const uint16_t expect = static_cast<uint16_t>((h & 1) ? h + 1 : h);
        ASSERT_EQ(float_to_half(mid), expect) << std::hex << h;
        ASSERT_EQ(float_to_half(std::nextafter(mid, 0.0f)), h) << std::hex << h;
        ASSERT_EQ(float_to_half(std::nextafter(mid, INFINITY)), h + 1) << std::hex << h;
    }
}

}  // namespace ut_metadata_test_dtype
