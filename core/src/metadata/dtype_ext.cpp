// Extension data types (zarr-developers/zarr-extensions, data-types/): numpy.datetime64,
// numpy.timedelta64, fixed_length_utf32, null_terminated_bytes and string (variable-length
// UTF-8); their configurations and fill values.
#include "metadata/dtype_ext.hpp"

#include "metadata/json_int.hpp"

#include <cstdio>
#include <cstring>
#include <limits>

namespace zarr3::detail {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& where, const std::string& member,
                       const std::string& msg) {
    throw FormatError(where + ": " + member + ": " + msg);
}

constexpr uint32_t kMaxStringBytes = 1u << 20; // one fixed-length element

const char* const kTimeUnits[] = {"Y",  "M",  "W",  "D",  "h",  "m",  "s",      "ms",
                                  "us", "μs", "ns", "ps", "fs", "as", "generic"};

// Members of `config` must be exactly `members`.
void check_members(const json& config, std::initializer_list<const char*> members,
                   const std::string& name, const std::string& where) {
    if (!config.is_object())
        fail(where, "data_type.configuration",
             "data type \"" + name + "\" needs a configuration object, got " + dump_short(config));
    for (const auto& [key, value] : config.items()) {
        bool ok = false;
        for (const char* m : members)
            ok = ok || key == m;
        if (!ok)
            fail(where, "data_type.configuration." + key,
                 "unexpected member for data type \"" + name + "\"");
    }
    for (const char* m : members)
        if (!config.contains(m))
            fail(where, "data_type.configuration." + std::string(m),
                 "required for data type \"" + name + "\"");
}

DataType parse_time(const std::string& name, const json& config, const std::string& where) {
    check_members(config, {"unit", "scale_factor"}, name, where);
    const json& unit = config["unit"];
    bool known = false;
    for (const char* u : kTimeUnits)
        known = known || (unit.is_string() && unit.get<std::string>() == u);
    if (!known)
        fail(where, "data_type.configuration.unit",
             "expected one of Y, M, W, D, h, m, s, ms, us, ns, ps, fs, as, generic; got " +
                 dump_short(unit));
    const auto scale = json_uint(config["scale_factor"]);
    if (!scale || *scale < 1 || *scale > 2147483647u)
        fail(where, "data_type.configuration.scale_factor",
             "expected an integer 1..2147483647, got " + dump_short(config["scale_factor"]));
    DataType dt{name, DTypeKind::Int, 8, 8};
    dt.time_unit = unit.get<std::string>() == "μs" ? "us" : unit.get<std::string>();
    dt.time_scale = static_cast<uint32_t>(*scale);
    return dt;
}

DataType parse_fixed(const std::string& name, const json& config, const std::string& where,
                     DTypeKind kind) {
    check_members(config, {"length_bytes"}, name, where);
    const auto n = json_uint(config["length_bytes"]);
    const bool utf32 = kind == DTypeKind::Utf32;
    if (!n || *n > kMaxStringBytes || (utf32 && (*n == 0 || *n % 4 != 0)) || (!utf32 && *n == 0))
        fail(where, "data_type.configuration.length_bytes",
             std::string("expected ") +
                 (utf32 ? "a positive multiple of 4" : "a positive integer") + " up to " +
                 std::to_string(kMaxStringBytes) + ", got " + dump_short(config["length_bytes"]));
    return DataType{name, kind, static_cast<uint32_t>(*n), utf32 ? 4u : 1u};
}

// The code point starting at s[i] and its length in bytes; 0 bytes when the
// sequence there is not valid UTF-8 (overlong forms and surrogates included).
int next_code_point(std::string_view s, size_t i, char32_t& cp) {
    const auto c = static_cast<unsigned char>(s[i]);
    const int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return 0;
    cp = n == 1 ? c : c & (0x7f >> n);
    for (int k = 1; k < n; ++k) {
        const auto d = static_cast<unsigned char>(s[i + k]);
        if ((d >> 6) != 2) return 0;
        cp = (cp << 6) | (d & 0x3f);
    }
    static const char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return n;
}

// UTF-8 -> code points; Error on malformed input (overlong forms, surrogates included).
std::u32string utf8_decode(const std::string& s) {
    std::u32string out;
    for (size_t i = 0; i < s.size();) {
        char32_t cp = 0;
        const int n = next_code_point(s, i, cp);
        if (n == 0) throw Error("invalid UTF-8 at byte " + std::to_string(i) + " of the text");
        out.push_back(cp);
        i += static_cast<size_t>(n);
    }
    return out;
}

