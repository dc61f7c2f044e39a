// Icechunk snapshot files: nodes (path, zarr.json, manifest extents).
#include "icechunk/icechunk_detail.hpp"

#include <algorithm>
#include <set>
#include <snapshot_generated.h>

namespace zarr3::icechunk {
namespace {

// A node path: "/" or "/seg/seg" whose segments are safe store keys (no
// "..", ".", empty segments, backslashes or NUL).
void check_node_path(const std::string& path, const std::string& where) {
    const bool ok =
        path == "/" || (path.size() > 1 && path[0] == '/' && is_valid_key(path.substr(1)));
    if (!ok)
        throw FormatError(where + ": node path '" + path +
                          "' is not a canonical absolute path (no '..', '.', empty segments)");
}

ManifestExtent extent_of(const generated::ManifestRef* m, const std::string& where) {
    ManifestExtent e;
    e.manifest_id = detail::id12_text(m->object_id());
    for (const auto* r : *m->extents()) {
        if (r->from() > r->to())
            throw FormatError(where + ": manifest " + e.manifest_id + " has an empty extent [" +
                              std::to_string(r->from()) + ", " + std::to_string(r->to()) + ")");
        e.axes.emplace_back(r->from(), r->to());
    }
    return e;
}

Node node_of(const generated::NodeSnapshot* n, const std::string& where) {
    Node node;
    node.path = detail::str_of(n->path());
    check_node_path(node.path, where);
    const std::string at = where + " node " + node.path;
    node.id = detail::id8_of(n->id());
    node.zarr_json.assign(reinterpret_cast<const char*>(n->user_data()->data()),
                          n->user_data()->size());
    if (n->node_data_type() == generated::NodeData::Array) {
        const auto* a = n->node_data_as_Array();
        if (!a) throw FormatError(at + ": array node without array data");
        node.is_array = true;
        for (const auto* m : *a->manifests())
            node.manifests.push_back(extent_of(m, at));
    } else if (n->node_data_type() != generated::NodeData::Group) {
        throw FormatError(at + ": unknown node type " +
                          std::to_string(static_cast<int>(n->node_data_type())));
    }
    return node;
}

} // namespace

bool ManifestExtent::contains(const std::vector<uint64_t>& coords) const {
    if (coords.size() != axes.size()) return false;
    for (size_t i = 0; i < coords.size(); ++i)
        if (coords[i] < axes[i].first || coords[i] >= axes[i].second) return false;
    return true;
}

const Node* Snapshot::find(const std::string& path) const {
    auto it = std::lower_bound(nodes.begin(), nodes.end(), path,
                               [](const Node& n, const std::string& p) { return n.path < p; });
    return it != nodes.end() && it->path == path ? &*it : nullptr;
}

const std::vector<std::string>& Snapshot::children(const std::string& path) const {
    static const std::vector<std::string> none;
    const auto it = children_.find(path);
    return it == children_.end() ? none : it->second;
}

void Snapshot::index_children() {
    children_.clear();
    std::set<std::string> implied; // ancestors that are no node
    size_t bytes = sizeof(Snapshot) + id.size() + message.size();
    for (const Node& n : nodes) {
        bytes += sizeof(Node) + 2 * n.path.size() + n.zarr_json.size();
        for (const ManifestExtent& m : n.manifests)
            bytes += sizeof(m) + m.manifest_id.size() + m.axes.size() * 8;
        // The node under its parent, then each ancestor that is no node under
        // its own parent (once).
        for (std::string p = n.path; p != "/";) {
            const size_t slash = p.rfind('/');
            const std::string parent = slash == 0 ? "/" : p.substr(0, slash);
            children_[parent].push_back(p.substr(slash + 1));
            bytes += sizeof(std::string) + p.size() - slash + (slash == 0 ? 0 : parent.size());
            if (parent == "/" || find(parent) || !implied.insert(parent).second) break;
            p = parent;
        }
    }
    for (auto& [parent, names] : children_)
        std::sort(names.begin(), names.end());
    memory_bytes = bytes;
}

Snapshot parse_snapshot(ByteView file, const std::string& where) {
    const Envelope env = open_envelope(file, FileType::Snapshot, where);
    const auto* s = detail::verified_root<generated::Snapshot>(env.payload, where);
    Snapshot snap;
    snap.id = detail::id12_text(s->id());
    if (s->parent_id()) snap.parent = detail::id12_text(s->parent_id());
    snap.flushed_at_us = s->flushed_at();
    snap.message = detail::str_of(s->message());
    snap.nodes.reserve(s->nodes()->size());
    for (const auto* n : *s->nodes())
        snap.nodes.push_back(node_of(n, where));
    std::sort(snap.nodes.begin(), snap.nodes.end(),
              [](const Node& a, const Node& b) { return a.path < b.path; });
    for (size_t i = 1; i < snap.nodes.size(); ++i)
        if (snap.nodes[i].path == snap.nodes[i - 1].path)
            throw FormatError(where + ": node path '" + snap.nodes[i].path + "' appears twice");
    snap.index_children();
    return snap;
}

} // namespace zarr3::icechunk
