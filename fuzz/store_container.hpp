// The input format of fuzz_array: a whole store as a sequence of records
//   [key length u8][key][value length u32 LE][value]
// (a value length past the end takes the rest of the input). Shared with the
// seed generator, which packs conformance stores this way.
#pragma once

#include "fuzz_util.hpp"

#include <map>
#include <string>

namespace fuzzstore {

inline std::map<std::string, std::string> unpack(const uint8_t* data, size_t size) {
    std::map<std::string, std::string> out;
    fuzzutil::Reader r(data, size);
    while (r.remaining() > 0) {
        const std::string key(r.bytes(r.u8()));
        const uint32_t n = r.u32();
        out[key] = std::string(r.bytes(n));
    }
    return out;
}

inline std::string pack(const std::map<std::string, std::string>& kv) {
    std::string s;
    for (const auto& [k, v] : kv) {
        s += char(k.size());
        s += k;
        const uint32_t n = uint32_t(v.size());
        for (int i = 0; i < 4; ++i)
            s += char((n >> (8 * i)) & 0xff);
        s += v;
    }
    return s;
}

} // namespace fuzzstore
