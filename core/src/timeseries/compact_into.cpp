// compact_array_into: compaction as one transaction (an Icechunk session).
#include "zarr3/compact.hpp"
#include "zarr3/metadata.hpp"

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

void write_chunks(const Array& from, Array& to, const ArrayMetadata& nm, CompactResult& res) {
    const Shape gs = chunks_in_extent(nm);
    for (auto n : gs)
        if (n == 0) return;
    std::vector<uint64_t> idx(gs.size(), 0);
    Bytes buf;
    while (true) {
        Selection s;
        s.start = nm.grid.chunk_origin(idx);
        const Shape edge = nm.grid.chunk_shape(idx);
        for (size_t d = 0; d < idx.size(); ++d)
            s.count.push_back(std::min(edge[d], nm.shape[d] - s.start[d]));
        if (nm.dtype.is_variable()) {
            to.write_strings(s, from.read_strings(s));
        } else {
            buf.resize(
                checked_mul(checked_product(s.count, "chunk size"), nm.dtype.size, "chunk size"));
            from.read(s, buf.data());
            to.write(s, buf.data());
        }
        ++res.new_chunks;
        size_t d = idx.size();
        while (d > 0 && ++idx[d - 1] == gs[d - 1])
            idx[--d] = 0;
        if (d == 0) break;
    }
}

} // namespace

CompactResult compact_array_into(const Array& array, Store& target, size_t axis,
                                 AxisPartition edges) {
    const ArrayMetadata& om = array.metadata();
    ArrayMetadata nm = compacted_metadata(om, axis, std::move(edges), array.describe());
    // The keys need not differ: a transaction replaces the node whole.
    nm.key_encoding = om.key_encoding;
    CompactResult res;
    res.old_axis = om.grid.axis(axis).to_json();
    res.new_axis = nm.grid.axis(axis).to_json();
    const Shape old_counts = chunks_in_extent(om);
    res.old_chunks = old_counts.empty() ? 0 : checked_product(old_counts, "chunk count");
    std::shared_ptr<Store> store(&target, [](Store*) {});
    const std::string meta_key = join_key(array.path(), "zarr.json");
    target.erase(meta_key); // every reference to an old chunk goes with the node
    auto neu = Array::open(store, array.path(), nm);
    neu->write_metadata();
    write_chunks(array, *neu, nm, res);
    neu->flush();
    const nlohmann::json node = to_json(nm);
    for (const auto& [group, member] : parents_of(array.path()))
        update_consolidated_entry(target, group, member, node);
    test_kill_point("compact-chunks");
    return res;
}

} // namespace zarr3
