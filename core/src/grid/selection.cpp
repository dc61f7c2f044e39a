#include "grid/selection.hpp"

namespace zarr3 {

PlannedSelection plan_selection(const Selection& sel, const Shape& shape,
                                const std::vector<int64_t>& strides, size_t elem,
                                const std::string& where) {
    const size_t rank = shape.size();
    if (sel.start.size() != rank || sel.count.size() != rank ||
        (!sel.step.empty() && sel.step.size() != rank) ||
        (!strides.empty() && strides.size() != rank))
        throw Error(where + ": selection rank does not match the array rank " +
                    std::to_string(rank));
    PlannedSelection ps;
    ps.start.resize(rank);
    ps.count = sel.count;
    ps.step.resize(rank);
    ps.strides = strides.empty() ? c_strides(sel.count, elem) : strides;
    for (size_t d = 0; d < rank; ++d) {
        const int64_t st = sel.step.empty() ? 1 : sel.step[d];
        if (st == 0) throw Error(where + ": selection step 0 on axis " + std::to_string(d));
        const uint64_t ast = static_cast<uint64_t>(st < 0 ? -st : st);
        const uint64_t n = sel.count[d];
        if (n == 0) {
            ps.empty = true;
            ps.step[d] = ast;
            continue;
        }
        if (sel.start[d] >= shape[d])
            throw Error(where + ": selection starts past the end of axis " + std::to_string(d));
        const uint64_t span = checked_mul(n - 1, ast, "selection span");
        uint64_t lo;
        if (st > 0) {
            if (span > shape[d] - 1 - sel.start[d])
                throw Error(where + ": selection runs past the end of axis " + std::to_string(d));
            lo = sel.start[d];
        } else {
            if (span > sel.start[d])
                throw Error(where + ": reversed selection runs before the start of axis " +
                            std::to_string(d));
            lo = sel.start[d] - span;
            ps.base_offset += static_cast<int64_t>(n - 1) * ps.strides[d];
            ps.strides[d] = -ps.strides[d];
        }
        ps.start[d] = lo;
        ps.step[d] = ast;
    }
    return ps;
}

std::vector<ChunkTask> plan_chunk_tasks(const ChunkGrid& grid, const PlannedSelection& ps) {
    std::vector<ChunkTask> tasks;
    if (ps.empty) return tasks;
    const size_t rank = ps.start.size();
    if (rank == 0) {
        tasks.push_back({{}, Region{}, ps.base_offset});
        return tasks;
    }
    std::vector<std::vector<AxisPiece>> pieces(rank);
    uint64_t total = 1;
    for (size_t d = 0; d < rank; ++d) {
        pieces[d] = axis_pieces(grid.axis(d), ps.start[d], ps.count[d], ps.step[d]);
        total = checked_mul(total, pieces[d].size(), "number of chunks in the request");
    }
    tasks.reserve(total);
    std::vector<size_t> it(rank, 0);
    while (true) {
        ChunkTask t;
        t.idx.resize(rank);
        t.region.start.resize(rank);
        t.region.count.resize(rank);
        t.region.step = ps.step;
        t.view_offset = ps.base_offset;
        for (size_t d = 0; d < rank; ++d) {
            const AxisPiece& p = pieces[d][it[d]];
            t.idx[d] = p.chunk;
            t.region.start[d] = p.in_chunk;
            t.region.count[d] = p.count;
            t.view_offset += static_cast<int64_t>(p.k0) * ps.strides[d];
        }
        tasks.push_back(std::move(t));
        size_t d = rank;
        while (d > 0) {
            --d;
            if (++it[d] < pieces[d].size()) break;
            it[d] = 0;
            if (d == 0) return tasks;
        }
    }
}

} // namespace zarr3
