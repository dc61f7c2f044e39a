// Icechunk writer: ids, sealed files, repo file edits, snapshot, manifest
// and transaction log files.
#include "icechunk/writer_detail.hpp"
#include "zarr3/compact.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <unistd.h>
#include <zstd.h>

namespace zarr3::icechunk::wdetail {
namespace fb = flatbuffers;

namespace {

constexpr uint8_t kMagic[] = {0x49, 0x43, 0x45, 0xF0, 0x9F, 0xA7,
                              0x8A, 0x43, 0x48, 0x55, 0x4E, 0x4B};
constexpr size_t kMaxUpdates = 1000; // ops log entries kept in the repo file
constexpr int kMaxRepoRetries = 1000;

// Random bytes from a generator seeded per thread and per process (a
// forked child reseeds: it must not repeat its parent's ids).
template <size_t N> std::array<uint8_t, N> random_bytes() {
    struct State {
        pid_t pid = -1;
        std::mt19937_64 gen;
    };
    thread_local State st;
    if (st.pid != ::getpid()) {
        std::random_device rd;
        std::seed_seq seq{rd(),
                          rd(),
                          rd(),
                          rd(),
                          unsigned(::getpid()),
                          unsigned(std::chrono::steady_clock::now().time_since_epoch().count())};
        st.gen.seed(seq);
        st.pid = ::getpid();
    }
    std::array<uint8_t, N> a{};
    for (auto& b : a)
        b = static_cast<uint8_t>(st.gen());
    return a;
}

generated::ObjectId12 fb_id12(const Id12& a) {
    return generated::ObjectId12(fb::span<const uint8_t, 12>(a.data(), 12));
}
generated::ObjectId8 fb_id8(const Id8& a) {
    return generated::ObjectId8(fb::span<const uint8_t, 8>(a.data(), 8));
}
std::string text12(const generated::ObjectId12& id) {
    return encode_id(ByteView(id.bytes()->data(), 12));
}
Id8 id8_array(const generated::ObjectId8& id) {
    Id8 a{};
    std::memcpy(a.data(), id.bytes()->data(), 8);
    return a;
}

} // namespace

Id12 random_id12() {
    return random_bytes<12>();
}
Id8 random_id8() {
    return random_bytes<8>();
}
Id12 id12_of(const std::string& text, const std::string& where) {
    auto id = decode_id12(text);
    if (!id) throw Error(where + ": '" + text + "' is not a snapshot id");
    return *id;
}
uint64_t now_us() {
    return uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count());
}
void kill_point(const char* step) {
    test_kill_point(step);
}

Bytes seal(FileType type, const fb::FlatBufferBuilder& b) {
    Bytes out(kMagic, kMagic + sizeof kMagic);
    std::string name = kImplementationName;
    name.resize(24, ' ');
    out.insert(out.end(), name.begin(), name.end());
    out.push_back(2);
    out.push_back(static_cast<uint8_t>(type));
    out.push_back(1); // zstd
    const size_t head = out.size();
    out.resize(head + ZSTD_compressBound(b.GetSize()));
    const size_t n =
        ZSTD_compress(out.data() + head, out.size() - head, b.GetBufferPointer(), b.GetSize(), 3);
    if (ZSTD_isError(n)) throw Error(std::string("zstd: ") + ZSTD_getErrorName(n));
    out.resize(head + n);
    return out;
}

std::unique_ptr<generated::RepoT> load_repo(const Bytes& file, const std::string& where) {
    Envelope env = open_envelope(file, FileType::RepoInfo, where);
    if (env.spec_version != 2)
        throw Error(where + ": Icechunk spec version " + std::to_string(env.spec_version) +
                    " repositories cannot be written (only version 2)");
    const auto* repo = detail::verified_root<generated::Repo>(env.payload, where);
    std::unique_ptr<generated::RepoT> out(repo->UnPack());
    const size_t n = out->snapshots.size();
    for (const auto& r : out->branches)
        if (r->snapshot_index >= n) throw FormatError(where + ": branch '" + r->name + "' dangles");
    for (const auto& r : out->tags)
        if (r->snapshot_index >= n) throw FormatError(where + ": tag '" + r->name + "' dangles");
    for (const auto& s : out->snapshots)
        if (s->parent_offset < -1 || s->parent_offset >= int64_t(n))
            throw FormatError(where + ": snapshot parent index " +
                              std::to_string(s->parent_offset) + " out of range");
    return out;
}

