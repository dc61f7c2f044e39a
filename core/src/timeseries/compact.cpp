// Appending a step, planning edges and compacting one axis (compact.hpp).
#include "zarr3/compact.hpp"

#include "compact_detail.hpp"

#include "zarr3/array_lock.hpp"
#include "zarr3/metadata.hpp"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>

namespace zarr3 {

void test_kill_point(const char* step) {
    const char* at = std::getenv("ZARR3_TEST_KILL_AT");
    if (at && std::strcmp(at, step) == 0) std::raise(SIGKILL);
}

Shape chunks_in_extent(const ArrayMetadata& m) {
    Shape n(m.rank());
    for (size_t d = 0; d < m.rank(); ++d)
        n[d] = m.shape[d] == 0 ? 0 : m.grid.axis(d).chunk_index(m.shape[d] - 1) + 1;
    return n;
}

namespace {

// Whether appending `n` elements along `axis` of a regular grid adds whole
// chunks: the chunks end exactly at the array's length and `n` is a multiple
// of the chunk edge. Then the grid stays regular (readers without the
// rectilinear extension still read it); otherwise an edge really differs.
bool lands_on_whole_chunks(const ArrayMetadata& m, size_t axis, uint64_t n) {
    if (m.grid.kind() != GridKind::Regular) return false;
    const uint64_t edge = m.grid.axis(axis).max_edge();
    return edge > 0 && m.shape[axis] % edge == 0 && n % edge == 0;
}

// The grid of `m` as a rectilinear grid (axes unchanged; written as lists,
// ChunkGrid::to_json).
ChunkGrid as_rectilinear(const ArrayMetadata& m) {
    std::vector<AxisPartition> axes;
    for (size_t d = 0; d < m.rank(); ++d)
        axes.push_back(m.grid.axis(d));
    return ChunkGrid::make_rectilinear(std::move(axes));
}

void check_axis(const ArrayMetadata& m, size_t axis, const std::string& where) {
    if (axis >= m.rank())
        throw Error(where + ": axis " + std::to_string(axis) + " does not exist (the array has " +
                    std::to_string(m.rank()) + ")");
}

// Error unless every edge of `ax` is a multiple of the inner chunk edge of a
// sharded array along `axis`.
void check_shard_edges(const ArrayMetadata& m, size_t axis, const AxisPartition& ax,
                       const std::string& where) {
    const auto layout = m.shard_layout();
    if (!layout) return;
    const uint64_t inner = layout->inner_chunk_shape[axis];
    for (const auto& r : ax.runs())
        if (r.edge % inner != 0)
            throw Error(where + ": shard edge " + std::to_string(r.edge) + " along axis " +
                        std::to_string(axis) + " is not a multiple of the inner chunk edge " +
                        std::to_string(inner));
}

} // namespace

ArrayMetadata appended_metadata(const ArrayMetadata& m, size_t axis, uint64_t n,
                                const std::string& where) {
    check_axis(m, axis, where);
    if (n == 0) throw Error(where + ": nothing to append");
    ArrayMetadata out = m;
    const uint64_t len = checked_add(m.shape[axis], n, "axis length");
    // The last chunk reaching past the array (a trim cut inside it): the
    // append fills it first, then adds what is left as above.
    const uint64_t room = m.grid.axis(axis).extent() - m.shape[axis];
    if (room > 0) {
        if (n <= room) {
            out.shape[axis] = len;
            out.grid.resize(out.shape);
            return out;
        }
        ArrayMetadata filled = m;
        filled.shape[axis] += room;
        filled.grid.resize(filled.shape);
        return appended_metadata(filled, axis, n - room, where);
    }
    if (lands_on_whole_chunks(m, axis, n)) { // stays regular
        AxisPartition added;
        added.append(n);
        check_shard_edges(m, axis, added, where);
        out.shape[axis] = len;
        out.grid.resize(out.shape);
        return out;
    }
    if (out.grid.kind() == GridKind::Regular) out.grid = as_rectilinear(m);
    AxisPartition& ax = out.grid.axis(axis);
    if (ax.extent() != m.shape[axis])
        throw Error(where + ": the last chunk along axis " + std::to_string(axis) +
                    " reaches past the array (length " + std::to_string(m.shape[axis]) +
                    ", chunks cover " + std::to_string(ax.extent()) +
                    "); a new chunk cannot start at the end");
    ax.append(n);
    ax.set_length(len);
    out.shape[axis] = len;
    AxisPartition added;
    added.append(n);
    check_shard_edges(m, axis, added, where);
    return out;
}

AxisPartition plan_fixed_edges(uint64_t length, uint64_t n) {
    if (n == 0) throw Error("--edges: a chunk edge must be >= 1");
    return AxisPartition::regular(n, length, true);
}

namespace {

// Error naming `where` and values i - 1 and i (indexes and dates) unless
// value i is past value i - 1.
void require_increasing(const std::vector<double>& values, size_t i, const CfTimeUnits& units,
                        const std::string& where) {
    if (i == 0 || values[i] > values[i - 1]) return;
    const auto at = [&](size_t k) {
        return "value " + std::to_string(k) + " (" + format_civil(cf_civil_of(units, values[k])) +
               ")";
    };
    throw Error(where + ": monthly edges need time values in increasing order, but " + at(i) +
                (values[i] == values[i - 1] ? " repeats " : " comes after ") + at(i - 1) +
                " (appended with APPEND_ORDER=ANY?); nothing was compacted: months of an "
                "unsorted axis are no runs of consecutive chunks");
}

} // namespace

AxisPartition plan_monthly_edges(const std::vector<double>& values, const CfTimeUnits& units,
                                 const std::string& where) {
    AxisPartition p;
    uint64_t run = 0;
    int64_t last = 0;
    for (size_t i = 0; i < values.size(); ++i) {
        const CivilTime t = cf_civil_of(units, values[i]);
        require_increasing(values, i, units, where);
        const int64_t key = t.year * 12 + static_cast<int64_t>(t.month);
        if (run > 0 && key != last) {
            p.append(run);
            run = 0;
        }
        last = key;
        ++run;
    }
    if (run > 0) p.append(run);
    p.set_length(values.size());
    return p;
}

AxisPartition parse_edges(std::string_view json, uint64_t length, const std::string& where) {
    const std::string text = "[" + std::string(json) + "]";
    const ChunkGrid g = ChunkGrid::parse_chunk_shapes(text, Shape{length}, where);
    return g.axis(0);
}

ArrayMetadata compacted_metadata(const ArrayMetadata& m, size_t axis, AxisPartition edges,
                                 const std::string& where) {
    check_axis(m, axis, where);
    if (edges.extent() < m.shape[axis])
        throw Error(where + ": the new edges cover " + std::to_string(edges.extent()) +
                    " elements, fewer than the axis length " + std::to_string(m.shape[axis]));
    edges.set_length(m.shape[axis]);
    check_shard_edges(m, axis, edges, where);
    const auto& enc = m.key_encoding;
    if (m.rank() == 0 || (enc.kind() == ChunkKeyEncoding::Kind::V2 && m.rank() == 1))
        throw Error(where + ": chunk keys of this array (" + enc.to_json().dump() + ", rank " +
                    std::to_string(m.rank()) +
                    ") have no separator to toggle; it cannot be compacted in place");
    ArrayMetadata out = m;
    out.grid = as_rectilinear(m);
    out.grid.axis(axis) = std::move(edges);
    out.key_encoding = ChunkKeyEncoding(enc.kind(), enc.separator() == '/' ? '.' : '/');
    return out;
}

namespace {

// The index named by `s` when it is a canonical decimal (no sign, no leading
// zero, no overflow) below `bound`; nullopt otherwise.
std::optional<uint64_t> parse_index(std::string_view s, uint64_t bound) {
    if (s.empty() || s.size() > 19 || (s.size() > 1 && s[0] == '0')) return std::nullopt;
    uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + static_cast<uint64_t>(c - '0');
    }
    if (v >= bound) return std::nullopt;
    return v;
}

// Whether `s` is bounds.size() indexes separated by '.', each below its bound.
bool dotted_indexes(std::string_view s, const Shape& bounds) {
    for (size_t d = 0; d < bounds.size(); ++d) {
        const bool last = d + 1 == bounds.size();
        const size_t dot = last ? s.size() : s.find('.');
        if (dot == std::string_view::npos || !parse_index(s.substr(0, dot), bounds[d]))
            return false;
        s.remove_prefix(last ? dot : dot + 1);
    }
    return s.empty();
}

// The stored chunk keys under folder `dir` (depth `d` of the '/' form):
// only names that are indexes within `bounds`, values at the last level.
void collect_nested(Store& store, const std::string& dir, size_t d, const Shape& bounds,
                    std::vector<std::string>& out) {
    for (const auto& name : store.list_dir(dir)) {
        if (!parse_index(name, bounds[d])) continue;
        const std::string key = join_key(dir, name);
        if (d + 1 < bounds.size())
            collect_nested(store, key, d + 1, bounds, out);
        else if (store.size(key))
            out.push_back(key);
    }
}

} // namespace

