// libFuzzer target: zarr.json text -> parse, classify, validate, serialise and
// parse again. zarr3::Error is the expected outcome for bad input; any other
// exception, crash or round-trip mismatch is a finding.
#include "fuzz_util.hpp"

#include "zarr3/metadata.hpp"

#include <cstdio>

using namespace zarr3;

namespace {

const std::string kWhere = "fuzz/zarr.json";

void check_array(const nlohmann::json& j) {
    ArrayMetadata m = parse_array_metadata(j, kWhere);
    FUZZ_CHECK(m.grid.rank() == m.rank());
    FUZZ_CHECK(m.fill_value.size() == m.dtype.size);
    const Shape gs = m.grid.grid_shape();
    bool any_chunk = true;
    for (size_t i = 0; i < gs.size(); ++i) {
        FUZZ_CHECK(m.grid.axis(i).extent() >= m.shape[i]);
        any_chunk = any_chunk && gs[i] > 0;
    }
    if (any_chunk) { // the first and last chunk specs exist (their size may be refused)
        std::vector<uint64_t> first(gs.size(), 0), last(gs.size(), 0);
        for (size_t i = 0; i < gs.size(); ++i)
            last[i] = gs[i] - 1;
        try {
            (void)m.chunk_spec(first).num_bytes();
            (void)m.chunk_spec(last).num_bytes();
        } catch (const Error&) {
        }
    }
    // What we write must parse back to the same thing.
    const nlohmann::json out = to_json(m);
    ArrayMetadata m2;
    try {
        m2 = parse_array_metadata(out, kWhere);
    } catch (const Error& e) {
        fprintf(stderr, "re-parse of serialised metadata failed: %s\n%s\n", e.what(),
                out.dump().c_str());
        __builtin_trap();
    }
    FUZZ_CHECK(m2.shape == m.shape);
    FUZZ_CHECK(m2.dtype == m.dtype);
    FUZZ_CHECK(m2.fill_value == m.fill_value || m.dtype.name.find("float") != std::string::npos ||
               m.dtype.name.find("complex") != std::string::npos);
    FUZZ_CHECK(m2.grid.grid_shape() == m.grid.grid_shape());
    FUZZ_CHECK(to_json(m2) == out);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        const nlohmann::json j = parse_json_text(text, kWhere);
        if (node_type_of(j, kWhere) == NodeType::Array) {
            check_array(j);
        } else {
            GroupMetadata g = parse_group_metadata(j, kWhere);
            const nlohmann::json out = to_json(g);
            try {
                GroupMetadata g2 = parse_group_metadata(out, kWhere);
                FUZZ_CHECK(to_json(g2) == out);
            } catch (const Error& e) {
                fprintf(stderr, "re-parse of serialised group failed: %s\n", e.what());
                __builtin_trap();
            }
        }
    } catch (const Error&) {
    }
    return 0;
}
