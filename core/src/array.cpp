// Array: open/create, hyperslab reads and writes through the chunk grid and
// codec chain, buffered partial-chunk writes, resize and append.
#include "zarr3/array.hpp"

#include "selection.hpp"
#include "zarr3/sharding.hpp"

#include <atomic>
#include <cstring>

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

// Partial chunks waiting for the rest of their elements.
struct Array::WriteBuffer {
    struct Entry {
        std::vector<uint64_t> idx;
        Bytes data;
        std::vector<uint8_t> mask; // 1 per element written
        uint64_t covered = 0;
        uint64_t needed = 0; // elements of the chunk inside the array
        uint64_t seq = 0;
    };
    std::map<std::string, Entry> entries;
    uint64_t bytes = 0;
    uint64_t seq = 0;
    uint64_t max_bytes = 512ull << 20;
};

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

namespace {

void run_tasks(const Executor& ex, size_t n, const std::function<void(size_t)>& fn) {
    if (n == 0) return;
    if (n == 1 || !ex) {
        for (size_t i = 0; i < n; ++i)
            fn(i);
        return;
    }
    ex(n, fn);
}

// Rethrows an error from chunk `key` so that its message names the chunk.
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

// Number of elements of chunk `idx` inside the array, per axis.
Shape valid_extent(const ArrayMetadata& m, const std::vector<uint64_t>& idx, const Shape& edges) {
    Shape v(edges.size());
    const Shape origin = m.grid.chunk_origin(idx);
    for (size_t d = 0; d < edges.size(); ++d)
        v[d] = origin[d] >= m.shape[d] ? 0 : std::min(edges[d], m.shape[d] - origin[d]);
    return v;
}

} // namespace

void Array::read(const Selection& sel, void* out, const std::vector<int64_t>& out_strides,
                 ReadStats* stats) const {
    {
        std::lock_guard lk(write_mu_);
        if (!wbuf_->entries.empty()) const_cast<Array*>(this)->flush_locked();
    }
    const size_t elem = meta_.dtype.size;
    const PlannedSelection ps = plan_selection(sel, meta_.shape, out_strides, elem, describe());
    const std::vector<ChunkTask> tasks = plan_chunk_tasks(meta_.grid, ps);
    std::atomic<uint64_t> decoded{0}, missing{0};
    uint8_t* base = static_cast<uint8_t*>(out);
    run_tasks(opt_.executor, tasks.size(), [&](size_t i) {
        const ChunkTask& t = tasks[i];
        const std::string key = chunk_key(t.idx);
        StridedView view{base + t.view_offset, ps.strides};
        try {
            const ChunkSpec spec = meta_.chunk_spec(t.idx);
            StoreByteSource src(*store_, key);
            if (meta_.codecs.read_region(src, spec, t.region, view, opt_)) {
                ++decoded;
            } else {
                fill_view(view, t.region.count, meta_.fill_value);
                ++missing;
            }
        } catch (...) {
            rethrow_for_chunk(store_->uri() + "/" + key);
        }
    });
    if (stats) {
        stats->chunks_decoded += decoded;
        stats->chunks_missing += missing;
    }
}

void Array::store_chunk(const std::string& key, const Bytes& data, const ChunkSpec& spec) {
    if (all_equal_to(data, meta_.fill_value)) {
        store_->erase(key);
    } else {
        const Bytes enc = meta_.codecs.encode(data, spec);
        store_->put(key, enc);
    }
    const std::string ck = store_->uri() + "|" + key;
    if (opt_.index_cache) opt_.index_cache->invalidate(ck);
    ShardIndexCache::global().invalidate(ck);
}

void Array::write(const Selection& sel, const void* in, const std::vector<int64_t>& in_strides) {
    if (!store_->writable()) throw Error(describe() + ": store is opened read-only");
    const size_t elem = meta_.dtype.size;
    const PlannedSelection ps = plan_selection(sel, meta_.shape, in_strides, elem, describe());
    const std::vector<ChunkTask> tasks = plan_chunk_tasks(meta_.grid, ps);
    const uint8_t* base = static_cast<const uint8_t*>(in);
    run_tasks(opt_.executor, tasks.size(), [&](size_t i) {
        const ChunkTask& t = tasks[i];
        const std::string key = chunk_key(t.idx);
        try {
            const ChunkSpec spec = meta_.chunk_spec(t.idx);
            const Shape valid = valid_extent(meta_, t.idx, spec.shape);
            StridedView view{const_cast<uint8_t*>(base) + t.view_offset, ps.strides};
            bool full = true;
            for (size_t d = 0; d < valid.size(); ++d)
                full &= t.region.start[d] == 0 && t.region.count[d] == valid[d] &&
                        (t.region.count[d] <= 1 || t.region.step[d] == 1);
            if (full) {
                Bytes buf(spec.num_bytes());
                bool overhang = false;
                for (size_t d = 0; d < valid.size(); ++d)
                    overhang |= valid[d] != spec.shape[d];
                if (overhang) fill_dense(buf.data(), spec.num_elements(), meta_.fill_value);
                copy_region_in(buf.data(), spec.shape, elem, t.region, view);
                {
                    std::lock_guard lk(write_mu_);
                    auto it = wbuf_->entries.find(key);
                    if (it != wbuf_->entries.end()) {
                        wbuf_->bytes -= it->second.data.size() + it->second.mask.size();
                        wbuf_->entries.erase(it);
                    }
                }
                store_chunk(key, buf, spec);
                return;
            }
            buffer_partial(key, t, spec, valid, view);
        } catch (...) {
            rethrow_for_chunk(store_->uri() + "/" + key);
        }
    });
    std::lock_guard lk(write_mu_);
    while (wbuf_->bytes > wbuf_->max_bytes && !wbuf_->entries.empty()) {
        auto oldest = wbuf_->entries.begin();
        for (auto it = wbuf_->entries.begin(); it != wbuf_->entries.end(); ++it)
            if (it->second.seq < oldest->second.seq) oldest = it;
        const std::string key = oldest->first; // copy: the entry is erased
        flush_entry_locked(key);
    }
}