Bytes pack_repo(const generated::RepoT& repo) {
    fb::FlatBufferBuilder b;
    b.Finish(generated::Repo::Pack(b, &repo));
    return seal(FileType::RepoInfo, b);
}

int64_t snapshot_index(const generated::RepoT& repo, const std::string& id) {
    for (size_t i = 0; i < repo.snapshots.size(); ++i)
        if (text12(*repo.snapshots[i]->id) == id) return int64_t(i);
    return -1;
}

std::optional<std::string> branch_tip(const generated::RepoT& repo, const std::string& name) {
    for (const auto& r : repo.branches)
        if (r->name == name) return text12(*repo.snapshots[r->snapshot_index]->id);
    return std::nullopt;
}

void add_snapshot(generated::RepoT& repo, std::unique_ptr<generated::SnapshotInfoT> info,
                  const std::string& parent) {
    auto& snaps = repo.snapshots;
    std::vector<std::string> parents, ids;
    for (const auto& s : snaps) {
        ids.push_back(text12(*s->id));
        parents.push_back(s->parent_offset < 0 ? "" : text12(*snaps[s->parent_offset]->id));
    }
    auto ref_ids = [&](const std::vector<std::unique_ptr<generated::RefT>>& refs) {
        std::vector<std::string> v;
        for (const auto& r : refs)
            v.push_back(ids[r->snapshot_index]);
        return v;
    };
    const auto branch_ids = ref_ids(repo.branches), tag_ids = ref_ids(repo.tags);
    if (std::count(ids.begin(), ids.end(), text12(*info->id)))
        throw Error("snapshot " + text12(*info->id) + " is already in the repository");
    ids.push_back(text12(*info->id));
    parents.push_back(parent);
    snaps.push_back(std::move(info));
    std::vector<size_t> order(snaps.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    auto raw = [&](size_t i) { return ByteView(snaps[i]->id->bytes()->data(), 12); };
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return std::lexicographical_compare(raw(a).begin(), raw(a).end(), raw(b).begin(),
                                            raw(b).end());
    });
    std::vector<std::unique_ptr<generated::SnapshotInfoT>> sorted;
    std::map<std::string, int32_t> index;
    for (size_t i : order) {
        index[ids[i]] = int32_t(sorted.size());
        sorted.push_back(std::move(snaps[i]));
    }
    for (size_t k = 0; k < order.size(); ++k) {
        const std::string& p = parents[order[k]];
        sorted[k]->parent_offset = p.empty() ? -1 : index.at(p);
    }
    snaps = std::move(sorted);
    for (size_t i = 0; i < repo.branches.size(); ++i)
        repo.branches[i]->snapshot_index = uint32_t(index.at(branch_ids[i]));
    for (size_t i = 0; i < repo.tags.size(); ++i)
        repo.tags[i]->snapshot_index = uint32_t(index.at(tag_ids[i]));
}

void set_ref(generated::RepoT& repo, std::vector<std::unique_ptr<generated::RefT>>& refs,
             const std::string& name, const std::string& id) {
    const int64_t idx = snapshot_index(repo, id);
    if (idx < 0) throw Error("snapshot " + id + " is not in the repository");
    auto it = std::lower_bound(refs.begin(), refs.end(), name,
                               [](const auto& r, const std::string& n) { return r->name < n; });
    if (it == refs.end() || (*it)->name != name) {
        auto r = std::make_unique<generated::RefT>();
        r->name = name;
        it = refs.insert(it, std::move(r));
    }
    (*it)->snapshot_index = uint32_t(idx);
}

