// Chunk grids: regular and rectilinear axes kept as runs (O(runs) memory, O(log runs) lookups).
#include "zarr3/chunk_grid.hpp"

#include "json_int.hpp"

#include <algorithm>
#include <map>

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
    std::map<uint64_t, uint64_t> chunks_per_edge;
    for (const Run& r : runs_)
        chunks_per_edge[r.edge] += r.count;
    uint64_t best = 0, best_count = 0;
    for (const auto& [edge, count] : chunks_per_edge) { // ascending: ties go to the larger edge
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
    const uint64_t added = checked_mul(edge, count, "chunk grid extent");
    const uint64_t new_extent = checked_add(extent(), added, "chunk grid extent");
    const uint64_t new_chunks = checked_add(num_chunks(), count, "chunk count");
    (void)new_extent;
    (void)new_chunks;
    regular_ = false;
    bare_ = false;
    edge_ = 0;
    if (!runs_.empty() && runs_.back().edge == edge) {
        runs_.back().count += count;
    } else {
        runs_.push_back(Run{extent(), num_chunks(), edge, count});
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
AxisPartition parse_rect_axis(const json& a, uint64_t length, const std::string& where,
                              const std::string& list_member, size_t axis_index, bool allow_pairs) {
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
    std::vector<std::pair<uint64_t, uint64_t>> runs;
    runs.reserve(a.size());
    for (size_t k = 0; k < a.size(); ++k) {
        const json& e = a[k];
        // Fast path for the common case (a plain positive integer edge): no
        // member-name string is built unless there is an error to report.
        if (e.is_number_integer()) {
            const auto v = json_uint(e);
            if (v && *v > 0) {
                runs.emplace_back(*v, 1);
                continue;
            }
        }
        const std::string m = member + "[" + std::to_string(k) + "]";
        if (allow_pairs && e.is_array()) {
            if (e.size() != 2)
                fail(where, m, "expected an [edge, count] pair, got " + dump_short(e));
            runs.emplace_back(positive_int(e[0], where, m + "[0]", "chunk edge"),
                              positive_int(e[1], where, m + "[1]", "run count"));
        } else {
            runs.emplace_back(positive_int(e, where, m, "chunk edge"), 1);
        }
    }
    try {
        axis = AxisPartition::from_runs(runs, member);
    } catch (const Error& e) {
        throw FormatError(where + ": " + e.what());
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

    ChunkGrid g;
    if (name == "regular") {
        check_members(conf, {"chunk_shape"}, where, "chunk_grid.configuration");
        const std::string member = "chunk_grid.configuration.chunk_shape";
        if (!conf.contains("chunk_shape")) fail(where, member, "missing");
        const json& cs = conf["chunk_shape"];
        rank_check(cs, member);
        g.kind_ = GridKind::Regular;
        for (size_t i = 0; i < rank; ++i) {
            const std::string m = member + "[" + std::to_string(i) + "]";
            const uint64_t edge = positive_int(cs[i], where, m, "chunk edge");
            try {
                g.axes_.push_back(AxisPartition::regular(edge, shape[i]));
            } catch (const Error& e) {
                fail(where, m, e.what());
            }
        }
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
        g.kind_ = GridKind::Rectilinear;
        for (size_t i = 0; i < rank; ++i)
            g.axes_.push_back(parse_rect_axis(cs[i], shape[i], where, member, i, true));
    } else if (name == "rectangular") { // ZEP 3 draft: explicit edge lists or integers
        check_members(conf, {"chunk_shape"}, where, "chunk_grid.configuration");
        const std::string member = "chunk_grid.configuration.chunk_shape";
        if (!conf.contains("chunk_shape")) fail(where, member, "missing");
        const json& cs = conf["chunk_shape"];
        rank_check(cs, member);
        g.kind_ = GridKind::Rectilinear;
        for (size_t i = 0; i < rank; ++i)
            g.axes_.push_back(parse_rect_axis(cs[i], shape[i], where, member, i, false));
    } else {
        fail(where, "chunk_grid.name",
             "unsupported chunk grid \"" + name + "\" (expected regular or rectilinear)");
    }
    return g;
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
    json cs = json::array();
    for (const auto& a : axes_)
        cs.push_back(a.to_json());
    return {{"name", "rectilinear"}, {"configuration", {{"kind", "inline"}, {"chunk_shapes", cs}}}};
}

} // namespace zarr3
