// Writing inline consolidated metadata and keeping it current (consolidating_store).
#include "zarr3/consolidated.hpp"

#include "zarr3/array.hpp"
#include "zarr3/array_lock.hpp"
#include "zarr3/metadata.hpp"

#include <mutex>

namespace zarr3 {
namespace {

using nlohmann::json;

constexpr int kMaxDepth = 64;

void walk(Store& store, const std::string& prefix, const std::string& rel, int depth, json& out) {
    if (depth > kMaxDepth) return;
    for (const auto& name : store.list_dir(prefix)) {
        if (name == "zarr.json" || name.empty() || name[0] == '.' || !is_valid_key(name)) continue;
        const std::string key = join_key(prefix, name);
        std::optional<json> j;
        try {
            j = read_node_json(store, key);
        } catch (const Error&) {
            continue; // a broken node is left out (it does not open either)
        }
        if (!j || !j->is_object() || !j->contains("node_type")) continue;
        if (out.size() >= kMaxConsolidatedNodes)
            throw Error(store.uri() + ": more than " + std::to_string(kMaxConsolidatedNodes) +
                        " nodes to consolidate");
        const std::string path = rel.empty() ? name : rel + "/" + name;
        const bool group = (*j)["node_type"] == "group";
        if (group) j->erase("consolidated_metadata");
        out[path] = std::move(*j);
        if (group) walk(store, key, path, depth + 1, out);
    }
}

json with_consolidated(json root, Store& store, const std::string& known = {}) {
    root["consolidated_metadata"] = {{"kind", "inline"},
                                     {"must_understand", false},
                                     {"metadata", collect_consolidated(store, known)}};
    return root;
}

void put_json(Store& store, const std::string& key, const json& j) {
    const std::string text = j.dump(2);
    store.put(key, ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

bool is_node_key(const std::string& key) {
    return key.size() > 10 && key.compare(key.size() - 10, 10, "/zarr.json") == 0;
}

// The node path of a node key ("a/b/zarr.json" -> "a/b").
std::string node_of(const std::string& node_key) {
    return node_key.substr(0, node_key.size() - 10);
}

// Forwards everything but put and erase, which keep the root's consolidated
// metadata current.
class ConsolidatingStore final : public ForwardingStore {
  public:
    ConsolidatingStore(std::shared_ptr<Store> inner,
                       std::function<void(const std::string&)> on_refused)
        : ForwardingStore(std::move(inner)), on_refused_(std::move(on_refused)) {}
    void put(const std::string& key, ByteView value) override {
        if (given_up()) return inner_->put(key, value);
        if (key == "zarr.json") {
            json j = json::parse(value.begin(), value.end(), nullptr, false);
            if (j.is_object() && j.value("node_type", "") == "group") {
                std::lock_guard lk(mu_);
                const auto root_lock = lock_array(*inner_, ""); // other processes' refreshes
                put_root(std::move(j), last_node_);
                return;
            }
        }
        inner_->put(key, value);
        // The node just stored must be listed: else the listing is not to
        // be trusted (refused) and the metadata is not rewritten from it.
        if (is_node_key(key)) {
            const std::string node = node_of(key);
            {
                std::lock_guard lk(mu_);
                last_node_ = node;
            }
            refresh(node);
        }
    }
    void erase(const std::string& key) override {
        inner_->erase(key);
        if (given_up() || !is_node_key(key)) return;
        {
            std::lock_guard lk(mu_);
            if (last_node_ == node_of(key)) last_node_.clear();
        }
        refresh({});
    }

  private:
    void refresh(const std::string& known) {
        std::lock_guard lk(mu_);
        const auto root_lock = lock_array(*inner_, ""); // other processes' refreshes
        const auto root = read_node_json(*inner_, "");
        if (root && root->is_object() && root->value("node_type", "") == "group")
            put_root(*root, known);
    }
    bool given_up() {
        std::lock_guard lk(mu_);
        return given_up_;
    }
    // Writes the root group `j` with consolidated metadata; under mu_ and the root's lock. A
    // refused listing gives consolidation up when on_refused_ is set (the root without it).
    void put_root(json j, const std::string& known) {
        try {
            put_json(*inner_, "zarr.json", with_consolidated(j, *inner_, known));
        } catch (const ListingRefused& e) {
            if (!on_refused_) throw;
            j.erase("consolidated_metadata");
            put_json(*inner_, "zarr.json", j);
            given_up_ = true;
            on_refused_(e.what());
        }
    }
    std::mutex mu_;
    std::string last_node_; // the last node put (and not erased since)
    std::function<void(const std::string&)> on_refused_;
    bool given_up_ = false;
};

} // namespace

json collect_consolidated(Store& store, const std::string& known) {
    json out = json::object();
    walk(store, "", "", 0, out);
    if (!known.empty() && !out.contains(known))
        throw ListingRefused(store.uri() + ": the store's listing does not show /" + known +
                             ", which is stored (does the store refuse listings, as an S3 bucket "
                             "without list permission does?); consolidated metadata is not written "
                             "from it (every node would be hidden)");
    return out;
}

void write_consolidated(Store& store, const std::string& known) {
    const auto root = read_node_json(store, "");
    const std::string where = store.uri() + "/zarr.json";
    if (!root) throw NotFound(where + ": not found");
    if (node_type_of(*root, where) != NodeType::Group)
        throw Error(where + ": consolidated metadata needs a root group, the root is an array");
    put_json(store, "zarr.json", with_consolidated(*root, store, known));
}

bool has_consolidated(const json& root_json) {
    const auto it = root_json.find("consolidated_metadata");
    return root_json.is_object() && it != root_json.end() && it->is_object();
}

std::shared_ptr<Store> consolidating_store(std::shared_ptr<Store> inner,
                                           std::function<void(const std::string&)> on_refused) {
    return std::make_shared<ConsolidatingStore>(std::move(inner), std::move(on_refused));
}

} // namespace zarr3