void push_update(generated::RepoT& repo, generated::UpdateTypeUnion u) {
    auto up = std::make_unique<generated::UpdateT>();
    up->update_type = std::move(u);
    up->updated_at = now_us();
    repo.latest_updates.insert(repo.latest_updates.begin(), std::move(up));
    if (repo.latest_updates.size() > kMaxUpdates) {
        repo.repo_before_updates = repo.latest_updates.back()->backup_path;
        repo.latest_updates.resize(kMaxUpdates);
    }
}

void require_online(const generated::RepoT& repo, const std::string& where,
                    const std::string& what) {
    if (!repo.status || repo.status->availability == generated::RepoAvailability::Online) return;
    const auto a = repo.status->availability;
    std::string status = a == generated::RepoAvailability::ReadOnly ? "ReadOnly"
                         : a == generated::RepoAvailability::Offline
                             ? "Offline"
                             : "unknown (" + std::to_string(int(a)) + ")";
    if (!repo.status->limited_availability_reason.empty())
        status += " (" + repo.status->limited_availability_reason + ")";
    throw Error(where + ": the repository's status is " + status + ", not Online: " + what +
                " refused; nothing was written");
}

void require_flag(const generated::RepoT& repo, uint16_t id, const std::string& where,
                  const std::string& what) {
    if (!std::count(repo.disabled_feature_flags.begin(), repo.disabled_feature_flags.end(), id))
        return;
    const char* name = id == kFlagMoveNode    ? "move_node"
                       : id == kFlagCreateTag ? "create_tag"
                       : id == kFlagDeleteTag ? "delete_tag"
                                              : "unknown";
    throw Error(where + ": the repository's feature flag '" + name + "' (" + std::to_string(id) +
                ") is disabled: " + what + " refused; nothing was written");
}

bool replace_repo(Store& storage, const Bytes& old_bytes, generated::RepoT& next) {
    // "repo." + (ms of 3000-01-01 - now ms) + "." + random id: newest first.
    const uint64_t y3000_ms = 32503680000000ull;
    const std::string backup = "repo." + std::to_string(y3000_ms - now_us() / 1000) + "." +
                               encode_id(ByteView(random_id12().data(), 12));
    storage.put_new("overwritten/" + backup, old_bytes);
    if (next.latest_updates.size() >= 2) next.latest_updates[1]->backup_path = backup;
    kill_point("icechunk-repo");
    return storage.compare_and_swap("repo", old_bytes, pack_repo(next));
}

void update_repo(Store& storage, const std::function<void(generated::RepoT&)>& edit) {
    const std::string where = join_key(storage.uri(), "repo");
    if (!storage.can_compare_and_swap())
        throw Error(where + ": cannot update the Icechunk repository: its storage cannot replace "
                            "the repo file conditionally (compare-and-swap)");
    for (int attempt = 0; attempt < kMaxRepoRetries; ++attempt) {
        const Bytes old = detail::read_file(storage, "repo");
        auto repo = load_repo(old, where);
        edit(*repo);
        if (replace_repo(storage, old, *repo)) return;
    }
    throw Error(where + ": gave up after " + std::to_string(kMaxRepoRetries) +
                " attempts: other writers kept changing the file");
}

std::vector<ManifestInfo> manifest_infos(Store& storage, const std::string& snapshot_id) {
    const std::string key = "snapshots/" + snapshot_id;
    const std::string where = join_key(storage.uri(), key);
    Envelope env = open_envelope(detail::read_file(storage, key), FileType::Snapshot, where);
    const auto* s = detail::verified_root<generated::Snapshot>(env.payload, where);
    std::vector<ManifestInfo> out;
    if (const auto* v2 = s->manifest_files_v2())
        for (const auto* m : *v2)
            if (m->id())
                out.push_back({detail::id12_text(m->id()), m->size_bytes(), m->num_chunk_refs()});
    for (const auto* m : *s->manifest_files())
        out.push_back({text12(m->id()), m->size_bytes(), m->num_chunk_refs()});
    return out;
}