void append_utf8(std::string& out, char32_t cp) {
    if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) cp = 0xfffd;
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xc0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xe0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
        out += static_cast<char>(0xf0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    }
}

std::string base64_decode(const std::string& s, const std::string& where) {
    static const std::string abc =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    uint32_t acc = 0;
    int bits = 0;
    for (char c : s) {
        if (c == '=') break;
        const auto pos = abc.find(c);
        if (pos == std::string::npos)
            fail(where, "fill_value", "expected a base64 string, got \"" + s.substr(0, 40) + "\"");
        acc = (acc << 6) | static_cast<uint32_t>(pos);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<char>((acc >> bits) & 0xff));
        }
    }
    return out;
}

std::string base64_encode(const uint8_t* p, size_t n) {
    static const char* abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = uint32_t(p[i]) << 16;
        if (i + 1 < n) v |= uint32_t(p[i + 1]) << 8;
        if (i + 2 < n) v |= p[i + 2];
        out += abc[(v >> 18) & 63];
        out += abc[(v >> 12) & 63];
        out += i + 1 < n ? abc[(v >> 6) & 63] : '=';
        out += i + 2 < n ? abc[v & 63] : '=';
    }
    return out;
}

void parse_time_fill(const json& j, const DataType& dt, Bytes& out, const std::string& where) {
    int64_t v = 0;
    if (j.is_string() && j.get<std::string>() == "NaT") {
        v = kNaT;
    } else if (j.is_number_integer() && !j.is_number_unsigned()) {
        v = j.get<int64_t>();
    } else if (const auto u = json_uint(j); u && *u <= uint64_t(INT64_MAX)) {
        v = static_cast<int64_t>(*u);
    } else {
        fail(where, "fill_value",
             "expected an integer or \"NaT\" for " + dt.name + ", got " + dump_short(j));
    }
    for (int i = 0; i < 8; ++i)
        out.push_back(static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i)));
}

void parse_utf32_fill(const json& j, const DataType& dt, Bytes& out, const std::string& where) {
    if (!j.is_string())
        fail(where, "fill_value", "expected a string for " + dt.name + ", got " + dump_short(j));
    const size_t start = out.size();
    out.resize(start + dt.size, 0);
    try {
        utf8_to_utf32(j.get<std::string>(), out.data() + start, dt.size);
    } catch (const Error& e) {
        fail(where, "fill_value", e.what());
    }
}

} // namespace

std::optional<DataType> parse_extension_type(const std::string& name, const json& config,
                                             const std::string& where) {
    if (name == "numpy.datetime64" || name == "numpy.timedelta64" || name == "datetime64" ||
        name == "timedelta64")
        return parse_time(name, config, where);
    if (name == "fixed_length_utf32") return parse_fixed(name, config, where, DTypeKind::Utf32);
    if (name == "null_terminated_bytes")
        return parse_fixed(name, config, where, DTypeKind::NullTerminatedBytes);
    if (name == "string" || name == "variable_length_utf8") {
        if (!config.is_null() && (!config.is_object() || !config.empty()))
            fail(where, "data_type.configuration",
                 "data type \"" + name + "\" takes no configuration, got " + dump_short(config));
        return DataType{name, DTypeKind::String, 0, 1};
    }
    return std::nullopt;
}

std::optional<json> extension_type_to_json(const DataType& dt) {
    if (dt.is_temporal())
        return json{{"name", dt.name},
                    {"configuration", {{"unit", dt.time_unit}, {"scale_factor", dt.time_scale}}}};
    if (dt.kind == DTypeKind::Utf32 || dt.kind == DTypeKind::NullTerminatedBytes)
        return json{{"name", dt.name}, {"configuration", {{"length_bytes", dt.size}}}};
    return std::nullopt;
}