std::vector<std::string> chunk_namespace_keys(Store& store, const std::string& path,
                                              const ChunkKeyEncoding& enc, const Shape& bounds) {
    std::vector<std::string> out;
    if (bounds.empty()) return out;
    const bool def = enc.kind() == ChunkKeyEncoding::Kind::Default;
    if (enc.separator() == '/') {
        collect_nested(store, def ? join_key(path, "c") : path, 0, bounds, out);
        return out;
    }
    for (const auto& name : store.list_dir(path)) {
        std::string_view s = name;
        if (def && s.rfind("c.", 0) != 0) continue;
        if (def) s.remove_prefix(2);
        if (!dotted_indexes(s, bounds)) continue;
        const std::string key = join_key(path, name);
        if (store.size(key)) out.push_back(key);
    }
    return out;
}

uint64_t erase_chunk_namespace(Store& store, const std::string& path, const ChunkKeyEncoding& enc,
                               const Shape& bounds) {
    const auto keys = chunk_namespace_keys(store, path, enc, bounds);
    for (const auto& k : keys)
        store.erase(k);
    return keys.size();
}

namespace {

// Calls fn(idx, origin) for every chunk of `m` that holds array elements,
// from chunk index `first` on each axis (empty: from 0).
template <class Fn>
void for_each_chunk(const ArrayMetadata& m, Fn&& fn, std::vector<uint64_t> first = {}) {
    const Shape gs = chunks_in_extent(m);
    if (first.empty()) first.assign(gs.size(), 0);
    for (size_t d = 0; d < gs.size(); ++d)
        if (first[d] >= gs[d]) return;
    std::vector<uint64_t> idx = first;
    while (true) {
        fn(idx, m.grid.chunk_origin(idx));
        size_t d = idx.size();
        while (d > 0 && ++idx[d - 1] == gs[d - 1]) {
            --d;
            idx[d] = first[d];
        }
        if (d == 0) return;
    }
}

// The selection of chunk `idx` (at `origin`) clipped to the array.
Selection chunk_selection(const ArrayMetadata& m, const std::vector<uint64_t>& idx,
                          const Shape& origin) {
    Selection s;
    s.start = origin;
    const Shape edge = m.grid.chunk_shape(idx);
    for (size_t d = 0; d < idx.size(); ++d)
        s.count.push_back(std::min(edge[d], m.shape[d] - origin[d]));
    return s;
}

uint64_t selection_bytes(const ArrayMetadata& m, const Selection& s) {
    return checked_mul(checked_product(s.count, "chunk size"), m.dtype.size, "chunk size");
}

} // namespace

