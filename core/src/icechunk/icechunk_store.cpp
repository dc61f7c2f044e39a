// IcechunkStore: one snapshot of an Icechunk repository as a read-only Zarr
// store. Every Store override of the class is in this file.
#include "icechunk/icechunk_detail.hpp"
#include "zarr3/key_encoding.hpp"

#include <atomic>
#include <charconv>
#include <future>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

namespace zarr3::icechunk {
namespace {

struct ArrayInfo {
    ChunkKeyEncoding enc;
    size_t ndim = 0;
};

ArrayInfo array_info(const Node& n, const std::string& where) {
    auto j = nlohmann::json::parse(n.zarr_json, nullptr, false);
    if (!j.is_object() || !j.contains("shape") || !j["shape"].is_array())
        throw FormatError(where + ": the array's zarr.json is not an object with a 'shape' list");
    ArrayInfo a;
    a.ndim = j["shape"].size();
    if (auto it = j.find("chunk_key_encoding"); it != j.end())
        a.enc = ChunkKeyEncoding::parse(*it, where);
    return a;
}

// The coordinates `rest` encodes under `a`'s chunk key encoding, or nullopt
// when it is not a canonical chunk key of an `a.ndim`-dimensional array.
std::optional<std::vector<uint64_t>> parse_coords(const std::string& rest, const ArrayInfo& a) {
    return a.enc.coords(rest, a.ndim);
}

std::vector<Bytes> slice(ByteView whole, const std::vector<ByteRange>& ranges,
                         const std::string& where) {
    std::vector<Bytes> out;
    for (const ByteRange& r : ranges) {
        const uint64_t start = range_start(r, whole.size(), where);
        const auto part = whole.subspan(start, range_length(r));
        out.emplace_back(part.begin(), part.end());
    }
    return out;
}

// What a value read from this store is a version of: metadata and inline
// chunks never change within one snapshot, native chunk files never change
// (their id names them), virtual ones only as their recorded checksum says
// (unknown without one: nothing is cached).
ObjectVersion version_of(const Snapshot& snap, const ChunkRef* ref) {
    if (!ref || ref->kind == ChunkRef::Kind::Inline) return {"icechunk:" + snap.id};
    const std::string span = "@" + std::to_string(ref->offset) + "+" + std::to_string(ref->length);
    if (ref->kind == ChunkRef::Kind::Native) return {"icechunk-chunk:" + ref->chunk_id + span};
    if (!ref->etag.empty()) return {"etag:" + ref->etag + ":" + ref->location + span};
    if (ref->last_modified)
        return {"modified:" + std::to_string(ref->last_modified) + ":" + ref->location + span};
    return {};
}

} // namespace

std::vector<Bytes> VirtualResolver::read(const VirtualRef& ref, const std::vector<RangeFromStart>&,
                                         const std::string& chunk_key) {
    throw Error(chunk_key + ": virtual chunk in '" + ref.location +
                "' refused: following virtual references is not enabled");
}

struct IcechunkStore::Impl {
    std::shared_ptr<Repository> repo;
    std::shared_ptr<Store> storage;
    std::shared_ptr<VirtualResolver> resolver;
    std::mutex mu;
    // Manifests being read (one read each); kept ones are the repository's,
    // under its cache budget.
    std::map<std::string, std::shared_future<std::shared_ptr<const Manifest>>> manifests;
    std::map<std::string, std::shared_ptr<const ArrayInfo>> arrays;
    size_t loaded = 0;
    std::atomic<uint64_t> listing_work{0};

