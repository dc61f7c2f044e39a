// Icechunk manifest files: chunk references by array node id and coordinates.
#include "icechunk/icechunk_detail.hpp"

#include <algorithm>
#include <manifest_generated.h>
#include <memory>
#include <zstd.h>

namespace zarr3::icechunk {
namespace {

using FbIndex = flatbuffers::Vector<uint32_t>;

constexpr size_t kMaxLocationBytes = 64 * 1024;

const generated::Manifest* root_of(const Bytes& buf) {
    return flatbuffers::GetRoot<generated::Manifest>(buf.data());
}

bool node_less(const generated::ObjectId8* a, const generated::ObjectId8* b) {
    return std::lexicographical_compare(a->bytes()->begin(), a->bytes()->end(), b->bytes()->begin(),
                                        b->bytes()->end());
}

// <0, 0, >0: index `a` against coordinates `c` (lexicographic).
int compare(const FbIndex* a, const std::vector<uint64_t>& c) {
    const size_t n = std::min<size_t>(a->size(), c.size());
    for (size_t i = 0; i < n; ++i) {
        const uint64_t x = a->Get(static_cast<flatbuffers::uoffset_t>(i));
        if (x != c[i]) return x < c[i] ? -1 : 1;
    }
    return a->size() == c.size() ? 0 : (a->size() < c.size() ? -1 : 1);
}

std::vector<uint64_t> coords_of_index(const FbIndex* a) {
    return std::vector<uint64_t>(a->begin(), a->end());
}

struct DCtxFree {
    void operator()(ZSTD_DCtx* c) const { ZSTD_freeDCtx(c); }
};

std::string decompress_location(ByteView in, const Bytes& dict, const std::string& where) {
    thread_local std::unique_ptr<ZSTD_DCtx, DCtxFree> ctx(ZSTD_createDCtx());
    if (!ctx) throw Error("zstd: cannot allocate a decompression context");
    std::string out(kMaxLocationBytes, '\0');
    const size_t n = ZSTD_decompress_usingDict(ctx.get(), out.data(), out.size(), in.data(),
                                               in.size(), dict.data(), dict.size());
    if (ZSTD_isError(n))
        throw FormatError(where + ": cannot decompress a virtual chunk location (" +
                          ZSTD_getErrorName(n) + ")");
    out.resize(n);
    return out;
}

} // namespace

Manifest::Manifest(ByteView file, const std::string& where) : where_(where) {
    Envelope env = open_envelope(file, FileType::Manifest, where);
    buf_ = std::move(env.payload);
    const auto* m = detail::verified_root<generated::Manifest>(buf_, where);
    id_ = detail::id12_text(m->id());
    if (const auto* d = m->location_dictionary()) dictionary_.assign(d->begin(), d->end());
    location_compression_ = m->compression_algorithm();
    const auto* arrays = m->arrays();
    for (flatbuffers::uoffset_t i = 0; i < arrays->size(); ++i) {
        const auto* a = arrays->Get(i);
        if (i > 0 && !node_less(arrays->Get(i - 1)->node_id(), a->node_id()))
            throw FormatError(where + ": arrays are not sorted by node id");
        const auto* refs = a->refs();
        for (flatbuffers::uoffset_t k = 1; k < refs->size(); ++k)
            if (compare(refs->Get(k - 1)->index(), coords_of_index(refs->Get(k)->index())) >= 0)
                throw FormatError(where + ": chunk references are not sorted by coordinates");
        refs_ += refs->size();
    }
}

Manifest::~Manifest() = default;

size_t Manifest::memory_bytes() const {
    return sizeof(Manifest) + buf_.size() + dictionary_.size() + where_.size() + id_.size();
}

std::optional<ChunkRef> Manifest::find(const std::array<uint8_t, 8>& node,
                                       const std::vector<uint64_t>& coords) const {
    const auto* arrays = root_of(buf_)->arrays();
    const generated::ObjectId8 key(flatbuffers::span<const uint8_t, 8>(node.data(), 8));
    auto ait =
        std::lower_bound(arrays->begin(), arrays->end(), &key,
                         [](const generated::ArrayManifest* a, const generated::ObjectId8* k) {
                             return node_less(a->node_id(), k);
                         });
    if (ait == arrays->end() || node_less(&key, ait->node_id())) return std::nullopt;
    const auto* refs = ait->refs();
    auto rit = std::lower_bound(refs->begin(), refs->end(), coords,
                                [](const generated::ChunkRef* r, const std::vector<uint64_t>& c) {
                                    return compare(r->index(), c) < 0;
                                });
    if (rit == refs->end() || compare(rit->index(), coords) != 0) return std::nullopt;
    const generated::ChunkRef* r = *rit;
    const std::string at = where_ + ": chunk reference";
    const int kinds = (r->inline_() != nullptr) + (r->chunk_id() != nullptr) +
                      (r->location() != nullptr || r->compressed_location() != nullptr);
    if (kinds != 1)
        throw FormatError(at + " must be exactly one of inline, native and virtual (" +
                          std::to_string(kinds) + " given)");
    ChunkRef out;
    out.offset = r->offset();
    out.length = r->length();
    if (r->inline_()) {
        out.kind = ChunkRef::Kind::Inline;
        out.inline_data.assign(r->inline_()->begin(), r->inline_()->end());
    } else if (r->chunk_id()) {
        out.kind = ChunkRef::Kind::Native;
        out.chunk_id = detail::id12_text(r->chunk_id());
    } else {
        out.kind = ChunkRef::Kind::Virtual;
        if (r->location()) {
            out.location = detail::str_of(r->location());
        } else {
            const ByteView c(r->compressed_location()->data(), r->compressed_location()->size());
            if (location_compression_ == 0)
                out.location.assign(c.begin(), c.end());
            else if (location_compression_ == 1)
                out.location = decompress_location(c, dictionary_, where_);
            else
                throw FormatError(where_ + ": unknown location compression " +
                                  std::to_string(location_compression_));
        }
        out.etag = detail::str_of(r->checksum_etag());
        out.last_modified = r->checksum_last_modified();
    }
    return out;
}

std::vector<std::vector<uint64_t>> Manifest::coords_of(const std::array<uint8_t, 8>& node) const {
    std::vector<std::vector<uint64_t>> out;
    for (const auto* a : *root_of(buf_)->arrays()) {
        if (!std::equal(node.begin(), node.end(), a->node_id()->bytes()->begin())) continue;
        for (const auto* r : *a->refs())
            out.push_back(coords_of_index(r->index()));
    }
    return out;
}

} // namespace zarr3::icechunk
