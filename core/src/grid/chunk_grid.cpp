// Chunk grids: regular and rectilinear axes kept as runs (O(runs) memory, O(log runs) lookups).
#include "zarr3/chunk_grid.hpp"

#include "metadata/json_int.hpp"
#include "metadata/json_text.hpp"

#include <algorithm>

namespace zarr3 {
namespace {

using nlohmann::json;

using detail::dump_short;
using detail::json_uint;

[[noreturn]] void fail(const std::string& where, const std::string& member,
                       const std::string& msg) {
    throw FormatError(where + ": " + member + ": " + msg);
}

// A JSON integer >= 1 (floats, negatives and values beyond 64 bits refused).
uint64_t positive_int(const json& j, const std::string& where, const std::string& member,
                      const char* what) {
    if (!j.is_number_integer())
        fail(where, member,
             std::string("expected an integer ") + what + " >= 1, got " + dump_short(j));
    const auto v = json_uint(j);
    if (!v || *v == 0)
        fail(where, member, std::string(what) + " must be >= 1, got " + dump_short(j));
    return *v;
}

void check_members(const json& obj, std::initializer_list<const char*> allowed,
                   const std::string& where, const std::string& member) {
    for (const auto& item : obj.items()) {
        if (std::find_if(allowed.begin(), allowed.end(),
                         [&](const char* a) { return item.key() == a; }) == allowed.end())
            fail(where, member + "." + item.key(), "unexpected member");
    }
}

uint64_t ceil_div(uint64_t a, uint64_t b) {
    return a / b + (a % b != 0);
}

} // namespace

// ------------------------------------------------------------------ AxisPartition

AxisPartition AxisPartition::regular(uint64_t edge, uint64_t length, bool bare) {
    if (edge == 0) throw Error("chunk edge must be >= 1");
    AxisPartition a;
    a.regular_ = true;
    a.bare_ = bare;
    a.edge_ = edge;
    a.set_length(length);
    return a;
}

AxisPartition AxisPartition::from_runs(const std::vector<std::pair<uint64_t, uint64_t>>& runs,
                                       const std::string& where) {
    AxisPartition a;
    a.runs_.reserve(runs.size());
    for (const auto& [edge, count] : runs) {
        if (edge == 0) throw FormatError(where + ": chunk edge must be >= 1");
        if (count == 0) throw FormatError(where + ": run count must be >= 1");
        try {
            a.append(edge, count);
        } catch (const Error& e) {
            throw FormatError(where + ": " + e.what());
        }
    }
    a.length_ = a.extent();
    return a;
}

uint64_t AxisPartition::num_chunks() const {
    return runs_.empty() ? 0 : runs_.back().start_chunk + runs_.back().count;
}

uint64_t AxisPartition::extent() const {
    // The sum never overflows: append() and set_length() check it.
    return runs_.empty() ? 0 : runs_.back().start_element + runs_.back().edge * runs_.back().count;
}

uint64_t AxisPartition::chunk_index(uint64_t element) const {
    if (element >= extent())
        throw Error("element " + std::to_string(element) + " lies beyond the chunk grid extent " +
                    std::to_string(extent()));
    auto it = std::upper_bound(runs_.begin(), runs_.end(), element,
                               [](uint64_t e, const Run& r) { return e < r.start_element; });
    const Run& r = *(it - 1);
    return r.start_chunk + (element - r.start_element) / r.edge;
}

uint64_t AxisPartition::chunk_start(uint64_t chunk) const {
    if (chunk >= num_chunks())
        throw Error("chunk " + std::to_string(chunk) + " out of range (" +
                    std::to_string(num_chunks()) + " chunks)");
    auto it = std::upper_bound(runs_.begin(), runs_.end(), chunk,
                               [](uint64_t c, const Run& r) { return c < r.start_chunk; });
    const Run& r = *(it - 1);
    return r.start_element + (chunk - r.start_chunk) * r.edge;
}

uint64_t AxisPartition::chunk_edge(uint64_t chunk) const {
    if (chunk >= num_chunks())
        throw Error("chunk " + std::to_string(chunk) + " out of range (" +
                    std::to_string(num_chunks()) + " chunks)");
    auto it = std::upper_bound(runs_.begin(), runs_.end(), chunk,
                               [](uint64_t c, const Run& r) { return c < r.start_chunk; });
    return (it - 1)->edge;
}

uint64_t AxisPartition::most_common_edge() const {
    if (runs_.empty()) return edge_;
    // Chunks per distinct edge. Few distinct edges (the usual case): a small
    // table searched linearly; many: sorted pairs. Counts never overflow, as
    // they sum to num_chunks().
    constexpr size_t kSmall = 32;
    std::vector<std::pair<uint64_t, uint64_t>> per_edge;
    bool small = true;
    for (const Run& r : runs_) {
        auto it = std::find_if(per_edge.begin(), per_edge.end(),
                               [&](const auto& p) { return p.first == r.edge; });
        if (it != per_edge.end()) {
            it->second += r.count;
        } else if (per_edge.size() < kSmall) {
            per_edge.emplace_back(r.edge, r.count);
        } else {
            small = false;
            break;
        }
    }
    if (!small) {
        per_edge.clear();
        per_edge.reserve(runs_.size());
        for (const Run& r : runs_)
            per_edge.emplace_back(r.edge, r.count);
    }
    std::sort(per_edge.begin(), per_edge.end(),
              [](const auto& x, const auto& y) { return x.first < y.first; });
    uint64_t best = 0, best_count = 0;
    for (size_t i = 0; i < per_edge.size();) { // ascending: ties go to the larger edge
        const uint64_t edge = per_edge[i].first;
        uint64_t count = 0;
        for (; i < per_edge.size() && per_edge[i].first == edge; ++i)
            count += per_edge[i].second;
        if (count >= best_count) {
            best = edge;
            best_count = count;
        }
    }
    return best;
}

uint64_t AxisPartition::max_edge() const {
    uint64_t m = edge_;
    for (const Run& r : runs_)
        m = std::max(m, r.edge);
    return m;
}

void AxisPartition::append(uint64_t edge, uint64_t count) {
    if (edge == 0) throw Error("chunk edge must be >= 1");
    if (count == 0) throw Error("run count must be >= 1");
    const uint64_t old_extent = extent(), old_chunks = num_chunks();
    uint64_t added = 0, new_extent = 0, new_chunks = 0;
    if (__builtin_mul_overflow(edge, count, &added) ||
        __builtin_add_overflow(old_extent, added, &new_extent) ||
        __builtin_add_overflow(old_chunks, count, &new_chunks)) {
        // Slow path only to raise the usual messages (checked_* build strings).
        checked_add(old_extent, checked_mul(edge, count, "chunk grid extent"), "chunk grid extent");
        checked_add(old_chunks, count, "chunk count");
    }
    regular_ = false;
    bare_ = false;
    edge_ = 0;
    if (!runs_.empty() && runs_.back().edge == edge) {
        runs_.back().count += count;
    } else {
        runs_.push_back(Run{old_extent, old_chunks, edge, count});
    }
}

void AxisPartition::set_length(uint64_t length) {
    if (regular_) {
        const uint64_t count = ceil_div(length, edge_);
        checked_mul(count, edge_, "chunk grid extent");
        runs_.clear();
        if (count > 0) runs_.push_back(Run{0, 0, edge_, count});
        length_ = length;
        return;
    }
    if (length > extent()) append(length - extent(), 1);
    length_ = length;
}

json AxisPartition::to_list_json() const {
    if (!regular_) return to_json();
    const uint64_t count = std::max<uint64_t>(1, num_chunks()); // never an empty list
    return count == 1 ? json::array({edge_}) : json::array({json::array({edge_, count})});
}

json AxisPartition::to_json() const {
    if (regular_) return json(edge_);
    json a = json::array();
    for (size_t i = 0; i < runs_.size(); ++i) {
        // Runs are merged on construction; merge again defensively.
        uint64_t edge = runs_[i].edge, count = runs_[i].count;
        while (i + 1 < runs_.size() && runs_[i + 1].edge == edge)
            count += runs_[++i].count;
        if (count == 1)
            a.push_back(edge);
        else
            a.push_back(json::array({edge, count}));
    }
    return a;
}

// ------------------------------------------------------------------ ChunkGrid

ChunkGrid ChunkGrid::make_regular(const Shape& chunk_shape, const Shape& array_shape) {
    if (chunk_shape.size() != array_shape.size())
        throw Error("chunk shape rank " + std::to_string(chunk_shape.size()) +
                    " differs from array rank " + std::to_string(array_shape.size()));
    ChunkGrid g;
    g.kind_ = GridKind::Regular;
    for (size_t i = 0; i < chunk_shape.size(); ++i)
        g.axes_.push_back(AxisPartition::regular(chunk_shape[i], array_shape[i]));
    return g;
}

ChunkGrid ChunkGrid::make_rectilinear(std::vector<AxisPartition> axes) {
    ChunkGrid g;
    g.kind_ = GridKind::Rectilinear;
    g.axes_ = std::move(axes);
    return g;
}

namespace {

// One rectilinear axis: a bare integer or a list of integers and [edge, count] pairs.
// `collected`: the list's edges when the parser kept them out of the DOM.
AxisPartition parse_rect_axis(const json& a, uint64_t length, const std::string& where,
                              const std::string& list_member, size_t axis_index, bool allow_pairs,
                              AxisPartition* collected = nullptr) {
    const std::string member = list_member + "[" + std::to_string(axis_index) + "]";
    AxisPartition axis;
    if (a.is_number()) {
        const uint64_t edge = positive_int(a, where, member, "chunk edge");
        try {
            axis = AxisPartition::regular(edge, length, true);
        } catch (const Error& e) {
            fail(where, member, e.what());
        }
        return axis;
    }
    if (!a.is_array())
        fail(where, member,
             std::string("expected an integer or a list of ") +
                 (allow_pairs ? "edges and [edge, count] pairs" : "edges") + ", got " +
                 dump_short(a));
    // Edges go straight into the run list; the member name is only built for
    // an error. Room is reserved for the runs the list can make at most (so a
    // million equal edges reserve one run).
    if (collected && a.empty()) axis = std::move(*collected);
    const auto& list = a.get_ref<const json::array_t&>();
    size_t max_runs = 0;
    uint64_t prev = 0;
    for (const json& e : list) {
        uint64_t v = 0; // a positive bare edge, else 0
        if (const auto* u = e.get_ptr<const json::number_unsigned_t*>())
            v = *u;
        else if (const auto* i = e.get_ptr<const json::number_integer_t*>(); i && *i > 0)
            v = static_cast<uint64_t>(*i);
        max_runs += v == 0 || v != prev;
        prev = v;
    }
    axis.reserve(max_runs);
    const auto add = [&](uint64_t edge, uint64_t count) {
        try {
            axis.append(edge, count);
        } catch (const Error& e) {
            fail(where, member, e.what());
        }
    };
    for (size_t k = 0; k < list.size(); ++k) {
        const json& e = list[k];
        // Fast paths for the common case (a plain positive integer edge).
        if (const auto* u = e.get_ptr<const json::number_unsigned_t*>(); u && *u > 0) {
            add(*u, 1);
            continue;
        }
        if (const auto* i = e.get_ptr<const json::number_integer_t*>(); i && *i > 0) {
            add(static_cast<uint64_t>(*i), 1);
            continue;
        }
        const std::string m = member + "[" + std::to_string(k) + "]";
        if (allow_pairs && e.is_array()) {
            if (e.size() != 2)
                fail(where, m, "expected an [edge, count] pair, got " + dump_short(e));
            const uint64_t edge = positive_int(e[0], where, m + "[0]", "chunk edge");
            add(edge, positive_int(e[1], where, m + "[1]", "run count"));
        } else {
            add(positive_int(e, where, m, "chunk edge"), 1);
        }
    }
    if (axis.extent() < length)
        fail(where, member,
             "edges of axis " + std::to_string(axis_index) + " sum to " +
                 std::to_string(axis.extent()) + ", short of the array length " +
                 std::to_string(length));
    axis.set_length(length);
    return axis;
}

} // namespace

ChunkGrid ChunkGrid::parse(const json& j, const Shape& shape, const std::string& where) {
    return detail::parse_chunk_grid(j, shape, where, nullptr);
}

ChunkGrid detail::parse_chunk_grid(const json& j, const Shape& shape, const std::string& where,
                                   EdgeLists* edges) {
    if (j.is_string())
        fail(where, "chunk_grid",
             "\"" + j.get<std::string>() +
                 "\" needs a configuration (expected {\"name\": ..., "
                 "\"configuration\": {...}})");
    if (!j.is_object()) fail(where, "chunk_grid", "expected an object, got " + dump_short(j));
    check_members(j, {"name", "configuration"}, where, "chunk_grid");
    const auto name_it = j.find("name");
    if (name_it == j.end() || !name_it->is_string())
        fail(where, "chunk_grid.name", "expected a string naming the chunk grid");
    const std::string name = name_it->get<std::string>();
    const auto conf_it = j.find("configuration");
    if (conf_it == j.end() || !conf_it->is_object())
        fail(where, "chunk_grid.configuration", "expected an object");
    const json& conf = *conf_it;
    const size_t rank = shape.size();
    const auto rank_check = [&](const json& list, const std::string& member) {
        if (!list.is_array()) fail(where, member, "expected a list, got " + dump_short(list));
        if (list.size() != rank)
            fail(where, member,
                 "has " + std::to_string(list.size()) + " entries, expected one per array axis (" +
                     std::to_string(rank) + ")");
    };

    if (name == "regular") {
        check_members(conf, {"chunk_shape"}, where, "chunk_grid.configuration");
        const std::string member = "chunk_grid.configuration.chunk_shape";
        if (!conf.contains("chunk_shape")) fail(where, member, "missing");
        const json& cs = conf["chunk_shape"];
        rank_check(cs, member);
        Shape chunk_shape;
        for (size_t i = 0; i < rank; ++i) {
            const std::string m = member + "[" + std::to_string(i) + "]";
            const uint64_t edge = positive_int(cs[i], where, m, "chunk edge");
            try {
                AxisPartition::regular(edge, shape[i]); // checks the chunk count
            } catch (const Error& e) {
                fail(where, m, e.what());
            }
            chunk_shape.push_back(edge);
        }
        return ChunkGrid::make_regular(chunk_shape, shape);
    } else if (name == "rectilinear") {
        check_members(conf, {"kind", "chunk_shapes"}, where, "chunk_grid.configuration");
        if (!conf.contains("kind"))
            fail(where, "chunk_grid.configuration.kind", "missing (expected \"inline\")");
        if (conf["kind"] != "inline")
            fail(where, "chunk_grid.configuration.kind",
                 "expected \"inline\", got " + dump_short(conf["kind"]));
        const std::string member = "chunk_grid.configuration.chunk_shapes";
        if (!conf.contains("chunk_shapes")) fail(where, member, "missing");
        const json& cs = conf["chunk_shapes"];
        rank_check(cs, member);
        std::vector<AxisPartition> axes;
        for (size_t i = 0; i < rank; ++i) {
            AxisPartition* collected = nullptr;
            if (edges)
                if (auto it = edges->axes.find(i); it != edges->axes.end()) collected = &it->second;
            axes.push_back(parse_rect_axis(cs[i], shape[i], where, member, i, true, collected));
        }
        return ChunkGrid::make_rectilinear(std::move(axes));
    } else if (name == "rectangular") { // ZEP 3 draft: explicit edge lists or integers
        check_members(conf, {"chunk_shape"}, where, "chunk_grid.configuration");
        const std::string member = "chunk_grid.configuration.chunk_shape";
        if (!conf.contains("chunk_shape")) fail(where, member, "missing");
        const json& cs = conf["chunk_shape"];
        rank_check(cs, member);
        std::vector<AxisPartition> axes;
        for (size_t i = 0; i < rank; ++i)
            axes.push_back(parse_rect_axis(cs[i], shape[i], where, member, i, false));
        return ChunkGrid::make_rectilinear(std::move(axes));
    } else {
        fail(where, "chunk_grid.name",
             "unsupported chunk grid \"" + name + "\" (expected regular or rectilinear)");
    }
}

ChunkGrid ChunkGrid::parse_chunk_shapes(std::string_view text, const Shape& shape,
                                        const std::string& where, bool pad_leading) {
    static const std::string kEach =
        "each a bare integer edge or a list of edges and [edge, count] runs, e.g. "
        "[[31,28,31,30],256,256]";
    json j;
    try {
        j = detail::parse_json(text, where, nullptr);
    } catch (const FormatError& e) {
        throw FormatError(std::string(e.what()) +
                          "; expected a JSON list with one entry per array axis, " + kEach);
    }
    if (!j.is_array())
        throw FormatError(where + ": expected a JSON list with one entry per array axis, " + kEach);
    if (pad_leading && !j.empty() && j.size() < shape.size())
        j.insert(j.begin(), shape.size() - j.size(), json(1));
    if (j.size() != shape.size())
        throw FormatError(where + ": has " + std::to_string(j.size()) + " entries, expected " +
                          (pad_leading
                               ? "1 to " + std::to_string(shape.size()) +
                                     " (the last axes; leading axes default to 1)"
                               : "one per array axis (" + std::to_string(shape.size()) + " axes)") +
                          ", " + kEach);
    std::vector<AxisPartition> axes;
    bool all_bare = true;
    for (size_t i = 0; i < shape.size(); ++i) {
        all_bare = all_bare && j[i].is_number();
        axes.push_back(parse_rect_axis(j[i], shape[i], where, "axis", i, true));
    }
    if (!all_bare) return ChunkGrid::make_rectilinear(std::move(axes));
    Shape edges;
    for (const auto& a : axes)
        edges.push_back(a.max_edge());
    return ChunkGrid::make_regular(edges, shape);
}

Shape ChunkGrid::grid_shape() const {
    Shape s;
    for (const auto& a : axes_)
        s.push_back(a.num_chunks());
    return s;
}

Shape ChunkGrid::chunk_shape(const std::vector<uint64_t>& idx) const {
    if (idx.size() != axes_.size()) throw Error("chunk index rank differs from grid rank");
    Shape s;
    for (size_t i = 0; i < idx.size(); ++i)
        s.push_back(axes_[i].chunk_edge(idx[i]));
    return s;
}

Shape ChunkGrid::chunk_origin(const std::vector<uint64_t>& idx) const {
    if (idx.size() != axes_.size()) throw Error("chunk index rank differs from grid rank");
    Shape s;
    for (size_t i = 0; i < idx.size(); ++i)
        s.push_back(axes_[i].chunk_start(idx[i]));
    return s;
}

void ChunkGrid::resize(const Shape& new_shape) {
    if (new_shape.size() != axes_.size())
        throw Error("new shape rank " + std::to_string(new_shape.size()) +
                    " differs from grid rank " + std::to_string(axes_.size()));
    for (size_t i = 0; i < axes_.size(); ++i)
        axes_[i].set_length(new_shape[i]);
}

json ChunkGrid::to_json() const {
    if (kind_ == GridKind::Regular) {
        json cs = json::array();
        for (const auto& a : axes_)
            cs.push_back(a.max_edge());
        return {{"name", "regular"}, {"configuration", {{"chunk_shape", cs}}}};
    }
    // Every axis as a list, also a regular or bare one: the real Icechunk
    // (2.2) refuses a bare integer axis, zarr-python and zarrs read lists.
    json cs = json::array();
    for (const auto& a : axes_)
        cs.push_back(a.to_list_json());
    return {{"name", "rectilinear"}, {"configuration", {{"kind", "inline"}, {"chunk_shapes", cs}}}};
}

} // namespace zarr3
