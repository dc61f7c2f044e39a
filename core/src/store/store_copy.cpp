// Whole-store copies (store_copy.hpp).
#include "zarr3/store_copy.hpp"

#include <algorithm>
#include <set>

namespace zarr3 {

namespace {

void collect(Store& store, const std::string& prefix, size_t max_keys,
             std::vector<std::string>& out) {
    for (const auto& name : store.list_dir(prefix)) {
        const std::string key = prefix.empty() ? name : prefix + "/" + name;
        const auto children = store.list_dir(key);
        if (!children.empty()) {
            collect(store, key, max_keys, out);
            continue;
        }
        if (out.size() >= max_keys)
            throw Error(store.uri() + ": more than " + std::to_string(max_keys) + " keys");
        out.push_back(key);
    }
}

} // namespace

std::vector<std::string> list_keys(Store& store, const std::string& prefix, size_t max_keys) {
    std::vector<std::string> out;
    collect(store, prefix, max_keys, out);
    std::sort(out.begin(), out.end());
    return out;
}

size_t replace_store_contents(Store& from, Store& to) {
    auto keys = list_keys(from);
    // Metadata before chunks, parents before children: stores that check
    // chunk keys against their array (an Icechunk session) accept each put.
    const auto is_meta = [](const std::string& k) {
        return k == "zarr.json" ||
               (k.size() > 10 && k.compare(k.size() - 10, 10, "/zarr.json") == 0);
    };
    const auto depth = [](const std::string& k) { return std::count(k.begin(), k.end(), '/'); };
    std::stable_sort(keys.begin(), keys.end(), [&](const std::string& a, const std::string& b) {
        if (is_meta(a) != is_meta(b)) return is_meta(a);
        return is_meta(a) && depth(a) < depth(b);
    });
    size_t put = 0;
    for (const auto& key : keys) {
        auto value = from.get(key);
        if (!value) continue; // an empty folder
        to.put(key, *value);
        ++put;
    }
    const std::set<std::string> wanted(keys.begin(), keys.end());
    for (const auto& key : list_keys(to))
        if (!wanted.count(key)) to.erase(key);
    return put;
}

} // namespace zarr3