namespace {
// Marks the region in a one-byte-per-element mask; returns newly marked count.
uint64_t mark_region(std::vector<uint8_t>& mask, const Shape& chunk_shape, const Region& r) {
    const size_t rank = r.rank();
    if (rank == 0) {
        const uint64_t n = mask[0] ? 0 : 1;
        mask[0] = 1;
        return n;
    }
    const auto cs = c_strides(chunk_shape, 1);
    std::vector<uint64_t> idx(rank, 0);
    uint64_t fresh = 0;
    while (true) {
        int64_t off = 0;
        for (size_t d = 0; d < rank; ++d)
            off += static_cast<int64_t>(r.start[d] + idx[d] * r.step[d]) * cs[d];
        if (!mask[static_cast<size_t>(off)]) {
            mask[static_cast<size_t>(off)] = 1;
            ++fresh;
        }
        size_t d = rank;
        while (d > 0) {
            --d;
            if (++idx[d] < r.count[d]) break;
            idx[d] = 0;
            if (d == 0) return fresh;
        }
    }
}
} // namespace

void Array::buffer_partial(const std::string& key, const ChunkTask& t, const ChunkSpec& spec,
                           const Shape& valid, const StridedView& view) {
    std::unique_lock lk(write_mu_);
    auto it = wbuf_->entries.find(key);
    if (it == wbuf_->entries.end()) {
        WriteBuffer::Entry e;
        e.idx = t.idx;
        e.data.resize(spec.num_bytes());
        fill_dense(e.data.data(), spec.num_elements(), meta_.fill_value);
        e.mask.assign(spec.num_elements(), 0);
        e.needed = 1;
        for (auto v : valid)
            e.needed *= v;
        wbuf_->bytes += e.data.size() + e.mask.size();
        it = wbuf_->entries.emplace(key, std::move(e)).first;
    }
    auto& e = it->second;
    e.seq = ++wbuf_->seq;
    copy_region_in(e.data.data(), spec.shape, meta_.dtype.size, t.region, view);
    e.covered += mark_region(e.mask, spec.shape, t.region);
    if (e.covered < e.needed) return;
    // Complete: store it outside the lock.
    Bytes data = std::move(e.data);
    wbuf_->bytes -= data.size() + e.mask.size();
    wbuf_->entries.erase(it);
    lk.unlock();
    store_chunk(key, data, spec);
}

void Array::flush_entry_locked(const std::string& key) {
    auto it = wbuf_->entries.find(key);
    if (it == wbuf_->entries.end()) return;
    WriteBuffer::Entry e = std::move(it->second);
    wbuf_->bytes -= e.data.size() + e.mask.size();
    wbuf_->entries.erase(it);
    const ChunkSpec spec = meta_.chunk_spec(e.idx);
    try {
        // Other writers of this store (processes on this host) wait while
        // this shard is read, merged and rewritten: their inner chunks survive.
        const auto held = store_->lock(key);
        if (auto existing = store_->get(key)) {
            Bytes old(spec.num_bytes());
            meta_.codecs.decode(*existing, spec, old.data());
            const size_t elem = meta_.dtype.size;
            for (size_t i = 0; i < e.mask.size(); ++i)
                if (!e.mask[i]) std::memcpy(e.data.data() + i * elem, old.data() + i * elem, elem);
        }
        store_chunk(key, e.data, spec);
    } catch (...) {
        rethrow_for_chunk(store_->uri() + "/" + key);
    }
}

void Array::flush_locked() {
    while (!wbuf_->entries.empty()) {
        // A copy: flush_entry_locked erases the entry that owns the map key.
        const std::string key = wbuf_->entries.begin()->first;
        flush_entry_locked(key);
    }
}

void Array::flush() {
    std::lock_guard lk(write_mu_);
    flush_locked();
}

