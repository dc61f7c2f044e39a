// Icechunk ids (Crockford base32), the metadata file envelope, ISO times.
#include "codecs/codecs_internal.hpp"
#include "icechunk/icechunk_detail.hpp"

#include <cstring>
#include <nlohmann/json.hpp>
#include <zstd.h>

namespace zarr3::icechunk {
namespace {

constexpr char kAlphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
constexpr uint8_t kMagic[] = {0x49, 0x43, 0x45, 0xF0, 0x9F, 0xA7,
                              0x8A, 0x43, 0x48, 0x55, 0x4E, 0x4B};
constexpr size_t kHeaderBytes = 12 + 24 + 3;

int crockford_value(char c) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (c == 'O') return 0;
    if (c == 'I' || c == 'L') return 1;
    const char* p = std::strchr(kAlphabet, c);
    return (c != 0 && p) ? static_cast<int>(p - kAlphabet) : -1;
}

const char* type_name(FileType t) {
    switch (t) {
    case FileType::Snapshot:
        return "snapshot";
    case FileType::Manifest:
        return "manifest";
    case FileType::TransactionLog:
        return "transaction log";
    case FileType::RepoInfo:
        return "repo info";
    }
    return "unknown";
}

} // namespace

std::string encode_id(ByteView bytes) {
    std::string out;
    uint32_t acc = 0;
    int bits = 0;
    for (uint8_t b : bytes) {
        acc = (acc << 8) | b;
        bits += 8;
        while (bits >= 5) {
            out += kAlphabet[(acc >> (bits - 5)) & 31];
            bits -= 5;
        }
    }
    if (bits > 0) out += kAlphabet[(acc << (5 - bits)) & 31];
    return out;
}

std::optional<std::array<uint8_t, 12>> decode_id12(const std::string& text) {
    if (text.size() != 20) return std::nullopt;
    std::array<uint8_t, 12> out{};
    uint32_t acc = 0;
    int bits = 0;
    size_t n = 0;
    for (char c : text) {
        const int v = crockford_value(c);
        if (v < 0) return std::nullopt;
        acc = (acc << 5) | static_cast<uint32_t>(v);
        bits += 5;
        if (bits >= 8) {
            if (n < out.size()) out[n++] = static_cast<uint8_t>(acc >> (bits - 8));
            bits -= 8;
        }
    }
    if ((acc & ((1u << bits) - 1)) != 0) return std::nullopt; // padding bits must be zero
    return out;
}

Envelope open_envelope(ByteView file, FileType expected, const std::string& where) {
    if (file.size() < kHeaderBytes)
        throw FormatError(where + ": truncated Icechunk file (" + std::to_string(file.size()) +
                          " bytes, the header alone takes " + std::to_string(kHeaderBytes) + ")");
    if (std::memcmp(file.data(), kMagic, sizeof kMagic) != 0)
        throw FormatError(where + ": not an Icechunk file (wrong magic bytes)");
    Envelope e;
    e.implementation.assign(reinterpret_cast<const char*>(file.data()) + 12, 24);
    while (!e.implementation.empty() &&
           (e.implementation.back() == ' ' || e.implementation.back() == 0))
        e.implementation.pop_back();
    e.spec_version = file[36];
    if (e.spec_version != 1 && e.spec_version != 2)
        throw FormatError(where + ": unknown Icechunk spec version " +
                          std::to_string(e.spec_version) + " (this reader knows 1 and 2)");
    e.type = static_cast<FileType>(file[37]);
    if (e.type != expected)
        throw FormatError(where + ": file type " + std::to_string(file[37]) + " where a " +
                          type_name(expected) + " file (type " +
                          std::to_string(static_cast<int>(expected)) + ") was expected");
    const ByteView body = file.subspan(kHeaderBytes);
    switch (file[38]) {
    case 0:
        e.payload.assign(body.begin(), body.end());
        break;
    case 1:
        if (const auto stated = ZSTD_getFrameContentSize(body.data(), body.size());
            stated != ZSTD_CONTENTSIZE_UNKNOWN && stated != ZSTD_CONTENTSIZE_ERROR &&
            stated > kMaxFileBytes)
            throw FormatError(where + ": compressed payload states " + std::to_string(stated) +
                              " bytes, which exceeds the limit of " +
                              std::to_string(kMaxFileBytes) + " bytes");
        try {
            e.payload = codecs::make_zstd(nlohmann::json::object(), where)
                            ->decode(body, std::nullopt, kMaxFileBytes);
        } catch (const FormatError& err) {
            throw FormatError(where + ": " + err.what());
        }
        break;
    default:
        throw FormatError(where + ": unknown compression " + std::to_string(file[38]) +
                          " (0 none and 1 zstd are known)");
    }
    return e;
}

namespace detail {
Bytes read_file(Store& storage, const std::string& key) {
    auto v = storage.get_bounded(key, kMaxFileBytes);
    if (!v) throw NotFound(join_key(storage.uri(), key) + ": Icechunk file not found");
    return std::move(*v);
}
Bytes read_file_fresh(Store& storage, const std::string& key) {
    ObjectVersion ignored;
    auto v = storage.get_fresh(key, kMaxFileBytes, ignored);
    if (!v) throw NotFound(join_key(storage.uri(), key) + ": Icechunk file not found");
    return std::move(*v);
}
} // namespace detail

} // namespace zarr3::icechunk
