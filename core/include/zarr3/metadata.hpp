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
