// Icechunk writer: snapshot files, creating repositories, tags and branches.
#include "icechunk/writer_detail.hpp"
#include "zarr3/metadata.hpp"

#include <flatbuffers/flexbuffers.h>

namespace zarr3::icechunk {
namespace fb = flatbuffers;
using namespace wdetail;

namespace {

std::unique_ptr<generated::ArrayNodeDataT> array_data(const NodeOut& n) {
    const std::string where = "Icechunk node " + n.path + " zarr.json";
    const ArrayMetadata m = parse_array_metadata(parse_json_text(n.zarr_json, where), where);
    auto a = std::make_unique<generated::ArrayNodeDataT>();
    for (size_t d = 0; d < m.rank(); ++d) {
        auto s = std::make_unique<generated::DimensionShapeV2T>();
        s->array_length = m.shape[d];
        const uint64_t chunks = m.grid.axis(d).num_chunks();
        if (chunks > UINT32_MAX)
            throw Error(where + ": " + std::to_string(chunks) +
                        " chunks along one axis exceed what Icechunk records (2^32 - 1)");
        s->num_chunks = uint32_t(chunks);
        a->shape_v2.push_back(std::move(s));
    }
    for (const auto& name : m.dimension_names) {
        auto dn = std::make_unique<generated::DimensionNameT>();
        if (name) dn->name = *name;
        a->dimension_names.push_back(std::move(dn));
    }
    for (const ManifestExtent& e : n.manifests) {
        auto r = std::make_unique<generated::ManifestRefT>();
        const Id12 id = id12_of(e.manifest_id, where);
        r->object_id =
            std::make_unique<generated::ObjectId12>(fb::span<const uint8_t, 12>(id.data(), 12));
        for (const auto& [from, to] : e.axes)
            r->extents.emplace_back(from, to);
        a->manifests.push_back(std::move(r));
    }
    return a;
}

// {"is_root": true} as FlexBuffers: the "__icechunk" metadata of the first
// snapshot.
std::vector<uint8_t> root_marker() {
    flexbuffers::Builder fbx;
    fbx.Map([&] { fbx.Bool("is_root", true); });
    fbx.Finish();
    return fbx.GetBuffer();
}

std::unique_ptr<generated::MetadataItemT> initial_metadata() {
    auto item = std::make_unique<generated::MetadataItemT>();
    item->name = "__icechunk";
    item->value = root_marker();
    return item;
}

void check_ref_name(const std::string& name, const char* kind) {
    if (name.empty() || name.size() > 255 || name.find('/') != std::string::npos ||
        name.find('\0') != std::string::npos)
        throw Error(std::string("'") + name + "' is not a valid " + kind +
                    " name (1 to 255 bytes, no '/')");
}

} // namespace

namespace wdetail {
Bytes snapshot_file(const Id12& id, const std::vector<NodeOut>& nodes, uint64_t flushed_at,
                    const std::string& message, const std::vector<ManifestInfo>& manifests,
                    bool initial) {
    generated::SnapshotT s;
    s.id = std::make_unique<generated::ObjectId12>(fb::span<const uint8_t, 12>(id.data(), 12));
    s.flushed_at = flushed_at;
    s.message = message;
    if (initial) s.metadata.push_back(initial_metadata());
    std::vector<const NodeOut*> sorted;
    for (const NodeOut& n : nodes)
        sorted.push_back(&n);
    std::sort(sorted.begin(), sorted.end(),
              [](const NodeOut* a, const NodeOut* b) { return a->path < b->path; });
    for (const NodeOut* n : sorted) {
        auto ns = std::make_unique<generated::NodeSnapshotT>();
        ns->id =
            std::make_unique<generated::ObjectId8>(fb::span<const uint8_t, 8>(n->id.data(), 8));
        ns->path = n->path;
        ns->user_data.assign(n->zarr_json.begin(), n->zarr_json.end());
        if (n->is_array)
            ns->node_data.Set(std::move(*array_data(*n)));
        else
            ns->node_data.Set(generated::GroupNodeDataT());
        s.nodes.push_back(std::move(ns));
    }
    // Sorted by id: Icechunk looks manifests up by binary search (base32
    // text order is byte order).
    std::vector<ManifestInfo> by_id = manifests;
    std::sort(by_id.begin(), by_id.end(),
              [](const ManifestInfo& a, const ManifestInfo& b) { return a.id < b.id; });
    for (const ManifestInfo& m : by_id) {
        auto mi = std::make_unique<generated::ManifestFileInfoV2T>();
        const Id12 mid = id12_of(m.id, "manifest");
        mi->id =
            std::make_unique<generated::ObjectId12>(fb::span<const uint8_t, 12>(mid.data(), 12));
        mi->size_bytes = m.size_bytes;
        mi->num_chunk_refs = m.refs;
        s.manifest_files_v2.push_back(std::move(mi));
    }
    fb::FlatBufferBuilder b;
    b.Finish(generated::Snapshot::Pack(b, &s));
    return seal(FileType::Snapshot, b);
}
} // namespace wdetail

std::shared_ptr<Repository> create_repository(std::shared_ptr<Store> storage) {
    const std::string where = join_key(storage->uri(), "repo");
    if (!storage->can_compare_and_swap())
        throw Error(where + ": cannot create an Icechunk repository here: the storage cannot "
                            "replace a file conditionally (compare-and-swap)");
    if (storage->size("repo")) throw Error(where + ": an Icechunk repository already exists there");
    const Id12 id = *decode_id12(kInitialSnapshotId);
    const uint64_t at = now_us();
    const std::string message = "Repository initialized";
    // Conditional, so that a storage that cannot honour conditions refuses
    // before anything is written; a file of a killed earlier creation is
    // replaced.
    auto put_initial = [&](const std::string& key, const Bytes& value) {
        if (storage->put_if(key, value, Precondition::absent()) != PutResult::Written)
            storage->put(key, value);
    };
    put_initial(std::string("snapshots/") + kInitialSnapshotId,
                snapshot_file(id, {}, at, message, {}, true));
    put_initial(std::string("transactions/") + kInitialSnapshotId, txlog_file(id, {}));
    generated::RepoT repo;
    repo.spec_version = 2;
    repo.status = std::make_unique<generated::RepoStatusT>();
    repo.status->set_at = at;
    auto info = std::make_unique<generated::SnapshotInfoT>();
    info->id = std::make_unique<generated::ObjectId12>(fb::span<const uint8_t, 12>(id.data(), 12));
    info->parent_offset = -1;
    info->flushed_at = at;
    info->message = message;
    info->metadata.push_back(initial_metadata());
    repo.snapshots.push_back(std::move(info));
    set_ref(repo, repo.branches, "main", kInitialSnapshotId);
    generated::UpdateTypeUnion u;
    u.Set(generated::RepoInitializedUpdateT());
    push_update(repo, std::move(u));
    if (!storage->compare_and_swap("repo", std::nullopt, pack_repo(repo)))
        throw Error(where + ": another writer created an Icechunk repository there meanwhile");
    return Repository::open(storage);
}

namespace {
void create_ref(Store& storage, const std::string& name, const std::string& snapshot_id, bool tag) {
    const char* kind = tag ? "tag" : "branch";
    check_ref_name(name, kind);
    const std::string id = encode_id(ByteView(id12_of(snapshot_id, kind).data(), 12));
    update_repo(storage, [&](generated::RepoT& repo) {
        const std::string where = join_key(storage.uri(), "repo");
        require_online(repo, where, std::string(kind) + " creation");
        if (tag) require_flag(repo, kFlagCreateTag, where, "tag creation");
        auto& refs = tag ? repo.tags : repo.branches;
        for (const auto& r : refs)
            if (r->name == name)
                throw Error(where + ": " + kind + " '" + name + "' already exists");
        if (tag && std::count(repo.deleted_tags.begin(), repo.deleted_tags.end(), name))
            throw Error(where + ": tag '" + name + "' was deleted; its name cannot be reused");
        if (snapshot_index(repo, id) < 0)
            throw Error(where + ": no snapshot " + id + " in the repository");
        set_ref(repo, refs, name, id);
        generated::UpdateTypeUnion u;
        if (tag) {
            generated::TagCreatedUpdateT t;
            t.name = name;
            u.Set(std::move(t));
        } else {
            generated::BranchCreatedUpdateT t;
            t.name = name;
            u.Set(std::move(t));
        }
        push_update(repo, std::move(u));
    });
}
} // namespace

void create_tag(Store& storage, const std::string& name, const std::string& snapshot_id) {
    create_ref(storage, name, snapshot_id, true);
}
void create_branch(Store& storage, const std::string& name, const std::string& snapshot_id) {
    create_ref(storage, name, snapshot_id, false);
}

std::string reset_branch(Store& storage, const std::string& name, const std::string& snapshot_id,
                         const std::string& expected_tip) {
    const std::string id = encode_id(ByteView(id12_of(snapshot_id, "snapshot").data(), 12));
    std::string previous;
    update_repo(storage, [&](generated::RepoT& repo) {
        const std::string where = join_key(storage.uri(), "repo");
        require_online(repo, where, "branch reset");
        const auto tip = branch_tip(repo, name);
        if (!tip) throw Error(where + ": no branch '" + name + "'");
        if (!expected_tip.empty() && *tip != expected_tip)
            throw CommitConflict(where + ": branch '" + name + "' moved from " + expected_tip +
                                 " to " + *tip +
                                 " meanwhile (another commit); nothing was reset: run the reset "
                                 "again to drop that commit too");
        if (snapshot_index(repo, id) < 0)
            throw Error(where + ": no snapshot " + id + " in the repository");
        previous = *tip;
        set_ref(repo, repo.branches, name, id);
        generated::BranchResetUpdateT t;
        t.name = name;
        const Id12 prev = id12_of(previous, "snapshot");
        t.previous_snap_id =
            std::make_unique<generated::ObjectId12>(fb::span<const uint8_t, 12>(prev.data(), 12));
        generated::UpdateTypeUnion u;
        u.Set(std::move(t));
        push_update(repo, std::move(u));
    });
    return previous;
}

} // namespace zarr3::icechunk
