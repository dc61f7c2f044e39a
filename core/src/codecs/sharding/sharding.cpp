// sharding_indexed: configuration and grid validation. Encoding lives in
// sharding_encode.cpp, index decoding in sharding_index.cpp, reads in
// sharding_read.cpp.
#include "zarr3/sharding.hpp"

#include "zarr3/chunk_grid.hpp"
#include "zarr3/dtype.hpp"

#include <cstring>

namespace zarr3 {

namespace {

std::string codec_name_of(const nlohmann::json& c) {
    if (c.is_string()) return c.get<std::string>();
    if (c.is_object() && c.contains("name") && c["name"].is_string())
        return c["name"].get<std::string>();
    return {};
}

} // namespace

ShardingCodec::ShardingCodec(const nlohmann::json& config, const ChunkSpec& spec,
                             const std::string& where) {
    const std::string w = where + ": sharding_indexed";
    if (!config.is_object()) throw FormatError(w + ".configuration must be an object");

    // chunk_shape
    if (!config.contains("chunk_shape") || !config["chunk_shape"].is_array())
        throw FormatError(w + ".configuration.chunk_shape must be a list of integers");
    const auto& cs = config["chunk_shape"];
    if (cs.size() != spec.shape.size())
        throw FormatError(w + ".configuration.chunk_shape has " + std::to_string(cs.size()) +
                          " entries, expected " + std::to_string(spec.shape.size()) +
                          " (the array rank)");
    for (size_t i = 0; i < cs.size(); ++i) {
        const bool pos =
            cs[i].is_number_unsigned() || (cs[i].is_number_integer() && cs[i].get<int64_t>() > 0);
        if (!pos || cs[i].get<uint64_t>() < 1)
            throw FormatError(w + ".configuration.chunk_shape[" + std::to_string(i) +
                              "] must be an integer >= 1");
        inner_shape_.push_back(cs[i].get<uint64_t>());
    }
    checked_product(inner_shape_, w + " inner chunk element count");

    // index_location
    if (config.contains("index_location")) {
        const auto& loc = config["index_location"];
        if (loc == "end")
            location_ = IndexLocation::End;
        else if (loc == "start")
            location_ = IndexLocation::Start;
        else
            throw FormatError(w +
                              ".configuration.index_location must be \"start\" or \"end\", got " +
                              loc.dump());
    }

    // codecs (inner chain)
    if (!config.contains("codecs") || !config["codecs"].is_array() || config["codecs"].empty())
        throw FormatError(w + ".configuration.codecs must be a non-empty list of codecs");
    ChunkSpec ispec = inner_spec(spec);
    inner_ = CodecChain::parse(config["codecs"], ispec, w + ".codecs");
    // A nested sharding codec must divide our inner chunk.
    inner_.validate_grid(ChunkGrid::make_regular(inner_shape_, inner_shape_), w + ".codecs");

    // index_codecs: bytes (any endian), optionally followed by crc32c.
    if (!config.contains("index_codecs") || !config["index_codecs"].is_array())
        throw FormatError(w + ".configuration.index_codecs must be a list of codecs");
    const auto& ic = config["index_codecs"];
    bool ok = ic.size() == 1 || ic.size() == 2;
    std::string names;
    for (size_t i = 0; i < ic.size(); ++i) {
        std::string n = codec_name_of(ic[i]);
        names += (i ? ", " : "") + (n.empty() ? ic[i].dump() : n);
        if (i == 0 && n != "bytes" && n != "endian") ok = false;
        if (i == 1 && n != "crc32c") ok = false;
    }
    if (!ok)
        throw FormatError(w +
                          ".configuration.index_codecs must be a bytes codec optionally "
                          "followed by crc32c, got [" +
                          names + "]");
    Shape cps(inner_shape_.size(), 1);
    if (spec.shape.size() == inner_shape_.size()) {
        for (size_t i = 0; i < cps.size(); ++i)
            if (spec.shape[i] % inner_shape_[i] == 0 && spec.shape[i] > 0)
                cps[i] = spec.shape[i] / inner_shape_[i];
    }
    index_codecs_ = CodecChain::parse(ic, index_spec(cps), w + ".index_codecs");
}

ChunkSpec ShardingCodec::inner_spec(const ChunkSpec& shard) const {
    ChunkSpec s;
    s.shape = inner_shape_;
    s.dtype = shard.dtype;
    s.fill_value = shard.fill_value;
    return s;
}

ChunkSpec ShardingCodec::index_spec(const Shape& cps) const {
    ChunkSpec s;
    s.shape = cps;
    s.shape.push_back(2);
    s.dtype = data_type_from_name("uint64");
    s.fill_value.assign(8, 0xff);
    return s;
}

Shape ShardingCodec::chunks_per_shard(const Shape& shard_shape, const std::string& where) const {
    if (shard_shape.size() != inner_shape_.size())
        throw FormatError(where + ": shard rank " + std::to_string(shard_shape.size()) +
                          " does not match sharding_indexed.chunk_shape rank " +
                          std::to_string(inner_shape_.size()));
    Shape cps(shard_shape.size());
    for (size_t i = 0; i < cps.size(); ++i) {
        if (shard_shape[i] % inner_shape_[i] != 0)
            throw FormatError(where + ": shard shape " + shape_text(shard_shape) +
                              " is not divisible by sharding_indexed.chunk_shape " +
                              shape_text(inner_shape_) + " on axis " + std::to_string(i));
        cps[i] = shard_shape[i] / inner_shape_[i];
    }
    return cps;
}

std::shared_ptr<const ShardingCodec::Prepared>
ShardingCodec::prepare(const ChunkSpec& shard, const std::string& where) const {
    {
        std::lock_guard lk(prepared_mu_);
        const auto it = prepared_.find(shard.shape);
        if (it != prepared_.end() && it->second->inner_spec.dtype.name == shard.dtype.name &&
            it->second->inner_spec.fill_value == shard.fill_value)
            return it->second;
    }
    auto p = std::make_shared<Prepared>();
    p->chunks_per_shard = chunks_per_shard(shard.shape, where);
    p->inner_chunks = checked_product(p->chunks_per_shard, "number of inner chunks per shard");
    p->index_size = index_size(p->chunks_per_shard);
    p->inner_spec = inner_spec(shard);
    p->index_spec = index_spec(p->chunks_per_shard);
    std::lock_guard lk(prepared_mu_);
    if (prepared_.size() < kMaxPrepared) prepared_.emplace(shard.shape, p);
    return p;
}

uint64_t ShardingCodec::index_size(const Shape& cps) const {
    uint64_t n = checked_product(cps, "number of inner chunks per shard");
    uint64_t sz = checked_mul(n, 16, "shard index size");
    if (sz > kMaxChunkBytes)
        throw FormatError("shard index of " + std::to_string(n) +
                          " inner chunks is larger than the supported maximum");
    for (const auto& bb : index_codecs_.bytes_to_bytes()) {
        auto e = bb->encoded_size(sz);
        if (!e)
            throw FormatError("sharding_indexed.index_codecs: " + bb->name() +
                              " does not have a fixed encoded size");
        sz = *e;
    }
    return sz;
}

void ShardingCodec::validate_grid(const ChunkGrid& g, const std::string& where) const {
    if (g.rank() != inner_shape_.size())
        throw FormatError(where + ": chunk grid rank " + std::to_string(g.rank()) +
                          " does not match sharding_indexed.chunk_shape rank " +
                          std::to_string(inner_shape_.size()));
    for (size_t i = 0; i < g.rank(); ++i) {
        for (const auto& run : g.axis(i).runs()) {
            if (run.edge % inner_shape_[i] != 0)
                throw FormatError(
                    where + ": chunk_grid axis " + std::to_string(i) + ": shard edge " +
                    std::to_string(run.edge) + " (chunks from " + std::to_string(run.start_chunk) +
                    ") is not a multiple of the inner chunk edge " +
                    std::to_string(inner_shape_[i]) + " (sharding_indexed.chunk_shape)");
        }
    }
}

nlohmann::json ShardingCodec::to_json() const {
    nlohmann::json cfg;
    cfg["chunk_shape"] = inner_shape_;
    cfg["codecs"] = inner_.to_json();
    cfg["index_codecs"] = index_codecs_.to_json();
    cfg["index_location"] = location_ == IndexLocation::Start ? "start" : "end";
    return {{"name", "sharding_indexed"}, {"configuration", cfg}};
}

} // namespace zarr3

namespace zarr3 {

uint64_t ShardingCodec::max_encoded_size(const ChunkSpec& spec) const {
    const auto prep = prepare(spec, "sharding_indexed");
    const uint64_t n = prep->inner_chunks;
    const uint64_t inner = inner_.max_encoded_size(prep->inner_spec);
    const uint64_t isz = prep->index_size;
    // Saturate: the bound only limits what a decompressor may allocate.
    if (inner != 0 && n > (kMaxChunkBytes - isz) / inner) return kMaxChunkBytes;
    return isz + n * inner;
}

} // namespace zarr3
