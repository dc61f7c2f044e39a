// Typed builders for new arrays: shape, data type, chunk grid, optional
// sharding, codecs, fill value, dimension names and attributes -> a validated
// ArrayMetadata, without hand-written JSON.
#pragma once

#include "zarr3/metadata.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zarr3 {

// What a builder error is about, so a caller can name its own input (a GDAL
// creation option, a command line flag) in the message it shows.
enum class BuildPart { ChunkGrid, Sharding, Codecs, FillValue, DimensionNames, Attributes };

class BuildError : public Error {
  public:
    BuildError(BuildPart part, const std::string& msg) : Error(msg), part_(part) {}
    BuildPart part() const { return part_; }

  private:
    BuildPart part_;
};

// The sharding_indexed codec of a new array: inner chunk shape (array axis
// order), index location and index codecs. The array's own codecs (bytes and
// compressors) go inside each inner chunk.
class ShardingCodecBuilder {
  public:
    explicit ShardingCodecBuilder(Shape inner_chunk_shape) : inner_(std::move(inner_chunk_shape)) {}
    ShardingCodecBuilder& index_at_end(bool at_end) {
        at_end_ = at_end;
        return *this;
    }
    // Default: little-endian bytes then crc32c.
    ShardingCodecBuilder& index_crc32c(bool crc) {
        crc32c_ = crc;
        return *this;
    }
    const Shape& inner_chunk_shape() const { return inner_; }
    bool index_at_end() const { return at_end_; }
    // The codec's JSON around `inner_codecs`.
    nlohmann::json to_json(const nlohmann::json& inner_codecs) const;

  private:
    Shape inner_;
    bool at_end_ = true;
    bool crc32c_ = true;
};

class ArrayBuilder {
  public:
    ArrayBuilder(Shape shape, DataType dtype);

    // Chunk grid (the shard grid when sharded); the last call wins.
    ArrayBuilder& regular_chunk_shape(Shape chunk_shape);
    // One partition per axis; each is set to the axis length (extent() must
    // cover it).
    ArrayBuilder& chunk_partitions(std::vector<AxisPartition> axes);
    // The CHUNK_SHAPES text (ChunkGrid::parse_chunk_shapes, with its
    // `pad_leading` leniency), parsed by build().
    ArrayBuilder& chunk_shapes_text(std::string text, bool pad_leading = false);

    ArrayBuilder& sharding(ShardingCodecBuilder sharding);

    // Codecs of each chunk (inner chunk when sharded): array->array filters in
    // call order, bytes with this endianness ("little" by default), then
    // bytes->bytes codecs in call order.
    ArrayBuilder& filter(std::string name, nlohmann::json config = nullptr);
    ArrayBuilder& bytes_endian(std::string endian);
    ArrayBuilder& zstd(int level, bool checksum = false);
    ArrayBuilder& gzip(int level);
    // typesize 0: the element size (of one component for complex types).
    ArrayBuilder& blosc(std::string cname, int clevel, std::string shuffle, uint32_t typesize = 0,
                        uint32_t blocksize = 0);
    ArrayBuilder& crc32c();
    // Any other bytes->bytes codec by name (null config: none).
    ArrayBuilder& compressor(std::string name, nlohmann::json config = nullptr);

    // One element, little-endian (dtype.size bytes); default zeros. For
    // `string`: the UTF-8 text (default ""); its codecs are vlen-utf8 and then
    // the bytes->bytes codecs (bytes_endian does not apply).
    ArrayBuilder& fill_value(Bytes value);
    // "fill_value": null (missing chunks read as zero, no nodata).
    ArrayBuilder& fill_value_null();
    ArrayBuilder& dimension_names(std::vector<std::optional<std::string>> names);
    ArrayBuilder& dimension_names(const std::vector<std::string>& names);
    ArrayBuilder& attributes(nlohmann::json attrs);
    ArrayBuilder& chunk_key_encoding(ChunkKeyEncoding enc);

    // Validates everything (grid against the shape, chunk sizes, inner chunks
    // dividing every shard edge, codecs, fill value size, names per axis) and
    // returns the metadata. Throws BuildError naming the part; `where` starts
    // the messages of errors found by the metadata checks.
    ArrayMetadata build(const std::string& where = "new array") const;

  private:
    ChunkGrid build_grid() const;
    void check_sharding(const ChunkGrid& grid) const;
    nlohmann::json codecs_json() const;

    Shape shape_;
    DataType dtype_;
    std::optional<Shape> regular_;
    std::optional<std::vector<AxisPartition>> partitions_;
    std::optional<std::string> chunk_shapes_;
    bool pad_chunk_shapes_ = false;
    std::optional<ShardingCodecBuilder> sharding_;
    std::string endian_ = "little";
    std::vector<nlohmann::json> filters_, compressors_;
    std::optional<Bytes> fill_;
    bool fill_null_ = false;
    std::vector<std::optional<std::string>> names_;
    nlohmann::json attributes_ = nlohmann::json::object();
    ChunkKeyEncoding key_encoding_;
};

} // namespace zarr3
