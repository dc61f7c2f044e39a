// The multiscales group attribute: parse + validate, level order, write.
#include "zarr3/multiscales.hpp"

#include "zarr3/store.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace zarr3 {
namespace {

[[noreturn]] void fail(const std::string& where, const std::string& member,
                       const std::string& what) {
    throw FormatError(where + ": multiscales " + member + ": " + what);
}

std::vector<double> numbers(const nlohmann::json& v, const std::string& where,
                            const std::string& member) {
    if (!v.is_array() || v.size() > 64) fail(where, member, "expected a list of numbers");
    std::vector<double> out;
    for (const auto& e : v) {
        if (!e.is_number()) fail(where, member, "expected a list of numbers");
        const double d = e.get<double>();
        if (!std::isfinite(d)) fail(where, member, "expected finite numbers");
        out.push_back(d);
    }
    return out;
}

std::string optional_string(const nlohmann::json& o, const char* key, const std::string& where,
                            const std::string& member) {
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) return {};
    if (!it->is_string()) fail(where, member + "." + key, "expected a string");
    return it->get<std::string>();
}

void parse_transform(const nlohmann::json& o, MultiscaleLevel& l, const std::string& where,
                     const std::string& m) {
    auto t = o.find("transform");
    if (t == o.end() || t->is_null()) return;
    if (!t->is_object()) fail(where, m + ".transform", "expected an object");
    if (auto s = t->find("scale"); s != t->end()) {
        l.scale = numbers(*s, where, m + ".transform.scale");
        for (double d : l.scale)
            if (!(d > 0)) fail(where, m + ".transform.scale", "expected positive factors");
    }
    if (auto s = t->find("translation"); s != t->end())
        l.translation = numbers(*s, where, m + ".transform.translation");
}

void parse_spatial(const nlohmann::json& o, MultiscaleLevel& l, const std::string& where,
                   const std::string& m) {
    if (auto s = o.find("spatial:shape"); s != o.end() && !s->is_null()) {
        const std::string mm = m + ".spatial:shape";
        if (!s->is_array() || s->size() != 2)
            fail(where, mm, "expected two positive integers [height, width]");
        for (const auto& e : *s) {
            const bool positive = e.is_number_unsigned()
                                      ? e.get<uint64_t>() > 0
                                      : e.is_number_integer() && e.get<int64_t>() > 0;
            if (!positive) fail(where, mm, "expected two positive integers [height, width]");
            l.spatial_shape.push_back(e.get<uint64_t>());
        }
    }
    if (auto s = o.find("spatial:transform"); s != o.end() && !s->is_null()) {
        const auto v = numbers(*s, where, m + ".spatial:transform");
        if (v.size() != 6) fail(where, m + ".spatial:transform", "expected six numbers");
        std::array<double, 6> a{};
        std::copy(v.begin(), v.end(), a.begin());
        l.spatial_transform = a;
    }
}

MultiscaleLevel parse_level(const nlohmann::json& o, size_t i, const std::string& where) {
    const std::string m = "layout[" + std::to_string(i) + "]";
    if (!o.is_object()) fail(where, m, "expected an object");
    MultiscaleLevel l;
    auto a = o.find("asset");
    if (a == o.end() || !a->is_string()) fail(where, m + ".asset", "expected a string");
    l.asset = a->get<std::string>();
    validate_asset_path(l.asset, where, m + ".asset");
    l.derived_from = optional_string(o, "derived_from", where, m);
    if (!l.derived_from.empty()) validate_asset_path(l.derived_from, where, m + ".derived_from");
    l.resampling_method = optional_string(o, "resampling_method", where, m);
    parse_transform(o, l, where, m);
    parse_spatial(o, l, where, m);
    return l;
}

// derived_from names a level; following it never comes back.
void check_derivations(const Multiscales& ms, const std::string& where) {
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < ms.layout.size(); ++i)
        if (!index.emplace(ms.layout[i].asset, i).second)
            fail(where, "layout[" + std::to_string(i) + "].asset",
                 "\"" + ms.layout[i].asset + "\" appears twice");
    for (size_t i = 0; i < ms.layout.size(); ++i) {
        size_t cur = i, steps = 0;
        while (!ms.layout[cur].derived_from.empty()) {
            auto it = index.find(ms.layout[cur].derived_from);
            if (it == index.end())
                fail(where, "layout[" + std::to_string(cur) + "].derived_from",
                     "\"" + ms.layout[cur].derived_from + "\" is no level of the layout");
            cur = it->second;
            if (++steps > ms.layout.size())
                fail(where, "layout[" + std::to_string(i) + "].derived_from",
                     "derivation cycle through \"" + ms.layout[i].asset + "\"");
        }
    }
}

