// CodecChain: parsing a "codecs" list, running it both ways, and region reads;
// plus the small ChunkSpec / ByteSource members declared in codec.hpp.
#include "zarr3/codec.hpp"

#include "codecs/cached_read.hpp"
#include "store/chunk_bounds.hpp"

#include "zarr3/chunk_grid.hpp"
#include "zarr3/limits.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

namespace zarr3 {

uint64_t ChunkSpec::num_elements() const {
    return checked_product(shape, "chunk element count");
}

uint64_t ChunkSpec::num_bytes() const {
    uint64_t n = checked_mul(num_elements(), dtype.size, "chunk size in bytes");
    if (n > kMaxChunkBytes)
        throw FormatError("a chunk of " + std::to_string(n) + " bytes exceeds the limit of " +
                          std::to_string(kMaxChunkBytes) + " bytes");
    return n;
}

std::string StoreByteSource::describe() const {
    return store_.uri() + "/" + key_;
}

namespace {
std::atomic<uint64_t> g_data_requests{0};
} // namespace

uint64_t StoreByteSource::data_requests() {
    return g_data_requests.load(std::memory_order_acquire);
}

void StoreByteSource::note_data_request() {
    g_data_requests.fetch_add(1, std::memory_order_acq_rel);
}

std::optional<Bytes> StoreByteSource::read_all(uint64_t limit, ObjectVersion& version) {
    note_data_request();
    auto v = store_.get_bounded_versioned(key_, std::min(limit, kMaxChunkBytes), version);
    if (v && v->size() > limit) throw_too_large(describe(), v->size(), limit);
    return v;
}

std::optional<Bytes> MemoryByteSource::read_all(uint64_t limit, ObjectVersion& version) {
    version = {};
    if (data_.size() > limit) throw_too_large(describe(), data_.size(), limit);
    return Bytes(data_.begin(), data_.end());
}

uint64_t max_stored_chunk_bytes(const CodecChain& codecs, const ChunkSpec& spec) {
    return std::min(codecs.max_encoded_size(spec), max_decoded_chunk_bytes());
}

std::optional<Bytes> read_stored_chunk(ByteSource& src, uint64_t limit, const ChunkSpec& spec,
                                       ObjectVersion& version) {
    try {
        return src.read_all(limit, version);
    } catch (const FormatError& e) {
        // Explained only when it is this chunk's size that is too large
        // (not, say, a file a store read to find the chunk).
        const std::string msg = e.what();
        if (!msg.starts_with(src.describe() + ": ") ||
            msg.find("exceeds the limit of") == std::string::npos)
            throw;
        throw FormatError(msg + " (the stored chunk of shape " + shape_text(spec.shape) + " " +
                          spec.dtype.name + " can hold at most " + std::to_string(limit) +
                          " bytes: what its codecs can produce, never above the decoded-chunk "
                          "limit of " +
                          std::to_string(max_decoded_chunk_bytes()) +
                          " bytes, ZARR3_MAX_CHUNK_BYTES)");
    }
}

std::optional<std::vector<Bytes>> MemoryByteSource::read_ranges(const std::vector<ByteRange>& r,
                                                                std::optional<uint64_t>& total,
                                                                ObjectVersion& version) {
    total = data_.size();
    version = {};
    std::vector<Bytes> out;
    out.reserve(r.size());
    const uint64_t size = data_.size();
    for (const auto& br : r) {
        const uint64_t len = range_length(br);
        const auto* fs = std::get_if<RangeFromStart>(&br);
        if (fs ? checked_add(fs->offset, len, "byte range end") > size : len > size)
            throw FormatError(what_ + ": byte range " + std::to_string(fs ? fs->offset : 0) + "+" +
                              std::to_string(len) + (fs ? "" : " (suffix)") +
                              " reaches past the end of the " + std::to_string(size) +
                              "-byte value");
        const uint64_t off = fs ? fs->offset : size - len;
        out.emplace_back(data_.begin() + off, data_.begin() + off + len);
    }
    return out;
}

namespace {

const char* kind_name(CodecKind k) {
    switch (k) {
    case CodecKind::ArrayToArray:
        return "array->array";
    case CodecKind::ArrayToBytes:
        return "array->bytes";
    case CodecKind::BytesToBytes:
        return "bytes->bytes";
    default:
        return "unknown";
    }
}

// A `string` array needs vlen-utf8 (directly or inside sharding_indexed), and
// vlen-utf8 needs a `string` array.
void check_string_codecs(const std::string& ab, bool handles_strings, const DataType& dt,
                         const std::string& where) {
    if (dt.is_variable() && !handles_strings)
        throw FormatError(where + ": data type " + dt.name +
                          " needs the vlen-utf8 codec (array->bytes), got \"" + ab +
                          (ab == "sharding_indexed" ? "\" without vlen-utf8 inside" : "\""));
    if (!dt.is_variable() && handles_strings)
        throw FormatError(where + ": codec \"" + ab + "\"" +
                          (ab == "vlen-utf8" ? "" : " (with vlen-utf8 inside)") +
                          " encodes data type string only, not " + dt.name);
}

} // namespace

void CodecChain::validate_grid(const ChunkGrid& g, const std::string& where) const {
    bool permuted = false;
    std::vector<size_t> axes(g.rank()); // grid axis seen as the array->bytes codec's axis k
    for (size_t k = 0; k < axes.size(); ++k)
        axes[k] = k;
    for (const auto& aa : aa_) {
        const std::vector<size_t> order = aa->encoded_axis_order(axes.size());
        std::vector<size_t> next(axes.size());
        for (size_t k = 0; k < axes.size(); ++k) {
            next[k] = axes[order[k]];
            permuted = permuted || next[k] != k;
        }
        axes = std::move(next);
    }
    if (!permuted) {
        ab_->validate_grid(g, where);
        return;
    }
    std::vector<AxisPartition> seen;
    for (size_t k = 0; k < axes.size(); ++k)
        seen.push_back(g.axis(axes[k]));
    ab_->validate_grid(ChunkGrid::make_rectilinear(std::move(seen)),
                       where + " (chunk grid axes in the order the codecs after transpose see)");
}

CodecChain CodecChain::parse(const nlohmann::json& codecs, const ChunkSpec& spec,
                             const std::string& where, std::vector<std::string>* warnings) {
    if (!codecs.is_array())
        throw FormatError(where + ": \"codecs\" must be a list, got " + codecs.dump());
    CodecChain chain;
    ChunkSpec cur = spec;
    std::string last_name;
    for (size_t i = 0; i < codecs.size(); ++i) {
        const auto& e = codecs[i];
        const std::string at = where + " codecs[" + std::to_string(i) + "]";
        std::string name;
        nlohmann::json config;
        if (e.is_string()) {
            name = e.get<std::string>();
        } else if (e.is_object()) {
            for (const auto& [k, v] : e.items())
                if (k != "name" && k != "configuration" && k != "must_understand")
                    throw FormatError(at + ": unknown member \"" + k +
                                      "\" (expected \"name\", \"configuration\", "
                                      "\"must_understand\")");
            auto n = e.find("name");
            if (n == e.end() || !n->is_string())
                throw FormatError(at + ": \"name\" must be a string");
            name = n->get<std::string>();
            auto mu = e.find("must_understand");
            if (mu != e.end() && !mu->is_boolean())
                throw FormatError(at + ": codec \"" + name +
                                  "\": \"must_understand\" must be a boolean");
            auto c = e.find("configuration");
            if (c != e.end()) config = *c;
        } else {
            throw FormatError(at + ": a codec must be a name or an object, got " + e.dump());
        }
        CodecKind kind = codec_kind(name);
        switch (kind) {
        case CodecKind::Unknown:
            throw FormatError(
                at + ": unknown codec \"" + name +
                "\" is not supported (supported: transpose, scale_offset, cast_value, "
                "bytes, vlen-utf8, sharding_indexed, gzip, zstd, blosc, crc32c)");
        case CodecKind::ArrayToArray:
            if (cur.dtype.is_variable() && name != "transpose")
                throw FormatError(at + ": codec \"" + name + "\" does not apply to data type " +
                                  cur.dtype.name + " (only transpose may come before vlen-utf8)");
            if (chain.ab_ || !chain.bb_.empty())
                throw FormatError(at + ": array->array codec \"" + name + "\" after " +
                                  kind_name(codec_kind(last_name)) + " codec \"" + last_name +
                                  "\"");
            chain.aa_.push_back(make_array_to_array(name, config, cur, at));
            cur = chain.aa_.back()->encoded_spec(cur);
            break;
        case CodecKind::ArrayToBytes:
            if (chain.ab_)
                throw FormatError(at + ": second array->bytes codec \"" + name + "\" (after \"" +
                                  chain.ab_->name() + "\"); exactly one is allowed");
            if (!chain.bb_.empty())
                throw FormatError(at + ": array->bytes codec \"" + name +
                                  "\" after bytes->bytes codec \"" + last_name + "\"");
            chain.ab_ = make_array_to_bytes(name, config, cur, at);
            break;
        case CodecKind::BytesToBytes:
            chain.bb_.push_back(make_bytes_to_bytes(name, config, at));
            break;
        }
        last_name = name;
    }
    if (!chain.ab_ && cur.dtype.is_variable())
        throw FormatError(where + ": data type " + cur.dtype.name +
                          " needs the vlen-utf8 codec; the codecs have no array->bytes codec");
    if (!chain.ab_) {
        if (warnings)
            warnings->push_back("no array->bytes codec in " + where + "; reading as little-endian");
        chain.ab_ = make_array_to_bytes("bytes", {{"endian", "little"}}, cur, where);
    }
    chain.partial_ = dynamic_cast<const PartialReadCodec*>(chain.ab_.get());
    chain.strings_ = dynamic_cast<const StringCodec*>(chain.ab_.get());
    check_string_codecs(chain.ab_->name(), chain.handles_strings(), cur.dtype, where);
    return chain;
}

Bytes CodecChain::encode(ByteView decoded, const ChunkSpec& spec) const {
    Bytes out;
    encode_into(decoded, spec, out);
    return out;
}

void CodecChain::encode_into(ByteView decoded, const ChunkSpec& spec, Bytes& out) const {
    // The array->bytes step (compressing straight from the caller's data when
    // it is a plain copy) writes into `out`; later bytes->bytes codecs chain.
    const bool first_bb = aa_.empty() && !bb_.empty() && ab_->is_plain_copy(spec) &&
                          decoded.size() == spec.num_bytes();
    if (first_bb) {
        bb_[0]->encode_into(decoded, out);
    } else if (aa_.empty()) {
        ab_->encode_into(decoded, spec, out);
    } else {
        ChunkSpec cur = spec;
        Bytes a(decoded.begin(), decoded.end());
        for (const auto& c : aa_) {
            a = c->encode(std::move(a), cur);
            cur = c->encoded_spec(cur);
        }
        ab_->encode_into(a, cur, out);
    }
    for (size_t k = first_bb ? 1 : 0; k < bb_.size(); ++k)
        out = bb_[k]->encode(out);
}

ByteView CodecChain::undo_bytes_to_bytes(ByteView encoded, const ChunkSpec& inner,
                                         Bytes& holder) const {
    // sizes[k] = size of the input of bb_[k] (= output of its decode), when
    // known (never for vlen-utf8, whose size depends on the strings).
    std::vector<std::optional<uint64_t>> sizes(bb_.size() + 1);
    sizes[0] = ab_->encoded_size(inner);
    for (size_t k = 0; k < bb_.size(); ++k)
        sizes[k + 1] = sizes[k] ? bb_[k]->encoded_size(*sizes[k]) : std::nullopt;
    // Upper bounds of the same sizes, so that a compressed frame claiming a
    // huge size is refused even where the exact size is unknown (e.g. a
    // compressor after sharding_indexed).
    std::vector<uint64_t> bounds(bb_.size() + 1);
    bounds[0] = ab_->max_encoded_size(inner);
    for (size_t k = 0; k < bb_.size(); ++k)
        bounds[k + 1] = bb_[k]->max_encoded_size(bounds[k]);
    ByteView cur = encoded;
    for (size_t k = bb_.size(); k-- > 0;) {
        holder = bb_[k]->decode(cur, sizes[k], std::min(bounds[k], kMaxChunkBytes));
        cur = holder;
    }
    return cur;
}

void CodecChain::decode(ByteView encoded, const ChunkSpec& spec, uint8_t* out) const {
    // bytes (no swap) + one compressor: decompress straight into `out`.
    if (aa_.empty() && bb_.size() == 1 && ab_->is_plain_copy(spec) &&
        bb_[0]->decode_into(encoded, out, spec.num_bytes()))
        return;
    std::vector<ChunkSpec> specs{spec};
    for (const auto& c : aa_)
        specs.push_back(c->encoded_spec(specs.back()));
    Bytes holder;
    const ByteView cur = undo_bytes_to_bytes(encoded, specs.back(), holder);
    if (aa_.empty()) {
        ab_->decode(cur, spec, out);
        return;
    }
    Bytes a(specs.back().num_bytes());
    ab_->decode(cur, specs.back(), a.data());
    for (size_t k = aa_.size(); k-- > 0;)
        a = aa_[k]->decode(std::move(a), specs[k]);
    if (!a.empty()) std::memcpy(out, a.data(), a.size());
}

uint64_t CodecChain::max_encoded_size(const ChunkSpec& spec) const {
    ChunkSpec cur = spec;
    for (const auto& c : aa_)
        cur = c->encoded_spec(cur);
    uint64_t n = ab_->max_encoded_size(cur);
    for (const auto& c : bb_)
        n = c->max_encoded_size(n);
    return n;
}

std::optional<PlannedRequest> CodecChain::plan_read(const ByteSource& src, const ChunkSpec& spec,
                                                    const Region& region,
                                                    const std::vector<int64_t>& out_strides,
                                                    const ReadOptions& opt) const {
    if (const PartialReadCodec* p = partial_reader())
        return p->plan_partial(src, spec, region, out_strides, opt);
    try {
        check_decoded_chunk_size(spec.num_bytes(), spec.shape, src.describe());
    } catch (const Error&) {
        return std::nullopt; // read_region refuses it before any request
    }
    // A cached chunk: read_region confirms its version (no bytes fetched).
    if (opt.chunk_cache && cached_chunk_held(*opt.chunk_cache, src, spec)) return std::nullopt;
    return PlannedRequest{};
}

bool CodecChain::absorb_prefetched(const ByteSource& src, const PlannedRequest& request,
                                   const BatchAnswer& answer, const ChunkSpec& spec) const {
    const PartialReadCodec* p = partial_reader();
    return p && p->absorb_prefetched(src, request, answer, spec);
}

bool CodecChain::read_region(ByteSource& src, const ChunkSpec& spec, const Region& region,
                             const StridedView& out, const ReadOptions& opt) const {
    if (const PartialReadCodec* p = partial_reader())
        return p->read_partial(src, spec, region, out, opt);
    if (opt.chunk_cache) {
        const std::string key = src.cache_key();
        if (!key.empty())
            return read_region_cached(*this, *opt.chunk_cache, src, key, spec, region, out);
    }
    // The whole chunk is decoded (once, into `out` or one scratch buffer):
    // refuse one above the cap before reading or allocating anything.
    check_decoded_chunk_size(spec.num_bytes(), spec.shape, src.describe());
    ObjectVersion ignored;
    auto data = read_stored_chunk(src, max_stored_chunk_bytes(*this, spec), spec, ignored);
    if (!data) return false;
    const size_t elem = spec.dtype.size;
    bool whole = region.count == spec.shape;
    for (size_t k = 0; whole && k < region.rank(); ++k)
        whole = region.start[k] == 0 &&
                (region.step.empty() || region.step[k] == 1 || region.count[k] <= 1);
    try {
        if (whole && is_c_contiguous(out, region.count, elem)) {
            decode(*data, spec, out.data);
            return true;
        }
        // Scratch chunk reused per thread: a fresh zero-filled buffer per
        // chunk costs an mmap, page faults and a memset (chunks >= 128 KiB).
        // Not when nested (a sharding codec under bytes->bytes codecs reads
        // its inner chunks through here while the shard is decoded).
        constexpr uint64_t kKeepScratch = 16ull << 20;
        thread_local Bytes scratch;
        thread_local bool scratch_busy = false;
        const uint64_t n = spec.num_bytes();
        const bool use_scratch = n <= kKeepScratch && !scratch_busy;
        Bytes local;
        Bytes& tmp = use_scratch ? scratch : local;
        if (tmp.size() < n) tmp.resize(n);
        struct Busy {
            bool& flag;
            bool on;
            ~Busy() {
                if (on) flag = false;
            }
        } busy{scratch_busy, use_scratch};
        if (use_scratch) scratch_busy = true;
        decode(*data, spec, tmp.data());
        copy_region_out(tmp.data(), spec.shape, elem, region, out);
    } catch (const FormatError& e) {
        throw FormatError(src.describe() + ": " + e.what());
    }
    return true;
}

nlohmann::json CodecChain::to_json() const {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& c : aa_)
        j.push_back(c->to_json());
    if (ab_) j.push_back(ab_->to_json());
    for (const auto& c : bb_)
        j.push_back(c->to_json());
    return j;
}

} // namespace zarr3