bool parse_extension_fill(const json& j, const DataType& dt, Bytes& out, const std::string& where) {
    if (dt.is_temporal()) {
        parse_time_fill(j, dt, out, where);
    } else if (dt.kind == DTypeKind::Utf32) {
        parse_utf32_fill(j, dt, out, where);
    } else if (dt.kind == DTypeKind::String) {
        if (!j.is_string())
            fail(where, "fill_value",
                 "expected a string for " + dt.name + ", got " + dump_short(j));
        const std::string& text = j.get_ref<const std::string&>();
        if (const size_t at = invalid_utf8_at(text); at != std::string::npos)
            fail(where, "fill_value", "invalid UTF-8 at byte " + std::to_string(at));
        out.assign(text.begin(), text.end());
    } else if (dt.kind == DTypeKind::NullTerminatedBytes) {
        if (!j.is_string())
            fail(where, "fill_value",
                 "expected a base64 string for " + dt.name + ", got " + dump_short(j));
        const std::string b = base64_decode(j.get<std::string>(), where);
        if (b.size() > dt.size)
            fail(where, "fill_value",
                 "decodes to " + std::to_string(b.size()) + " bytes, more than the " +
                     std::to_string(dt.size) + " of the data type");
        const size_t start = out.size();
        out.resize(start + dt.size, 0);
        if (!b.empty()) std::memcpy(out.data() + start, b.data(), b.size());
    } else {
        return false;
    }
    return true;
}

std::optional<json> extension_fill_to_json(ByteView value, const DataType& dt) {
    if (dt.is_temporal()) {
        uint64_t v = 0;
        for (int i = 0; i < 8; ++i)
            v |= uint64_t(value[i]) << (8 * i);
        if (static_cast<int64_t>(v) == kNaT) return json("NaT");
        return json(static_cast<int64_t>(v));
    }
    if (dt.kind == DTypeKind::Utf32) return json(utf32_to_utf8(value.data(), dt.size));
    if (dt.kind == DTypeKind::String)
        return json(std::string(reinterpret_cast<const char*>(value.data()), value.size()));
    if (dt.kind == DTypeKind::NullTerminatedBytes) {
        size_t n = 0;
        while (n < value.size() && value[n] != 0)
            ++n;
        return json(base64_encode(value.data(), n));
    }
    return std::nullopt;
}

std::string unsupported_type_note(const std::string& name) {
    if (name == "variable_length_bytes" || name == "bytes")
        return " (variable-length bytes are not supported)";
    if (name == "raw_bytes" || name == "structured" || name == "struct" || name == "optional")
        return " (structured, optional and raw-bytes types are not supported)";
    return "";
}

} // namespace zarr3::detail

namespace zarr3 {

std::string utf32_to_utf8(const uint8_t* p, size_t nbytes) {
    std::string out;
    for (size_t i = 0; i + 4 <= nbytes; i += 4) {
        const char32_t cp = char32_t(p[i]) | char32_t(p[i + 1]) << 8 | char32_t(p[i + 2]) << 16 |
                            char32_t(p[i + 3]) << 24;
        if (cp == 0) break;
        // Refused, not replaced: numpy fails on code points past U+10FFFF and
        // keeps lone surrogates as text no UTF-8 can carry; U+FFFD would turn
        // stored data into other text silently.
        if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
            char buf[16];
            std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(cp));
            throw FormatError(
                std::string("fixed_length_utf32 element holds the invalid code point ") + buf +
                (cp > 0x10ffff ? " (past U+10FFFF)" : " (a surrogate)") + " at character " +
                std::to_string(i / 4));
        }
        detail::append_utf8(out, cp);
    }
    return out;
}

size_t invalid_utf8_at(std::string_view text) {
    for (size_t i = 0; i < text.size();) {
        char32_t cp = 0;
        const int n = detail::next_code_point(text, i, cp);
        if (n == 0) return i;
        i += static_cast<size_t>(n);
    }
    return std::string_view::npos;
}

void utf8_to_utf32(const std::string& text, uint8_t* out, size_t nbytes) {
    const std::u32string cps = detail::utf8_decode(text);
    if (cps.size() > nbytes / 4)
        throw Error("the text has " + std::to_string(cps.size()) + " characters, more than the " +
                    std::to_string(nbytes / 4) + " a fixed_length_utf32 element of " +
                    std::to_string(nbytes) + " bytes holds");
    std::memset(out, 0, nbytes);
    for (size_t i = 0; i < cps.size(); ++i)
        for (size_t b = 0; b < 4; ++b)
            out[4 * i + b] = static_cast<uint8_t>(uint32_t(cps[i]) >> (8 * b));
}

} // namespace zarr3