nlohmann::json convention(const char* uuid, const char* name, const char* repo,
                          const char* description) {
    const std::string base = std::string("https://github.com/zarr-conventions/") + repo;
    return {{"uuid", uuid},
            {"name", name},
            {"schema_url", "https://raw.githubusercontent.com/zarr-conventions/" +
                               std::string(repo) + "/refs/tags/v1/schema.json"},
            {"spec_url", base + "/blob/v1/README.md"},
            {"description", description}};
}

} // namespace

void validate_asset_path(const std::string& path, const std::string& where,
                         const std::string& member) {
    if (path.empty()) fail(where, member, "empty path");
    if (path.front() == '/') fail(where, member, "\"" + path + "\" is absolute");
    if (!is_valid_key(path))
        fail(where, member, "\"" + path + "\" is not a relative path inside the group");
}

std::optional<Multiscales> parse_multiscales(const nlohmann::json& attrs,
                                             const std::string& where) {
    if (!attrs.is_object()) return std::nullopt;
    auto it = attrs.find("multiscales");
    if (it == attrs.end() || !it->is_object()) return std::nullopt;
    Multiscales ms;
    auto lay = it->find("layout");
    if (lay == it->end() || !lay->is_array() || lay->empty())
        fail(where, "layout", "expected a non-empty list of levels");
    if (lay->size() > 64) fail(where, "layout", "more than 64 levels");
    for (size_t i = 0; i < lay->size(); ++i)
        ms.layout.push_back(parse_level((*lay)[i], i, where));
    ms.resampling_method = optional_string(*it, "resampling_method", where, "");
    check_derivations(ms, where);
    return ms;
}

size_t base_level(const Multiscales& ms) {
    for (size_t i = 0; i < ms.layout.size(); ++i)
        if (ms.layout[i].derived_from.empty()) return i;
    return 0; // unreachable after check_derivations: a chain ends somewhere
}

std::array<double, 2> level_scale_yx(const Multiscales& ms, size_t i) {
    std::array<double, 2> s{1.0, 1.0};
    size_t steps = 0;
    while (i < ms.layout.size() && steps++ <= ms.layout.size()) {
        const auto& l = ms.layout[i];
        const size_t n = l.scale.size();
        if (n >= 2) {
            s[0] *= l.scale[n - 2];
            s[1] *= l.scale[n - 1];
        } else if (n == 1) {
            s[0] *= l.scale[0];
            s[1] *= l.scale[0];
        }
        if (l.derived_from.empty()) break;
        size_t next = ms.layout.size();
        for (size_t k = 0; k < ms.layout.size(); ++k)
            if (ms.layout[k].asset == l.derived_from) next = k;
        i = next;
    }
    return s;
}

std::vector<size_t> overview_order(const Multiscales& ms) {
    const size_t base = base_level(ms);
    std::vector<size_t> out;
    for (size_t i = 0; i < ms.layout.size(); ++i)
        if (i != base) out.push_back(i);
    std::stable_sort(out.begin(), out.end(), [&](size_t a, size_t b) {
        const auto sa = level_scale_yx(ms, a), sb = level_scale_yx(ms, b);
        return sa[0] * sa[1] < sb[0] * sb[1];
    });
    return out;
}

size_t root_of(const Multiscales& ms, size_t i) {
    size_t steps = 0;
    while (i < ms.layout.size() && !ms.layout[i].derived_from.empty() &&
           steps++ <= ms.layout.size()) {
        size_t next = ms.layout.size();
        for (size_t k = 0; k < ms.layout.size() && next == ms.layout.size(); ++k)
            if (ms.layout[k].asset == ms.layout[i].derived_from) next = k;
        if (next == ms.layout.size()) break; // unreachable after check_derivations
        i = next;
    }
    return i;
}

