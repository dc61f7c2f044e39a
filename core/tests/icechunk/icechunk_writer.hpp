// A small Icechunk (spec 2) repository writer for tests, built on the
// generated flatbuffers writers: one commit on branch main holding groups and
// arrays, each array's chunk references in a manifest of its own (inline,
// native or virtual with an optional ETag / last-modified checksum), and the
// virtual chunk containers the repository declares. Used by the core tests and
// by the zarr3_icechunk_build tool the pytest suites call (tools/).
#pragma once

#include "zarr3/common.hpp"
#include "zarr3/icechunk.hpp"

#include <algorithm>
#include <array>
#include <flatbuffers/flexbuffers.h>
#include <functional>
#include <manifest_generated.h>
#include <map>
#include <random>
#include <repo_generated.h>
#include <snapshot_generated.h>
#include <stdexcept>
#include <string>
#include <transaction_log_generated.h>
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

// ------------------------------------------------------------------ another writer
// Edits of an existing spec-2 repository in `st`, made the way another
// writer (the real Icechunk) makes them: files written uncompressed, the
// `repo` file rewritten (not conditionally: tests run them between steps).

inline std::unique_ptr<gen::RepoT> read_repo(zarr3::Store& st) {
    const auto file = st.get("repo");
    if (!file) throw zarr3::Error("icewriter: no repo file");
    const auto env =
        zarr3::icechunk::open_envelope(*file, zarr3::icechunk::FileType::RepoInfo, "repo");
    return std::unique_ptr<gen::RepoT>(gen::GetRepo(env.payload.data())->UnPack());
}

// Rewrites `repo` after `edit` (status, feature flags, refs ...).
inline void edit_repo(zarr3::Store& st, const std::function<void(gen::RepoT&)>& edit) {
    auto repo = read_repo(st);
    edit(*repo);
    fb::FlatBufferBuilder b;
    b.Finish(gen::Repo::Pack(b, repo.get()));
    st.put("repo", envelope(6, b));
}

inline std::array<uint8_t, 12> random_id12() {
    std::random_device rd;
    std::array<uint8_t, 12> a{};
    for (auto& x : a)
        x = uint8_t(rd());
    return a;
}

// Adds snapshot `id` (parent `parent`) to the repo's sorted snapshot list and
// points branch `branch` at it, keeping every other ref and parent.
inline void add_commit(gen::RepoT& repo, const std::array<uint8_t, 12>& id,
                       const std::string& parent, const std::string& branch,
                       const std::string& message) {
    auto text = [](const gen::ObjectId12& x) {
        return zarr3::icechunk::encode_id(zarr3::ByteView(x.bytes()->data(), 12));
    };
    std::map<std::string, std::string> parents; // id -> parent id
    std::map<std::string, std::unique_ptr<gen::SnapshotInfoT>> infos;
    std::vector<std::string> order;
    for (auto& s : repo.snapshots)
        order.push_back(text(*s->id));
    for (size_t i = 0; i < repo.snapshots.size(); ++i) {
        auto& s = repo.snapshots[i];
        parents[order[i]] = s->parent_offset < 0 ? "" : order[size_t(s->parent_offset)];
        infos[order[i]] = std::move(s);
    }
    std::vector<std::pair<gen::RefT*, std::string>> refs;
    for (auto* list : {&repo.branches, &repo.tags})
        for (auto& r : *list)
            refs.emplace_back(r.get(), order[r->snapshot_index]);
    auto info = std::make_unique<gen::SnapshotInfoT>();
    info->id = std::make_unique<gen::ObjectId12>(fb::span<const uint8_t, 12>(id.data(), 12));
    info->flushed_at = 1800000000000000ull;
    info->message = message;
    parents[text_of(id)] = parent;
    infos[text_of(id)] = std::move(info);
    repo.snapshots.clear();
    std::map<std::string, int32_t> index;
    for (auto& [k, v] : infos) { // base32 text order is byte order
        index[k] = int32_t(repo.snapshots.size());
        repo.snapshots.push_back(std::move(v));
    }
    for (auto& s : repo.snapshots) {
        const std::string& p = parents[text(*s->id)];
        s->parent_offset = p.empty() ? -1 : index.at(p);
    }
    for (auto& [r, target] : refs)
        r->snapshot_index = uint32_t(index.at(target));
    auto it = std::find_if(repo.branches.begin(), repo.branches.end(),
                           [&](const auto& r) { return r->name == branch; });
    if (it == repo.branches.end()) throw zarr3::Error("icewriter: no branch " + branch);
    (*it)->snapshot_index = uint32_t(index.at(text_of(id)));
}

