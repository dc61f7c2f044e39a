// Zarr v3 core data types, fill values (JSON <-> little-endian bytes) and IEEE half conversions.
#include "zarr3/dtype.hpp"

#include "metadata/dtype_ext.hpp"
#include "metadata/json_int.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

namespace zarr3 {
namespace {

using nlohmann::json;

constexpr uint32_t kMaxRawBits = 1u << 16;

using detail::fail_member;

using detail::dump_short;
using detail::json_uint;

// Half from a double, rounding to nearest even (float -> double is exact, so
// this also serves float_to_half without double rounding).
uint16_t double_to_half(double d) {
    uint64_t bits = std::bit_cast<uint64_t>(d);
    const uint16_t sign = static_cast<uint16_t>((bits >> 48) & 0x8000u);
    const uint64_t exp = (bits >> 52) & 0x7ff;
    const uint64_t mant = bits & ((uint64_t{1} << 52) - 1);
    if (exp == 0x7ff) {
        if (mant == 0) return sign | 0x7c00u;
        uint16_t payload = static_cast<uint16_t>(mant >> 42);
        if (payload == 0) payload = 0x200;
        return sign | 0x7c00u | payload;
    }
    const uint64_t sig = exp ? (mant | (uint64_t{1} << 52)) : mant;
    if (sig == 0) return sign;
    const int e2 = static_cast<int>(exp ? exp : 1) - 1075; // value = sig * 2^e2
    const int E = (63 - std::countl_zero(sig)) + e2;       // floor(log2(value))
    if (E > 15) return sign | 0x7c00u;
    const bool subnormal = E < -14;
    const int qe = (subnormal ? -14 : E) - 10; // exponent of one unit in the last place
    const int shift = qe - e2;
    uint64_t n = 0;
    if (shift <= 0) {
        n = sig << (-shift); // exact; only small shifts are possible here
    } else if (shift < 64) {
        n = sig >> shift;
        const uint64_t rem = sig & ((uint64_t{1} << shift) - 1);
        const uint64_t halfway = uint64_t{1} << (shift - 1);
        if (rem > halfway || (rem == halfway && (n & 1))) ++n;
    }
    uint64_t h = subnormal ? n : (static_cast<uint64_t>(E + 15) << 10) + (n - 1024);
    if (h >= 0x7c00) return sign | 0x7c00u;
    return sign | static_cast<uint16_t>(h);
}

void put_le(Bytes& out, uint64_t v, uint32_t size) {
    for (uint32_t i = 0; i < size; ++i)
        out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

uint64_t get_le(const uint8_t* p, uint32_t size) {
    uint64_t v = 0;
    for (uint32_t i = 0; i < size; ++i)
        v |= static_cast<uint64_t>(p[i]) << (8 * i);
    return v;
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// "0x..." with exactly 2*size hex digits -> little-endian bytes.
bool parse_hex(const std::string& s, uint32_t size, Bytes& out) {
    if (s.size() != 2 + 2 * static_cast<size_t>(size) || s[0] != '0' ||
        (s[1] != 'x' && s[1] != 'X'))
        return false;
    Bytes be;
    for (size_t i = 2; i < s.size(); i += 2) {
        const int hi = hex_digit(s[i]), lo = hex_digit(s[i + 1]);
        if (hi < 0 || lo < 0) return false;
        be.push_back(static_cast<uint8_t>(hi * 16 + lo));
    }
    out.insert(out.end(), be.rbegin(), be.rend());
    return true;
}

std::string to_hex(const uint8_t* p, uint32_t size) {
    static const char* digits = "0123456789abcdef";
    std::string s = "0x";
    for (uint32_t i = size; i-- > 0;) {
        s += digits[p[i] >> 4];
        s += digits[p[i] & 15];
    }
    return s;
}

// One float component of `size` bytes (2, 4 or 8) appended to `out`.
void parse_float(const json& j, uint32_t size, const std::string& tname, Bytes& out,
                 const std::string& where, const std::string& member) {
    double d = 0;
    if (j.is_string()) {
        const std::string s = j.get<std::string>();
        if (s == "NaN") {
            d = std::numeric_limits<double>::quiet_NaN();
        } else if (s == "Infinity") {
            d = std::numeric_limits<double>::infinity();
        } else if (s == "-Infinity") {
            d = -std::numeric_limits<double>::infinity();
        } else if (s.rfind("0x", 0) == 0 || s.rfind("0X", 0) == 0) {
            if (!parse_hex(s, size, out))
                fail_member(where, member,
                            "expected a hex bit pattern of exactly " + std::to_string(2 * size) +
                                " digits for " + tname + ", got \"" + s + "\"");
            return;
        } else {
            fail_member(
                where, member,
                "expected a number, \"NaN\", \"Infinity\", \"-Infinity\" or \"0x...\" for " +
                    tname + ", got " + dump_short(j));
        }
    } else if (j.is_number()) {
        d = j.get<double>();
    } else {
        fail_member(where, member,
                    "expected a number or string for " + tname + ", got " + dump_short(j));
    }
    if (size == 8) {
        put_le(out, std::bit_cast<uint64_t>(d), 8);
        return;
    }
    if (size == 4) {
        const float f = static_cast<float>(d);
        if (std::isinf(f) && std::isfinite(d))
            fail_member(where, member, dump_short(j) + " is out of range for " + tname);
        put_le(out, std::bit_cast<uint32_t>(f), 4);
        return;
    }
    const uint16_t h = double_to_half(d);
    if ((h & 0x7fff) == 0x7c00 && std::isfinite(d))
        fail_member(where, member, dump_short(j) + " is out of range for " + tname);
    put_le(out, h, 2);
}

json float_to_json(const uint8_t* p, uint32_t size) {
    double d = 0;
    uint64_t canonical_nan = 0;
    const uint64_t bits = get_le(p, size);
    if (size == 2) {
        d = half_to_float(static_cast<uint16_t>(bits));
        canonical_nan = 0x7e00;
    } else if (size == 4) {
        d = std::bit_cast<float>(static_cast<uint32_t>(bits));
        canonical_nan = 0x7fc00000;
    } else {
        d = std::bit_cast<double>(bits);
        canonical_nan = 0x7ff8000000000000ull;
    }
    if (std::isnan(d)) return bits == canonical_nan ? json("NaN") : json(to_hex(p, size));
    if (std::isinf(d)) return json(d > 0 ? "Infinity" : "-Infinity");
    return json(d);
}

void parse_int(const json& j, const DataType& dt, Bytes& out, const std::string& where) {
    const bool is_signed = dt.kind == DTypeKind::Int;
    const uint32_t bits = dt.size * 8;
    const std::string got = dump_short(j);
    const auto range_error = [&]() {
        fail_member(where, "fill_value", got + " is out of range for " + dt.name);
    };
    if (const auto u = json_uint(j)) {
        const uint64_t v = *u;
        const uint64_t maxv = is_signed ? (uint64_t{1} << (bits - 1)) - 1
                                        : (bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1);
        if (v > maxv) range_error();
        put_le(out, v, dt.size);
    } else if (j.is_number_integer()) {
        const int64_t v = j.get<int64_t>();
        if (!is_signed) range_error(); // negative
        const int64_t minv =
            bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1));
        const int64_t maxv =
            bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
        if (v < minv || v > maxv) range_error();
        put_le(out, static_cast<uint64_t>(v), dt.size);
    } else if (j.is_number_float()) {
        const double d = j.get<double>();
        if (!std::isfinite(d) || d != std::floor(d))
            fail_member(where, "fill_value", "expected an integer for " + dt.name + ", got " + got);
        const double lo = is_signed ? -std::ldexp(1.0, static_cast<int>(bits) - 1) : 0.0;
        const double hi = std::ldexp(1.0, static_cast<int>(is_signed ? bits - 1 : bits));
        if (d < lo || d >= hi) range_error();
        if (is_signed)
            put_le(out, static_cast<uint64_t>(static_cast<int64_t>(d)), dt.size);
        else
            put_le(out, static_cast<uint64_t>(d), dt.size);
    } else {
        fail_member(where, "fill_value", "expected an integer for " + dt.name + ", got " + got);
    }
}

} // namespace

unsigned mantissa_bits(const DataType& dt) {
    if (dt.kind != DTypeKind::Float) return 0;
    return dt.size == 2 ? 10 : dt.size == 4 ? 23 : 52;
}

float half_to_float(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1f;
    const uint32_t mant = h & 0x3ffu;
    if (exp == 0) {
        const float v = std::ldexp(static_cast<float>(mant), -24);
        return sign ? -v : v;
    }
    if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
    return std::bit_cast<float>(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

uint16_t float_to_half(float f) {
    // NaNs are handled on the float bits: float -> double conversion would quiet a signalling NaN.
    const uint32_t bits = std::bit_cast<uint32_t>(f);
    if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x7fffffu) != 0) {
        uint16_t payload = static_cast<uint16_t>((bits & 0x7fffffu) >> 13);
        if (payload == 0) payload = 0x200;
        return static_cast<uint16_t>(((bits >> 16) & 0x8000u) | 0x7c00u | payload);
    }
    return double_to_half(static_cast<double>(f));
}

DataType data_type_from_name(const std::string& name) {
    struct Entry {
        const char* name;
        DTypeKind kind;
        uint32_t size, swap;
    };
    static const Entry table[] = {
        {"bool", DTypeKind::Bool, 1, 1},         {"int8", DTypeKind::Int, 1, 1},
        {"int16", DTypeKind::Int, 2, 2},         {"int32", DTypeKind::Int, 4, 4},
        {"int64", DTypeKind::Int, 8, 8},         {"uint8", DTypeKind::UInt, 1, 1},
        {"uint16", DTypeKind::UInt, 2, 2},       {"uint32", DTypeKind::UInt, 4, 4},
        {"uint64", DTypeKind::UInt, 8, 8},       {"float16", DTypeKind::Float, 2, 2},
        {"float32", DTypeKind::Float, 4, 4},     {"float64", DTypeKind::Float, 8, 8},
        {"complex64", DTypeKind::Complex, 8, 4}, {"complex128", DTypeKind::Complex, 16, 8},
    };
    for (const Entry& e : table)
        if (name == e.name) return DataType{e.name, e.kind, e.size, e.swap};
    // r<N>: N a positive multiple of 8, canonical digits (no sign, no leading zero).
    if (name.size() >= 2 && name.size() <= 7 && name[0] == 'r' && name[1] != '0') {
        uint32_t bits = 0;
        bool ok = true;
        for (size_t i = 1; i < name.size(); ++i) {
            if (name[i] < '0' || name[i] > '9') {
                ok = false;
                break;
            }
            bits = bits * 10 + static_cast<uint32_t>(name[i] - '0');
        }
        if (ok && bits > 0 && bits % 8 == 0 && bits <= kMaxRawBits)
            return DataType{name, DTypeKind::Raw, bits / 8, 1};
    }
    throw Error("unsupported data type \"" + name + "\"");
}

DataType parse_data_type(const json& j, const std::string& where) {
    std::string name;
    json config; // null when absent
    if (j.is_string()) {
        name = j.get<std::string>();
    } else if (j.is_object()) {
        const auto it = j.find("name");
        if (it == j.end() || !it->is_string())
            fail_member(where, "data_type.name", "expected a string naming the data type");
        name = it->get<std::string>();
        for (const auto& [key, value] : j.items()) {
            if (key == "name") continue;
            if (key != "configuration" && key != "must_understand")
                fail_member(where, "data_type." + key, "unexpected member of data_type");
            if (key == "configuration") config = value;
        }
    } else {
        fail_member(where, "data_type", "expected a string or an object, got " + dump_short(j));
    }
    if (auto ext = detail::parse_extension_type(name, config, where)) return *ext;
    DataType dt;
    try {
        dt = data_type_from_name(name);
    } catch (const Error&) {
        fail_member(
            where, "data_type",
            "unsupported data type \"" + name + "\"" + detail::unsupported_type_note(name) +
                " (supported: bool, int8..int64, uint8..uint64, float16/32/64, complex64/128, "
                "r<N>, numpy.datetime64, numpy.timedelta64, fixed_length_utf32, "
                "null_terminated_bytes, string)");
    }
    if (!config.is_null() && (!config.is_object() || !config.empty()))
        fail_member(where, "data_type.configuration",
                    "data type \"" + name + "\" takes no configuration, got " + dump_short(config));
    return dt;
}

json data_type_to_json(const DataType& dt) {
    if (auto ext = detail::extension_type_to_json(dt)) return *ext;
    return json(dt.name);
}

Bytes parse_fill_value(const json& j, const DataType& dt, const std::string& where) {
    Bytes out;
    out.reserve(dt.size);
    if (detail::parse_extension_fill(j, dt, out, where)) return out;
    switch (dt.kind) {
    case DTypeKind::Bool:
        if (!j.is_boolean())
            fail_member(where, "fill_value",
                        "expected true or false for bool, got " + dump_short(j));
        out.push_back(j.get<bool>() ? 1 : 0);
        break;
    case DTypeKind::Int:
    case DTypeKind::UInt:
        parse_int(j, dt, out, where);
        break;
    case DTypeKind::Float:
        parse_float(j, dt.size, dt.name, out, where, "fill_value");
        break;
    case DTypeKind::Complex:
        if (j.is_string() && parse_hex(j.get<std::string>(), dt.size, out)) break;
        if (!j.is_array() || j.size() != 2)
            fail_member(where, "fill_value",
                        "expected [real, imaginary] for " + dt.name + ", got " + dump_short(j));
        parse_float(j[0], dt.size / 2, dt.name, out, where, "fill_value[0]");
        parse_float(j[1], dt.size / 2, dt.name, out, where, "fill_value[1]");
        break;
    case DTypeKind::Raw:
        if (j.is_string() && parse_hex(j.get<std::string>(), dt.size, out)) break;
        if (!j.is_array() || j.size() != dt.size)
            fail_member(where, "fill_value",
                        "expected a list of " + std::to_string(dt.size) + " byte values for " +
                            dt.name + ", got " + dump_short(j));
        for (size_t i = 0; i < j.size(); ++i) {
            const auto b = json_uint(j[i]);
            if (!b || *b > 255)
                fail_member(where, "fill_value[" + std::to_string(i) + "]",
                            "expected an integer 0..255, got " + dump_short(j[i]));
            out.push_back(static_cast<uint8_t>(*b));
        }
        break;
    case DTypeKind::Utf32:
    case DTypeKind::NullTerminatedBytes:
    case DTypeKind::String:
        break; // parse_extension_fill
    }
    return out;
}

json fill_value_to_json(ByteView value, const DataType& dt) {
    if (!dt.is_variable() && value.size() != dt.size)
        throw Error("fill value of " + dt.name + " must be " + std::to_string(dt.size) +
                    " bytes, got " + std::to_string(value.size()));
    if (auto ext = detail::extension_fill_to_json(value, dt)) return *ext;
    const uint8_t* p = value.data();
    switch (dt.kind) {
    case DTypeKind::Bool:
        return json(p[0] != 0);
    case DTypeKind::Int: {
        uint64_t v = get_le(p, dt.size);
        if (dt.size < 8 && (v >> (8 * dt.size - 1)) & 1) v |= ~uint64_t{0} << (8 * dt.size);
        return json(static_cast<int64_t>(v));
    }
    case DTypeKind::UInt:
        return json(get_le(p, dt.size));
    case DTypeKind::Float:
        return float_to_json(p, dt.size);
    case DTypeKind::Complex:
        return json::array(
            {float_to_json(p, dt.size / 2), float_to_json(p + dt.size / 2, dt.size / 2)});
    case DTypeKind::Raw:
    case DTypeKind::Utf32:
    case DTypeKind::NullTerminatedBytes:
    case DTypeKind::String:
        break;
    }
    json a = json::array();
    for (uint8_t b : value)
        a.push_back(b);
    return a;
}

} // namespace zarr3