Multiscales pyramid_of(const Multiscales& ms, size_t i, size_t* index) {
    Multiscales out;
    out.resampling_method = ms.resampling_method;
    const size_t root = root_of(ms, i);
    for (size_t k = 0; k < ms.layout.size(); ++k) {
        if (root_of(ms, k) != root) continue;
        if (k == i && index) *index = out.layout.size();
        out.layout.push_back(ms.layout[k]);
    }
    return out;
}

std::optional<Multiscales> without_pyramid_of(const Multiscales& ms, size_t i) {
    Multiscales out;
    out.resampling_method = ms.resampling_method;
    const size_t root = root_of(ms, i);
    for (size_t k = 0; k < ms.layout.size(); ++k)
        if (root_of(ms, k) != root) out.layout.push_back(ms.layout[k]);
    if (out.layout.empty()) return std::nullopt;
    return out;
}

namespace {

// `a` is `b`, or one lies inside the other ("x" and "x/y").
bool overlaps(const std::string& a, const std::string& b) {
    const auto inside = [](const std::string& in, const std::string& of) {
        return of.empty() ||
               (in.size() > of.size() && in.compare(0, of.size(), of) == 0 && in[of.size()] == '/');
    };
    return a == b || inside(a, b) || inside(b, a);
}

} // namespace

std::vector<std::string> clean_set(const Multiscales& ms, size_t base,
                                   const std::vector<std::string>& array_paths,
                                   const std::vector<std::string>& accepted) {
    std::vector<std::string> out;
    const size_t n = ms.layout.size();
    if (base >= n || array_paths.size() != n || root_of(ms, base) != base) return out;
    for (size_t k = 0; k < n; ++k) {
        if (k == base || root_of(ms, k) != base) continue;
        const std::string& p = array_paths[k];
        if (p.empty() || std::find(accepted.begin(), accepted.end(), p) == accepted.end())
            continue; // the reader did not open it as an overview: not ours
        // Never a base's array, nor one another pyramid also names.
        bool keep = false;
        for (size_t r = 0; r < n && !keep; ++r)
            keep = (r == base || root_of(ms, r) != base) && overlaps(p, array_paths[r]);
        for (const auto& q : out)
            keep = keep || overlaps(p, q);
        if (!keep) out.push_back(p);
    }
    return out;
}

nlohmann::json multiscales_to_json(const Multiscales& ms) {
    nlohmann::json layout = nlohmann::json::array();
    for (const auto& l : ms.layout) {
        nlohmann::json o = {{"asset", l.asset}};
        if (!l.derived_from.empty()) o["derived_from"] = l.derived_from;
        if (!l.scale.empty() || !l.translation.empty()) {
            nlohmann::json t = nlohmann::json::object();
            if (!l.scale.empty()) t["scale"] = l.scale;
            if (!l.translation.empty()) t["translation"] = l.translation;
            o["transform"] = t;
        }
        if (!l.resampling_method.empty()) o["resampling_method"] = l.resampling_method;
        if (!l.spatial_shape.empty()) o["spatial:shape"] = l.spatial_shape;
        if (l.spatial_transform) o["spatial:transform"] = *l.spatial_transform;
        layout.push_back(std::move(o));
    }
    nlohmann::json out = {{"layout", std::move(layout)}};
    if (!ms.resampling_method.empty()) out["resampling_method"] = ms.resampling_method;
    return out;
}

void write_multiscales(nlohmann::json& attributes, const Multiscales& ms) {
    if (!attributes.is_object()) attributes = nlohmann::json::object();
    attributes["multiscales"] = multiscales_to_json(ms);
    auto& conv = attributes["zarr_conventions"];
    if (!conv.is_array()) conv = nlohmann::json::array();
    const auto has = [&](const char* uuid) {
        return std::any_of(conv.begin(), conv.end(), [&](const nlohmann::json& c) {
            return c.is_object() && c.value("uuid", "") == uuid;
        });
    };
    if (!has(kMultiscalesUuid))
        conv.push_back(convention(kMultiscalesUuid, "multiscales", "multiscales",
                                  "Multiscale layout of zarr datasets"));
    if (!has(kSpatialUuid))
        conv.push_back(
            convention(kSpatialUuid, "spatial:", "spatial", "Spatial coordinate information"));
}

} // namespace zarr3
