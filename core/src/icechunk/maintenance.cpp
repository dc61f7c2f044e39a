// Icechunk maintenance: expire_snapshots (the repo file's history) and
// collect_garbage (objects no remaining snapshot references).
#include "icechunk/writer_detail.hpp"
#include "zarr3/icechunk_maintenance.hpp"

#include <ctime>
#include <filesystem>
#include <sys/stat.h>

namespace zarr3::icechunk {
using namespace wdetail;
namespace fs = std::filesystem;

namespace {

using Snaps = std::vector<std::unique_ptr<generated::SnapshotInfoT>>;

std::string text_of(const generated::ObjectId12& id) {
    return encode_id(ByteView(id.bytes()->data(), 12));
}

// The pruned list of snapshot `i` re-parented to the root of its ancestry:
// the collapsed ancestors oldest first, each preceded by its own pruned
// list, then `i`'s own list (Icechunk's reparent_and_prune). Returns the
// root's index in `root`.
std::vector<generated::ObjectId12> collapse(const Snaps& snaps, size_t i, int32_t& root) {
    std::vector<size_t> chain; // newest first
    int32_t p = snaps[i]->parent_offset;
    for (size_t steps = 0; p >= 0 && steps <= snaps.size(); ++steps) {
        if (snaps[p]->parent_offset < 0) break;
        chain.push_back(size_t(p));
        p = snaps[p]->parent_offset;
    }
    if (p < 0 || snaps[p]->parent_offset >= 0)
        throw FormatError("snapshot " + text_of(*snaps[i]->id) +
                          ": its ancestry has a cycle or no root");
    root = p;
    std::vector<generated::ObjectId12> out;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        const auto& a = *snaps[*it];
        out.insert(out.end(), a.pruned_ancestor_tx_logs.begin(), a.pruned_ancestor_tx_logs.end());
        out.push_back(*a.id);
    }
    const auto& own = snaps[i]->pruned_ancestor_tx_logs;
    out.insert(out.end(), own.begin(), own.end());
    return out;
}

// Which snapshots expire in `repo` (released: removed).
std::vector<bool> released_of(const generated::RepoT& repo, uint64_t older_than_us) {
    std::vector<bool> keep(repo.snapshots.size(), false), out(repo.snapshots.size(), false);
    for (const auto& r : repo.branches)
        keep[r->snapshot_index] = true;
    for (const auto& r : repo.tags)
        keep[r->snapshot_index] = true;
    for (size_t i = 0; i < out.size(); ++i) {
        const auto& s = *repo.snapshots[i];
        out[i] = !keep[i] && s.parent_offset >= 0 && s.flushed_at < older_than_us;
    }
    return out;
}

ExpireResult expire_edit(generated::RepoT& repo, uint64_t older_than_us) {
    ExpireResult res;
    Snaps& snaps = repo.snapshots;
    const std::vector<bool> released = released_of(repo, older_than_us);
    std::vector<int32_t> new_parent(snaps.size());
    std::vector<std::vector<generated::ObjectId12>> pruned(snaps.size());
    for (size_t i = 0; i < snaps.size(); ++i) {
        new_parent[i] = snaps[i]->parent_offset;
        if (released[i]) {
            res.released.push_back(text_of(*snaps[i]->id));
        } else if (snaps[i]->parent_offset >= 0 && released[snaps[i]->parent_offset]) {
            pruned[i] = collapse(snaps, i, new_parent[i]);
            res.edited.push_back(text_of(*snaps[i]->id));
        }
    }
    std::vector<int32_t> index(snaps.size(), -1);
    Snaps kept;
    for (size_t i = 0; i < snaps.size(); ++i)
        if (!released[i]) {
            index[i] = int32_t(kept.size());
            kept.push_back(std::move(snaps[i]));
        }
    for (size_t i = 0, k = 0; i < index.size(); ++i) {
        if (index[i] < 0) continue;
        auto& s = *kept[k++];
        s.parent_offset = new_parent[i] < 0 ? -1 : index[new_parent[i]];
        if (!pruned[i].empty()) s.pruned_ancestor_tx_logs = std::move(pruned[i]);
    }
    for (auto* refs : {&repo.branches, &repo.tags})
        for (auto& r : *refs)
            r->snapshot_index = uint32_t(index[r->snapshot_index]);
    snaps = std::move(kept);
    generated::UpdateTypeUnion u;
    u.Set(generated::ExpirationRanUpdateT());
    push_update(repo, std::move(u));
    return res;
}

// What the remaining snapshots reference: "snapshots/ID", "manifests/ID",
// "transactions/ID", "chunks/ID".
struct Reachable {
    std::set<std::string> keys;
};

void mark_manifest(Store& storage, const std::string& id, Reachable& r) {
    const std::string key = "manifests/" + id;
    if (!r.keys.insert(key).second) return;
    const std::string where = join_key(storage.uri(), key);
    const Envelope env = open_envelope(detail::read_file(storage, key), FileType::Manifest, where);
    const auto* m = detail::verified_root<generated::Manifest>(env.payload, where);
    if (!m->arrays()) return;
    for (const auto* a : *m->arrays())
        if (a && a->refs())
            for (const auto* ref : *a->refs())
                if (ref && ref->chunk_id())
                    r.keys.insert("chunks/" + detail::id12_text(ref->chunk_id()));
}

void mark_snapshot(Store& storage, const generated::SnapshotInfoT& info, Reachable& r) {
    const std::string id = text_of(*info.id);
    const std::string key = "snapshots/" + id;
    r.keys.insert(key);
    r.keys.insert("transactions/" + id);
    for (const auto& t : info.pruned_ancestor_tx_logs)
        r.keys.insert("transactions/" + text_of(t));
    const Bytes file = detail::read_file(storage, key);
    const Snapshot snap = parse_snapshot(file, join_key(storage.uri(), key));
    for (const Node& n : snap.nodes)
        for (const ManifestExtent& e : n.manifests)
            mark_manifest(storage, e.manifest_id, r);
    for (const ManifestInfo& m : manifest_infos(storage, id))
        mark_manifest(storage, m.id, r);
}

int64_t clock_now() {
    return int64_t(std::time(nullptr));
}

} // namespace

