// Group: open, create, attributes and child listing.
#include "zarr3/array.hpp"

#include <algorithm>

namespace zarr3 {

namespace {
bool Contains(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}
} // namespace

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
            // Nested entries belong to child groups; entries no key can name
            // ("", ".", "..") are no nodes (the driver warns about them).
            if (p.find('/') != std::string::npos || !is_valid_key(p)) continue;
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
    const std::string p = join_key(path_, name);
    // On a read-only store, consolidated metadata is the hierarchy (as
    // zarr-python reads it): the child group is its entry, with the entries
    // below it as its own consolidated metadata, so a walk makes no request
    // per group. A writable store reads each group's own zarr.json (a write
    // must not depend on consolidated copies).
    if (meta_.consolidated && !store_->writable()) {
        scan_children();
        const auto it = child_meta_.find(name);
        if (it == child_meta_.end() || !Contains(groups_, name))
            throw NotFound(store_->uri() + "/" + join_key(p, "zarr.json") +
                           ": not a group of the consolidated metadata");
        const std::string where = store_->uri() + "/" + join_key(p, "zarr.json");
        GroupMetadata m = parse_group_metadata(it->second, where);
        std::map<std::string, nlohmann::json> below;
        const std::string prefix = name + "/";
        for (const auto& [key, node] : *meta_.consolidated)
            if (key.size() > prefix.size() && key.compare(0, prefix.size(), prefix) == 0)
                below.emplace(key.substr(prefix.size()), node);
        m.consolidated = std::move(below);
        return std::shared_ptr<Group>(new Group(store_, p, std::move(m)));
    }
    return Group::open(store_, p);
}

} // namespace zarr3