// One node of a snapshot as the object API writes it.
inline std::unique_ptr<gen::NodeSnapshotT> node_of(const zarr3::icechunk::Node& n,
                                                   const std::string& path) {
    auto ns = std::make_unique<gen::NodeSnapshotT>();
    ns->id = std::make_unique<gen::ObjectId8>(fb::span<const uint8_t, 8>(n.id.data(), 8));
    ns->path = path;
    ns->user_data.assign(n.zarr_json.begin(), n.zarr_json.end());
    if (!n.is_array) {
        ns->node_data.Set(gen::GroupNodeDataT());
        return ns;
    }
    gen::ArrayNodeDataT a;
    for (const auto& e : n.manifests) {
        auto r = std::make_unique<gen::ManifestRefT>();
        const auto mid = *zarr3::icechunk::decode_id12(e.manifest_id);
        r->object_id =
            std::make_unique<gen::ObjectId12>(fb::span<const uint8_t, 12>(mid.data(), 12));
        for (const auto& [from, to] : e.axes)
            r->extents.emplace_back(from, to);
        a.manifests.push_back(std::move(r));
    }
    ns->node_data.Set(std::move(a));
    return ns;
}

// A commit on `branch` that moves node `from` and its descendants to `to`
// (moved_nodes in its transaction log), or deletes them when `to` is empty
// (deleted_groups / deleted_arrays). Returns the new snapshot id.
inline std::string rearrange(std::shared_ptr<zarr3::Store> st, const std::string& branch,
                             const std::string& from, const std::string& to) {
    auto repo = zarr3::icechunk::Repository::open(st);
    const std::string tip = repo->resolve({.branch = branch});
    const auto snap = repo->snapshot(tip);
    const auto id = random_id12();
    gen::SnapshotT s;
    gen::TransactionLogT t;
    s.id = std::make_unique<gen::ObjectId12>(fb::span<const uint8_t, 12>(id.data(), 12));
    t.id = std::make_unique<gen::ObjectId12>(fb::span<const uint8_t, 12>(id.data(), 12));
    s.flushed_at = 1800000000000000ull;
    s.message = (to.empty() ? "delete " : "move ") + from;
    bool found = false;
    for (const auto& n : snap->nodes) {
        const bool under = n.path == from || n.path.rfind(from + "/", 0) == 0;
        found = found || under;
        const gen::ObjectId8 nid(fb::span<const uint8_t, 8>(n.id.data(), 8));
        if (under && to.empty()) {
            (n.is_array ? t.deleted_arrays : t.deleted_groups).push_back(nid);
            continue;
        }
        const std::string path = under ? to + n.path.substr(from.size()) : n.path;
        if (under) {
            auto m = std::make_unique<gen::MoveOperationT>();
            m->from = n.path;
            m->to = path;
            m->node_id = std::make_unique<gen::ObjectId8>(nid);
            m->node_type = n.is_array ? gen::NodeType::Array : gen::NodeType::Group;
            t.moved_nodes.push_back(std::move(m));
        }
        s.nodes.push_back(node_of(n, path));
    }
    if (!found) throw zarr3::Error("icewriter: no node " + from);
    std::sort(s.nodes.begin(), s.nodes.end(),
              [](const auto& a, const auto& b) { return a->path < b->path; });
    fb::FlatBufferBuilder sb, tb;
    sb.Finish(gen::Snapshot::Pack(sb, &s));
    tb.Finish(gen::TransactionLog::Pack(tb, &t));
    st->put("snapshots/" + text_of(id), envelope(1, sb));
    st->put("transactions/" + text_of(id), envelope(4, tb));
    edit_repo(*st, [&](gen::RepoT& r) { add_commit(r, id, tip, branch, s.message); });
    return text_of(id);
}

} // namespace icewriter
