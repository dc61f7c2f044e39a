// Chunk key encodings: "default" (c/0/1, c.0.1) and "v2" (0.1, 0/1).
#include "zarr3/key_encoding.hpp"

#include <charconv>

#include <nlohmann/json.hpp>

namespace zarr3 {

using nlohmann::json;

ChunkKeyEncoding ChunkKeyEncoding::parse(const json& j, const std::string& where) {
    const std::string m = "chunk_key_encoding";
    std::string name;
    const json* conf = nullptr;
    if (j.is_string()) {
        name = j.get<std::string>();
    } else if (j.is_object()) {
        for (const auto& item : j.items()) {
            if (item.key() != "name" && item.key() != "configuration")
                throw FormatError(where + ": " + m + "." + item.key() + ": unexpected member");
        }
        const auto it = j.find("name");
        if (it == j.end() || !it->is_string())
            throw FormatError(where + ": " + m +
                              ".name: expected a string (\"default\" or \"v2\")");
        name = it->get<std::string>();
        const auto c = j.find("configuration");
        if (c != j.end()) {
            if (!c->is_object())
                throw FormatError(where + ": " + m + ".configuration: expected an object, got " +
                                  c->dump());
            conf = &*c;
        }
    } else {
        throw FormatError(where + ": " + m + ": expected a string or an object, got " + j.dump());
    }

    Kind kind;
    char sep;
    if (name == "default") {
        kind = Kind::Default;
        sep = '/';
    } else if (name == "v2") {
        kind = Kind::V2;
        sep = '.';
    } else {
        throw FormatError(where + ": " + m + ".name: unsupported chunk key encoding \"" + name +
                          "\" (expected \"default\" or \"v2\")");
    }
    if (conf) {
        for (const auto& item : conf->items()) {
            if (item.key() != "separator")
                throw FormatError(where + ": " + m + ".configuration." + item.key() +
                                  ": unexpected member");
        }
        const auto s = conf->find("separator");
        if (s != conf->end()) {
            if (*s == "/")
                sep = '/';
            else if (*s == ".")
                sep = '.';
            else
                throw FormatError(where + ": " + m +
                                  ".configuration.separator: expected \"/\" or \".\", got " +
                                  s->dump());
        }
    }
    return ChunkKeyEncoding(kind, sep);
}

std::string ChunkKeyEncoding::key(const std::vector<uint64_t>& idx) const {
    std::string k;
    if (kind_ == Kind::Default) {
        k = "c";
        for (uint64_t i : idx) {
            k += sep_;
            k += std::to_string(i);
        }
        return k;
    }
    if (idx.empty()) return "0";
    for (size_t i = 0; i < idx.size(); ++i) {
        if (i) k += sep_;
        k += std::to_string(idx[i]);
    }
    return k;
}

json ChunkKeyEncoding::to_json() const {
    return {{"name", kind_ == Kind::Default ? "default" : "v2"},
            {"configuration", {{"separator", std::string(1, sep_)}}}};
}

std::optional<std::vector<uint64_t>> ChunkKeyEncoding::coords(const std::string& key,
                                                              size_t ndim) const {
    std::vector<uint64_t> idx;
    size_t pos = 0;
    if (kind_ == Kind::Default) {
        if (key.rfind("c", 0) != 0) return std::nullopt;
        pos = key.size() > 1 ? 2 : 1;
    }
    while (pos < key.size() && idx.size() < ndim) {
        size_t end = key.find(sep_, pos);
        if (end == std::string::npos) end = key.size();
        uint64_t v = 0;
        const auto r = std::from_chars(key.data() + pos, key.data() + end, v);
        if (r.ec != std::errc() || r.ptr != key.data() + end) return std::nullopt;
        idx.push_back(v);
        pos = end + 1;
    }
    if (idx.size() != ndim || this->key(idx) != key) return std::nullopt;
    return idx;
}

} // namespace zarr3
