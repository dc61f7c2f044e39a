// Private helpers of the Icechunk reader: verified flatbuffer roots and ids.
#pragma once

#include "zarr3/icechunk.hpp"

#include <common_generated.h>
#include <flatbuffers/flatbuffers.h>

namespace zarr3::icechunk::detail {

// The root table of `buf` after a flatbuffers Verifier accepted the whole
// buffer (offsets inside it, required fields present, bounded depth and
// table count: at most one table per 4 bytes, so verification time is
// linear in the size). FormatError naming `where` otherwise.
template <class T> const T* verified_root(const Bytes& buf, const std::string& where) {
    if (buf.size() < 8 || buf.size() >= FLATBUFFERS_MAX_BUFFER_SIZE)
        throw FormatError(where + ": flatbuffer of " + std::to_string(buf.size()) +
                          " bytes is not a valid size");
    flatbuffers::Verifier::Options opts;
    opts.max_depth = 64;
    opts.max_tables = static_cast<flatbuffers::uoffset_t>(buf.size() / 4 + 16);
    flatbuffers::Verifier v(buf.data(), buf.size(), opts);
    if (!v.VerifyBuffer<T>(nullptr))
        throw FormatError(where + ": the flatbuffer failed verification (offsets outside the "
                                  "file, missing required fields or corrupt tables)");
    return flatbuffers::GetRoot<T>(buf.data());
}

inline std::string id12_text(const generated::ObjectId12* id) {
    return encode_id(ByteView(id->bytes()->data(), 12));
}
inline std::array<uint8_t, 8> id8_of(const generated::ObjectId8* id) {
    std::array<uint8_t, 8> a{};
    for (size_t i = 0; i < 8; ++i)
        a[i] = id->bytes()->Get(static_cast<flatbuffers::uoffset_t>(i));
    return a;
}
inline std::string str_of(const flatbuffers::String* s) {
    return s ? std::string(s->data(), s->size()) : std::string();
}

// Reads storage `key` (at most kMaxFileBytes); Error naming the file when
// absent.
Bytes read_file(Store& storage, const std::string& key);
// read_file() of what is stored now, past every cache (Store::get_fresh).
Bytes read_file_fresh(Store& storage, const std::string& key);

} // namespace zarr3::icechunk::detail
