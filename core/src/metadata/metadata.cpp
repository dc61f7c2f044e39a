// zarr.json for arrays and groups: parse, validate, serialise.
#include "zarr3/metadata.hpp"

#include "metadata/json_int.hpp"
#include "metadata/json_text.hpp"
#include "metadata/metadata_detail.hpp"
#include "zarr3/sharding.hpp"

#include <algorithm>
#include <numeric>

namespace zarr3 {
void detail::fail_member(const std::string& where, const std::string& member,
                         const std::string& msg) {
    throw FormatError(where + ": " + member + ": " + msg);
}

namespace {

using nlohmann::json;

constexpr size_t kMaxRank = 32;

using detail::dump_short;
using detail::json_uint;

using detail::fail_member;

const json& require(const json& j, const char* member, const std::string& where) {
    const auto it = j.find(member);
    if (it == j.end()) fail_member(where, member, "missing (required member)");
    return *it;
}

bool is_optional_extension(const json& v) {
    if (!v.is_object()) return false;
    const auto it = v.find("must_understand");
    return it != v.end() && it->is_boolean() && !it->get<bool>();
}

void check_unknown_member(const std::string& key, const json& value, json& extra,
                          const std::string& where) {
    if (!is_optional_extension(value))
        fail_member(
            where, key,
            "unknown member (refused: only members carrying \"must_understand\": false may be "
            "ignored)");
    extra[key] = value;
}

Shape parse_shape(const json& j, const std::string& where) {
    if (!j.is_array())
        fail_member(where, "shape",
                    "expected a list of non-negative integers, got " + dump_short(j));
    if (j.size() > kMaxRank)
        fail_member(where, "shape",
                    "rank " + std::to_string(j.size()) + " exceeds the limit of " +
                        std::to_string(kMaxRank));
    Shape s;
    for (size_t i = 0; i < j.size(); ++i) {
        const auto v = json_uint(j[i]);
        if (!v)
            fail_member(where, "shape[" + std::to_string(i) + "]",
                        "expected a non-negative integer, got " + dump_short(j[i]));
        s.push_back(*v);
    }
    return s;
}

} // namespace

json parse_json_text(std::string_view text, const std::string& where) {
    return detail::parse_json(text, where, nullptr);
}

NodeType node_type_of(const json& j, const std::string& where) {
    if (!j.is_object()) throw FormatError(where + ": expected a JSON object, got " + dump_short(j));
    const auto zf = j.find("zarr_format");
    if (zf == j.end()) fail_member(where, "zarr_format", "missing (expected 3)");
    if (zf->is_string())
        fail_member(
            where, "zarr_format",
            "got " + dump_short(*zf) +
                ": this is the pre-final Zarr v3 draft, which is not supported (expected 3)");
    if (!zf->is_number_integer() || *zf != 3) {
        if (zf->is_number_integer() && *zf == 2)
            fail_member(where, "zarr_format",
                        "got 2: this is Zarr v2 metadata, not v3 (expected 3)");
        fail_member(where, "zarr_format", "expected 3, got " + dump_short(*zf));
    }
    const auto nt = j.find("node_type");
    if (nt == j.end()) fail_member(where, "node_type", "missing (expected \"array\" or \"group\")");
    if (*nt == "array") return NodeType::Array;
    if (*nt == "group") return NodeType::Group;
    fail_member(where, "node_type", "expected \"array\" or \"group\", got " + dump_short(*nt));
}

ChunkSpec ArrayMetadata::chunk_spec(const std::vector<uint64_t>& idx) const {
    return chunk_spec_for_shape(grid.chunk_shape(idx));
}

ChunkSpec ArrayMetadata::chunk_spec_for_shape(const Shape& s) const {
    return ChunkSpec{s, dtype, fill_value};
}

namespace {

std::vector<std::string> names_of(const CodecChain& chain) {
    std::vector<std::string> names;
    for (const auto& c : chain.array_to_array())
        names.push_back(c->name());
    names.push_back(chain.array_to_bytes().name());
    for (const auto& c : chain.bytes_to_bytes())
        names.push_back(c->name());
    return names;
}

// Array axis behind each axis the array->bytes codec sees: a probe shape of
// distinct edges (1, 2, ...) goes through the array->array codecs, and the
// edge found at position k names the array axis there. Identity when the
// codecs do not permute axes (none of the known ones does anything else).
std::vector<size_t> array_axis_of_encoded_axis(const CodecChain& chain, const DataType& dtype,
                                               const Bytes& fill, size_t rank) {
    std::vector<size_t> identity(rank);
    std::iota(identity.begin(), identity.end(), size_t{0});
    if (chain.array_to_array().empty()) return identity;
    ChunkSpec probe{Shape(rank), dtype, fill};
    for (size_t i = 0; i < rank; ++i)
        probe.shape[i] = i + 1;
    try {
        for (const auto& c : chain.array_to_array())
            probe = c->encoded_spec(probe);
    } catch (const Error&) {
        return identity;
    }
    if (probe.shape.size() != rank) return identity;
    std::vector<size_t> axis(rank);
    std::vector<bool> seen(rank, false);
    for (size_t k = 0; k < rank; ++k) {
        const uint64_t e = probe.shape[k];
        if (e < 1 || e > rank || seen[e - 1]) return identity;
        seen[e - 1] = true;
        axis[k] = static_cast<size_t>(e - 1);
    }
    return axis;
}

} // namespace

std::vector<std::string> ArrayMetadata::codec_names() const {
    return names_of(codecs);
}

std::optional<ShardLayout> ArrayMetadata::shard_layout() const {
    const auto* sharding = dynamic_cast<const ShardingCodec*>(&codecs.array_to_bytes());
    if (!sharding) return std::nullopt;
    ShardLayout layout;
    const Shape& inner = sharding->inner_chunk_shape();
    const auto axis = array_axis_of_encoded_axis(codecs, dtype, fill_value, inner.size());
    layout.inner_chunk_shape.assign(inner.size(), 0);
    for (size_t k = 0; k < inner.size(); ++k)
        layout.inner_chunk_shape[axis[k]] = inner[k];
    layout.index_at_end = sharding->index_location() == ShardingCodec::IndexLocation::End;
    layout.inner_codec_names = names_of(sharding->inner_codecs());
    // The index codecs have no accessor: their names come from the codec's
    // own serialisation (normalised by the parsed codecs, not as written).
    const json cfg = sharding->to_json().value("configuration", json::object());
    for (const auto& c : cfg.value("index_codecs", json::array()))
        if (c.is_object() && c.contains("name") && c["name"].is_string())
            layout.index_codec_names.push_back(c["name"].get<std::string>());
    layout.inner_chunk_shape_json = json(inner);
    return layout;
}

Shape ArrayMetadata::read_block_shape() const {
    if (const auto layout = shard_layout()) {
        Shape s = layout->inner_chunk_shape;
        for (auto& e : s)
            e = std::max<uint64_t>(1, e);
        return s;
    }
    Shape s(rank(), 1);
    for (size_t i = 0; i < rank(); ++i) {
        const AxisPartition& a = grid.axis(i);
        if (a.num_chunks() > 0) s[i] = std::max<uint64_t>(1, a.most_common_edge());
    }
    return s;
}

namespace {

void check_array_members(const json& j, ArrayMetadata& m, const std::string& where) {
    static const char* known[] = {
        "zarr_format",        "node_type",  "shape",  "data_type",  "chunk_grid",
        "chunk_key_encoding", "fill_value", "codecs", "attributes", "storage_transformers",
        "dimension_names"};
    for (const auto& item : j.items())
        if (std::find_if(std::begin(known), std::end(known),
                         [&](const char* k) { return item.key() == k; }) == std::end(known))
            check_unknown_member(item.key(), item.value(), m.extra_members, where);
}

void parse_fill(const json& fv, ArrayMetadata& m, const std::string& where) {
    if (fv.is_null()) {
        // Written by GDAL's own Zarr driver (3.8 and later) for arrays
        // without nodata: missing chunks read as zero, no nodata value.
        m.fill_value.assign(m.dtype.size, 0);
        m.fill_value_null = true;
    } else {
        m.fill_value = parse_fill_value(fv, m.dtype, where);
    }
}

std::vector<std::optional<std::string>> parse_dimension_names(const json& names, size_t rank,
                                                              const std::string& where) {
    if (!names.is_array())
        fail_member(where, "dimension_names", "expected a list, got " + dump_short(names));
    if (names.size() != rank)
        fail_member(where, "dimension_names",
                    "has " + std::to_string(names.size()) + " entries, expected one per axis (" +
                        std::to_string(rank) + ")");
    std::vector<std::optional<std::string>> out;
    for (size_t i = 0; i < names.size(); ++i) {
        const json& n = names[i];
        if (n.is_null())
            out.emplace_back(std::nullopt);
        else if (n.is_string())
            out.emplace_back(n.get<std::string>());
        else
            fail_member(where, "dimension_names[" + std::to_string(i) + "]",
                        "expected a string or null, got " + dump_short(n));
    }
    return out;
}

// attributes, storage_transformers (refused unless empty), dimension_names.
void parse_optional_members(const json& j, ArrayMetadata& m, const std::string& where) {
    if (const auto it = j.find("attributes"); it != j.end()) {
        if (!it->is_object())
            fail_member(where, "attributes", "expected an object, got " + dump_short(*it));
        m.attributes = *it;
    }
    if (const auto it = j.find("storage_transformers"); it != j.end()) {
        if (!it->is_array() || !it->empty())
            fail_member(where, "storage_transformers",
                        "storage transformers are not supported (expected absent or []), got " +
                            dump_short(*it));
    }
    if (const auto it = j.find("dimension_names"); it != j.end() && !it->is_null())
        m.dimension_names = parse_dimension_names(*it, m.rank(), where);
}

ArrayMetadata parse_array(const json& j, const std::string& where, detail::EdgeLists* edges) {
    if (node_type_of(j, where) != NodeType::Array)
        fail_member(where, "node_type", "expected \"array\", got \"group\"");
    ArrayMetadata m;
    check_array_members(j, m, where);
    m.shape = parse_shape(require(j, "shape", where), where);
    m.dtype = parse_data_type(require(j, "data_type", where), where);
    m.grid = detail::parse_chunk_grid(require(j, "chunk_grid", where), m.shape, where, edges);
    m.key_encoding = ChunkKeyEncoding::parse(require(j, "chunk_key_encoding", where), where);
    parse_fill(require(j, "fill_value", where), m, where);
    parse_optional_members(j, m, where);
    detail::check_largest_chunk(m, where);

    // GDAL 3.8-3.10 write uncompressed v3 arrays without a "codecs" member:
    // read those as little-endian bytes, with a warning (an empty list is
    // still refused).
    static const json kLittleEndianBytes =
        json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}});
    const bool no_codecs = !j.contains("codecs");
    if (no_codecs)
        m.warnings.push_back(where + ": no codecs member (as GDAL 3.8-3.10 write); reading as "
                                     "little-endian bytes");
    detail::set_codecs(m, no_codecs ? kLittleEndianBytes : j["codecs"], where);
    return m;
}

} // namespace

