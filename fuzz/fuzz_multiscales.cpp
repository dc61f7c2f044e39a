// libFuzzer target: a group's attributes (JSON text) -> parse_multiscales,
// then every pyramid of the layout (root_of, pyramid_of, without_pyramid_of,
// overview_order) and the -clean decision (clean_set) with a fuzzed set of
// levels "the reader accepted". zarr3::Error is the expected outcome for bad
// input; a crash, another exception, a clean set holding a base, another
// pyramid's array or an array the reader did not accept, or a written layout
// that does not parse back the same is a finding.
#include "fuzz_util.hpp"

#include "zarr3/metadata.hpp"
#include "zarr3/multiscales.hpp"

#include <algorithm>
#include <cstdio>

using namespace zarr3;

namespace {

const std::string kWhere = "fuzz/zarr.json";

bool at_or_under(const std::string& p, const std::string& node) {
    return p == node || (p.size() > node.size() && p.compare(0, node.size(), node) == 0 &&
                         p[node.size()] == '/');
}

void check_pyramids(const Multiscales& ms, fuzzutil::Rng& rng) {
    const size_t n = ms.layout.size();
    std::vector<std::string> paths, accepted;
    for (size_t k = 0; k < n; ++k) {
        paths.push_back("g/" + ms.layout[k].asset);
        if (rng.below(4) != 0) accepted.push_back(paths.back());
    }
    size_t covered = 0;
    for (size_t i = 0; i < n; ++i) {
        const size_t r = root_of(ms, i);
        FUZZ_CHECK(r < n && ms.layout[r].derived_from.empty());
        size_t at = n;
        const Multiscales p = pyramid_of(ms, i, &at);
        FUZZ_CHECK(at < p.layout.size() && p.layout[at].asset == ms.layout[i].asset);
        FUZZ_CHECK(p.layout[base_level(p)].asset == ms.layout[r].asset);
        FUZZ_CHECK(overview_order(p).size() + 1 == p.layout.size());
        const auto rest = without_pyramid_of(ms, i);
        FUZZ_CHECK((rest ? rest->layout.size() : 0) + p.layout.size() == n);
        if (r != i) continue;
        covered += p.layout.size();
        for (const auto& doomed : clean_set(ms, i, paths, accepted)) {
            FUZZ_CHECK(std::find(accepted.begin(), accepted.end(), doomed) != accepted.end());
            size_t k = 0;
            while (k < n && paths[k] != doomed)
                ++k;
            FUZZ_CHECK(k < n && k != i && root_of(ms, k) == i);
            for (size_t b = 0; b < n; ++b)
                if (root_of(ms, b) == b || root_of(ms, b) != i)
                    FUZZ_CHECK(!at_or_under(doomed, paths[b]) && !at_or_under(paths[b], doomed));
        }
        // A level (not a base) never cleans anything.
        for (size_t k = 0; k < n; ++k)
            if (root_of(ms, k) != k) FUZZ_CHECK(clean_set(ms, k, paths, accepted).empty());
    }
    FUZZ_CHECK(covered == n); // every level belongs to exactly one pyramid
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    fuzzutil::Rng rng(fuzzutil::hash_bytes(data, size));
    try {
        const nlohmann::json attrs = parse_json_text(text, kWhere);
        const auto ms = parse_multiscales(attrs, kWhere);
        if (!ms) return 0;
        check_pyramids(*ms, rng);
        // What we write must parse back to the same thing.
        nlohmann::json out = nlohmann::json::object();
        write_multiscales(out, *ms);
        std::optional<Multiscales> back;
        try {
            back = parse_multiscales(out, kWhere);
        } catch (const Error& e) {
            fprintf(stderr, "re-parse of the written layout failed: %s\n", e.what());
            __builtin_trap();
        }
        FUZZ_CHECK(back && multiscales_to_json(*back) == multiscales_to_json(*ms));
    } catch (const Error&) {
    }
    return 0;
}
