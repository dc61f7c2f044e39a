// Trimming an array along its append axis (zarr3/trim.hpp).
#include "zarr3/trim.hpp"

#include "zarr3/array_lock.hpp"
#include "zarr3/compact.hpp"
#include "zarr3/hierarchy.hpp"
#include "zarr3/multiscales.hpp"
#include "zarr3/pyramid_place.hpp"

#include <algorithm>

namespace zarr3 {

ArrayMetadata trimmed_metadata(const ArrayMetadata& m, size_t axis, uint64_t length,
                               const std::string& where) {
    if (axis >= m.rank())
        throw Error(where + ": axis " + std::to_string(axis) + " does not exist (the array has " +
                    std::to_string(m.rank()) + ")");
    const uint64_t old = m.shape[axis];
    if (length < 1 || length >= old)
        throw Error(where + ": cannot trim axis " + std::to_string(axis) + " to " +
                    std::to_string(length) + " elements: it has " + std::to_string(old) +
                    "; the new length must be between 1 and " +
                    std::to_string(old > 1 ? old - 1 : 0) + " (trim only shortens)");
    ArrayMetadata out = m;
    out.shape[axis] = length;
    AxisPartition& ax = out.grid.axis(axis);
    if (ax.is_regular()) {
        out.grid.resize(out.shape);
        return out;
    }
    const uint64_t keep = ax.chunk_index(length - 1) + 1;
    std::vector<std::pair<uint64_t, uint64_t>> runs;
    for (const auto& r : ax.runs()) {
        if (r.start_chunk >= keep) break;
        runs.emplace_back(r.edge, std::min(r.count, keep - r.start_chunk));
    }
    AxisPartition cut = AxisPartition::from_runs(runs, where);
    cut.set_length(length);
    ax = cut;
    return out;
}

namespace {

bool is_array(Store& store, const std::string& path) {
    const auto j = read_node_json(store, path);
    return j && node_type_of(*j, join_key(path, "zarr.json")) == NodeType::Array;
}

// A level (`asset` of group `g`) as an array path: the asset, or (GDAL's
// layout) the array named `suffix` inside it.
std::string level_path(const std::string& g, const std::string& asset, const std::string& suffix) {
    const std::string p = join_key(g, asset);
    if (!suffix.empty()) return join_key(p, suffix);
    return p;
}

} // namespace

std::vector<std::string> pyramid_levels(Store& store, const std::string& array_path) {
    const auto place = find_pyramid(store, array_path);
    if (!place) return {};
    const Multiscales& ms = place->ms;
    const size_t at = place->level;
    if (root_of(ms, at) != at) return {}; // a level, not a base: nothing below it
    std::vector<std::string> out;
    for (size_t k = 0; k < ms.layout.size(); ++k) {
        if (k == at || root_of(ms, k) != at) continue;
        std::string p = level_path(place->group, ms.layout[k].asset, place->suffix);
        // A level group holding an array named like the base (GDAL's layout).
        if (place->suffix.empty() && !is_array(store, p)) p = join_key(p, base_name(array_path));
        if (is_array(store, p)) out.push_back(p);
    }
    return out;
}

namespace {

// Error unless `dim` names axis 0 of `m` (by dimension name or as "0").
void require_first_axis(const ArrayMetadata& m, const std::string& dim, const std::string& where) {
    if (dim == "0") return;
    for (size_t d = 0; d < m.dimension_names.size(); ++d)
        if (m.dimension_names[d] && *m.dimension_names[d] == dim) {
            if (d == 0) return;
            throw Error(where + ": dimension " + dim + " is axis " + std::to_string(d) +
                        "; trim works along axis 0, the axis appends extend");
        }
    throw Error(where + ": no dimension named " + dim + " (dimension_names: " +
                nlohmann::json(to_json(m).value("dimension_names", nlohmann::json())).dump() + ")");
}

// The longest axis 0 of the arrays of group `g` whose first dimension is
// `dim`, other than those in `skip`.
uint64_t shared_length(Store& store, const std::string& g, const std::string& dim,
                       const std::vector<std::string>& skip) {
    uint64_t n = 0;
    for (const auto& child : store.list_dir(g)) {
        const std::string p = join_key(g, child);
        if (std::find(skip.begin(), skip.end(), p) != skip.end()) continue;
        const auto j = read_node_json(store, p);
        if (!j || node_type_of(*j, join_key(p, "zarr.json")) != NodeType::Array) continue;
        const auto m = parse_array_metadata(*j, store.uri() + "/" + join_key(p, "zarr.json"));
        if (m.rank() > 0 && !m.dimension_names.empty() && m.dimension_names[0] == dim)
            n = std::max(n, m.shape[0]);
    }
    return n;
}

// One array being trimmed: its lock, the array as stored and its new metadata.
struct Cut {
    std::unique_ptr<ArrayLock> lock;
    std::shared_ptr<Array> old;
    ArrayMetadata meta;
};

// Locks and reads the array at `path`; nullopt when it is not longer than
// `length` along axis 0 (nothing to cut: a level an earlier, killed trim
// already cut).
std::optional<Cut> plan_cut(const std::shared_ptr<Store>& store, const std::string& path,
                            uint64_t length, bool required = false) {
    Cut c;
    c.lock = lock_array(*store, path);
    NodeSnapshot seen;
    c.old = open_array_fresh(store, path, seen);
    const auto& m = c.old->metadata();
    if (m.rank() == 0) throw Error(c.old->describe() + ": a 0-d array has no axis to trim");
    if (m.shape[0] <= length && !required) return std::nullopt;
    c.meta = trimmed_metadata(m, 0, length, c.old->describe());
    return c;
}

// Writes the new zarr.json of `c` and the consolidated entries above it.
void switch_cut(const std::shared_ptr<Store>& store, const Cut& c) {
    const std::string path = c.old->path();
    Array::open(store, path, c.meta)->write_metadata();
    const auto node = to_json(c.meta);
    for (std::string g = path; !g.empty();) {
        g = parent_path(g);
        update_consolidated_entry(*store, g, *path_inside(path, g), node);
    }
}

} // namespace

TrimResult trim_array(const std::shared_ptr<Store>& store, const std::string& path,
                      const std::string& dim, uint64_t length) {
    TrimResult res;
    {
        NodeSnapshot seen; // the axis named before any lock but the array's is taken
        const auto lock = lock_array(*store, path);
        const auto a = open_array_fresh(store, path, seen);
        require_first_axis(a->metadata(), dim, a->describe());
    }
    auto base = plan_cut(store, path, length, true); // refused unless shorter
    res.old_length = base->old->metadata().shape[0];
    res.new_length = length;
    std::vector<Cut> levels;
    const auto level_paths = pyramid_levels(*store, path);
    for (const auto& p : level_paths)
        if (auto c = plan_cut(store, p, length)) levels.push_back(std::move(*c));
    std::optional<Cut> coord;
    const auto cgroup = nearest_ancestor_path(parent_path(path), [&](const std::string& g) {
        return is_array(*store, join_key(g, dim));
    });
    if (cgroup && join_key(*cgroup, dim) != path) {
        std::vector<std::string> skip = level_paths;
        skip.push_back(path);
        skip.push_back(join_key(*cgroup, dim));
        const uint64_t keep = std::max(length, shared_length(*store, *cgroup, dim, skip));
        coord = plan_cut(store, join_key(*cgroup, dim), keep);
    }
    test_pause_point("trim-switch"); // every lock held (tests of concurrent appends)
    // Levels first: a kill before the switch leaves the old length (a
    // re-run finishes); then the data array, then its coordinate.
    for (const auto& c : levels)
        switch_cut(store, c);
    test_kill_point("trim-levels");
    switch_cut(store, *base);
    test_kill_point("trim-switch");
    if (coord) switch_cut(store, *coord);
    test_kill_point("trim-coord");
    std::vector<const Cut*> all{&*base};
    for (const auto& c : levels)
        all.push_back(&c);
    if (coord) all.push_back(&*coord);
    for (const Cut* c : all) {
        res.arrays.push_back(c->old->path());
        for (const auto& key : chunk_keys_from(*c->old, c->meta.shape[0])) {
            if (!store->size(key)) continue;
            store->erase(key);
            ++res.erased;
        }
    }
    return res;
}

} // namespace zarr3
