// Icechunk repositories: branches, tags, history and version selection
// (spec 2: the `repo` file; spec 1: `refs/` JSON files and snapshot parents).
#include "icechunk/icechunk_detail.hpp"

#include <atomic>
#include <list>
#include <nlohmann/json.hpp>
#include <repo_generated.h>
#include <set>

namespace zarr3::icechunk {
namespace {

constexpr uint64_t kMaxRefBytes = 64 * 1024;
constexpr size_t kListedNames = 20;

std::string list_names(const std::vector<std::string>& names) {
    if (names.empty()) return "none";
    std::string out;
    for (size_t i = 0; i < names.size() && i < kListedNames; ++i)
        out += (i ? ", '" : "'") + names[i] + "'";
    if (names.size() > kListedNames) out += ", ... (" + std::to_string(names.size()) + " in all)";
    return out;
}

std::string canonical_id(const std::string& text, const std::string& where) {
    auto id = decode_id12(text);
    if (!id)
        throw Error(where + ": '" + text +
                    "' is not a snapshot id (20 Crockford base32 characters)");
    return encode_id(ByteView(id->data(), id->size()));
}

std::vector<Ref> refs_of(const flatbuffers::Vector<flatbuffers::Offset<generated::Ref>>* v,
                         const std::vector<HistoryEntry>& infos, const std::string& where) {
    std::vector<Ref> out;
    for (const auto* r : *v) {
        if (r->snapshot_index() >= infos.size())
            throw FormatError(where + ": ref '" + detail::str_of(r->name()) +
                              "' points to snapshot index " + std::to_string(r->snapshot_index()) +
                              " of " + std::to_string(infos.size()));
        out.push_back({detail::str_of(r->name()), infos[r->snapshot_index()].id});
    }
    std::sort(out.begin(), out.end(), [](const Ref& a, const Ref& b) { return a.name < b.name; });
    return out;
}

// url_prefix of each virtual chunk container in the repo file's config
// (FlexBuffers, verified with the file).
std::vector<std::string> containers_v2(const generated::Repo* repo) {
    std::vector<std::string> out;
    if (!repo->config()) return out;
    const auto root = repo->config_flexbuffer_root();
    if (!root.IsMap()) return out;
    const auto vcc = root.AsMap()["virtual_chunk_containers"];
    if (!vcc.IsMap()) return out;
    const auto values = vcc.AsMap().Values();
    for (size_t i = 0; i < values.size(); ++i) {
        const auto v = values[i];
        if (!v.IsMap()) continue;
        const auto prefix = v.AsMap()["url_prefix"];
        if (prefix.IsString()) out.push_back(prefix.AsString().str());
    }
    return out;
}

// The url_prefix lines of a spec-1 config.yaml (a minimal reading of the
// YAML Icechunk 1 writes: `url_prefix: <value>`, optionally quoted).
std::vector<std::string> containers_v1(Store& storage) {
    std::vector<std::string> out;
    auto text = storage.get_bounded("config.yaml", kMaxRefBytes * 16);
    if (!text) return out;
    const std::string s(text->begin(), text->end());
    const std::string key = "url_prefix:";
    for (size_t pos = s.find(key); pos != std::string::npos; pos = s.find(key, pos + 1)) {
        size_t b = pos + key.size(), e = s.find('\n', b);
        std::string v = s.substr(b, e == std::string::npos ? std::string::npos : e - b);
        v.erase(0, v.find_first_not_of(" \t"));
        v.erase(v.find_last_not_of(" \t\r") + 1);
        if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
            v = v.substr(1, v.size() - 2);
        if (!v.empty()) out.push_back(v);
    }
    return out;
}

std::atomic<uint64_t> g_default_budget{kDefaultCacheBytes};

} // namespace

void set_default_cache_budget(uint64_t bytes) {
    g_default_budget = bytes;
}
uint64_t default_cache_budget() {
    return g_default_budget.load();
}

// Decoded manifests and snapshots under one byte budget, least recently used
// dropped first. One entry larger than the budget is kept alone, and dropped
// before the next read (before_read), so at most one is held at a time.
struct Repository::Cache {
    struct Entry {
        std::shared_ptr<const void> value;
        uint64_t bytes = 0;
        std::list<std::string>::iterator at;
    };
    mutable std::mutex mu;
    uint64_t budget = default_cache_budget();
    uint64_t bytes = 0;
    std::map<std::string, Entry> entries;
    std::list<std::string> lru; // most recent first