ExpireResult expire_snapshots(Store& storage, uint64_t older_than_us) {
    ExpireResult res;
    update_repo(storage, [&](generated::RepoT& repo) { res = expire_edit(repo, older_than_us); });
    return res;
}

ObjectLister local_object_lister(const std::string& root) {
    return [root](const std::string& prefix) {
        std::vector<StoredObject> out;
        const fs::path dir = fs::path(root) / prefix;
        std::error_code ec;
        const auto st = fs::symlink_status(dir, ec);
        if (ec || st.type() == fs::file_type::not_found) return out;
        if (st.type() != fs::file_type::directory)
            throw Error(dir.string() + ": not a folder (a link or another file): the objects "
                                       "in it are not collected; nothing was deleted");
        for (fs::directory_iterator it(dir, ec), end; it != end; it.increment(ec)) {
            if (ec) break;
            struct stat sb {};
            StoredObject o{it->path().filename().string()};
            if (::lstat(it->path().c_str(), &sb) != 0) continue;
            o.regular = S_ISREG(sb.st_mode);
            o.bytes = uint64_t(sb.st_size);
            o.mtime = int64_t(sb.st_mtime);
            out.push_back(std::move(o));
        }
        if (ec) throw Error(dir.string() + ": cannot list (" + ec.message() + "); nothing deleted");
        return out;
    };
}

GcResult collect_garbage(Store& storage, const ObjectLister& list, const GcOptions& options) {
    const std::string where = join_key(storage.uri(), "repo");
    const auto repo = load_repo(detail::read_file(storage, "repo"), where);
    Reachable r;
    for (const auto& s : repo->snapshots)
        mark_snapshot(storage, *s, r);
    kill_point("gc-marked");
    const int64_t now = options.now ? options.now : clock_now();
    GcResult res;
    std::vector<std::pair<std::string, uint64_t>> doomed;
    for (const char* prefix : {"snapshots", "transactions", "manifests", "chunks"}) {
        for (const StoredObject& o : list(prefix)) {
            const std::string key = std::string(prefix) + "/" + o.name;
            res.bytes_before += o.bytes;
            if (!decode_id12(o.name) || o.name.size() != 20 || r.keys.count(key)) continue;
            if (!o.regular) {
                res.left.push_back(key + ": not a regular file (a link?), left alone");
                continue;
            }
            if (o.mtime > now - options.grace_seconds) {
                ++res.kept_young;
                continue;
            }
            doomed.emplace_back(key, o.bytes);
        }
    }
    for (const auto& [key, bytes] : doomed) {
        storage.erase(key);
        ++res.deleted;
        res.deleted_bytes += bytes;
        res.ids_deleted.push_back(key);
        kill_point("gc-deleting");
    }
    return res;
}

} // namespace zarr3::icechunk