bool update_consolidated_entry(Store& store, const std::string& group_path,
                               const std::string& member, const nlohmann::json& node) {
    auto j = read_node_json(store, group_path);
    if (!j || !j->is_object()) return false;
    auto cm = j->find("consolidated_metadata");
    if (cm == j->end() || !cm->is_object()) return false;
    auto md = cm->find("metadata");
    if (md == cm->end() || !md->is_object() || !md->contains(member)) return false;
    (*md)[member] = node;
    const std::string text = j->dump(2);
    store.put(join_key(group_path, "zarr.json"),
              ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
    return true;
}

namespace {

// Error unless the array's zarr.json now (`seen`, read under the write lock)
// holds the metadata `array` was opened with: the compaction plans from it.
void require_opened_metadata(const Array& array, const NodeSnapshot& seen) {
    const std::string where = array.store().uri() + "/" + join_key(array.path(), "zarr.json");
    if (!seen.bytes) throw NotFound(where + ": not found");
    const auto node = parse_node_metadata_text(
        std::string_view(reinterpret_cast<const char*>(seen.bytes->data()), seen.bytes->size()),
        where);
    if (!node.array || to_json(*node.array) != to_json(array.metadata()))
        throw Error(where + ": changed since the array was opened (another writer); "
                            "nothing was compacted, run the compaction again");
}

} // namespace

namespace compact_detail {

std::optional<std::vector<uint64_t>> same_old_chunk(const ArrayMetadata& om,
                                                    const ArrayMetadata& nm, size_t axis,
                                                    const std::vector<uint64_t>& idx) {
    const AxisPartition& o = om.grid.axis(axis);
    const AxisPartition& n = nm.grid.axis(axis);
    const uint64_t start = n.chunk_start(idx[axis]);
    if (start >= o.extent()) return std::nullopt;
    const uint64_t oi = o.chunk_index(start);
    if (o.chunk_start(oi) != start || o.chunk_edge(oi) != n.chunk_edge(idx[axis]))
        return std::nullopt;
    auto out = idx;
    out[axis] = oi;
    return out;
}

bool edges_unchanged(const ArrayMetadata& om, const ArrayMetadata& nm, size_t axis) {
    const uint64_t n = chunks_in_extent(nm)[axis];
    if (n != chunks_in_extent(om)[axis]) return false;
    std::vector<uint64_t> idx(nm.rank(), 0);
    for (idx[axis] = 0; idx[axis] < n; ++idx[axis]) {
        const auto old = same_old_chunk(om, nm, axis, idx);
        if (!old || *old != idx) return false;
    }
    return true;
}

CompactResult start_result(const ArrayMetadata& om, const ArrayMetadata& nm, size_t axis) {
    CompactResult res;
    res.old_axis = om.grid.axis(axis).to_json();
    res.new_axis = nm.grid.axis(axis).to_json();
    const Shape old_counts = chunks_in_extent(om);
    res.old_chunks = old_counts.empty() ? 0 : checked_product(old_counts, "chunk count");
    if (edges_unchanged(om, nm, axis)) {
        res.unchanged = true;
        res.new_axis = res.old_axis;
        res.new_chunks = res.kept_chunks = res.old_chunks;
    }
    return res;
}

} // namespace compact_detail

using compact_detail::same_old_chunk;

CompactResult compact_array(Array& array, size_t axis, AxisPartition edges,
                            const std::function<void(const ArrayMetadata&)>& after_switch,
                            const ChunkLink& link) {
    const ArrayMetadata& om = array.metadata();
    const std::string where = array.describe();
    ArrayMetadata nm = compacted_metadata(om, axis, std::move(edges), where);
    CompactResult res = compact_detail::start_result(om, nm, axis);
    if (res.unchanged) return res;
    std::shared_ptr<Store> store(&array.store(), [](Store*) {});
    // Appends and other compactions of this array wait; what we plan from is
    // the array's own zarr.json as it is now, checked again at the switch.
    const auto lock = lock_array(*store, array.path());
    const NodeSnapshot seen = snapshot_node(*store, array.path());
    require_opened_metadata(array, seen);
    // (1) What a killed compaction left in the new namespace goes first:
    // keys of the new encoding only (any index: the killed run's grid is
    // not recorded), never what merely looks like a folder of chunks.
    const Shape any_index(nm.rank(), std::numeric_limits<uint64_t>::max());
    erase_chunk_namespace(*store, array.path(), nm.key_encoding, any_index);
    auto neu = Array::open(store, array.path(), nm);
    Bytes buf;
    for_each_chunk(nm, [&](const std::vector<uint64_t>& idx, const Shape& origin) {
        ++res.new_chunks;
        const auto old = link ? same_old_chunk(om, nm, axis, idx) : std::nullopt;
        if (old && link(array.chunk_key(*old), neu->chunk_key(idx))) {
            ++res.kept_chunks; // the same object under its new key
            return;
        }
        const Selection s = chunk_selection(nm, idx, origin);
        if (nm.dtype.is_variable()) {
            neu->write_strings(s, array.read_strings(s));
        } else {
            buf.resize(selection_bytes(nm, s));
            array.read(s, buf.data());
            neu->write(s, buf.data());
        }
    });
    neu->flush();
    test_kill_point("compact-chunks");
    require_node_unchanged(*store, array.path(), seen, "compaction");
    neu->write_metadata(); // the switch
    if (after_switch) after_switch(nm);
    test_kill_point("compact-meta");
    // (4) The old chunks: keys of the old encoding inside the old grid.
    erase_chunk_namespace(*store, array.path(), om.key_encoding, om.grid.grid_shape());
    return res;
}

std::vector<std::string> chunks_outside_extent(const Array& array) {
    const ArrayMetadata& m = array.metadata();
    Store& store = array.store();
    const Shape any(m.rank(), std::numeric_limits<uint64_t>::max());
    auto all = chunk_namespace_keys(store, array.path(), m.key_encoding, any);
    auto inside = chunk_namespace_keys(store, array.path(), m.key_encoding, chunks_in_extent(m));
    std::sort(all.begin(), all.end());
    std::sort(inside.begin(), inside.end());
    std::vector<std::string> out;
    std::set_difference(all.begin(), all.end(), inside.begin(), inside.end(),
                        std::back_inserter(out));
    return out;
}

std::vector<std::string> chunk_keys_from(const Array& array, uint64_t start) {
    const ArrayMetadata& m = array.metadata();
    if (m.rank() == 0 || start >= m.shape[0]) return {};
    std::vector<uint64_t> first(m.rank(), 0);
    const AxisPartition& axis = m.grid.axis(0);
    first[0] = axis.chunk_index(start);
    if (axis.chunk_start(first[0]) != start) ++first[0]; // it holds earlier elements too
    std::vector<std::string> keys;
    const auto add = [&](const std::vector<uint64_t>& idx, const Shape&) {
        keys.push_back(array.chunk_key(idx));
    };
    for_each_chunk(m, add, first);
    return keys;
}

std::vector<std::string> verify_array(const Array& array) {
    const ArrayMetadata& m = array.metadata();
    std::vector<std::string> problems;
    Bytes buf;
    for_each_chunk(m, [&](const std::vector<uint64_t>& idx, const Shape& origin) {
        const std::string key = array.chunk_key(idx);
        try {
            if (!array.store().size(key)) return;
            const Selection s = chunk_selection(m, idx, origin);
            if (m.dtype.is_variable()) {
                array.read_strings(s);
                return;
            }
            buf.resize(selection_bytes(m, s));
            array.read(s, buf.data());
        } catch (const std::exception& e) {
            problems.push_back(key + ": " + e.what());
        }
    });
    return problems;
}

} // namespace zarr3