Bytes manifest_file(const Id12& id, const Id8& node,
                    const std::vector<std::pair<Coords, ChunkRef>>& refs) {
    generated::ManifestT m;
    m.id = std::make_unique<generated::ObjectId12>(fb_id12(id));
    auto a = std::make_unique<generated::ArrayManifestT>();
    a->node_id = std::make_unique<generated::ObjectId8>(fb_id8(node));
    for (const auto& [coords, ref] : refs) {
        auto r = std::make_unique<generated::ChunkRefT>();
        for (uint64_t c : coords)
            r->index.push_back(uint32_t(c));
        r->offset = ref.offset;
        r->length = ref.length;
        switch (ref.kind) {
        case ChunkRef::Kind::Inline:
            r->inline_.assign(ref.inline_data.begin(), ref.inline_data.end());
            r->offset = r->length = 0;
            break;
        case ChunkRef::Kind::Native:
            r->chunk_id = std::make_unique<generated::ObjectId12>(
                fb_id12(id12_of(ref.chunk_id, "chunk reference")));
            break;
        case ChunkRef::Kind::Virtual:
            r->location = ref.location;
            r->checksum_etag = ref.etag;
            r->checksum_last_modified = ref.last_modified;
            break;
        }
        a->refs.push_back(std::move(r));
    }
    m.arrays.push_back(std::move(a));
    fb::FlatBufferBuilder b;
    b.Finish(generated::Manifest::Pack(b, &m));
    return seal(FileType::Manifest, b);
}

namespace {
std::vector<generated::ObjectId8> id8_list(const std::set<Id8>& s) {
    std::vector<generated::ObjectId8> v;
    for (const Id8& id : s)
        v.push_back(fb_id8(id));
    return v;
}
std::set<Id8> id8_set(const std::vector<generated::ObjectId8>& v) {
    std::set<Id8> s;
    for (const auto& id : v)
        s.insert(id8_array(id));
    return s;
}
} // namespace

Bytes txlog_file(const Id12& id, const Changes& c) {
    generated::TransactionLogT t;
    t.id = std::make_unique<generated::ObjectId12>(fb_id12(id));
    t.new_groups = id8_list(c.new_groups);
    t.new_arrays = id8_list(c.new_arrays);
    t.deleted_groups = id8_list(c.deleted_groups);
    t.deleted_arrays = id8_list(c.deleted_arrays);
    t.updated_groups = id8_list(c.updated_groups);
    t.updated_arrays = id8_list(c.updated_arrays);
    for (const auto& [node, coords] : c.chunks) {
        auto u = std::make_unique<generated::ArrayUpdatedChunksT>();
        u->node_id = std::make_unique<generated::ObjectId8>(fb_id8(node));
        for (const Coords& k : coords) {
            auto ci = std::make_unique<generated::ChunkIndicesT>();
            for (uint64_t x : k)
                ci->coords.push_back(uint32_t(x));
            u->chunks.push_back(std::move(ci));
        }
        t.updated_chunks.push_back(std::move(u));
    }
    fb::FlatBufferBuilder b;
    b.Finish(generated::TransactionLog::Pack(b, &t));
    return seal(FileType::TransactionLog, b);
}

Changes parse_txlog(const Bytes& file, const std::string& where) {
    Envelope env = open_envelope(file, FileType::TransactionLog, where);
    const auto* t = detail::verified_root<generated::TransactionLog>(env.payload, where);
    std::unique_ptr<generated::TransactionLogT> o(t->UnPack());
    Changes c;
    c.new_groups = id8_set(o->new_groups);
    c.new_arrays = id8_set(o->new_arrays);
    c.deleted_groups = id8_set(o->deleted_groups);
    c.deleted_arrays = id8_set(o->deleted_arrays);
    c.updated_groups = id8_set(o->updated_groups);
    c.updated_arrays = id8_set(o->updated_arrays);
    for (const auto& u : o->updated_chunks) {
        auto& set = c.chunks[id8_array(*u->node_id)];
        for (const auto& ci : u->chunks)
            set.insert(Coords(ci->coords.begin(), ci->coords.end()));
    }
    for (const auto& m : o->moved_nodes) {
        if (!m->node_id)
            throw FormatError(where + ": a moved node (from '" + m->from + "' to '" + m->to +
                              "') has no node id");
        c.moved[id8_array(*m->node_id)] = {m->from, m->to};
    }
    return c;
}

} // namespace zarr3::icechunk::wdetail