void detail::check_largest_chunk(const ArrayMetadata& m, const std::string& where) {
    Shape max_chunk;
    for (size_t i = 0; i < m.rank(); ++i)
        max_chunk.push_back(m.grid.axis(i).max_edge());
    try {
        const uint64_t bytes = checked_mul(checked_product(max_chunk, "largest chunk size"),
                                           m.dtype.size, "largest chunk size");
        if (bytes > kMaxChunkBytes)
            fail_member(where, "chunk_grid",
                        "the largest chunk holds " + std::to_string(bytes) + " bytes of " +
                            m.dtype.name + ", above the limit of " +
                            std::to_string(kMaxChunkBytes));
    } catch (const FormatError&) {
        throw;
    } catch (const Error& e) {
        fail_member(where, "chunk_grid", e.what());
    }
}

void detail::set_codecs(ArrayMetadata& m, const json& codecs, const std::string& where) {
    if (!codecs.is_array() || codecs.empty())
        fail_member(where, "codecs",
                    "expected a non-empty list of codecs, got " + dump_short(codecs));
    m.codecs_json = json::array();
    for (size_t i = 0; i < codecs.size(); ++i) {
        const json& c = codecs[i];
        if (c.is_string())
            m.codecs_json.push_back({{"name", c}});
        else if (c.is_object())
            m.codecs_json.push_back(c);
        else
            fail_member(where, "codecs[" + std::to_string(i) + "]",
                        "expected an object or a codec name, got " + dump_short(c));
    }
    Shape first;
    for (size_t i = 0; i < m.rank(); ++i) {
        const AxisPartition& a = m.grid.axis(i);
        first.push_back(a.num_chunks() > 0 ? a.chunk_edge(0) : a.max_edge());
    }
    m.codecs = CodecChain::parse(m.codecs_json, m.chunk_spec_for_shape(first), where, &m.warnings);
    m.codecs.validate_grid(m.grid, where);
}

