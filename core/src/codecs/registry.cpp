// Codec registry (name -> factory) and strict "configuration" validation helpers.
#include "codecs/codecs_internal.hpp"
#include "zarr3/sharding.hpp"

namespace zarr3 {
namespace codecs {

std::string prefix(const std::string& where, const std::string& codec) {
    return where + ": codec \"" + codec + "\": ";
}

nlohmann::json config_object(const nlohmann::json& config, const std::string& codec,
                             const std::string& where, std::initializer_list<const char*> allowed) {
    if (config.is_null()) return nlohmann::json::object();
    if (!config.is_object())
        throw FormatError(prefix(where, codec) + "\"configuration\" must be an object, got " +
                          config.dump());
    for (const auto& [key, value] : config.items()) {
        bool ok = false;
        for (const char* a : allowed)
            ok = ok || key == a;
        if (!ok) {
            std::string list;
            for (const char* a : allowed)
                list += std::string(list.empty() ? "" : ", ") + a;
            throw FormatError(prefix(where, codec) + "unknown configuration member \"" + key +
                              "\" (expected " + (list.empty() ? "no members" : list) + ")");
        }
    }
    return config;
}

int64_t get_int(const nlohmann::json& obj, const char* member, const std::string& codec,
                const std::string& where, int64_t lo, int64_t hi, std::optional<int64_t> def) {
    auto it = obj.find(member);
    if (it == obj.end()) {
        if (def) return *def;
        throw FormatError(prefix(where, codec) + "configuration member \"" + member +
                          "\" is required (an integer " + std::to_string(lo) + ".." +
                          std::to_string(hi) + ")");
    }
    bool ok = it->is_number_integer();
    int64_t v = 0;
    if (ok && it->is_number_unsigned()) {
        uint64_t u = it->get<uint64_t>();
        ok = u <= uint64_t(INT64_MAX);
        v = int64_t(u);
    } else if (ok) {
        v = it->get<int64_t>();
    }
    if (!ok || v < lo || v > hi)
        throw FormatError(prefix(where, codec) + "configuration member \"" + member +
                          "\" must be an integer " + std::to_string(lo) + ".." +
                          std::to_string(hi) + ", got " + it->dump());
    return v;
}

bool get_bool(const nlohmann::json& obj, const char* member, const std::string& codec,
              const std::string& where, std::optional<bool> def) {
    auto it = obj.find(member);
    if (it == obj.end()) {
        if (def) return *def;
        throw FormatError(prefix(where, codec) + "configuration member \"" + member +
                          "\" is required (a boolean)");
    }
    if (!it->is_boolean())
        throw FormatError(prefix(where, codec) + "configuration member \"" + member +
                          "\" must be a boolean, got " + it->dump());
    return it->get<bool>();
}

std::string get_choice(const nlohmann::json& obj, const char* member, const std::string& codec,
                       const std::string& where, std::initializer_list<const char*> choices,
                       std::optional<std::string> def) {
    std::string list;
    for (const char* c : choices)
        list += std::string(list.empty() ? "\"" : ", \"") + c + "\"";
    auto it = obj.find(member);
    if (it == obj.end()) {
        if (def) return *def;
        throw FormatError(prefix(where, codec) + "configuration member \"" + member +
                          "\" is required (one of " + list + ")");
    }
    if (it->is_string()) {
        const auto& s = it->get_ref<const std::string&>();
        for (const char* c : choices)
            if (s == c) return s;
    }
    throw FormatError(prefix(where, codec) + "configuration member \"" + member +
                      "\" must be one of " + list + ", got " + it->dump());
}

} // namespace codecs

CodecKind codec_kind(const std::string& name) {
    if (name == "transpose" || name == "scale_offset" || name == "cast_value" ||
        name == "numcodecs.bitround" || name == "numcodecs.quantize" ||
        name == "numcodecs.fixedscaleoffset" || name == "numcodecs.delta")
        return CodecKind::ArrayToArray;
    if (name == "bytes" || name == "endian" || name == "sharding_indexed" || name == "vlen-utf8")
        return CodecKind::ArrayToBytes;
    if (name == "gzip" || name == "zstd" || name == "blosc" || name == "crc32c" ||
        name == "numcodecs.shuffle" || name == "numcodecs.zlib" || name == "numcodecs.gzip" ||
        name == "numcodecs.zstd" || name == "numcodecs.blosc" || name == "numcodecs.crc32" ||
        name == "numcodecs.adler32" || name == "numcodecs.crc32c" || name == "numcodecs.lz4")
        return CodecKind::BytesToBytes;
    return CodecKind::Unknown;
}

std::shared_ptr<ArrayToArrayCodec> make_array_to_array(const std::string& name,
                                                       const nlohmann::json& config,
                                                       const ChunkSpec& spec,
                                                       const std::string& where) {
    if (name == "transpose") return codecs::make_transpose(config, spec, where);
    if (name == "scale_offset") return codecs::make_scale_offset(config, spec, where);
    if (name == "cast_value") return codecs::make_cast_value(config, spec, where);
    if (name.starts_with("numcodecs."))
        return codecs::make_numcodecs_filter(name, config, spec, where);
    throw FormatError(where + ": unknown array->array codec \"" + name + "\"");
}

std::shared_ptr<ArrayToBytesCodec> make_array_to_bytes(const std::string& name,
                                                       const nlohmann::json& config,
                                                       const ChunkSpec& spec,
                                                       const std::string& where) {
    if (name == "bytes" || name == "endian") return codecs::make_bytes(config, spec, where);
    if (name == "vlen-utf8") return codecs::make_vlen_utf8(config, where);
    if (name == "sharding_indexed") {
        if (!config.is_object())
            throw FormatError(codecs::prefix(where, name) +
                              "\"configuration\" must be an object, got " + config.dump());
        // A `string` array's inner codecs end in vlen-utf8 (its inner chain
        // refuses anything else), so its shards hold strings.
        if (spec.dtype.is_variable())
            return std::make_shared<StringShardingCodec>(config, spec, where);
        return std::make_shared<ShardingCodec>(config, spec, where);
    }
    throw FormatError(where + ": unknown array->bytes codec \"" + name + "\"");
}

std::shared_ptr<BytesToBytesCodec> make_bytes_to_bytes(const std::string& name,
                                                       const nlohmann::json& config,
                                                       const std::string& where) {
    if (name == "gzip") return codecs::make_gzip(config, where);
    if (name == "zstd") return codecs::make_zstd(config, where);
    if (name == "blosc") return codecs::make_blosc(config, where);
    if (name == "crc32c") return codecs::make_crc32c(config, where);
    if (name.starts_with("numcodecs.")) return codecs::make_numcodecs_bytes(name, config, where);
    throw FormatError(where + ": unknown bytes->bytes codec \"" + name + "\"");
}

} // namespace zarr3