void Array::resize(const Shape& new_shape) {
    if (new_shape.size() != meta_.rank())
        throw Error(describe() + ": resize to a shape of another rank");
    flush();
    const ArrayMetadata old = meta_;
    meta_.grid.resize(new_shape);
    meta_.shape = new_shape;
    // Regular grids: drop chunks that no longer intersect the array, so that
    // growing again later shows fill values, not stale data.
    if (meta_.grid.kind() == GridKind::Regular && meta_.rank() > 0) {
        const Shape og = old.grid.grid_shape(), ng = meta_.grid.grid_shape();
        bool shrunk = false;
        for (size_t d = 0; d < og.size(); ++d)
            shrunk |= ng[d] < og[d];
        if (shrunk) {
            std::vector<uint64_t> idx(og.size(), 0);
            bool any = true;
            for (auto n : og)
                any &= n > 0;
            while (any) {
                bool outside = false;
                for (size_t d = 0; d < idx.size(); ++d)
                    outside |= idx[d] >= ng[d];
                if (outside) store_->erase(chunk_key(idx));
                size_t d = idx.size();
                while (d > 0) {
                    --d;
                    if (++idx[d] < og[d]) break;
                    idx[d] = 0;
                    if (d == 0) any = false;
                }
            }
        }
    }
    write_metadata();
}

void Array::append_edge(size_t axis, uint64_t n) {
    if (axis >= meta_.rank()) throw Error(describe() + ": append on a missing axis");
    if (meta_.grid.kind() != GridKind::Rectilinear)
        throw Error(describe() + ": append_edge needs a rectilinear chunk grid");
    flush();
    AxisPartition& ax = meta_.grid.axis(axis);
    if (ax.extent() != meta_.shape[axis])
        throw Error(describe() + ": axis " + std::to_string(axis) +
                    " has edges past its length; use resize");
    const uint64_t len = checked_add(meta_.shape[axis], n, "axis length");
    ax.append(n);
    ax.set_length(len);
    meta_.shape[axis] = len;
    write_metadata();
}

// ------------------------------------------------------------------ Group
std::shared_ptr<Group> Group::open(std::shared_ptr<Store> store, const std::string& path) {
    const std::string where = store->uri() + "/" + join_key(path, "zarr.json");
    auto j = read_node_json(*store, path);
    if (!j) throw NotFound(where + ": not found");
    if (node_type_of(*j, where) != NodeType::Group)
        throw FormatError(where + ": node_type is 'array', expected a group");
    return std::shared_ptr<Group>(
        new Group(std::move(store), path, parse_group_metadata(*j, where)));
}

std::shared_ptr<Group> Group::create(std::shared_ptr<Store> store, const std::string& path,
                                     const nlohmann::json& attributes) {
    GroupMetadata m;
    m.attributes = attributes;
    const std::string text = to_json(m).dump(2);
    store->put(join_key(path, "zarr.json"),
               ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
    return std::shared_ptr<Group>(new Group(std::move(store), path, std::move(m)));
}

void Group::set_attributes(const nlohmann::json& attrs) {
    meta_.attributes = attrs;
    meta_.consolidated.reset(); // consolidated copies would now be stale
    const std::string text = to_json(meta_).dump(2);
    store_->put(join_key(path_, "zarr.json"),
                ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

void Group::scan_children() const {
    if (scanned_) return;
    scanned_ = true;
    if (meta_.consolidated) {
        for (const auto& [p, node] : *meta_.consolidated) {
            if (p.find('/') != std::string::npos) continue;
            const std::string nt =
                node.is_object() && node.contains("node_type") && node["node_type"].is_string()
                    ? node["node_type"].get<std::string>()
                    : "";
            if (nt == "array")
                arrays_.push_back(p);
            else if (nt == "group")
                groups_.push_back(p);
            child_meta_[p] = node;
        }
        return;
    }
    for (const auto& name : store_->list_dir(path_)) {
        if (name == "zarr.json" || name.empty() || name[0] == '.') continue;
        if (!is_valid_key(name)) continue; // no key can name it: not a node
        std::optional<nlohmann::json> j;
        try {
            j = read_node_json(*store_, join_key(path_, name));
        } catch (const Error&) {
            continue; // an unreadable or broken child document: skipped while listing
        }
        if (!j || !j->is_object() || !j->contains("node_type")) continue;
        const auto& nt = (*j)["node_type"];
        if (nt == "array")
            arrays_.push_back(name);
        else if (nt == "group")
            groups_.push_back(name);
        else
            continue;
        child_meta_[name] = std::move(*j);
    }
}

std::vector<std::string> Group::array_names() const {
    scan_children();
    return arrays_;
}

std::vector<std::string> Group::group_names() const {
    scan_children();
    return groups_;
}

std::shared_ptr<Array> Group::open_array(const std::string& name) const {
    validate_key(name);
    const std::string p = join_key(path_, name);
    auto it = child_meta_.find(name);
    if (it != child_meta_.end() && meta_.consolidated) {
        const std::string where = store_->uri() + "/" + join_key(p, "zarr.json");
        return Array::open(store_, p, parse_array_metadata(it->second, where));
    }
    return Array::open(store_, p);
}

std::shared_ptr<Group> Group::open_group(const std::string& name) const {
    validate_key(name);
    return Group::open(store_, join_key(path_, name));
}

} // namespace zarr3
