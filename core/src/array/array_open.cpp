// Array: open, create, metadata and chunk keys; the shared per-chunk helpers.
#include "array/array_detail.hpp"
#include "zarr3/array_lock.hpp"

#include "zarr3/sharding.hpp"

namespace zarr3 {

Selection Selection::all(const Shape& shape) {
    Selection s;
    s.start.assign(shape.size(), 0);
    s.count = shape;
    s.step.assign(shape.size(), 1);
    return s;
}

std::optional<nlohmann::json> read_node_json(Store& store, const std::string& path) {
    const std::string key = join_key(path, "zarr.json");
    const std::string where = store.uri() + "/" + key;
    auto bytes = store.get_bounded(key, kMaxMetadataBytes);
    if (!bytes) return std::nullopt;
    return parse_json_text(
        std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()), where);
}

Array::Array(std::shared_ptr<Store> store, std::string path, ArrayMetadata meta)
    : store_(std::move(store)), path_(std::move(path)), meta_(std::move(meta)),
      wbuf_(std::make_unique<WriteBuffer>()) {}

Array::~Array() {
    try {
        flush();
    } catch (...) {
        // Destructors must not throw; callers wanting errors call flush().
    }
}

std::shared_ptr<Array> Array::open(std::shared_ptr<Store> store, const std::string& path) {
    const std::string key = join_key(path, "zarr.json");
    const std::string where = store->uri() + "/" + key;
    const auto bytes = store->get_bounded(key, kMaxMetadataBytes);
    if (!bytes) throw NotFound(where + ": not found");
    // One pass: rectilinear edge lists go straight into runs (no JSON tree).
    auto node = parse_node_metadata_text(
        std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()), where);
    if (node.type != NodeType::Array || !node.array)
        throw FormatError(where + ": node_type is 'group', expected an array");
    return open(std::move(store), path, std::move(*node.array));
}

std::shared_ptr<Array> Array::open(std::shared_ptr<Store> store, const std::string& path,
                                   ArrayMetadata meta) {
    return std::shared_ptr<Array>(new Array(std::move(store), path, std::move(meta)));
}

std::shared_ptr<Array> Array::create(std::shared_ptr<Store> store, const std::string& path,
                                     ArrayMetadata meta, bool overwrite) {
    const std::string key = join_key(path, "zarr.json");
    if (!overwrite && store->size(key))
        throw Error(store->uri() + "/" + key + ": a node already exists there");
    auto a = std::shared_ptr<Array>(new Array(std::move(store), path, std::move(meta)));
    a->write_metadata();
    return a;
}

std::string Array::describe() const {
    return path_.empty() ? store_->uri() : store_->uri() + "/" + path_;
}

std::string Array::chunk_key(const std::vector<uint64_t>& idx) const {
    return join_key(path_, meta_.key_encoding.key(idx));
}

