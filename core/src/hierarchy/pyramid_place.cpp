// Where an array sits in a multiscales pyramid (zarr3/pyramid_place.hpp).
#include "zarr3/pyramid_place.hpp"

#include "zarr3/array.hpp"
#include "zarr3/hierarchy.hpp"
#include "zarr3/metadata.hpp"

namespace zarr3 {

std::optional<std::string> path_inside(const std::string& path, const std::string& group) {
    if (group.empty()) return path;
    if (path.size() > group.size() && path.compare(0, group.size(), group) == 0 &&
        path[group.size()] == '/')
        return path.substr(group.size() + 1);
    return std::nullopt;
}

std::optional<nlohmann::json> group_attributes(Store& store, const std::string& group) {
    auto j = read_node_json(store, group);
    if (!j || !j->is_object() || j->value("node_type", "") != "group") return std::nullopt;
    auto it = j->find("attributes");
    if (it == j->end() || !it->is_object()) return nlohmann::json::object();
    return *it;
}

std::optional<std::pair<size_t, std::string>>
level_holding(const std::vector<MultiscaleLevel>& layout, const std::string& rel) {
    std::optional<std::pair<size_t, std::string>> best;
    for (size_t k = 0; k < layout.size(); ++k) {
        const std::string& a = layout[k].asset;
        if (rel == a) return std::make_pair(k, std::string());
        const auto inside = path_inside(rel, a);
        if (inside && !a.empty() && (!best || a.size() > layout[best->first].asset.size()))
            best = std::make_pair(k, *inside);
    }
    return best;
}

std::optional<PyramidPlace> find_pyramid(Store& store, const std::string& array_path) {
    std::string g = array_path;
    for (int up = 0; up < kMaxPyramidAncestors && !g.empty(); ++up) {
        g = parent_path(g);
        auto attrs = group_attributes(store, g);
        if (!attrs) continue;
        auto ms = parse_multiscales(*attrs, store.uri() + "/" + join_key(g, "zarr.json"));
        if (!ms) continue;
        const auto level = level_holding(ms->layout, *path_inside(array_path, g));
        if (!level) return std::nullopt; // the array is no level of this pyramid
        PyramidPlace out;
        out.group = g;
        out.level = level->first;
        out.suffix = level->second;
        out.ms = std::move(*ms);
        out.group_attributes = std::move(*attrs);
        return out;
    }
    return std::nullopt;
}

} // namespace zarr3
