// IcechunkSession::commit: manifests, snapshot, transaction log, the
// conditional update of `repo`, conflict detection and rebase.
#include "icechunk/writer_session.hpp"
#include "zarr3/metadata.hpp"

#include <cstdlib>

namespace zarr3::icechunk {
using namespace wdetail;

namespace {

using Impl = IcechunkSession::Impl;
using RefList = std::vector<std::pair<Coords, ChunkRef>>;

// Manifests are split along axis 0: one manifest per run of this many chunk
// indexes (Icechunk's manifest splitting), so an append rewrites only the
// last split's manifest. ZARR3_ICECHUNK_SPLIT_CHUNKS overrides it.
uint64_t split_chunks() {
    const char* v = std::getenv("ZARR3_ICECHUNK_SPLIT_CHUNKS");
    const uint64_t n = v && *v ? std::strtoull(v, nullptr, 10) : 0;
    return n ? n : kManifestSplitChunks;
}

uint64_t split_of(const Coords& c, uint64_t k) {
    return c.empty() ? 0 : c[0] / k;
}

// Which base manifests of an array stay as they are: each lies in one
// split (along axis 0) inside the grid, and no staged chunk and no other
// base manifest that is rewritten falls in that split.
struct SplitPlan {
    std::vector<ManifestExtent> kept;
    std::set<std::string> reread; // manifests whose references are written again
};

SplitPlan plan_splits(const Impl::View& v, const std::set<uint64_t>& staged, uint64_t k,
                      const ArrayMetadata& m) {
    SplitPlan plan;
    if (!v.from_base || !v.base) return plan;
    auto in_one_split = [&](const ManifestExtent& e) {
        if (e.axes.size() != m.rank() || e.axes.empty() || e.axes[0].first >= e.axes[0].second)
            return false;
        for (size_t d = 0; d < e.axes.size(); ++d)
            if (e.axes[d].second > m.grid.axis(d).num_chunks()) return false;
        return e.axes[0].first / k == (e.axes[0].second - 1) / k;
    };
    std::vector<std::pair<uint64_t, uint64_t>> spans; // splits rewritten anyway
    for (const ManifestExtent& e : v.base->manifests)
        if (!in_one_split(e) && !e.axes.empty() && e.axes[0].first < e.axes[0].second)
            spans.emplace_back(e.axes[0].first / k, (e.axes[0].second - 1) / k);
    auto dirty = [&](uint64_t split) {
        if (staged.count(split)) return true;
        for (const auto& [lo, hi] : spans)
            if (lo <= split && split <= hi) return true;
        return false;
    };
    for (const ManifestExtent& e : v.base->manifests) {
        if (in_one_split(e) && !dirty(e.axes[0].first / k))
            plan.kept.push_back(e);
        else
            plan.reread.insert(e.manifest_id);
    }
    return plan;
}

// The references of array `v` after the staged changes, inside its grid,
// outside the kept manifests: those of the reread manifests and the staged.
RefList refs_after(Impl& s, const std::string& path, const Impl::View& v, const SplitPlan& plan,
                   const ArrayMetadata& m) {
    std::map<Coords, ChunkRef> refs;
    for (const ManifestExtent& e : v.base ? v.base->manifests : std::vector<ManifestExtent>{}) {
        if (!plan.reread.count(e.manifest_id)) continue;
        const std::string key = "manifests/" + e.manifest_id;
        const Manifest man(detail::read_file(*s.storage, key), join_key(s.storage->uri(), key));
        for (const Coords& c : man.coords_of(v.id))
            if (e.contains(c))
                if (auto r = man.find(v.id, c)) refs[c] = std::move(*r);
    }
    for (const auto& [c, r] : s.chunks[path]) {
        if (r)
            refs[c] = *r;
        else
            refs.erase(c);
    }
    RefList out;
    for (auto& [c, r] : refs) {
        bool inside = c.size() == m.rank();
        for (size_t d = 0; inside && d < c.size(); ++d)
            inside = c[d] < m.grid.axis(d).num_chunks();
        if (inside) out.emplace_back(c, std::move(r));
    }
    return out;
}

ManifestExtent extent_of(const std::string& id, const RefList& refs) {
    ManifestExtent e{id, {}};
    for (size_t d = 0; d < refs.front().first.size(); ++d) {
        uint32_t lo = UINT32_MAX, hi = 0;
        for (const auto& [c, r] : refs) {
            lo = std::min(lo, uint32_t(c[d]));
            hi = std::max(hi, uint32_t(c[d] + 1));
        }
        e.axes.emplace_back(lo, hi);
    }
    return e;
}

// Writes one manifest of `refs` for node `n`.
void write_manifest(Impl& s, NodeOut& n, const RefList& refs, std::vector<ManifestInfo>& written) {
    const Id12 mid = random_id12();
    const std::string mtext = encode_id(ByteView(mid.data(), mid.size()));
    const Bytes file = manifest_file(mid, n.id, refs);
    s.storage->put_new("manifests/" + mtext, file);
    written.push_back({mtext, file.size(), uint32_t(refs.size())});
    n.manifests.push_back(extent_of(mtext, refs));
}

// Node `n` of the new snapshot and what changed about it.
NodeOut node_out(Impl& s, const std::string& path, const Impl::View& v, Changes& ch,
                 std::vector<ManifestInfo>& written) {
    NodeOut n{path, v.id, v.is_array, v.zarr_json, {}};
    if (!v.from_base)
        (v.is_array ? ch.new_arrays : ch.new_groups).insert(v.id);
    else if (v.zarr_json != v.base->zarr_json)
        (v.is_array ? ch.updated_arrays : ch.updated_groups).insert(v.id);
    if (!v.is_array) return n;
    auto staged = s.chunks.find(path);
    if (staged == s.chunks.end() || staged->second.empty()) {
        if (v.from_base) n.manifests = v.base->manifests;
        return n;
    }
    const uint64_t k = split_chunks();
    std::set<uint64_t> splits;
    for (const auto& [c, r] : staged->second) {
        ch.chunks[v.id].insert(c);
        splits.insert(split_of(c, k));
    }
    const std::string where = path + " zarr.json";
    const ArrayMetadata m = parse_array_metadata(parse_json_text(v.zarr_json, where), where);
    const SplitPlan plan = plan_splits(v, splits, k, m);
    n.manifests = plan.kept;
    std::map<uint64_t, RefList> by_split;
    for (auto& ref : refs_after(s, path, v, plan, m))
        by_split[split_of(ref.first, k)].push_back(std::move(ref));
    for (const auto& [split, refs] : by_split)
        write_manifest(s, n, refs, written);
    return n;
}

// Writes the manifests, snapshot and transaction log of the staged
// changes over the base; returns the new snapshot's id.
std::string write_commit_files(Impl& s, const std::string& message, uint64_t at) {
    Changes ch;
    std::vector<NodeOut> nodes;
    std::vector<ManifestInfo> written;
    for (const std::string& p : s.paths())
        nodes.push_back(node_out(s, p, *s.view(p), ch, written));
    for (const Node& b : s.base->nodes) {
        auto v = s.view(b.path);
        if (!v || !v->from_base) (b.is_array ? ch.deleted_arrays : ch.deleted_groups).insert(b.id);
    }
    kill_point("icechunk-chunks");
    // Manifest infos of every manifest the new snapshot references.
    std::map<std::string, ManifestInfo> infos;
    for (const ManifestInfo& m : manifest_infos(*s.storage, s.base_id))
        infos[m.id] = m;
    for (const ManifestInfo& m : written)
        infos[m.id] = m;
    std::vector<ManifestInfo> used;
    std::set<std::string> seen;
    for (const NodeOut& n : nodes)
        for (const ManifestExtent& e : n.manifests)
            if (seen.insert(e.manifest_id).second) {
                auto it = infos.find(e.manifest_id);
                used.push_back(it != infos.end() ? it->second : ManifestInfo{e.manifest_id, 0, 0});
            }
    const Id12 id = random_id12();
    const std::string text = encode_id(ByteView(id.data(), id.size()));
    s.storage->put_new("transactions/" + text, txlog_file(id, ch));
    s.storage->put_new("snapshots/" + text, snapshot_file(id, nodes, at, message, used, false));
    kill_point("icechunk-snapshot");
    return text;
}

void add_changes(Changes& all, Changes c) {
    for (auto p : {&Changes::new_groups, &Changes::new_arrays, &Changes::deleted_groups,
                   &Changes::deleted_arrays, &Changes::updated_groups, &Changes::updated_arrays})
        (all.*p).insert((c.*p).begin(), (c.*p).end());
    for (auto& [node, coords] : c.chunks)
        all.chunks[node].insert(coords.begin(), coords.end());
    for (auto& [node, move] : c.moved) // newest first: keep the first `to`, latest `from`
        all.moved[node] = {move.first,
                           all.moved.count(node) ? all.moved[node].second : move.second};
}

Changes txlog_of(Impl& s, const std::string& id) {
    const std::string key = "transactions/" + id;
    return parse_txlog(detail::read_file(*s.storage, key), join_key(s.storage->uri(), key));
}

// When expiry removed the base from the history (spec 2.1), a snapshot's
// pruned_ancestor_tx_logs may list it: the logs after it there, newest
// first, are part of the changes since the base. False when it is not listed.
bool add_pruned_since_base(Impl& s, const generated::SnapshotInfoT& info, Changes& all) {
    const auto& pruned = info.pruned_ancestor_tx_logs;
    for (size_t k = pruned.size(); k-- > 0;) {
        const std::string id = encode_id(ByteView(pruned[k].bytes()->data(), 12));
        if (id == s.base_id) return true;
        add_changes(all, txlog_of(s, id));
    }
    return false;
}

// The changes of the commits from `tip` back to (not including) `base`.
// CommitConflict when `base` is not an ancestor of `tip`.
Changes their_changes(Impl& s, const generated::RepoT& repo, const std::string& tip) {
    Changes all;
    int64_t i = snapshot_index(repo, tip);
    for (size_t steps = 0; i >= 0 && steps <= repo.snapshots.size(); ++steps) {
        const std::string id = encode_id(ByteView(repo.snapshots[i]->id->bytes()->data(), 12));
        if (id == s.base_id) return all;
        add_changes(all, txlog_of(s, id));
        Changes pruned;
        if (add_pruned_since_base(s, *repo.snapshots[i], pruned)) {
            add_changes(all, std::move(pruned));
            return all;
        }
        i = repo.snapshots[i]->parent_offset;
    }
    throw CommitConflict(join_key(s.storage->uri(), "repo") + ": branch '" + s.branch +
                         "' was reset to a snapshot that does not descend from " + s.base_id +
                         " (the base of this session); nothing was committed");
}

std::string coords_text(const Coords& c) {
    std::string out;
    for (uint64_t x : c)
        out += (out.empty() ? "" : ",") + std::to_string(x);
    return "(" + out + ")";
}

// "/a/b" -> "/a"; "/a" -> "/".
std::string parent_of(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

// Why the tip no longer holds base node `b` at its path (after the commits
// in between): moved, deleted or replaced.
std::string lost_because(const Node& b, const Changes& theirs, const Snapshot& tip) {
    if (auto m = theirs.moved.find(b.id); m != theirs.moved.end())
        return "was moved to " + m->second.second;
    if (theirs.deleted_arrays.count(b.id) || theirs.deleted_groups.count(b.id))
        return "was deleted";
    for (const Node& n : tip.nodes)
        if (n.id == b.id) return "was moved to " + n.path;
    return tip.find(b.path) ? "was replaced by another node" : "was moved or deleted";
}

// The base nodes the session changes (metadata or chunks) are still the
// same nodes at the same paths on the tip, and every node it creates has
// its parent group there (or created by the session too): whatever the
// transaction logs record, a node the other commits moved, renamed,
// deleted or replaced is a conflict, never a change applied to nothing.
void check_nodes_kept(const Impl& s, const Changes& theirs, const Snapshot& tip,
                      const std::string& head) {
    auto kept = [&](const std::string& path, const char* what) {
        const Node* b = s.base->find(path);
        if (!b) return;
        const Node* t = tip.find(path);
        if (t && t->id == b->id && !theirs.moved.count(b->id)) return;
        throw CommitConflict(head + "node " + path + " " + lost_because(*b, theirs, tip) +
                             " by another commit while this one changed its " + what);
    };
    for (const auto& [path, json] : s.meta)
        kept(path, "metadata");
    for (const auto& [path, staged] : s.chunks)
        if (!staged.empty()) kept(path, "chunks");
    for (const auto& [path, json] : s.meta) {
        if (!json || path == "/") continue;
        const std::string parent = parent_of(path);
        auto own = s.meta.find(parent);
        const bool created_here = own != s.meta.end() && own->second &&
                                  (!s.base->find(parent) || s.new_ids.count(parent));
        if (!tip.find(parent) && !created_here)
            throw CommitConflict(head + "group " + parent + ", the parent of node " + path +
                                 " this commit creates, was moved or deleted by another commit");
    }
}

// CommitConflict naming the first node or chunk both sides changed.
void check_conflicts(Impl& s, const Changes& theirs, const Snapshot& tip) {
    const std::string head =
        join_key(s.storage->uri(), "repo") + ": commit conflict on branch '" + s.branch + "': ";
    check_nodes_kept(s, theirs, tip, head);
    auto touched_meta = [&](const Id8& id) {
        for (auto* set : {&theirs.updated_arrays, &theirs.updated_groups, &theirs.deleted_arrays,
                          &theirs.deleted_groups})
            if (set->count(id)) return true;
        return theirs.moved.count(id) != 0;
    };
    for (const auto& [path, json] : s.meta) {
        const Node* b = s.base->find(path);
        if (!b) {
            if (tip.find(path))
                throw CommitConflict(head + "node " + path + " was created by both commits");
            continue;
        }
        if (touched_meta(b->id) || theirs.chunks.count(b->id))
            throw CommitConflict(head + "node " + path +
                                 " was changed by another commit and by this one");
    }
    for (const auto& [path, staged] : s.chunks) {
        const Node* b = s.base->find(path);
        if (!b || s.new_ids.count(path) || staged.empty()) continue;
        if (touched_meta(b->id))
            throw CommitConflict(head + "array " + path +
                                 " was changed or deleted by another commit while this one wrote "
                                 "its chunks");
        auto it = theirs.chunks.find(b->id);
        if (it == theirs.chunks.end()) continue;
        for (const auto& [c, r] : staged)
            if (it->second.count(c))
                throw CommitConflict(head + "chunk " + coords_text(c) + " of array " + path +
                                     " was written by another commit and by this one");
    }
}

std::unique_ptr<generated::SnapshotInfoT> info_of(const std::string& id, uint64_t at,
                                                  const std::string& message) {
    auto info = std::make_unique<generated::SnapshotInfoT>();
    const Id12 raw = *decode_id12(id);
    info->id = std::make_unique<generated::ObjectId12>(
        flatbuffers::span<const uint8_t, 12>(raw.data(), 12));
    info->flushed_at = at;
    info->message = message;
    return info;
}

void move_branch(Impl& s, generated::RepoT& repo, const std::string& id, uint64_t at,
                 const std::string& message) {
    add_snapshot(repo, info_of(id, at, message), s.base_id);
    set_ref(repo, repo.branches, s.branch, id);
    generated::NewCommitUpdateT nc;
    nc.branch = s.branch;
    const Id12 raw = *decode_id12(id);
    nc.new_snap_id = std::make_unique<generated::ObjectId12>(
        flatbuffers::span<const uint8_t, 12>(raw.data(), 12));
    generated::UpdateTypeUnion u;
    u.Set(std::move(nc));
    push_update(repo, std::move(u));
}

// Whether the `repo` stored now lists snapshot `built`.
bool snapshot_landed(Impl& s, const std::string& built, const std::string& where) {
    return snapshot_index(*load_repo(detail::read_file_fresh(*s.storage, "repo"), where), built) >=
           0;
}

// Replaces `repo` by `next` (old: the bytes read); also true when the write
// failed or its answer was lost (a PUT answered 412 on a retry of its own
// request, a timeout) but the `repo` read back holds snapshot `built`: its
// id is random, so only this writer's update put it there (Icechunk design
// note 017: never rebase a commit that landed). Other errors propagate.
bool replace_or_landed(Impl& s, const Bytes& old, generated::RepoT& next, const std::string& built,
                       const std::string& where) {
    try {
        if (replace_repo(*s.storage, old, next)) return true;
    } catch (const CommitConflict&) {
        throw;
    } catch (const Error&) {
        if (!snapshot_landed(s, built, where)) throw;
        return true;
    }
    return snapshot_landed(s, built, where);
}

} // namespace

std::string IcechunkSession::commit(const std::string& message, int max_rebases) {
    std::lock_guard lk(impl_->mu);
    Impl& s = *impl_;
    const std::string where = join_key(s.storage->uri(), "repo");
    if (!s.has_changes()) throw Error(where + ": nothing to commit on branch '" + s.branch + "'");
    std::string built;
    int rebases = 0;
    for (int attempt = 0; attempt < 1000; ++attempt) {
        const Bytes old = detail::read_file_fresh(*s.storage, "repo");
        auto repo = load_repo(old, where);
        require_online(*repo, where, "commit on branch '" + s.branch + "'");
        const auto tip = branch_tip(*repo, s.branch);
        if (!tip)
            throw CommitConflict(where + ": branch '" + s.branch +
                                 "' was deleted meanwhile; nothing was committed");
        if (*tip != s.base_id) {
            if (++rebases > max_rebases)
                throw CommitConflict(where + ": branch '" + s.branch +
                                     "' kept moving; gave up "
                                     "after " +
                                     std::to_string(max_rebases) + " rebases");
            const Changes theirs = their_changes(s, *repo, *tip);
            auto fresh = Repository::open(s.storage);
            check_conflicts(s, theirs, *fresh->snapshot(*tip));
            s.load_base(*tip);
            built.clear();
        }
        const uint64_t at = now_us();
        if (built.empty()) built = write_commit_files(s, message, at);
        move_branch(s, *repo, built, at, message);
        if (replace_or_landed(s, old, *repo, built, where)) {
            s.meta.clear();
            s.new_ids.clear();
            s.chunks.clear();
            s.load_base(built);
            return built;
        }
    }
    throw Error(where + ": gave up committing: other writers kept changing the file");
}

} // namespace zarr3::icechunk
