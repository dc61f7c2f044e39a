// Navigation of a Zarr hierarchy (zarr3/hierarchy.hpp).
#include "zarr3/hierarchy.hpp"

#include <algorithm>

namespace zarr3 {

std::string parent_path(std::string_view path) {
    const size_t s = path.rfind('/');
    return s == std::string_view::npos ? std::string() : std::string(path.substr(0, s));
}

std::string base_name(std::string_view path) {
    const size_t s = path.rfind('/');
    return std::string(s == std::string_view::npos ? path : path.substr(s + 1));
}

std::optional<std::string>
nearest_ancestor_path(const std::string& group,
                      const std::function<bool(const std::string&)>& holds) {
    return nearest_ancestor(group, holds, [](const std::string& g) -> std::optional<std::string> {
        if (g.empty()) return std::nullopt;
        return parent_path(g);
    });
}

namespace {

bool reported(WalkBudget& budget, const HierarchyVisitor& visit, bool ok) {
    if (std::string msg = budget.take_message(); !msg.empty() && visit.warn) visit.warn(msg);
    return ok;
}

std::pair<uint64_t, uint64_t> folder_of(const HierarchyVisitor& visit, const std::string& group) {
    return visit.folder_id ? visit.folder_id(group) : std::pair<uint64_t, uint64_t>{0, 0};
}

// False once the walk is to stop.
bool walk_group(const Group& g, WalkBudget& budget, const HierarchyVisitor& visit) {
    auto arrays = g.array_names();
    std::sort(arrays.begin(), arrays.end());
    for (const auto& name : arrays) {
        if (!reported(budget, visit, budget.count())) return false;
        if (!visit.array(g, name)) return false;
    }
    auto groups = g.group_names();
    std::sort(groups.begin(), groups.end());
    for (const auto& name : groups) {
        if (budget.stopped()) return false;
        const std::string child = join_key(g.path(), name);
        if (!reported(budget, visit, budget.enter(child, folder_of(visit, child)))) continue;
        const auto sub = visit.open_group ? visit.open_group(g, name) : g.open_group(name);
        if (!walk_group(*sub, budget, visit)) return false;
    }
    return !budget.stopped();
}

} // namespace

void walk_hierarchy(const Group& top, WalkBudget& budget, const HierarchyVisitor& visit) {
    reported(budget, visit, budget.enter(top.path(), folder_of(visit, top.path())));
    walk_group(top, budget, visit);
}

std::string unnamed_dimension_name(size_t axis) {
    return "dim" + std::to_string(axis);
}

bool has_dimension_name(const ArrayMetadata& m, size_t axis) {
    return axis < m.dimension_names.size() && m.dimension_names[axis] &&
           !m.dimension_names[axis]->empty();
}

std::string dimension_name(const ArrayMetadata& m, size_t axis) {
    return has_dimension_name(m, axis) ? *m.dimension_names[axis] : unnamed_dimension_name(axis);
}

} // namespace zarr3
