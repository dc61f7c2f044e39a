// libFuzzer target: chunk_grid JSON (regular / rectilinear / rectangular)
// parsed against a shape derived from the input, then lookups checked for
// consistency: chunk_index, chunk_start and chunk_edge must agree everywhere.
//
// Input: [mode u8][delta u8][seed u8] JSON text. The shape of axis i is the
// sum of the edges the JSON lists for it, adjusted by the mode (exact,
// shorter, longer), so most inputs reach the lookups.
#include "fuzz_util.hpp"

#include "zarr3/chunk_grid.hpp"

#include <cstdio>

using namespace zarr3;
using fuzzutil::Rng;
using nlohmann::json;

namespace {

uint64_t sat_add(uint64_t a, uint64_t b) {
    return a + b < a ? ~0ull : a + b;
}
uint64_t sat_mul(uint64_t a, uint64_t b) {
    return b && a > ~0ull / b ? ~0ull : a * b;
}
uint64_t as_u64(const json& v) {
    if (v.is_number_unsigned()) return v.get<uint64_t>();
    if (v.is_number_integer()) return uint64_t(v.get<int64_t>());
    return 1;
}

// Sum of the edges listed for one axis (saturating; lenient about types).
uint64_t listed_sum(const json& axis, uint64_t delta) {
    if (!axis.is_array()) return as_u64(axis) * (delta % 5); // bare edge: a few chunks
    uint64_t s = 0;
    for (const auto& e : axis) {
        if (e.is_array() && e.size() == 2)
            s = sat_add(s, sat_mul(as_u64(e[0]), as_u64(e[1])));
        else
            s = sat_add(s, as_u64(e));
    }
    return s;
}

void check_axis(const AxisPartition& a, Rng& rng) {
    const uint64_t n = a.num_chunks();
    FUZZ_CHECK(a.extent() >= a.length());
    FUZZ_CHECK((n == 0) == (a.extent() == 0));
    // Runs tile [0, extent) and [0, num_chunks) without gaps.
    uint64_t elem = 0, chunk = 0;
    for (const auto& r : a.runs()) {
        FUZZ_CHECK(r.edge >= 1 && r.count >= 1);
        FUZZ_CHECK(r.start_element == elem && r.start_chunk == chunk);
        elem += r.edge * r.count;
        chunk += r.count;
    }
    FUZZ_CHECK(elem == a.extent() && chunk == n);
    if (n == 0) return;
    for (int k = 0; k < 64; ++k) {
        // Random element (biased towards run boundaries) -> chunk.
        uint64_t e;
        const auto& runs = a.runs();
        const auto& r = runs[rng.below(runs.size())];
        switch (rng.below(4)) {
        case 0:
            e = r.start_element;
            break;
        case 1:
            e = r.start_element + r.edge * r.count - 1;
            break;
        case 2:
            e = r.start_element + rng.below(r.edge * r.count);
            break;
        default:
            e = rng.below(a.extent());
            break;
        }
        const uint64_t c = a.chunk_index(e);
        FUZZ_CHECK(c < n);
        const uint64_t s = a.chunk_start(c), w = a.chunk_edge(c);
        FUZZ_CHECK(w >= 1);
        FUZZ_CHECK(s <= e && e - s < w);
        if (c + 1 < n)
            FUZZ_CHECK(a.chunk_start(c + 1) == s + w);
        else
            FUZZ_CHECK(s + w == a.extent());
        // Random chunk -> first and last element map back to it.
        const uint64_t c2 = rng.below(n);
        const uint64_t s2 = a.chunk_start(c2), w2 = a.chunk_edge(c2);
        FUZZ_CHECK(a.chunk_index(s2) == c2);
        FUZZ_CHECK(a.chunk_index(s2 + w2 - 1) == c2);
    }
    bool threw = false;
    try {
        (void)a.chunk_index(a.extent());
    } catch (const Error&) {
        threw = true;
    }
    FUZZ_CHECK(threw);
    threw = false;
    try {
        (void)a.chunk_start(n);
    } catch (const Error&) {
        threw = true;
    }
    FUZZ_CHECK(threw);
}

void check_grid(const ChunkGrid& g, const Shape& shape, Rng& rng) {
    FUZZ_CHECK(g.rank() == shape.size());
    for (size_t i = 0; i < g.rank(); ++i) {
        FUZZ_CHECK(g.axis(i).length() == shape[i]);
        check_axis(g.axis(i), rng);
    }
    const Shape gs = g.grid_shape();
    for (uint64_t v : gs)
        if (v == 0) return;
    std::vector<uint64_t> idx(gs.size());
    for (size_t i = 0; i < gs.size(); ++i)
        idx[i] = rng.below(gs[i]);
    const Shape cs = g.chunk_shape(idx), co = g.chunk_origin(idx);
    for (size_t i = 0; i < gs.size(); ++i) {
        FUZZ_CHECK(cs[i] == g.axis(i).chunk_edge(idx[i]));
        FUZZ_CHECK(co[i] == g.axis(i).chunk_start(idx[i]));
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzzutil::Reader in(data, size);
    const uint8_t mode = in.u8(), delta = in.u8(), seed = in.u8();
    const std::string_view text = in.rest();
    json j = json::parse(text.begin(), text.end(), nullptr, false);
    if (j.is_discarded()) return 0;
    // A bare list is taken as the rectilinear chunk_shapes.
    if (j.is_array())
        j = json{{"name", "rectilinear"},
                 {"configuration", {{"kind", "inline"}, {"chunk_shapes", j}}}};
    // Derive the shape from what the grid lists.
    Shape shape;
    const json* axes = nullptr;
    if (j.is_object() && j.contains("configuration") && j["configuration"].is_object()) {
        const json& c = j["configuration"];
        for (const char* m : {"chunk_shapes", "chunk_shape"})
            if (c.contains(m) && c[m].is_array()) axes = &c[m];
    }
    if (axes) {
        const bool regular = j.value("name", json()).is_string() && j["name"] == "regular";
        for (size_t i = 0; i < axes->size(); ++i) {
            uint64_t len =
                regular ? as_u64((*axes)[i]) * (delta % 7) : listed_sum((*axes)[i], delta);
            switch (mode % 4) {
            case 1:
                len = len >= delta ? len - delta : 0;
                break; // shorter (overhang)
            case 2:
                len = sat_add(len, delta);
                break; // longer (refused for explicit)
            case 3:
                len = (uint64_t(delta) << (mode >> 2)) ^ len;
                break;
            default:
                break;
            }
            shape.push_back(len);
        }
    }
    if (mode & 0x80 && !shape.empty()) shape.pop_back(); // rank mismatch
    Rng rng(fuzzutil::hash_bytes(data, size) ^ seed);
    try {
        ChunkGrid g = ChunkGrid::parse(j, shape, "fuzz/zarr.json");
        check_grid(g, shape, rng);
        // Serialised form parses back to the same partition.
        ChunkGrid g2 = ChunkGrid::parse(g.to_json(), shape, "fuzz/roundtrip");
        // An axis of length 0 is written as one listed chunk (zarr-python refuses an empty list,
        // Icechunk a bare edge): it may come back with that one chunk, still of length 0.
        FUZZ_CHECK(g2.rank() == g.rank());
        for (size_t i = 0; i < g.rank(); ++i) {
            FUZZ_CHECK(g2.axis(i).length() == g.axis(i).length());
            if (g.axis(i).length() == 0 && g.axis(i).num_chunks() == 0) {
                FUZZ_CHECK(g2.axis(i).num_chunks() <= 1);
                continue;
            }
            FUZZ_CHECK(g2.axis(i).num_chunks() == g.axis(i).num_chunks());
            FUZZ_CHECK(g2.axis(i).extent() == g.axis(i).extent());
        }
        // Resize (grow and shrink) and append keep the axes consistent.
        if (g.rank() > 0) {
            Shape s2 = shape;
            const size_t ax = rng.below(s2.size());
            s2[ax] = (rng.next() & 1) ? sat_add(s2[ax], delta + 1) : s2[ax] / 2;
            try {
                g.resize(s2);
                check_grid(g, s2, rng);
                g.axis(ax).append(1 + delta % 13, 1 + mode % 5);
                check_axis(g.axis(ax), rng);
            } catch (const Error&) {
            }
        }
    } catch (const Error&) {
    }
    return 0;
}
