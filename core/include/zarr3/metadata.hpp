// zarr.json for arrays and groups: parse, validate, serialise.
#pragma once

#include "zarr3/chunk_grid.hpp"
#include "zarr3/codec.hpp"
#include "zarr3/dtype.hpp"
#include "zarr3/key_encoding.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <optional>

namespace zarr3 {

// How a sharded array lays out its shards (the sharding_indexed codec).
struct ShardLayout {
    // Inner chunk shape in array axis order: mapped back through any
    // array->array codec (transpose) that comes before sharding_indexed.
    Shape inner_chunk_shape;
    bool index_at_end = true;
    std::vector<std::string> inner_codec_names; // codecs inside each inner chunk, in order
    std::vector<std::string> index_codec_names; // codecs of the shard index, in order
    // The codec's "chunk_shape" as configured (the codec's own axis order,
    // which differs from inner_chunk_shape after a transpose).
    nlohmann::json inner_chunk_shape_json;
};

struct ArrayMetadata {
    Shape shape;
    DataType dtype;
    ChunkGrid grid;
    ChunkKeyEncoding key_encoding;
    Bytes fill_value; // one element, little-endian
    // "fill_value": null (written by GDAL 3.8+ for arrays without nodata):
    // missing chunks read as zero (fill_value holds zeros) and there is no
    // nodata value. Written back as null.
    bool fill_value_null = false;
    nlohmann::json codecs_json; // as written (normalised to objects)
    CodecChain codecs;
    std::vector<std::optional<std::string>> dimension_names; // empty when absent
    nlohmann::json attributes = nlohmann::json::object();
    std::vector<std::string> warnings; // non-fatal issues met while parsing
    nlohmann::json extra_members =
        nlohmann::json::object(); // "must_understand": false members, kept

    size_t rank() const { return shape.size(); }
    // Spec of chunk `idx` (full edges).
    ChunkSpec chunk_spec(const std::vector<uint64_t>& idx) const;
    ChunkSpec chunk_spec_for_shape(const Shape& s) const;

    // Layout questions answered from the parsed codec chain (never the raw
    // JSON), so a transpose before sharding is handled.
    // Names of the top-level codecs in order (array->array, array->bytes,
    // bytes->bytes; includes the bytes codec added for lists without one).
    std::vector<std::string> codec_names() const;
    // The shard layout when the array->bytes codec is sharding_indexed.
    std::optional<ShardLayout> shard_layout() const;
    // The natural block for reads: the inner chunk shape when sharded, else
    // per axis the grid's most common chunk edge (1 for an axis without
    // chunks); every edge >= 1.
    Shape read_block_shape() const;
};

struct GroupMetadata {
    nlohmann::json attributes = nlohmann::json::object();
    // Consolidated metadata (inline): relative path -> node zarr.json object.
    std::optional<std::map<std::string, nlohmann::json>> consolidated;
    nlohmann::json extra_members = nlohmann::json::object();
};

enum class NodeType { Array, Group };

// Parses zarr.json text. `where` names the file in errors ("/data/x.zarr/a/zarr.json").
// Throws FormatError for malformed or unsupported content.
nlohmann::json parse_json_text(std::string_view text, const std::string& where);
NodeType node_type_of(const nlohmann::json& j, const std::string& where);
ArrayMetadata parse_array_metadata(const nlohmann::json& j, const std::string& where);

// The text of a node's zarr.json parsed once: parse_json_text, node_type_of,
// then parse_array_metadata for an array (same checks and messages), except
// that the edge lists of a rectilinear grid go straight into runs while
// parsing instead of through a JSON array (much less time and memory for
// lists of a million edges). A group comes back as its document.
struct NodeMetadata {
    NodeType type = NodeType::Group;
    std::optional<ArrayMetadata> array; // when type == Array
    nlohmann::json group;               // when type == Group: the whole document
};
NodeMetadata parse_node_metadata_text(std::string_view text, const std::string& where);
GroupMetadata parse_group_metadata(const nlohmann::json& j, const std::string& where);

nlohmann::json to_json(const ArrayMetadata& m);
nlohmann::json to_json(const GroupMetadata& m);

} // namespace zarr3
