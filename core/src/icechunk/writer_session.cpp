// IcechunkSession: the Store side (reads over the base snapshot, staged
// puts and erases). Commits are in writer_commit.cpp.
#include "icechunk/writer_session.hpp"
#include "zarr3/chunk_cache.hpp"
#include "zarr3/metadata.hpp"

#include <charconv>
#include <nlohmann/json.hpp>

namespace zarr3::icechunk {
using namespace wdetail;

std::optional<std::string> metadata_path(const std::string& key) {
    if (key == "zarr.json") return std::string("/");
    const std::string tail = "/zarr.json";
    if (key.size() > tail.size() && key.compare(key.size() - tail.size(), tail.size(), tail) == 0)
        return "/" + key.substr(0, key.size() - tail.size());
    return std::nullopt;
}

namespace {

std::string key_prefix(const std::string& path) {
    return path == "/" ? std::string() : path.substr(1) + "/";
}

ChunkKeyEncoding encoding_of(const std::string& zarr_json) {
    auto j = nlohmann::json::parse(zarr_json, nullptr, false);
    ChunkKeyEncoding enc;
    if (j.is_object())
        if (auto it = j.find("chunk_key_encoding"); it != j.end())
            enc = ChunkKeyEncoding::parse(*it, "zarr.json");
    return enc;
}

// Coordinates `rest` encodes under the array's chunk key encoding.
std::optional<Coords> parse_coords(const std::string& rest, const std::string& zarr_json) {
    auto j = nlohmann::json::parse(zarr_json, nullptr, false);
    if (!j.is_object() || !j.contains("shape") || !j["shape"].is_array()) return std::nullopt;
    const size_t ndim = j["shape"].size();
    auto idx = encoding_of(zarr_json).coords(rest, ndim);
    if (!idx) return std::nullopt;
    for (uint64_t c : *idx)
        if (c > UINT32_MAX) return std::nullopt;
    return idx;
}

bool is_array_json(const std::string& text, const std::string& where) {
    const auto j = parse_json_text(text, where);
    return node_type_of(j, where) == NodeType::Array;
}

} // namespace

std::optional<IcechunkSession::Impl::View>
IcechunkSession::Impl::view(const std::string& path) const {
    const Node* b = base->find(path);
    auto m = meta.find(path);
    if (m != meta.end()) {
        if (!m->second) return std::nullopt;
        View v;
        v.zarr_json = *m->second;
        v.is_array = is_array_json(v.zarr_json, path);
        auto n = new_ids.find(path);
        v.from_base = n == new_ids.end();
        if (v.from_base && !b)
            throw Error(join_key(storage->uri(), "repo") + ": node " + path +
                        " changed in this session is not in its base snapshot " + base_id);
        v.id = v.from_base ? b->id : n->second;
        v.base = v.from_base ? b : nullptr;
        return v;
    }
    if (!b) return std::nullopt;
    return View{b->id, b->is_array, true, b->zarr_json, b};
}

std::vector<std::string> IcechunkSession::Impl::paths() const {
    std::set<std::string> out;
    for (const Node& n : base->nodes)
        if (!meta.count(n.path)) out.insert(n.path);
    for (const auto& [p, v] : meta)
        if (v) out.insert(p);
    return {out.begin(), out.end()};
}

std::optional<IcechunkSession::Impl::ChunkKey>
IcechunkSession::Impl::chunk_key(const std::string& key) const {
    if (metadata_path(key)) return std::nullopt;
    for (size_t pos = key.size(); pos != std::string::npos && pos > 0;
         pos = key.rfind('/', pos - 1)) {
        const std::string path = pos == key.size() ? "" : "/" + key.substr(0, pos);
        if (path.empty()) continue;
        auto v = view(path);
        if (!v || !v->is_array) continue;
        if (auto c = parse_coords(key.substr(pos + 1), v->zarr_json)) return ChunkKey{path, *c, *v};
        return std::nullopt;
    }
    auto root = view("/");
    if (root && root->is_array)
        if (auto c = parse_coords(key, root->zarr_json)) return ChunkKey{"/", *c, *root};
    return std::nullopt;
}

void IcechunkSession::Impl::load_base(const std::string& id) {
    repo = Repository::open(storage);
    base_id = id;
    base = repo->snapshot(id);
    base_store = std::make_shared<IcechunkStore>(repo, id);
}

std::shared_ptr<IcechunkSession> IcechunkSession::open(std::shared_ptr<Store> storage,
                                                       const std::string& branch) {
    const std::string where = join_key(storage->uri(), "repo");
    if (!storage->can_compare_and_swap())
        throw Error(where + ": cannot commit to this Icechunk repository: its storage cannot "
                            "replace the repo file conditionally (compare-and-swap), so a "
                            "concurrent commit could be lost");
    std::shared_ptr<IcechunkSession> s(new IcechunkSession());
    s->impl_ = std::make_unique<Impl>();
    s->impl_->storage = storage;
    s->impl_->branch = branch;
    auto repo = Repository::open(storage);
    if (repo->spec_version() != 2)
        throw Error(where + ": Icechunk spec version " + std::to_string(repo->spec_version()) +
                    " repositories cannot be written (only version 2)");
    require_online(*load_repo(detail::read_file(*storage, "repo"), where), where,
                   "writing to branch '" + branch + "'");
    s->impl_->load_base(repo->resolve({.branch = branch}));
    return s;
}

std::shared_ptr<IcechunkSession> IcechunkSession::open_at(std::shared_ptr<Store> storage,
                                                          const std::string& branch,
                                                          const std::string& base_snapshot) {
    auto s = open(storage, branch);
    if (base_snapshot == s->impl_->base_id) return s;
    for (const HistoryEntry& e : s->impl_->repo->history(s->impl_->base_id))
        if (e.id == base_snapshot) {
            s->impl_->load_base(base_snapshot);
            return s;
        }
    throw Error(join_key(storage->uri(), "repo") + ": snapshot " + base_snapshot +
                " is not in the history of branch '" + branch + "'");
}

IcechunkSession::~IcechunkSession() = default;

const std::string& IcechunkSession::branch() const {
    return impl_->branch;
}
const std::string& IcechunkSession::base_snapshot() const {
    return impl_->base_id;
}
bool IcechunkSession::has_changes() const {
    std::lock_guard lk(impl_->mu);
    return impl_->has_changes();
}
std::string IcechunkSession::uri() const {
    return impl_->storage->uri() + "@" + impl_->branch;
}

std::optional<ReadResult> IcechunkSession::read(const ReadRequest& request) {
    const std::string& key = request.key;
    std::string chunk_object; // "chunks/<id>" staged in this session
    {
        std::lock_guard lk(impl_->mu);
        if (auto p = metadata_path(key)) {
            auto v = impl_->view(*p);
            if (!v) return std::nullopt;
            const ByteView all(reinterpret_cast<const uint8_t*>(v->zarr_json.data()),
                               v->zarr_json.size());
            return read_from_memory(all, request, join_key(uri(), key));
        }
        auto ck = impl_->chunk_key(key);
        if (!ck) return std::nullopt;
        if (auto a = impl_->chunks.find(ck->path); a != impl_->chunks.end()) {
            if (auto c = a->second.find(ck->coords); c != a->second.end()) {
                if (!c->second) return std::nullopt;
                chunk_object = "chunks/" + c->second->chunk_id;
            }
        }
        if (chunk_object.empty() && !ck->node.from_base) return std::nullopt;
    }
    // Outside the session's lock: reads of stored objects run in parallel.
    if (chunk_object.empty()) return impl_->base_store->read(request);
    ReadRequest inner = request;
    inner.key = chunk_object;
    auto r = impl_->storage->read(inner);
    if (!r)
        throw FormatError(join_key(uri(), key) + ": its chunk object " + chunk_object +
                          ", written in this session, is missing");
    return r;
}

void IcechunkSession::run_requests(size_t threads, const std::function<void()>& worker) {
    impl_->storage->run_requests(threads, worker);
}

StoreCapabilities IcechunkSession::capabilities() const {
    const auto inner = impl_->storage->capabilities();
    return {.writable = true,
            .listable = true,
            .request_threads = inner.request_threads,
            .max_in_flight = inner.max_in_flight,
            .locks = false};
}

std::vector<std::string> IcechunkSession::list_dir(const std::string& prefix) {
    std::lock_guard lk(impl_->mu);
    std::set<std::string> out;
    const std::string node = prefix.empty() ? "/" : "/" + prefix;
    const std::string under = node == "/" ? "/" : node + "/";
    for (const std::string& p : impl_->paths()) {
        if (p == node) out.insert("zarr.json");
        if (p.size() > under.size() && p.compare(0, under.size(), under) == 0)
            out.insert(p.substr(under.size(), p.find('/', under.size()) - under.size()));
    }
    // Chunk keys below an array: the base's (when it shows through) and the staged ones.
    const std::string dir = prefix.empty() ? "" : prefix + "/";
    for (const std::string& p : impl_->paths()) {
        const std::string kp = key_prefix(p);
        if (dir.rfind(kp, 0) != 0) continue;
        auto v = impl_->view(p);
        if (!v || !v->is_array) continue;
        if (v->from_base)
            for (auto& name : impl_->base_store->list_dir(prefix))
                if (!impl_->chunk_key(dir + name) || size(dir + name)) out.insert(name);
        auto a = impl_->chunks.find(p);
        if (a == impl_->chunks.end()) continue;
        const ChunkKeyEncoding enc = encoding_of(v->zarr_json);
        for (const auto& [coords, ref] : a->second) {
            const std::string k = kp + enc.key(coords);
            if (ref && k.size() > dir.size() && k.compare(0, dir.size(), dir) == 0)
                out.insert(k.substr(dir.size(), k.find('/', dir.size()) - dir.size()));
        }
    }
    return {out.begin(), out.end()};
}

void IcechunkSession::put(const std::string& key, ByteView value) {
    validate_key(key);
    const ChunkCache::WriteNote note{key};
    std::string path;
    Coords coords;
    {
        std::lock_guard lk(impl_->mu);
        auto& s = *impl_;
        if (auto p = metadata_path(key)) {
            const std::string text(value.begin(), value.end());
            const bool is_array = is_array_json(text, join_key(uri(), key));
            auto v = s.view(*p);
            if (!v || v->is_array != is_array) { // a new node (or one replacing another kind)
                s.new_ids[*p] = random_id8();
                s.chunks.erase(*p);
            }
            s.meta[*p] = text;
            return;
        }
        auto ck = s.chunk_key(key);
        if (!ck)
            throw Error(join_key(uri(), key) +
                        ": not a chunk key of an array in the Icechunk session (nor a zarr.json)");
        path = ck->path;
        coords = ck->coords;
    }
    // The new object is written outside the session's lock (chunks are
    // stored in parallel); it is referenced only once it is whole.
    const Id12 id = random_id12();
    ChunkRef ref;
    ref.kind = ChunkRef::Kind::Native;
    ref.chunk_id = encode_id(ByteView(id.data(), id.size()));
    ref.length = value.size();
    impl_->storage->put_new("chunks/" + ref.chunk_id, value);
    std::lock_guard lk(impl_->mu);
    impl_->chunks[path][coords] = std::move(ref);
}

void IcechunkSession::put_virtual(const std::string& key, const std::string& location,
                                  uint64_t offset, uint64_t length, uint32_t last_modified,
                                  const std::string& etag) {
    validate_key(key);
    std::lock_guard lk(impl_->mu);
    auto ck = impl_->chunk_key(key);
    if (!ck)
        throw Error(join_key(uri(), key) +
                    ": not a chunk key of an array in the Icechunk session (virtual reference to " +
                    location + ")");
    ChunkRef ref;
    ref.kind = ChunkRef::Kind::Virtual;
    ref.location = location;
    ref.offset = offset;
    ref.length = length;
    ref.last_modified = last_modified;
    ref.etag = etag;
    impl_->chunks[ck->path][ck->coords] = std::move(ref);
}

void IcechunkSession::erase(const std::string& key) {
    const ChunkCache::WriteNote note{key};
    std::lock_guard lk(impl_->mu);
    auto& s = *impl_;
    if (auto p = metadata_path(key)) {
        if (!s.view(*p)) return;
        s.new_ids.erase(*p);
        s.chunks.erase(*p);
        if (s.base->find(*p))
            s.meta[*p] = std::nullopt;
        else
            s.meta.erase(*p);
        return;
    }
    if (auto ck = s.chunk_key(key)) s.chunks[ck->path][ck->coords] = std::nullopt;
}

} // namespace zarr3::icechunk
