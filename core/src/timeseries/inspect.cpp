// describe_array: the grid summary printed by `zarr3 info` (compact.hpp).
#include "zarr3/compact.hpp"

#include <sstream>

namespace zarr3 {

namespace {

std::string join_shape(const Shape& s) {
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i)
        out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
}

std::string join_names(const std::vector<std::string>& v) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i)
        out += (i ? ", " : "") + v[i];
    return out;
}

} // namespace

std::string describe_array(const Array& array) {
    const ArrayMetadata& m = array.metadata();
    std::ostringstream o;
    o << "array       " << array.describe() << "\n";
    o << "shape       " << join_shape(m.shape) << "\n";
    o << "data_type   " << m.dtype.name << "\n";
    if (!m.dimension_names.empty()) {
        std::vector<std::string> names;
        for (const auto& n : m.dimension_names)
            names.push_back(n ? *n : "null");
        o << "dimensions  " << join_names(names) << "\n";
    }
    o << "chunk_grid  " << (m.grid.kind() == GridKind::Regular ? "regular" : "rectilinear") << " "
      << m.grid.to_json()["configuration"].dump() << "\n";
    o << "chunks      " << join_shape(m.grid.grid_shape()) << " per axis\n";
    for (size_t d = 0; d < m.rank(); ++d)
        o << "  axis " << d << "     " << m.grid.axis(d).to_json().dump() << " ("
          << m.grid.axis(d).num_chunks() << " chunks, " << m.grid.axis(d).runs().size()
          << " runs)\n";
    o << "chunk_keys  " << m.key_encoding.to_json().dump() << "\n";
    o << "codecs      " << join_names(m.codec_names()) << "\n";
    if (const auto sl = m.shard_layout()) {
        o << "shards      inner chunks " << join_shape(sl->inner_chunk_shape) << ", index at "
          << (sl->index_at_end ? "end" : "start") << "\n";
        o << "  inner     " << join_names(sl->inner_codec_names) << "\n";
        o << "  index     " << join_names(sl->index_codec_names) << "\n";
    }
    o << "fill_value  "
      << (m.fill_value_null ? std::string("null")
                            : fill_value_to_json(m.fill_value, m.dtype).dump())
      << "\n";
    return o.str();
}

} // namespace zarr3