ArrayMetadata parse_array_metadata(const json& j, const std::string& where) {
    return parse_array(j, where, nullptr);
}

NodeMetadata parse_node_metadata_text(std::string_view text, const std::string& where) {
    detail::EdgeLists edges;
    json j = detail::parse_json(text, where, &edges);
    NodeMetadata node;
    node.type = node_type_of(j, where);
    if (node.type == NodeType::Array) {
        node.array = parse_array(j, where, &edges);
    } else {
        // Edge lists elided from a group's document (under an ignorable
        // member): parse it again as written.
        node.group = edges.seen ? parse_json_text(text, where) : std::move(j);
    }
    return node;
}

GroupMetadata parse_group_metadata(const json& j, const std::string& where) {
    if (node_type_of(j, where) != NodeType::Group)
        fail_member(where, "node_type", "expected \"group\", got \"array\"");
    GroupMetadata g;
    for (const auto& item : j.items()) {
        const std::string& key = item.key();
        const json& v = item.value();
        if (key == "zarr_format" || key == "node_type") continue;
        if (key == "attributes") {
            if (!v.is_object())
                fail_member(where, "attributes", "expected an object, got " + dump_short(v));
            g.attributes = v;
        } else if (key == "consolidated_metadata") {
            if (v.is_null()) continue;
            if (!v.is_object()) fail_member(where, key, "expected an object, got " + dump_short(v));
            const auto kind = v.find("kind");
            if (kind == v.end() || *kind != "inline")
                fail_member(where, key + ".kind",
                            "expected \"inline\", got " +
                                (kind == v.end() ? "nothing" : dump_short(*kind)));
            const auto md = v.find("metadata");
            if (md == v.end() || !md->is_object())
                fail_member(where, key + ".metadata",
                            "expected an object mapping paths to zarr.json objects");
            std::map<std::string, json> nodes;
            for (const auto& node : md->items()) {
                if (!node.value().is_object())
                    fail_member(where, key + ".metadata." + node.key(),
                                "expected a zarr.json object, got " + dump_short(node.value()));
                nodes.emplace(node.key(), node.value());
            }
            g.consolidated = std::move(nodes);
        } else {
            check_unknown_member(key, v, g.extra_members, where);
        }
    }
    return g;
}

