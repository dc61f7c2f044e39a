// A copy's layout from its source array (copy_layout.hpp): grid cut to the copied range, sharding
// and codecs kept, each part falling back to the creation options' when it no longer applies.
#include "zarr3/copy_layout.hpp"

#include "zarr3/common.hpp"

#include <algorithm>
#include <optional>

namespace zarr3 {

AxisPartition cut_axis(const AxisPartition& axis, uint64_t start, uint64_t end) {
    if (start >= end || end > axis.length())
        throw Error("cannot cut an axis of " + std::to_string(axis.length()) + " elements to [" +
                    std::to_string(start) + ", " + std::to_string(end) + ")");
    if (axis.is_regular()) return AxisPartition::regular(axis.most_common_edge(), end - start);
    AxisPartition out;
    for (const auto& run : axis.runs()) {
        const uint64_t rs = run.start_element, re = rs + run.edge * run.count;
        if (re <= start || rs >= end) continue;
        const uint64_t a = std::max(start, rs), b = std::min(end, re);
        const uint64_t k0 = (a - rs) / run.edge, k1 = (b - 1 - rs) / run.edge;
        const auto piece = [&](uint64_t k) {
            const uint64_t cs = rs + k * run.edge;
            return std::min(b, cs + run.edge) - std::max(a, cs);
        };
        out.append(piece(k0));
        if (k1 > k0 + 1) out.append(run.edge, k1 - k0 - 1);
        if (k1 > k0) out.append(piece(k1));
    }
    out.set_length(end - start);
    return out;
}

ChunkGrid cut_grid(const ChunkGrid& grid, const std::vector<AxisRange>& ranges) {
    if (ranges.size() != grid.rank())
        throw Error("cannot cut a grid of " + std::to_string(grid.rank()) + " axes to " +
                    std::to_string(ranges.size()) + " ranges");
    std::vector<AxisPartition> axes;
    for (size_t i = 0; i < ranges.size(); ++i)
        axes.push_back(cut_axis(grid.axis(i), ranges[i].start, ranges[i].end));
    if (grid.kind() == GridKind::Rectilinear) return ChunkGrid::make_rectilinear(std::move(axes));
    Shape chunk, shape;
    for (const auto& a : axes) {
        chunk.push_back(a.most_common_edge());
        shape.push_back(a.length());
    }
    return ChunkGrid::make_regular(chunk, shape);
}

namespace {

// A codec list split around its sharding_indexed codec (`shard` empty when there is none; `inner`
// the sharded chunks' codecs, or the whole list).
struct SplitCodecs {
    nlohmann::json before = nlohmann::json::array(); // array->array codecs before sharding
    std::optional<nlohmann::json> shard;             // sharding_indexed's configuration
    nlohmann::json after = nlohmann::json::array();  // bytes->bytes codecs on the shard
    nlohmann::json inner = nlohmann::json::array();
};

SplitCodecs Split(const nlohmann::json& codecs) {
    SplitCodecs s;
    for (const auto& c : codecs) {
        if (c.value("name", "") == "sharding_indexed" && !s.shard) {
            s.shard = c.at("configuration");
            s.inner = s.shard->at("codecs");
        } else {
            (s.shard ? s.after : s.before).push_back(c);
        }
    }
    if (!s.shard) {
        s.inner = codecs;
        s.before = nlohmann::json::array();
    }
    return s;
}

nlohmann::json Join(const SplitCodecs& layout, const nlohmann::json& inner) {
    if (!layout.shard) return inner;
    nlohmann::json shard = *layout.shard;
    shard["codecs"] = inner;
    nlohmann::json out = layout.before;
    out.push_back({{"name", "sharding_indexed"}, {"configuration", shard}});
    for (const auto& c : layout.after)
        out.push_back(c);
    return out;
}

std::optional<ArrayMetadata> TryParse(const nlohmann::json& j) {
    try {
        return parse_array_metadata(j, "copy");
    } catch (const Error&) {
        return std::nullopt;
    }
}

} // namespace

ArrayMetadata copy_layout(const ArrayMetadata& src, const std::vector<AxisRange>& ranges,
                          const ArrayMetadata& base, CopyOverrides overrides) {
    if (src.rank() != base.rank() || ranges.size() != src.rank()) return base;
    for (size_t i = 0; i < ranges.size(); ++i)
        if (ranges[i].end < ranges[i].start || ranges[i].end - ranges[i].start != base.shape[i])
            return base;
    std::optional<ChunkGrid> grid;
    if (!overrides.grid) try {
            grid = cut_grid(src.grid, ranges);
        } catch (const Error&) {
        }
    const SplitCodecs from_src = Split(src.codecs_json), from_base = Split(base.codecs_json);
    // The most of the source that still applies: its grid, sharding and codecs, then fewer.
    for (int drop = 0; drop < 4; ++drop) {
        const bool keep_codecs = !overrides.codecs && !(drop & 1);
        const bool keep_shard = !overrides.sharding && !(drop & 2);
        nlohmann::json j = to_json(base);
        if (grid) j["chunk_grid"] = grid->to_json();
        SplitCodecs layout = from_base;
        if (keep_shard) layout = from_src;
        j["codecs"] = Join(layout, keep_codecs ? from_src.inner : from_base.inner);
        if (auto m = TryParse(j)) return *m;
    }
    return base;
}

ArrayMetadata region_metadata(const ArrayMetadata& m, const std::vector<AxisRange>& ranges) {
    nlohmann::json j = to_json(m);
    const ChunkGrid grid = cut_grid(m.grid, ranges);
    Shape shape;
    for (const auto& r : ranges)
        shape.push_back(r.end - r.start);
    j["shape"] = shape;
    j["chunk_grid"] = grid.to_json();
    if (auto out = TryParse(j)) return *out;
    j["codecs"] = Split(m.codecs_json).inner;
    return parse_array_metadata(j, "copy");
}

} // namespace zarr3