void Array::write_metadata() {
    const std::string text = to_json(meta_).dump(2);
    store_->put(join_key(path_, "zarr.json"),
                ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

namespace {

// Whether chunks 0.. covering the first `len` elements have the same edges
// in `was` and `now` (so the same starts): O(runs of both).
bool same_chunks(const AxisPartition& was, const AxisPartition& now, uint64_t len) {
    if (len == 0) return true;
    if (now.extent() < len) return false;
    const uint64_t last = was.chunk_index(len - 1);
    const auto& nr = now.runs();
    size_t j = 0;
    for (const auto& r : was.runs()) {
        if (r.start_chunk > last) break;
        const uint64_t end = std::min(r.start_chunk + r.count, last + 1);
        for (uint64_t c = r.start_chunk; c < end;) {
            while (j < nr.size() && nr[j].start_chunk + nr[j].count <= c)
                ++j;
            if (j == nr.size() || nr[j].start_chunk > c || nr[j].edge != r.edge) return false;
            c = std::min(end, nr[j].start_chunk + nr[j].count);
        }
    }
    return true;
}

// What makes a stored chunk mean something other than it did (codecs, data
// type, key encoding; not shape, grid, attributes, names or fill value).
nlohmann::json chunk_meaning(const ArrayMetadata& m) {
    nlohmann::json j = to_json(m);
    for (const char* k : {"shape", "chunk_grid", "chunk_key_encoding", "attributes",
                          "dimension_names", "fill_value"})
        j.erase(k);
    return j;
}

// Why the chunks a reader of `was` reads are not stored as `now` says (the
// array was compacted, shrunk or rewritten); empty when they still are (an
// append or a new attribute keeps them).
std::string layout_change(const ArrayMetadata& was, const ArrayMetadata& now) {
    if (was.rank() != now.rank())
        return "rank " + std::to_string(was.rank()) + " -> " + std::to_string(now.rank());
    if (was.key_encoding.to_json() != now.key_encoding.to_json())
        return "chunk key encoding " + was.key_encoding.to_json().dump() + " -> " +
               now.key_encoding.to_json().dump();
    if (chunk_meaning(was) != chunk_meaning(now)) return "data type or codecs changed";
    for (size_t d = 0; d < was.rank(); ++d) {
        const std::string ax = "axis " + std::to_string(d);
        if (now.shape[d] < was.shape[d])
            return ax + " shrank from " + std::to_string(was.shape[d]) + " to " +
                   std::to_string(now.shape[d]);
        if (!same_chunks(was.grid.axis(d), now.grid.axis(d), was.shape[d]))
            return "the chunk edges of " + ax + " changed";
    }
    return {};
}

} // namespace

void Array::check_unchanged(bool fresh) const {
    const std::string key = join_key(path_, "zarr.json");
    bool known = false;
    {
        std::lock_guard lk(check_mu_);
        known = compatible_version_.known();
    }
    if (!fresh && known) {
        // The version alone (a stat on local stores): unchanged since it was
        // last found compatible, nothing to compare.
        const auto probe = store_->read(ReadRequest::byte_ranges(key, {}));
        std::lock_guard lk(check_mu_);
        if (probe && probe->version.known() && probe->version == compatible_version_) return;
    }
    ObjectVersion version;
    const auto bytes = fresh ? store_->get_fresh(key, kMaxMetadataBytes, version)
                             : store_->get_bounded_versioned(key, kMaxMetadataBytes, version);
    // Absent: not written yet (a copy writes it last) or deleted; nothing
    // to compare with.
    if (!bytes) return;
    const std::string_view text(reinterpret_cast<const char*>(bytes->data()), bytes->size());
    const size_t h = std::hash<std::string_view>{}(text);
    {
        std::lock_guard lk(check_mu_);
        if (compatible_hash_ == h) {
            compatible_version_ = version;
            return;
        }
    }
    const std::string where = store_->uri() + "/" + key;
    std::string why;
    try {
        auto node = parse_node_metadata_text(text, where);
        why = node.array ? layout_change(meta_, *node.array) : "it is no longer an array";
    } catch (const Error& e) {
        why = e.what();
    }
    if (!why.empty())
        throw Error("array " + describe() + " changed since it was opened (" + why +
                    "); reopen it");
    std::lock_guard lk(check_mu_);
    compatible_hash_ = h;
    compatible_version_ = version;
}

void Array::reload_stored_metadata() {
    NodeSnapshot seen;
    try {
        meta_ = open_array_fresh(store_, path_, seen)->metadata();
    } catch (const NotFound&) {
        // Not stored yet (a copy writes zarr.json last): this handle's
        // metadata is the only one.
    }
}

void Array::set_attributes(const nlohmann::json& attrs) {
    // On top of zarr.json as stored now, under the array's write lock: an
    // update open made before an append (or from stale consolidated
    // metadata) must not write its old shape back.
    const auto lock = lock_array(*store_, path_);
    reload_stored_metadata();
    meta_.attributes = attrs;
    write_metadata();
}

namespace array_detail {

void run_tasks(const Executor& ex, size_t n, const std::function<void(size_t)>& fn) {
    if (n == 0) return;
    if (n == 1 || !ex) {
        for (size_t i = 0; i < n; ++i)
            fn(i);
        return;
    }
    ex(n, fn);
}

[[noreturn]] void rethrow_for_chunk(const std::string& desc) {
    try {
        throw;
    } catch (const FormatError& e) {
        const std::string m = e.what();
        if (m.find(desc) != std::string::npos) throw;
        throw FormatError(desc + ": " + m);
    } catch (const Error& e) {
        const std::string m = e.what();
        if (m.find(desc) != std::string::npos) throw;
        throw Error(desc + ": " + m);
    }
}

bool covers_chunk(const Region& region, const Shape& valid) {
    bool full = true;
    for (size_t d = 0; d < valid.size(); ++d)
        full &= region.start[d] == 0 && region.count[d] == valid[d] &&
                (region.count[d] <= 1 || region.step[d] == 1);
    return full;
}

Shape valid_extent(const ArrayMetadata& m, const std::vector<uint64_t>& idx, const Shape& edges) {
    Shape v(edges.size());
    const Shape origin = m.grid.chunk_origin(idx);
    for (size_t d = 0; d < edges.size(); ++d)
        v[d] = origin[d] >= m.shape[d] ? 0 : std::min(edges[d], m.shape[d] - origin[d]);
    return v;
}

} // namespace array_detail

} // namespace zarr3
