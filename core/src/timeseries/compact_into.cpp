// compact_array_into: compaction as one transaction (an Icechunk session).
#include "zarr3/compact.hpp"
#include "zarr3/metadata.hpp"

#include "compact_detail.hpp"

#include <algorithm>
#include <limits>

namespace zarr3 {

namespace {

// The groups above `path` ("a/b/t" -> {"a/b", "t"}, {"a", "b/t"}, {"", "a/b/t"}).
std::vector<std::pair<std::string, std::string>> parents_of(const std::string& path) {
    std::vector<std::pair<std::string, std::string>> out;
    for (size_t pos = path.rfind('/'); pos != std::string::npos && pos > 0;
         pos = path.rfind('/', pos - 1))
        out.emplace_back(path.substr(0, pos), path.substr(pos + 1));
    if (!path.empty()) out.emplace_back("", path);
    return out;
}

// Writes every chunk of `nm` but those that keep their key, origin and
// edges (their references stay).
void write_chunks(const Array& from, Array& to, const ArrayMetadata& om, const ArrayMetadata& nm,
                  size_t axis, CompactResult& res) {
    const Shape gs = chunks_in_extent(nm);
    for (auto n : gs)
        if (n == 0) return;
    std::vector<uint64_t> idx(gs.size(), 0);
    Bytes buf;
    while (true) {
        ++res.new_chunks;
        if (compact_detail::same_old_chunk(om, nm, axis, idx) == idx) {
            ++res.kept_chunks;
        } else {
            Selection s;
            s.start = nm.grid.chunk_origin(idx);
            const Shape edge = nm.grid.chunk_shape(idx);
            for (size_t d = 0; d < idx.size(); ++d)
                s.count.push_back(std::min(edge[d], nm.shape[d] - s.start[d]));
            if (nm.dtype.is_variable()) {
                to.write_strings(s, from.read_strings(s));
            } else {
                buf.resize(checked_mul(checked_product(s.count, "chunk size"), nm.dtype.size,
                                       "chunk size"));
                from.read(s, buf.data());
                to.write(s, buf.data());
            }
        }
        size_t d = idx.size();
        while (d > 0 && ++idx[d - 1] == gs[d - 1])
            idx[--d] = 0;
        if (d == 0) break;
    }
}

// Erases the references of `target` under array `m` at `path` past the
// chunks of its grid (what the old grid had there, and stray keys).
void erase_outside(Store& target, const std::string& path, const ArrayMetadata& m) {
    const Shape any(m.rank(), std::numeric_limits<uint64_t>::max());
    auto all = chunk_namespace_keys(target, path, m.key_encoding, any);
    auto inside = chunk_namespace_keys(target, path, m.key_encoding, chunks_in_extent(m));
    std::sort(inside.begin(), inside.end());
    for (const auto& k : all)
        if (!std::binary_search(inside.begin(), inside.end(), k)) target.erase(k);
}

} // namespace

CompactResult compact_array_into(const Array& array, Store& target, size_t axis,
                                 AxisPartition edges) {
    const ArrayMetadata& om = array.metadata();
    ArrayMetadata nm = compacted_metadata(om, axis, std::move(edges), array.describe());
    // The keys need not differ: a transaction switches the node whole.
    nm.key_encoding = om.key_encoding;
    CompactResult res = compact_detail::start_result(om, nm, axis);
    if (res.unchanged) return res;
    res.new_chunks = res.kept_chunks = 0;
    std::shared_ptr<Store> store(&target, [](Store*) {});
    auto neu = Array::open(store, array.path(), nm);
    neu->write_metadata(); // the node stays: the references of kept chunks with it
    write_chunks(array, *neu, om, nm, axis, res);
    neu->flush();
    erase_outside(target, array.path(), nm);
    const nlohmann::json node = to_json(nm);
    for (const auto& [group, member] : parents_of(array.path()))
        update_consolidated_entry(target, group, member, node);
    test_kill_point("compact-chunks");
    return res;
}

} // namespace zarr3