    std::shared_ptr<const Manifest> manifest(const std::string& id);
    std::shared_ptr<const ArrayInfo> info(const Node& n, const std::string& where);
    std::optional<ChunkRef> find_ref(const Snapshot& snap, const std::string& key,
                                     const std::string& where);
    // `ranges` of value `key` (nullptr: the whole value); nullopt when absent.
    std::optional<std::vector<Bytes>> read(const Snapshot& snap, const std::string& key,
                                           const std::vector<ByteRange>* ranges,
                                           std::optional<uint64_t>& total,
                                           ObjectVersion* version = nullptr);
    std::vector<Bytes> read_chunk(const ChunkRef& ref, const std::string& key,
                                  const std::vector<ByteRange>* ranges, const std::string& where);
    std::set<std::string> array_children(const Node& n, const std::string& rel,
                                         const std::string& where);
};

std::shared_ptr<const Manifest> IcechunkStore::Impl::manifest(const std::string& id) {
    std::promise<std::shared_ptr<const Manifest>> promise;
    std::shared_future<std::shared_ptr<const Manifest>> pending;
    {
        std::lock_guard lk(mu);
        if (auto it = manifests.find(id); it != manifests.end())
            pending = it->second;
        else
            manifests.emplace(id, promise.get_future().share());
    }
    if (pending.valid()) return pending.get(); // read by another thread (or already)
    try {
        bool read = false;
        auto m = repo->manifest(id, &read);
        promise.set_value(m);
        std::lock_guard lk(mu);
        manifests.erase(id);
        loaded += read;
        return m;
    } catch (...) {
        { // not kept: a later read tries again (the failure may be transient)
            std::lock_guard lk(mu);
            manifests.erase(id);
        }
        promise.set_exception(std::current_exception());
        throw;
    }
}

std::shared_ptr<const ArrayInfo> IcechunkStore::Impl::info(const Node& n,
                                                           const std::string& where) {
    std::lock_guard lk(mu);
    auto& slot = arrays[n.path];
    if (!slot) slot = std::make_shared<const ArrayInfo>(array_info(n, where));
    return slot;
}

IcechunkStore::IcechunkStore(std::shared_ptr<Repository> repo, const std::string& snapshot_id,
                             std::shared_ptr<VirtualResolver> resolver)
    : repo_(std::move(repo)), impl_(std::make_unique<Impl>()) {
    snap_ = repo_->snapshot(snapshot_id);
    impl_->repo = repo_;
    impl_->storage = repo_->storage();
    impl_->resolver = resolver ? std::move(resolver) : std::make_shared<VirtualResolver>();
}

IcechunkStore::~IcechunkStore() = default;

std::shared_ptr<IcechunkStore> IcechunkStore::open(std::shared_ptr<Store> storage,
                                                   const VersionSpec& version,
                                                   std::shared_ptr<VirtualResolver> resolver) {
    auto repo = Repository::open(std::move(storage));
    const std::string id = repo->resolve(version);
    return std::make_shared<IcechunkStore>(repo, id, std::move(resolver));
}

size_t IcechunkStore::manifests_loaded() const {
    std::lock_guard lk(impl_->mu);
    return impl_->loaded;
}

uint64_t IcechunkStore::listing_work() const {
    return impl_->listing_work.load();
}

std::string IcechunkStore::uri() const {
    return impl_->storage->uri() + "@" + snap_->id;
}

namespace {

// The node whose zarr.json `key` names, or nullptr.
const Node* metadata_node(const Snapshot& s, const std::string& key) {
    if (key == "zarr.json") return s.find("/");
    const std::string suffix = "/zarr.json";
    if (key.size() <= suffix.size() ||
        key.compare(key.size() - suffix.size(), suffix.size(), suffix))
        return nullptr;
    return s.find("/" + key.substr(0, key.size() - suffix.size()));
}

// The array node holding chunk `key` and the key's remainder, or nullptr.
const Node* chunk_node(const Snapshot& s, const std::string& key, std::string& rest) {
    if (const Node* root = s.find("/"); root && root->is_array) {
        rest = key;
        return root;
    }
    for (size_t p = key.find('/'); p != std::string::npos; p = key.find('/', p + 1)) {
        const Node* n = s.find("/" + key.substr(0, p));
        if (!n) return nullptr;
        if (n->is_array) {
            rest = key.substr(p + 1);
            return n;
        }
    }
    return nullptr;
}

} // namespace

// Looks a chunk key up: nullopt when it is no chunk of any array, or absent.
std::optional<ChunkRef> IcechunkStore::Impl::find_ref(const Snapshot& snap, const std::string& key,
                                                      const std::string& where) {
    std::string rest;
    const Node* n = chunk_node(snap, key, rest);
    if (!n) return std::nullopt;
    auto coords = parse_coords(rest, *info(*n, where));
    if (!coords) return std::nullopt;
    for (const ManifestExtent& m : n->manifests) {
        if (!m.contains(*coords)) continue;
        if (auto ref = manifest(m.manifest_id)->find(n->id, *coords)) {
            ref->manifest_id = m.manifest_id;
            return ref;
        }
    }
    return std::nullopt;
}

std::vector<Bytes> IcechunkStore::Impl::read_chunk(const ChunkRef& ref, const std::string& key,
                                                   const std::vector<ByteRange>* ranges,
                                                   const std::string& where) {
    if (ref.kind == ChunkRef::Kind::Inline) {
        if (!ranges) return {ref.inline_data};
        return slice(ref.inline_data, *ranges, where);
    }
    if (!ranges && ref.length > kMaxChunkBytes) throw_too_large(where, ref.length, kMaxChunkBytes);
    checked_add(ref.offset, ref.length, where + ": chunk reference offset + length");
    std::vector<RangeFromStart> abs;
    if (!ranges) abs.push_back({ref.offset, ref.length});
    for (size_t i = 0; ranges && i < ranges->size(); ++i)
        abs.push_back({ref.offset + range_start((*ranges)[i], ref.length, where),
                       range_length((*ranges)[i])});
    std::vector<Bytes> got;
    if (ref.kind == ChunkRef::Kind::Virtual) {
        got = resolver->read({ref.location, ref.offset, ref.length, ref.etag, ref.last_modified},
                             abs, key);
    } else {
        const std::string file = "chunks/" + ref.chunk_id;
        std::optional<std::vector<Bytes>> r;
        try {
            r = storage->get_ranges(file, std::vector<ByteRange>(abs.begin(), abs.end()));
        } catch (const FormatError& e) { // a reference past the end of the chunk file
            throw FormatError(where + ": " + e.what());
        }
        if (!r)
            throw FormatError(where + ": its chunk file " + join_key(storage->uri(), file) +
                              " is missing");
        got = std::move(*r);
    }
    if (got.size() != abs.size()) throw Error(where + ": wrong number of ranges read");
    for (size_t i = 0; i < got.size(); ++i)
        if (got[i].size() != abs[i].length)
            throw FormatError(where + ": read " + std::to_string(got[i].size()) + " bytes of " +
                              (ref.kind == ChunkRef::Kind::Virtual ? ref.location : ref.chunk_id) +
                              " where " + std::to_string(abs[i].length) + " were referenced");
    return got;
}

std::optional<std::vector<Bytes>> IcechunkStore::Impl::read(const Snapshot& snap,
                                                            const std::string& key,
                                                            const std::vector<ByteRange>* ranges,
                                                            std::optional<uint64_t>& total,
                                                            ObjectVersion* version) {
    validate_key(key);
    const std::string where = join_key(storage->uri() + "@" + snap.id, key);
    if (const Node* n = metadata_node(snap, key)) {
        if (version) *version = version_of(snap, nullptr);
        total = n->zarr_json.size();
        const ByteView v(reinterpret_cast<const uint8_t*>(n->zarr_json.data()),
                         n->zarr_json.size());
        if (!ranges) return std::vector<Bytes>{Bytes(v.begin(), v.end())};
        return slice(v, *ranges, where);
    }
    auto ref = find_ref(snap, key, where);
    if (!ref) return std::nullopt;
    total = ref->kind == ChunkRef::Kind::Inline ? ref->inline_data.size() : ref->length;
    if (version) *version = version_of(snap, &*ref);
    return read_chunk(*ref, key, ranges, where);
}

std::optional<uint64_t> IcechunkStore::size_of(const std::string& key) {
    validate_key(key);
    if (const Node* n = metadata_node(*snap_, key)) return n->zarr_json.size();
    auto ref = impl_->find_ref(*snap_, key, join_key(uri(), key));
    if (!ref) return std::nullopt;
    return ref->kind == ChunkRef::Kind::Inline ? ref->inline_data.size() : ref->length;
}

// A chunk larger than a read allows: the error names the manifest holding
// its reference too (a hostile size is that file's).
void IcechunkStore::too_large(const std::string& key, uint64_t n, uint64_t limit) {
    const std::string where = join_key(uri(), key);
    const auto ref = impl_->find_ref(*snap_, key, where);
    if (!ref || ref->manifest_id.empty()) throw_too_large(where, n, limit);
    throw FormatError(where + ": " + std::to_string(n) + " bytes exceeds the limit of " +
                      std::to_string(limit) +
                      " bytes; refused before reading (its reference is in " +
                      join_key(impl_->storage->uri(), "manifests/" + ref->manifest_id) + ")");
}

std::optional<ReadResult> IcechunkStore::read(const ReadRequest& request) {
    ReadResult out;
    if (request.kind == ReadRequest::Kind::Size) {
        out.total_size = size_of(request.key);
        if (!out.total_size) return std::nullopt;
        return out;
    }
    const bool whole = request.kind == ReadRequest::Kind::Value;
    if (whole && request.limit) {
        const auto n = size_of(request.key);
        if (!n) return std::nullopt;
        if (*n > *request.limit) too_large(request.key, *n, *request.limit);
    }
    auto v = impl_->read(*snap_, request.key, whole ? nullptr : &request.ranges, out.total_size,
                         &out.version);
    if (!v) return std::nullopt;
    out.data = std::move(*v);
    return out;
}

// Names under `rel` (relative to array `n`): "zarr.json" and "c" at the
// array itself under the default encoding (as Icechunk lists them), else
// the next segment of every chunk key (all of the array's manifests read).
std::set<std::string> IcechunkStore::Impl::array_children(const Node& n, const std::string& rel,
                                                          const std::string& where) {
    const ArrayInfo& a = *info(n, where);
    if (rel.empty() && a.enc.kind() == ChunkKeyEncoding::Kind::Default) return {"zarr.json", "c"};
    std::set<std::string> out;
    if (rel.empty()) out.insert("zarr.json");
    std::set<std::string> seen;
    for (const ManifestExtent& m : n.manifests) {
        if (!seen.insert(m.manifest_id).second) continue;
        for (const auto& c : manifest(m.manifest_id)->coords_of(n.id)) {
            if (!m.contains(c)) continue;
            const std::string k = a.enc.key(c);
            if (!rel.empty() && k.rfind(rel + "/", 0) != 0) continue;
            const std::string tail = rel.empty() ? k : k.substr(rel.size() + 1);
            out.insert(tail.substr(0, tail.find('/')));
        }
    }
    return out;
}

std::vector<std::string> IcechunkStore::list_dir(const std::string& prefix_in) {
    std::string prefix = prefix_in;
    while (!prefix.empty() && prefix.back() == '/')
        prefix.pop_back();
    if (!prefix.empty()) validate_key(prefix);
    const std::string np = prefix.empty() ? "/" : "/" + prefix;
    std::string rest;
    if (const Node* a = chunk_node(*snap_, prefix + "/", rest); a && a->path != np) {
        rest.pop_back();
        auto s = impl_->array_children(*a, rest, join_key(uri(), prefix));
        return {s.begin(), s.end()};
    }
    std::set<std::string> out;
    if (const Node* n = snap_->find(np)) {
        if (n->is_array) {
            auto s = impl_->array_children(*n, "", join_key(uri(), prefix));
            return {s.begin(), s.end()};
        }
        out.insert("zarr.json");
    }
    const auto& children = snap_->children(np);
    impl_->listing_work += children.size();
    out.insert(children.begin(), children.end());
    return {out.begin(), out.end()};
}

void IcechunkStore::put(const std::string& key, ByteView) {
    throw Error(join_key(uri(), key) + ": an Icechunk snapshot is read-only");
}

void IcechunkStore::erase(const std::string& key) {
    throw Error(join_key(uri(), key) + ": an Icechunk snapshot is read-only");
}

void IcechunkStore::run_requests(size_t threads, const std::function<void()>& worker) {
    impl_->storage->run_requests(threads, worker);
}

StoreCapabilities IcechunkStore::capabilities() const {
    StoreCapabilities c = impl_->storage->capabilities();
    c.writable = false;
    return c;
}

} // namespace zarr3::icechunk
