// A small Icechunk (spec 2) repository writer for tests, built on the
// generated flatbuffers writers: one commit on branch main holding groups and
// arrays, each array's chunk references in a manifest of its own (inline,
// native or virtual with an optional ETag / last-modified checksum), and the
// virtual chunk containers the repository declares. Used by the core tests and
// by the zarr3_icechunk_build tool the pytest suites call (tools/).
#pragma once

#include "zarr3/common.hpp"
#include "zarr3/icechunk.hpp"

#include <array>
#include <flatbuffers/flexbuffers.h>
#include <manifest_generated.h>
#include <map>
#include <repo_generated.h>
#include <snapshot_generated.h>
#include <stdexcept>
#include <string>
#include <vector>
#include <zstd.h>

namespace icewriter {

namespace fb = flatbuffers;
namespace gen = ::generated;

struct Ref {
    std::vector<uint32_t> index;
    zarr3::Bytes inline_data; // inline reference
    zarr3::Bytes native;      // native reference: a chunk file holding these bytes
    std::string location;     // virtual reference
    uint64_t offset = 0, length = 0;
    std::string etag;
    uint32_t last_modified = 0;
};

struct ArraySpec {
    std::string path;      // "/g/a"
    std::string zarr_json; // the array's metadata document
    std::vector<Ref> refs; // sorted by index
};

struct RepoSpec {
    std::vector<std::string> groups; // besides the root "/"
    std::vector<ArraySpec> arrays;
    std::vector<std::string> containers; // url_prefix of each virtual chunk container
    std::string message = "written by icewriter";
    // Zero bytes after each manifest's flatbuffer, the file then zstd-compressed:
    // a few KB stored, many MB decoded (memory-bound tests).
    size_t manifest_padding = 0;
};

// 12- and 8-byte ids from a counter (distinct per kind within one repository).
inline std::array<uint8_t, 12> id12(uint8_t kind, uint32_t n) {
    std::array<uint8_t, 12> a{};
    a[0] = kind;
    for (int i = 0; i < 4; ++i)
        a[8 + i] = uint8_t(n >> (8 * (3 - i)));
    return a;
}
inline std::string text_of(const std::array<uint8_t, 12>& a) {
    return zarr3::icechunk::encode_id(zarr3::ByteView(a.data(), a.size()));
}

inline zarr3::Bytes envelope(uint8_t type, fb::FlatBufferBuilder& b) {
    const std::string head = "ICE\xF0\x9F\xA7\x8A"
                             "CHUNKicewriter               ";
    zarr3::Bytes out(head.begin(), head.end());
    out.push_back(2);    // spec version
    out.push_back(type); // 1 snapshot, 2 manifest, 6 repo info
    out.push_back(0);    // no compression
    out.insert(out.end(), b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
    return out;
}

// `file` (an uncompressed envelope) with `pad` zero bytes after its payload,
// zstd-compressed.
inline zarr3::Bytes padded(const zarr3::Bytes& file, size_t pad) {
    constexpr size_t kHeader = 12 + 24 + 3;
    zarr3::Bytes payload(file.begin() + kHeader, file.end());
    payload.resize(payload.size() + pad, 0);
    zarr3::Bytes out(file.begin(), file.begin() + kHeader);
    out[kHeader - 1] = 1; // zstd
    const size_t at = out.size();
    out.resize(at + ZSTD_compressBound(payload.size()));
    const size_t n =
        ZSTD_compress(out.data() + at, out.size() - at, payload.data(), payload.size(), 1);
    if (ZSTD_isError(n)) throw std::runtime_error("zstd compression failed");
    out.resize(at + n);
    return out;
}

inline zarr3::Bytes repo_file(const std::array<uint8_t, 12>& snap, const RepoSpec& spec) {
    fb::FlatBufferBuilder b;
    const gen::ObjectId12 sid(fb::span<const uint8_t, 12>(snap.data(), 12));
    const auto info =
        gen::CreateSnapshotInfo(b, &sid, -1, 1700000000000000ull, b.CreateString(spec.message));
    const auto main = gen::CreateRef(b, b.CreateString("main"), 0);
    flexbuffers::Builder flex;
    flex.Map([&] {
        flex.Map("virtual_chunk_containers", [&] {
            for (size_t i = 0; i < spec.containers.size(); ++i)
                flex.Map(("c" + std::to_string(i)).c_str(),
                         [&] { flex.String("url_prefix", spec.containers[i]); });
        });
    });
    flex.Finish();
    b.Finish(gen::CreateRepo(b, 2, b.CreateVector(std::vector<fb::Offset<gen::Ref>>{}),
                             b.CreateVector(std::vector<fb::Offset<gen::Ref>>{main}),
                             b.CreateVector(std::vector<fb::Offset<fb::String>>{}),
                             b.CreateVector(std::vector<fb::Offset<gen::SnapshotInfo>>{info}),
                             gen::CreateRepoStatus(b), 0,
                             b.CreateVector(std::vector<fb::Offset<gen::Update>>{}), 0,
                             b.CreateVector(flex.GetBuffer())));
    return envelope(6, b);
}

// The manifest of array `node` (its refs), and the chunk files of its native refs.
inline zarr3::Bytes manifest_file(const std::array<uint8_t, 12>& id,
                                  const std::array<uint8_t, 8>& node, const ArraySpec& a,
                                  uint32_t& chunk_counter,
                                  std::map<std::string, zarr3::Bytes>& files) {
    fb::FlatBufferBuilder b;
    std::vector<fb::Offset<gen::ChunkRef>> refs;
    for (const Ref& r : a.refs) {
        const auto index = b.CreateVector(r.index);
        const auto inl = r.inline_data.empty() ? 0 : b.CreateVector(r.inline_data);
        const auto loc = r.location.empty() ? 0 : b.CreateString(r.location);
        const auto etag = r.etag.empty() ? 0 : b.CreateString(r.etag);
        uint64_t offset = r.offset, length = r.length;
        std::array<uint8_t, 12> cid{};
        if (!r.native.empty()) {
            cid = id12(3, chunk_counter++);
            files["chunks/" + text_of(cid)] = r.native;
            offset = 0;
            length = r.native.size();
        }
        const gen::ObjectId12 chunk(fb::span<const uint8_t, 12>(cid.data(), 12));
        refs.push_back(gen::CreateChunkRef(b, index, inl, offset, length,
                                           r.native.empty() ? nullptr : &chunk, loc, etag,
                                           r.last_modified));
    }
    const gen::ObjectId8 nid(fb::span<const uint8_t, 8>(node.data(), 8));
    const gen::ObjectId12 mid(fb::span<const uint8_t, 12>(id.data(), 12));
    const auto arrays = std::vector<fb::Offset<gen::ArrayManifest>>{
        gen::CreateArrayManifest(b, &nid, b.CreateVector(refs))};
    b.Finish(gen::CreateManifest(b, &mid, b.CreateVector(arrays)));
    return envelope(2, b);
}

// Extent of each axis over `refs`: [min, max + 1).
inline std::vector<gen::ChunkIndexRange> extents_of(const std::vector<Ref>& refs) {
    std::vector<gen::ChunkIndexRange> out;
    for (size_t d = 0; !refs.empty() && d < refs.front().index.size(); ++d) {
        uint32_t lo = ~0u, hi = 0;
        for (const Ref& r : refs) {
            lo = std::min(lo, r.index.at(d));
            hi = std::max(hi, r.index.at(d) + 1);
        }
        out.emplace_back(lo, hi);
    }
    return out;
}

// Every file of the repository, by key.
inline std::map<std::string, zarr3::Bytes> build(const RepoSpec& spec) {
    std::map<std::string, zarr3::Bytes> files;
    const auto snap = id12(1, 1);
    fb::FlatBufferBuilder b;
    auto bytes = [&](const std::string& s) {
        return b.CreateVector(reinterpret_cast<const uint8_t*>(s.data()), s.size());
    };
    const std::string group_json = R"({"zarr_format":3,"node_type":"group"})";
    std::vector<fb::Offset<gen::NodeSnapshot>> nodes;
    uint32_t node_counter = 0, chunk_counter = 0;
    auto next_node = [&] {
        std::array<uint8_t, 8> id{};
        const uint32_t n = ++node_counter;
        for (int i = 0; i < 4; ++i)
            id[4 + i] = uint8_t(n >> (8 * (3 - i)));
        return id;
    };
    std::vector<std::string> groups = spec.groups;
    groups.insert(groups.begin(), "/");
    for (const auto& g : groups) {
        const auto id = next_node();
        const gen::ObjectId8 nid(fb::span<const uint8_t, 8>(id.data(), 8));
        nodes.push_back(gen::CreateNodeSnapshot(b, &nid, b.CreateString(g), bytes(group_json),
                                                gen::NodeData::Group,
                                                gen::CreateGroupNodeData(b).Union()));
    }
    for (size_t i = 0; i < spec.arrays.size(); ++i) {
        const ArraySpec& a = spec.arrays[i];
        const auto id = next_node();
        std::vector<fb::Offset<gen::ManifestRef>> mrefs;
        if (!a.refs.empty()) {
            const auto mid = id12(2, uint32_t(i));
            files["manifests/" + text_of(mid)] = manifest_file(mid, id, a, chunk_counter, files);
            if (spec.manifest_padding)
                files["manifests/" + text_of(mid)] =
                    padded(files["manifests/" + text_of(mid)], spec.manifest_padding);
            const gen::ObjectId12 moid(fb::span<const uint8_t, 12>(mid.data(), 12));
            const auto ext = extents_of(a.refs);
            mrefs.push_back(gen::CreateManifestRef(b, &moid, b.CreateVectorOfStructs(ext)));
        }
        const auto arr =
            gen::CreateArrayNodeData(b, b.CreateVectorOfStructs(std::vector<gen::DimensionShape>{}),
                                     0, b.CreateVector(mrefs));
        const gen::ObjectId8 nid(fb::span<const uint8_t, 8>(id.data(), 8));
        nodes.push_back(gen::CreateNodeSnapshot(b, &nid, b.CreateString(a.path), bytes(a.zarr_json),
                                                gen::NodeData::Array, arr.Union()));
    }
    const gen::ObjectId12 sid(fb::span<const uint8_t, 12>(snap.data(), 12));
    b.Finish(gen::CreateSnapshot(b, &sid, nullptr, b.CreateVector(nodes), 1700000000000000ull,
                                 b.CreateString(spec.message),
                                 b.CreateVector(std::vector<fb::Offset<gen::MetadataItem>>{}),
                                 b.CreateVectorOfStructs(std::vector<gen::ManifestFileInfo>{})));
    files["snapshots/" + text_of(snap)] = envelope(1, b);
    files["repo"] = repo_file(snap, spec);
    return files;
}

} // namespace icewriter