    std::shared_ptr<const void> get(const std::string& key) {
        std::lock_guard lk(mu);
        const auto it = entries.find(key);
        if (it == entries.end()) return nullptr;
        lru.splice(lru.begin(), lru, it->second.at);
        return it->second.value;
    }
    // Drops the least recently used while more than `keep` entries are kept
    // and they exceed the budget. Under the lock.
    void evict(size_t keep) {
        while (bytes > budget && lru.size() > keep) {
            const auto it = entries.find(lru.back());
            bytes -= it->second.bytes;
            entries.erase(it);
            lru.pop_back();
        }
    }
    void put(const std::string& key, std::shared_ptr<const void> value, uint64_t n) {
        std::lock_guard lk(mu);
        if (entries.count(key)) return;
        lru.push_front(key);
        entries[key] = Entry{std::move(value), n, lru.begin()};
        bytes += n;
        evict(1);
    }
    void before_read() {
        std::lock_guard lk(mu);
        evict(0);
    }
};

Repository::Repository() : cache_(std::make_shared<Cache>()) {}

void Repository::set_cache_budget(uint64_t bytes) {
    std::lock_guard lk(cache_->mu);
    cache_->budget = bytes;
    cache_->evict(0);
}
uint64_t Repository::cache_budget() const {
    std::lock_guard lk(cache_->mu);
    return cache_->budget;
}
uint64_t Repository::cached_bytes() const {
    std::lock_guard lk(cache_->mu);
    return cache_->bytes;
}

std::shared_ptr<Repository> Repository::open(std::shared_ptr<Store> storage) {
    std::shared_ptr<Repository> r(new Repository());
    r->storage_ = std::move(storage);
    if (auto file = r->storage_->get_bounded("repo", kMaxFileBytes)) {
        r->load_v2(*file);
    } else {
        r->load_v1();
    }
    return r;
}

std::shared_ptr<Repository> Repository::open(std::shared_ptr<Store> storage, Bytes repo_file) {
    std::shared_ptr<Repository> r(new Repository());
    r->storage_ = std::move(storage);
    r->load_v2(repo_file);
    return r;
}

void Repository::load_v2(const Bytes& file) {
    const std::string where = join_key(storage_->uri(), "repo");
    Envelope env = open_envelope(file, FileType::RepoInfo, where);
    spec_ = env.spec_version;
    const auto* repo = detail::verified_root<generated::Repo>(env.payload, where);
    const auto* snaps = repo->snapshots();
    infos_.reserve(snaps->size());
    for (const auto* s : *snaps) {
        HistoryEntry e;
        e.id = detail::id12_text(s->id());
        e.flushed_at_us = s->flushed_at();
        e.message = detail::str_of(s->message());
        if (!info_index_.emplace(e.id, infos_.size()).second)
            throw FormatError(where + ": snapshot " + e.id + " is listed twice");
        infos_.push_back(std::move(e));
    }
    for (flatbuffers::uoffset_t i = 0; i < snaps->size(); ++i) {
        const int32_t p = snaps->Get(i)->parent_offset();
        if (p == -1) continue;
        if (p < 0 || uint32_t(p) >= snaps->size() || uint32_t(p) == i)
            throw FormatError(where + ": snapshot " + infos_[i].id + " has parent index " +
                              std::to_string(p) + " (" + std::to_string(snaps->size()) +
                              " snapshots)");
        infos_[i].parent = infos_[size_t(p)].id;
    }
    containers_ = containers_v2(repo);
    branches_ = refs_of(repo->branches(), infos_, where);
    tags_ = refs_of(repo->tags(), infos_, where);
    for (const Ref& b : branches_)
        infos_[info_index_.at(b.snapshot)].branches.push_back(b.name);
    for (const Ref& t : tags_)
        infos_[info_index_.at(t.snapshot)].tags.push_back(t.name);
}

void Repository::load_v1() {
    spec_ = 1;
    std::vector<std::string> names = storage_->list_dir("refs");
    // Storage that cannot list (plain HTTP): the main branch alone.
    if (names.empty() && storage_->size("refs/branch.main/ref.json"))
        names.push_back("branch.main");
    if (names.empty())
        throw NotFound(storage_->uri() +
                       ": not an Icechunk repository (neither a 'repo' file nor a 'refs/' folder)");
    for (const std::string& name : names) {
        const bool branch = name.rfind("branch.", 0) == 0;
        if (!branch && name.rfind("tag.", 0) != 0) continue;
        const std::string dir = "refs/" + name;
        if (!is_valid_key(dir + "/ref.json")) continue;
        if (!branch && storage_->size(dir + "/ref.json.deleted")) continue;
        const std::string where = join_key(storage_->uri(), dir + "/ref.json");
        auto text = storage_->get_bounded(dir + "/ref.json", kMaxRefBytes);
        if (!text) continue;
        auto j = nlohmann::json::parse(text->begin(), text->end(), nullptr, false);
        if (!j.is_object() || !j.contains("snapshot") || !j["snapshot"].is_string())
            throw FormatError(where + ": expected a JSON object with a string member 'snapshot'");
        Ref r{name.substr(branch ? 7 : 4), canonical_id(j["snapshot"], where)};
        (branch ? branches_ : tags_).push_back(r);
    }
    auto by_name = [](const Ref& a, const Ref& b) { return a.name < b.name; };
    std::sort(branches_.begin(), branches_.end(), by_name);
    std::sort(tags_.begin(), tags_.end(), by_name);
    if (branches_.empty())
        throw FormatError(storage_->uri() + ": Icechunk repository without branches in refs/");
    containers_ = containers_v1(*storage_);
}

std::shared_ptr<const Snapshot> Repository::snapshot(const std::string& id) {
    const std::string key = "snapshots/" + id;
    if (auto kept = cache_->get(key)) return std::static_pointer_cast<const Snapshot>(kept);
    const std::string where = join_key(storage_->uri(), key);
    if (!decode_id12(id)) throw Error(where + ": not a snapshot id");
    cache_->before_read();
    auto snap =
        std::make_shared<Snapshot>(parse_snapshot(detail::read_file(*storage_, key), where));
    if (snap->id != id)
        throw FormatError(where + ": the file holds snapshot " + snap->id + ", not " + id);
    cache_->put(key, snap, snap->memory_bytes);
    return snap;
}

std::shared_ptr<const Manifest> Repository::manifest(const std::string& id, bool* read) {
    if (read) *read = false;
    const std::string key = "manifests/" + id;
    if (auto kept = cache_->get(key)) return std::static_pointer_cast<const Manifest>(kept);
    const std::string where = join_key(storage_->uri(), key);
    cache_->before_read();
    auto m = std::make_shared<const Manifest>(detail::read_file(*storage_, key), where);
    if (m->id() != id)
        throw FormatError(where + ": the file holds manifest " + m->id() + ", not " + id);
    cache_->put(key, m, m->memory_bytes());
    if (read) *read = true;
    return m;
}

std::optional<HistoryEntry> Repository::info_of(const std::string& id) {
    if (!infos_.empty()) { // from the repo file
        auto it = info_index_.find(id);
        if (it == info_index_.end()) return std::nullopt;
        return infos_[it->second];
    }
    if (!storage_->size("snapshots/" + id)) return std::nullopt;
    auto s = snapshot(id);
    HistoryEntry e{s->id, s->parent, s->flushed_at_us, s->message, {}, {}};
    for (const Ref& b : branches_)
        if (b.snapshot == id) e.branches.push_back(b.name);
    for (const Ref& t : tags_)
        if (t.snapshot == id) e.tags.push_back(t.name);
    return e;
}

std::vector<HistoryEntry> Repository::history(const std::string& id, size_t limit) {
    std::vector<HistoryEntry> out;
    std::set<std::string> seen;
    std::string cur = id;
    while (out.size() < std::min(limit, kMaxHistory)) {
        auto e = info_of(cur);
        if (!e)
            throw FormatError(storage_->uri() + ": snapshot " + cur + " of the history of " + id +
                              " does not exist");
        seen.insert(cur);
        out.push_back(*e);
        if (!e->parent) break;
        if (seen.count(*e->parent))
            throw FormatError(storage_->uri() + ": the history of snapshot " + id +
                              " has a cycle (snapshot " + cur + " has ancestor " + *e->parent +
                              " twice)");
        cur = *e->parent;
    }
    return out;
}

std::string Repository::resolve_ref(const std::vector<Ref>& refs, const std::string& name,
                                    const char* kind) const {
    std::vector<std::string> names;
    for (const Ref& r : refs) {
        if (r.name == name) return r.snapshot;
        names.push_back(r.name);
    }
    throw NotFound(storage_->uri() + ": no " + kind + " '" + name +
                   "' in the Icechunk repository (" + kind + (kind[0] == 'b' ? "es: " : "s: ") +
                   list_names(names) + ")");
}

std::string Repository::resolve(const VersionSpec& v) {
    const int chosen = !v.branch.empty() + !v.tag.empty() + !v.snapshot.empty();
    if (chosen > 1) throw Error(storage_->uri() + ": choose one of branch, tag and snapshot");
    if (!v.as_of.empty() && (!v.tag.empty() || !v.snapshot.empty()))
        throw Error(storage_->uri() + ": as_of applies to a branch, not to a tag or snapshot");
    if (!v.tag.empty()) return resolve_ref(tags_, v.tag, "tag");
    if (!v.snapshot.empty()) {
        std::vector<std::string> ids;
        for (const HistoryEntry& e : infos_)
            ids.push_back(e.id);
        const std::string known =
            ids.empty() ? std::string() : " (snapshots: " + list_names(ids) + ")";
        std::string id;
        try {
            id = canonical_id(v.snapshot, storage_->uri());
        } catch (const Error& e) {
            throw Error(e.what() + known);
        }
        if (info_of(id)) return id;
        throw NotFound(storage_->uri() + ": no snapshot " + id + " in the Icechunk repository" +
                       known);
    }
    const std::string branch = v.branch.empty() ? "main" : v.branch;
    const std::string head = resolve_ref(branches_, branch, "branch");
    if (v.as_of.empty()) return head;
    const uint64_t t = parse_iso_time(v.as_of, storage_->uri() + ": as_of");
    const auto hist = history(head);
    for (const HistoryEntry& e : hist)
        if (e.flushed_at_us <= t) return e.id;
    throw NotFound(storage_->uri() + ": branch '" + branch + "' has no snapshot at or before " +
                   v.as_of + " (its oldest is from " +
                   format_iso_time(hist.empty() ? 0 : hist.back().flushed_at_us) + ")");
}

std::string Repository::describe(const VersionSpec& v) {
    if (!v.tag.empty()) return "tag '" + v.tag + "'";
    if (!v.snapshot.empty()) return "snapshot " + v.snapshot;
    std::string b = "branch '" + (v.branch.empty() ? std::string("main") : v.branch) + "'";
    return v.as_of.empty() ? b : b + " as of " + v.as_of;
}

} // namespace zarr3::icechunk