json to_json(const ArrayMetadata& m) {
    json j = json::object();
    for (const auto& item : m.extra_members.items())
        j[item.key()] = item.value();
    j["zarr_format"] = 3;
    j["node_type"] = "array";
    j["shape"] = m.shape;
    j["data_type"] = data_type_to_json(m.dtype);
    j["chunk_grid"] = m.grid.to_json();
    j["chunk_key_encoding"] = m.key_encoding.to_json();
    j["fill_value"] = m.fill_value_null ? json(nullptr) : fill_value_to_json(m.fill_value, m.dtype);
    j["codecs"] = m.codecs.to_json();
    j["attributes"] = m.attributes;
    if (!m.dimension_names.empty()) {
        json names = json::array();
        for (const auto& n : m.dimension_names)
            names.push_back(n ? json(*n) : json(nullptr));
        j["dimension_names"] = names;
    }
    return j;
}

json to_json(const GroupMetadata& g) {
    json j = json::object();
    for (const auto& item : g.extra_members.items())
        j[item.key()] = item.value();
    j["zarr_format"] = 3;
    j["node_type"] = "group";
    j["attributes"] = g.attributes;
    if (g.consolidated) {
        json md = json::object();
        for (const auto& [path, node] : *g.consolidated)
            md[path] = node;
        j["consolidated_metadata"] = {
            {"kind", "inline"}, {"must_understand", false}, {"metadata", md}};
    }
    return j;
}

} // namespace zarr3
