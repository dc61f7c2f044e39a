// Array: open, create, metadata and chunk keys; the shared per-chunk helpers.
#include "array_detail.hpp"

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
      wbuf_(std::make_unique<WriteBuffer>()) {
    opt_.index_cache = &ShardIndexCache::global();
}

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

void Array::set_attributes(const nlohmann::json& attrs) {
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
