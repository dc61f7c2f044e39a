// ArrayBuilder / ShardingCodecBuilder: typed description of a new array ->
// validated ArrayMetadata (the same checks as a parsed zarr.json).
#include "zarr3/builder.hpp"

#include "metadata/metadata_detail.hpp"

namespace zarr3 {
namespace {

using nlohmann::json;

json bytes_codec(const std::string& endian) {
    return {{"name", "bytes"}, {"configuration", {{"endian", endian}}}};
}

json named_codec(std::string name, json config) {
    json c = {{"name", std::move(name)}};
    if (!config.is_null()) c["configuration"] = std::move(config);
    return c;
}

// Runs `f`, turning any zarr3::Error into a BuildError about `part`.
template <class F> auto as_part(BuildPart part, F&& f) -> decltype(f()) {
    try {
        return f();
    } catch (const BuildError&) {
        throw;
    } catch (const Error& e) {
        throw BuildError(part, e.what());
    }
}

} // namespace

// ------------------------------------------------------------------ ShardingCodecBuilder

json ShardingCodecBuilder::to_json(const json& inner_codecs) const {
    json index_codecs = json::array({bytes_codec("little")});
    if (crc32c_) index_codecs.push_back({{"name", "crc32c"}});
    return {{"name", "sharding_indexed"},
            {"configuration",
             {{"chunk_shape", inner_},
              {"codecs", inner_codecs},
              {"index_codecs", index_codecs},
              {"index_location", at_end_ ? "end" : "start"}}}};
}

// ------------------------------------------------------------------ ArrayBuilder

ArrayBuilder::ArrayBuilder(Shape shape, DataType dtype)
    : shape_(std::move(shape)), dtype_(std::move(dtype)) {}

ArrayBuilder& ArrayBuilder::regular_chunk_shape(Shape chunk_shape) {
    regular_ = std::move(chunk_shape);
    partitions_.reset();
    chunk_shapes_.reset();
    return *this;
}

ArrayBuilder& ArrayBuilder::chunk_partitions(std::vector<AxisPartition> axes) {
    partitions_ = std::move(axes);
    regular_.reset();
    chunk_shapes_.reset();
    return *this;
}

ArrayBuilder& ArrayBuilder::chunk_shapes_text(std::string text, bool pad_leading) {
    chunk_shapes_ = std::move(text);
    pad_chunk_shapes_ = pad_leading;
    regular_.reset();
    partitions_.reset();
    return *this;
}

ArrayBuilder& ArrayBuilder::sharding(ShardingCodecBuilder sharding) {
    sharding_ = std::move(sharding);
    return *this;
}

ArrayBuilder& ArrayBuilder::bytes_endian(std::string endian) {
    endian_ = std::move(endian);
    return *this;
}

ArrayBuilder& ArrayBuilder::zstd(int level, bool checksum) {
    return compressor("zstd", {{"level", level}, {"checksum", checksum}});
}

ArrayBuilder& ArrayBuilder::gzip(int level) {
    return compressor("gzip", {{"level", level}});
}

ArrayBuilder& ArrayBuilder::blosc(std::string cname, int clevel, std::string shuffle,
                                  uint32_t typesize, uint32_t blocksize) {
    return compressor("blosc", {{"cname", std::move(cname)},
                                {"clevel", clevel},
                                {"shuffle", std::move(shuffle)},
                                {"typesize", typesize == 0 ? dtype_.swap_unit : typesize},
                                {"blocksize", blocksize}});
}

ArrayBuilder& ArrayBuilder::crc32c() {
    return compressor("crc32c");
}

ArrayBuilder& ArrayBuilder::filter(std::string name, json config) {
    filters_.push_back(named_codec(std::move(name), std::move(config)));
    return *this;
}

ArrayBuilder& ArrayBuilder::compressor(std::string name, json config) {
    compressors_.push_back(named_codec(std::move(name), std::move(config)));
    return *this;
}

ArrayBuilder& ArrayBuilder::fill_value(Bytes value) {
    fill_ = std::move(value);
    fill_null_ = false;
    return *this;
}

ArrayBuilder& ArrayBuilder::fill_value_null() {
    fill_.reset();
    fill_null_ = true;
    return *this;
}

ArrayBuilder& ArrayBuilder::dimension_names(std::vector<std::optional<std::string>> names) {
    names_ = std::move(names);
    return *this;
}

ArrayBuilder& ArrayBuilder::dimension_names(const std::vector<std::string>& names) {
    names_.assign(names.begin(), names.end());
    return *this;
}

ArrayBuilder& ArrayBuilder::attributes(json attrs) {
    attributes_ = std::move(attrs);
    return *this;
}

ArrayBuilder& ArrayBuilder::chunk_key_encoding(ChunkKeyEncoding enc) {
    key_encoding_ = enc;
    return *this;
}

ChunkGrid ArrayBuilder::build_grid() const {
    const size_t rank = shape_.size();
    if (chunk_shapes_)
        return ChunkGrid::parse_chunk_shapes(*chunk_shapes_, shape_, "chunk shapes",
                                             pad_chunk_shapes_);
    if (partitions_) {
        if (partitions_->size() != rank)
            throw BuildError(BuildPart::ChunkGrid,
                             "chunk grid: " + std::to_string(partitions_->size()) +
                                 " axis partitions for an array of rank " + std::to_string(rank));
        std::vector<AxisPartition> axes = *partitions_;
        for (size_t a = 0; a < rank; ++a) {
            if (!axes[a].is_regular() && axes[a].extent() < shape_[a])
                throw BuildError(BuildPart::ChunkGrid,
                                 "chunk grid: the edges of axis " + std::to_string(a) + " sum to " +
                                     std::to_string(axes[a].extent()) +
                                     ", less than the axis length " + std::to_string(shape_[a]));
            axes[a].set_length(shape_[a]);
        }
        return ChunkGrid::make_rectilinear(std::move(axes));
    }
    if (regular_) return ChunkGrid::make_regular(*regular_, shape_);
    if (rank == 0) return ChunkGrid::make_regular({}, {});
    throw BuildError(BuildPart::ChunkGrid,
                     "no chunk grid: give a regular chunk shape, axis partitions or chunk shapes");
}

void ArrayBuilder::check_sharding(const ChunkGrid& grid) const {
    if (!sharding_) return;
    const size_t rank = shape_.size();
    const Shape& inner = sharding_->inner_chunk_shape();
    const auto fail = [](const std::string& msg) { throw BuildError(BuildPart::Sharding, msg); };
    if (rank == 0) fail("a 0-d array cannot be sharded");
    if (inner.size() != rank)
        fail("the inner chunk shape has " + std::to_string(inner.size()) +
             " axes, expected one per array axis (" + std::to_string(rank) + ")");
    for (size_t a = 0; a < rank; ++a) {
        if (inner[a] == 0) fail("inner chunk edges must be >= 1");
        for (const auto& run : grid.axis(a).runs())
            if (run.edge % inner[a] != 0)
                fail("the inner chunk edge " + std::to_string(inner[a]) + " of axis " +
                     std::to_string(a) + " does not divide the shard edge " +
                     std::to_string(run.edge) + " (the chunk grid gives the shard grid)");
    }
    as_part(BuildPart::Sharding, [&] {
        const uint64_t bytes = checked_mul(checked_product(inner, "inner chunk size"), dtype_.size,
                                           "inner chunk size");
        if (bytes > kMaxChunkBytes)
            fail("inner chunk of more than " + std::to_string(kMaxChunkBytes) + " bytes");
    });
}

json ArrayBuilder::codecs_json() const {
    // string: vlen-utf8 takes the place of bytes.
    json codecs(filters_);
    codecs.push_back(dtype_.is_variable()
                         ? json{{"name", "vlen-utf8"}, {"configuration", json::object()}}
                         : bytes_codec(endian_));
    for (const auto& c : compressors_)
        codecs.push_back(c);
    if (sharding_) return json::array({sharding_->to_json(codecs)});
    return codecs;
}

ArrayMetadata ArrayBuilder::build(const std::string& where) const {
    ArrayMetadata m;
    m.shape = shape_;
    m.dtype = dtype_;
    m.grid = as_part(BuildPart::ChunkGrid, [&] { return build_grid(); });
    as_part(BuildPart::ChunkGrid, [&] { detail::check_largest_chunk(m, where); });
    check_sharding(m.grid);
    m.key_encoding = key_encoding_;

    if (fill_null_) {
        m.fill_value.assign(dtype_.size, 0);
        m.fill_value_null = true;
    } else {
        const Bytes fill = fill_ ? *fill_ : Bytes(dtype_.size, 0);
        if (fill.size() != dtype_.size && !dtype_.is_variable())
            throw BuildError(BuildPart::FillValue, "fill value: expected " +
                                                       std::to_string(dtype_.size) + " bytes for " +
                                                       dtype_.name);
        // As it will read back from zarr.json (NaN payloads normalised).
        m.fill_value = as_part(BuildPart::FillValue, [&] {
            return parse_fill_value(fill_value_to_json(fill, dtype_), dtype_, where);
        });
    }

    if (!names_.empty() && names_.size() != shape_.size())
        throw BuildError(BuildPart::DimensionNames, "dimension names: expected " +
                                                        std::to_string(shape_.size()) + ", got " +
                                                        std::to_string(names_.size()));
    m.dimension_names = names_;
    if (!attributes_.is_object())
        throw BuildError(BuildPart::Attributes,
                         "attributes: expected an object, got " + attributes_.dump());
    m.attributes = attributes_;

    as_part(BuildPart::Codecs, [&] { detail::set_codecs(m, codecs_json(), where); });
    return m;
}

} // namespace zarr3
