// The numcodecs filters zarr-python writes under "numcodecs.<id>" names (zarr-extensions,
// folder codecs/numcodecs.*), with numcodecs' own arithmetic so that values read back bit
// for bit as numcodecs decodes them:
// - numcodecs.bitround {keepbits}: floats keep `keepbits` mantissa bits, rounded half to
//   even on encode; decoding is the identity.
// - numcodecs.fixedscaleoffset {offset, scale, dtype, astype}: encode round((x - offset) *
//   scale) as `astype`; decode enc / scale + offset, cast to `dtype` (towards zero for
//   integers, as numpy's astype).
// - numcodecs.quantize {digits, dtype, astype}: round(x * 2^b) / 2^b with numcodecs' b for
//   `digits`, in the array's float type; decoding is the identity.
// - numcodecs.delta {dtype, astype}: the first value, then differences of neighbours (C
//   order, the whole chunk as one sequence); decode is the running sum. Integers wrap.
// - numcodecs.shuffle {elementsize}: byte k of every element together (bytes->bytes).
// - numcodecs.zlib / numcodecs.gzip / numcodecs.zstd / numcodecs.blosc: the zlib format, and
//   the gzip, zstd and blosc codecs under numcodecs' names and configurations (the name is kept
//   when metadata is written back).
// - numcodecs.lz4 {acceleration}: the decoded size (int32 LE), then one LZ4 block.
// - numcodecs.crc32 / numcodecs.adler32 / numcodecs.crc32c {location}: a checksum before
//   ("start") or after the value (crc32c.cpp).
#include "codecs/codecs_internal.hpp"
#include "codecs/numeric.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <lz4.h>

namespace zarr3::codecs {
namespace {

// numpy dtype text ("<f8", "|u1", "i2", "float32") -> a numeric DataType.
DataType numpy_dtype(const nlohmann::json& obj, const char* member, const std::string& codec,
                     const std::string& where, const DataType& fallback) {
    const auto it = obj.find(member);
    if (it == obj.end() || it->is_null()) return fallback;
    const std::string at = prefix(where, codec) + "configuration member \"" + member + "\"";
    if (!it->is_string())
        throw FormatError(at + " must be a numpy dtype string, got " + it->dump());
    std::string s = it->get<std::string>();
    if (!s.empty() && (s[0] == '<' || s[0] == '|' || s[0] == '=')) s.erase(0, 1);
    if (!s.empty() && s[0] == '>')
        throw FormatError(at + ": big-endian dtype \"" + it->get<std::string>() +
                          "\" is not supported");
    static const std::pair<const char*, const char*> codes[] = {
        {"i1", "int8"},    {"i2", "int16"},   {"i4", "int32"},  {"i8", "int64"},
        {"u1", "uint8"},   {"u2", "uint16"},  {"u4", "uint32"}, {"u8", "uint64"},
        {"f2", "float16"}, {"f4", "float32"}, {"f8", "float64"}};
    for (const auto& [code, name] : codes)
        if (s == code) s = name;
    DataType dt;
    try {
        dt = data_type_from_name(s);
    } catch (const Error&) {
        throw FormatError(at + ": unknown numpy dtype \"" + it->get<std::string>() + "\"");
    }
    if (!is_numeric(dt))
        throw FormatError(at + ": \"" + it->get<std::string>() +
                          "\" is not an integer or floating-point type");
    return dt;
}

// The "dtype" member, when given, names the array's own (decoded) type.
void check_dtype(const nlohmann::json& obj, const ChunkSpec& spec, const std::string& codec,
                 const std::string& where) {
    if (!is_numeric(spec.dtype))
        throw FormatError(prefix(where, codec) +
                          "applies to integer and floating-point data types, not " +
                          spec.dtype.name);
    const DataType d = numpy_dtype(obj, "dtype", codec, where, spec.dtype);
    if (d.name != spec.dtype.name)
        throw FormatError(prefix(where, codec) + "\"dtype\" " + d.name +
                          " is not the data type of the values it receives (" + spec.dtype.name +
                          ")");
}

// Base of the filters below: keeps the configuration as written.
class NumcodecsFilter : public ArrayToArrayCodec {
  public:
    NumcodecsFilter(std::string name, nlohmann::json config, std::string where)
        : name_(std::move(name)), config_(std::move(config)), where_(std::move(where)) {}
    std::string name() const override { return name_; }
    nlohmann::json to_json() const override {
        return {{"name", name_}, {"configuration", config_}};
    }

  protected:
    // The encoded fill value; zeros when the fill value does not encode.
    ChunkSpec encoded_spec_as(const ChunkSpec& decoded, const DataType& enc) const {
        ChunkSpec s = decoded;
        s.dtype = enc;
        try {
            Bytes f = decoded.fill_value;
            if (f.size() == decoded.dtype.size) s.fill_value = encode(std::move(f), decoded);
            if (s.fill_value.size() != enc.size) s.fill_value.assign(enc.size, 0);
        } catch (const Error&) {
            s.fill_value.assign(enc.size, 0);
        }
        return s;
    }
    std::string at(const char* what) const { return prefix(where_, name_) + what; }

    std::string name_;
    nlohmann::json config_;
    std::string where_;
};

// ----------------------------------------------------------------- bitround
template <class U> void round_bits(uint8_t* p, uint64_t n, unsigned maskbits) {
    const U mask = static_cast<U>(static_cast<U>(~U(0)) << maskbits);
    const U half = static_cast<U>((U(1) << (maskbits - 1)) - 1);
    for (uint64_t k = 0; k < n; ++k) {
        U b;
        std::memcpy(&b, p + k * sizeof(U), sizeof(U));
        b = static_cast<U>(b + ((b >> maskbits) & 1u) + half);
        b = static_cast<U>(b & mask);
        std::memcpy(p + k * sizeof(U), &b, sizeof(U));
    }
}

class BitRoundCodec : public NumcodecsFilter {
  public:
    BitRoundCodec(nlohmann::json config, unsigned maskbits, std::string where)
        : NumcodecsFilter("numcodecs.bitround", std::move(config), std::move(where)),
          maskbits_(maskbits) {}
    ChunkSpec encoded_spec(const ChunkSpec& decoded) const override { return decoded; }
    Bytes encode(Bytes data, const ChunkSpec& decoded) const override {
        if (maskbits_ == 0) return data;
        const uint64_t n = data.size() / decoded.dtype.size;
        if (decoded.dtype.size == 2) round_bits<uint16_t>(data.data(), n, maskbits_);
        if (decoded.dtype.size == 4) round_bits<uint32_t>(data.data(), n, maskbits_);
        if (decoded.dtype.size == 8) round_bits<uint64_t>(data.data(), n, maskbits_);
        return data;
    }
    Bytes decode(Bytes data, const ChunkSpec&) const override { return data; }

  private:
    unsigned maskbits_;
};

// ----------------------------------------------------------------- quantize
// round(x * 2^bits) / 2^bits in the array's float type, with numcodecs' choice of bits for
// `digits` (the same libm calls as Python's math module); decoding is the identity.
class QuantizeCodec : public NumcodecsFilter {
  public:
    QuantizeCodec(nlohmann::json config, int digits, std::string where)
        : NumcodecsFilter("numcodecs.quantize", std::move(config), std::move(where)) {
        double exp = std::log10(std::pow(10.0, -digits));
        exp = exp < 0 ? std::floor(exp) : std::ceil(exp);
        scale_ = std::pow(2.0, std::ceil(std::log2(std::pow(10.0, -exp))));
    }
    ChunkSpec encoded_spec(const ChunkSpec& decoded) const override { return decoded; }
    Bytes encode(Bytes data, const ChunkSpec& decoded) const override {
        if (decoded.dtype.size == 4)
            apply<float>(data);
        else
            apply<double>(data);
        return data;
    }
    Bytes decode(Bytes data, const ChunkSpec&) const override { return data; }

  private:
    template <class F> void apply(Bytes& data) const {
        const F s = static_cast<F>(scale_);
        for (size_t k = 0; k + sizeof(F) <= data.size(); k += sizeof(F)) {
            F v;
            std::memcpy(&v, data.data() + k, sizeof(F));
            v = static_cast<F>(std::nearbyint(static_cast<F>(s * v)) / s);
            std::memcpy(data.data() + k, &v, sizeof(F));
        }
    }
    double scale_ = 1;
};

// --------------------------------------------------------- fixedscaleoffset
class FixedScaleOffsetCodec : public NumcodecsFilter {
  public:
    FixedScaleOffsetCodec(nlohmann::json config, double offset, double scale, DataType astype,
                          std::string where)
        : NumcodecsFilter("numcodecs.fixedscaleoffset", std::move(config), std::move(where)),
          offset_(offset), scale_(scale), astype_(std::move(astype)) {}

    ChunkSpec encoded_spec(const ChunkSpec& decoded) const override {
        return encoded_spec_as(decoded, astype_);
    }

    Bytes encode(Bytes data, const ChunkSpec& decoded) const override {
        // numpy: float32 data in float32 arithmetic, anything else in float64.
        const bool f32 = decoded.dtype.kind == DTypeKind::Float && decoded.dtype.size == 4;
        return convert(
            data, decoded.dtype, astype_, Rounding::NearestEven, "encoding", [&](const Num& x) {
                return f32 ? std::nearbyint((float(x.f) - float(offset_)) * float(scale_))
                           : std::nearbyint((x.as_double() - offset_) * scale_);
            });
    }

    Bytes decode(Bytes data, const ChunkSpec& decoded) const override {
        // Integers decode to float64 before the cast, which truncates towards zero.
        const bool f32 = astype_.kind == DTypeKind::Float && astype_.size == 4;
        return convert(data, astype_, decoded.dtype, Rounding::TowardsZero, "decoding",
                       [&](const Num& e) {
                           return f32 ? double(float(e.f) / float(scale_) + float(offset_))
                                      : e.as_double() / scale_ + offset_;
                       });
    }

  private:
    template <class F>
    Bytes convert(const Bytes& in, const DataType& from, const DataType& to, Rounding rounding,
                  const char* what, F value) const {
        const uint64_t n = in.size() / from.size;
        Bytes out(static_cast<size_t>(n * to.size));
        const std::string ctx = at(what);
        for (uint64_t k = 0; k < n; ++k) {
            Num r;
            r.is_float = true;
            r.f = value(load_num(from, in.data() + k * from.size));
            store_num(to, r, out.data() + k * to.size, rounding, OutOfRange::Error, ctx);
        }
        return out;
    }

    double offset_, scale_;
    DataType astype_;
};

// -------------------------------------------------------------------- delta
class DeltaCodec : public NumcodecsFilter {
  public:
    DeltaCodec(nlohmann::json config, DataType astype, std::string where)
        : NumcodecsFilter("numcodecs.delta", std::move(config), std::move(where)),
          astype_(std::move(astype)) {}

    ChunkSpec encoded_spec(const ChunkSpec& decoded) const override {
        return encoded_spec_as(decoded, astype_);
    }

    Bytes encode(Bytes data, const ChunkSpec& decoded) const override {
        return run(data, decoded.dtype, astype_, true);
    }
    Bytes decode(Bytes data, const ChunkSpec& decoded) const override {
        return run(data, astype_, decoded.dtype, false);
    }

  private:
    // Integers: 64-bit two's complement arithmetic, the low bytes stored (numpy wraps).
    // Floats (same type both sides): the arithmetic of the type, one step at a time.
    static Bytes run(const Bytes& in, const DataType& from, const DataType& to, bool enc) {
        const uint64_t n = in.size() / from.size;
        Bytes out(static_cast<size_t>(n * to.size));
        if (from.kind == DTypeKind::Float) {
            if (from.size == 4)
                floats<float>(in.data(), out.data(), n, enc);
            else
                floats<double>(in.data(), out.data(), n, enc);
            return out;
        }
        uint64_t prev = 0;
        for (uint64_t k = 0; k < n; ++k) {
            const auto v = static_cast<uint64_t>(load_num(from, in.data() + k * from.size).i);
            const uint64_t r = enc ? v - prev : v + prev;
            prev = enc ? v : r;
            std::memcpy(out.data() + k * to.size, &r, to.size); // little-endian host
        }
        return out;
    }
    template <class F> static void floats(const uint8_t* in, uint8_t* out, uint64_t n, bool enc) {
        F prev = 0;
        for (uint64_t k = 0; k < n; ++k) {
            F v;
            std::memcpy(&v, in + k * sizeof(F), sizeof(F));
            const F r = k == 0 ? v : enc ? F(v - prev) : F(v + prev);
            prev = enc ? v : r;
            std::memcpy(out + k * sizeof(F), &r, sizeof(F));
        }
    }

    DataType astype_;
};

// ------------------------------------------------------------------ shuffle
class ShuffleCodec : public ConfiguredBytesCodec {
  public:
    ShuffleCodec(nlohmann::json config, uint64_t elementsize, std::string where)
        : ConfiguredBytesCodec("numcodecs.shuffle", std::move(config)), size_(elementsize),
          where_(std::move(where)) {}
    Bytes encode(ByteView decoded) const override { return run(decoded, true); }
    Bytes decode(ByteView encoded, std::optional<uint64_t> expected,
                 uint64_t max_size) const override {
        if (encoded.size() > max_size)
            throw FormatError(prefix(where_, name()) + "decodes to " +
                              std::to_string(encoded.size()) + " bytes, more than the limit of " +
                              std::to_string(max_size));
        if (expected && *expected != encoded.size())
            throw FormatError(prefix(where_, name()) + "holds " + std::to_string(encoded.size()) +
                              " bytes, expected " + std::to_string(*expected));
        return run(encoded, false);
    }
    std::optional<uint64_t> encoded_size(uint64_t n) const override { return n; }

  private:
    Bytes run(ByteView in, bool enc) const {
        Bytes out(in.begin(), in.end());
        if (size_ <= 1) return out;
        if (in.size() % size_ != 0)
            throw FormatError(prefix(where_, name()) + std::to_string(in.size()) +
                              " bytes are not a whole number of " + std::to_string(size_) +
                              "-byte elements");
        const uint64_t count = in.size() / size_;
        for (uint64_t i = 0; i < count; ++i)
            for (uint64_t b = 0; b < size_; ++b) {
                const uint64_t elem = i * size_ + b, plane = b * count + i;
                out[enc ? plane : elem] = in[enc ? elem : plane];
            }
        return out;
    }

    uint64_t size_;
    std::string where_;
};

// ---------------------------------------------------------------------- lz4
// numcodecs' LZ4: the decoded size as a little-endian int32, then one LZ4 block.
class Lz4Codec : public ConfiguredBytesCodec {
  public:
    Lz4Codec(nlohmann::json config, int acceleration, std::string where)
        : ConfiguredBytesCodec("numcodecs.lz4", std::move(config)), acceleration_(acceleration),
          where_(std::move(where)) {}
    Bytes encode(ByteView decoded) const override {
        if (decoded.size() > size_t(LZ4_MAX_INPUT_SIZE))
            throw Error(prefix(where_, name()) + std::to_string(decoded.size()) +
                        " bytes are more than LZ4 takes at once");
        const int n = int(decoded.size());
        Bytes out(4 + size_t(LZ4_compressBound(n)));
        const auto size = static_cast<uint32_t>(n);
        std::memcpy(out.data(), &size, 4); // little-endian host
        const int w = LZ4_compress_fast(reinterpret_cast<const char*>(decoded.data()),
                                        reinterpret_cast<char*>(out.data() + 4), n,
                                        int(out.size() - 4), acceleration_);
        if (w <= 0) throw Error(prefix(where_, name()) + "compression failed");
        out.resize(4 + size_t(w));
        return out;
    }
    Bytes decode(ByteView encoded, std::optional<uint64_t> expected,
                 uint64_t max_size) const override {
        if (encoded.size() < 4 || encoded.size() - 4 > size_t(INT32_MAX))
            throw FormatError(prefix(where_, name()) + "a value of " +
                              std::to_string(encoded.size()) + " bytes is not an LZ4 block");
        int32_t size;
        std::memcpy(&size, encoded.data(), 4);
        if (size <= 0 || uint64_t(size) > max_size || (expected && uint64_t(size) != *expected))
            throw FormatError(
                prefix(where_, name()) + "the header's size " + std::to_string(size) +
                " is not the " +
                (expected ? std::to_string(*expected) + " bytes expected"
                          : "size of a value of at most " + std::to_string(max_size) + " bytes"));
        Bytes out(static_cast<size_t>(size));
        const int r =
            LZ4_decompress_safe(reinterpret_cast<const char*>(encoded.data() + 4),
                                reinterpret_cast<char*>(out.data()), int(encoded.size() - 4), size);
        if (r != size) throw FormatError(prefix(where_, name()) + "corrupt or truncated LZ4 block");
        return out;
    }

  private:
    int acceleration_;
    std::string where_;
};

// A bytes->bytes codec under another name (numcodecs.gzip, numcodecs.zstd).
class RenamedCodec : public ConfiguredBytesCodec {
  public:
    RenamedCodec(std::shared_ptr<BytesToBytesCodec> inner, std::string name, nlohmann::json config)
        : ConfiguredBytesCodec(std::move(name), std::move(config)), inner_(std::move(inner)) {}
    Bytes encode(ByteView d) const override { return inner_->encode(d); }
    void encode_into(ByteView d, Bytes& out) const override { inner_->encode_into(d, out); }
    Bytes decode(ByteView e, std::optional<uint64_t> x, uint64_t max) const override {
        return inner_->decode(e, x, max);
    }
    bool decode_into(ByteView e, uint8_t* out, uint64_t n) const override {
        return inner_->decode_into(e, out, n);
    }
    std::optional<uint64_t> encoded_size(uint64_t n) const override {
        return inner_->encoded_size(n);
    }
    uint64_t max_encoded_size(uint64_t n) const override { return inner_->max_encoded_size(n); }

  private:
    std::shared_ptr<BytesToBytesCodec> inner_;
};

} // namespace

std::shared_ptr<ArrayToArrayCodec> make_numcodecs_filter(const std::string& name,
                                                         const nlohmann::json& config,
                                                         const ChunkSpec& spec,
                                                         const std::string& where) {
    if (name == "numcodecs.bitround") {
        const auto obj = config_object(config, name, where, {"keepbits"});
        if (spec.dtype.kind != DTypeKind::Float)
            throw FormatError(prefix(where, name) + "applies to floating-point data types, not " +
                              spec.dtype.name);
        const unsigned mantissa = mantissa_bits(spec.dtype);
        const auto keep = get_int(obj, "keepbits", name, where, 0, mantissa, std::nullopt);
        return std::make_shared<BitRoundCodec>(obj, mantissa - unsigned(keep), where);
    }
    if (name == "numcodecs.quantize") {
        const auto obj = config_object(config, name, where, {"digits", "dtype", "astype"});
        check_dtype(obj, spec, name, where);
        const DataType astype = numpy_dtype(obj, "astype", name, where, spec.dtype);
        if (spec.dtype.kind != DTypeKind::Float || spec.dtype.size < 4 ||
            astype.name != spec.dtype.name)
            throw FormatError(prefix(where, name) + "dtype " + spec.dtype.name + " with astype " +
                              astype.name + " is not supported (float32 or float64, kept)");
        const auto digits = get_int(obj, "digits", name, where, -30, 30, std::nullopt);
        return std::make_shared<QuantizeCodec>(obj, int(digits), where);
    }
    if (name == "numcodecs.fixedscaleoffset") {
        const auto obj = config_object(config, name, where, {"offset", "scale", "dtype", "astype"});
        check_dtype(obj, spec, name, where);
        const DataType astype = numpy_dtype(obj, "astype", name, where, spec.dtype);
        for (const DataType* d : {&spec.dtype, &astype})
            if (d->kind == DTypeKind::Float && d->size == 2)
                throw FormatError(prefix(where, name) + "float16 is not supported");
        const auto number = [&](const char* member, double def) {
            const auto it = obj.find(member);
            if (it == obj.end() || it->is_null()) return def;
            if (!it->is_number() || !std::isfinite(it->get<double>()))
                throw FormatError(prefix(where, name) + "configuration member \"" + member +
                                  "\" must be a finite number, got " + it->dump());
            return it->get<double>();
        };
        const double scale = number("scale", 1), offset = number("offset", 0);
        if (scale == 0) throw FormatError(prefix(where, name) + "\"scale\" must be non-zero");
        const bool f32 = (spec.dtype.kind == DTypeKind::Float && spec.dtype.size == 4) ||
                         (astype.kind == DTypeKind::Float && astype.size == 4);
        const double lim = f32 ? double(std::numeric_limits<float>::max()) : HUGE_VAL;
        if (std::fabs(scale) > lim || std::fabs(offset) > lim)
            throw FormatError(prefix(where, name) + "\"scale\" and \"offset\" must fit float32");
        return std::make_shared<FixedScaleOffsetCodec>(obj, offset, scale, astype, where);
    }
    if (name == "numcodecs.delta") {
        const auto obj = config_object(config, name, where, {"dtype", "astype"});
        check_dtype(obj, spec, name, where);
        const DataType astype = numpy_dtype(obj, "astype", name, where, spec.dtype);
        const bool ints = spec.dtype.kind != DTypeKind::Float && astype.kind != DTypeKind::Float;
        const bool same_float = spec.dtype.kind == DTypeKind::Float &&
                                astype.name == spec.dtype.name && spec.dtype.size >= 4;
        if (!ints && !same_float)
            throw FormatError(prefix(where, name) + "dtype " + spec.dtype.name + " with astype " +
                              astype.name +
                              " is not supported (integers, or float32/float64 kept as they are)");
        return std::make_shared<DeltaCodec>(obj, astype, where);
    }
    throw FormatError(where + ": unknown array->array codec \"" + name + "\"");
}

std::shared_ptr<BytesToBytesCodec> make_numcodecs_bytes(const std::string& name,
                                                        const nlohmann::json& config,
                                                        const std::string& where) {
    if (name == "numcodecs.shuffle") {
        const auto obj = config_object(config, name, where, {"elementsize"});
        const auto size = get_int(obj, "elementsize", name, where, 0, 1 << 20, 4);
        return std::make_shared<ShuffleCodec>(obj, uint64_t(size), where);
    }
    if (name == "numcodecs.zlib" || name == "numcodecs.gzip") {
        const auto obj = config_object(config, name, where, {"level"});
        const auto level = get_int(obj, "level", name, where, 0, 9, 1);
        return make_deflate(name == "numcodecs.zlib", int(level), name, obj);
    }
    if (name == "numcodecs.zstd") {
        const auto obj = config_object(config, name, where, {"level", "checksum"});
        nlohmann::json inner = {
            {"level", obj.contains("level") ? obj["level"] : nlohmann::json(1)}};
        if (obj.contains("checksum")) inner["checksum"] = obj["checksum"];
        return std::make_shared<RenamedCodec>(make_zstd(inner, where), name, obj);
    }
    if (name == "numcodecs.lz4") {
        const auto obj = config_object(config, name, where, {"acceleration"});
        const auto acc = get_int(obj, "acceleration", name, where, 1, 65537, 1);
        return std::make_shared<Lz4Codec>(obj, int(acc), where);
    }
    if (name == "numcodecs.crc32" || name == "numcodecs.adler32" || name == "numcodecs.crc32c")
        return make_numcodecs_checksum(name, config, where);
    if (name == "numcodecs.blosc") {
        // numcodecs' Blosc sees zarr-python's chunks as bytes: typesize 1, where its automatic
        // shuffle (-1) is the bit shuffle. Decoding reads Blosc's own header.
        const auto obj =
            config_object(config, name, where, {"cname", "clevel", "shuffle", "blocksize"});
        const auto shuffle = get_int(obj, "shuffle", name, where, -1, 2, 1);
        nlohmann::json inner = {
            {"cname", obj.contains("cname") ? obj["cname"] : nlohmann::json("lz4")},
            {"clevel", obj.contains("clevel") ? obj["clevel"] : nlohmann::json(5)},
            {"shuffle", shuffle == 0   ? "noshuffle"
                        : shuffle == 1 ? "shuffle"
                                       : "bitshuffle"},
            {"typesize", 1},
            {"blocksize", obj.contains("blocksize") ? obj["blocksize"] : nlohmann::json(0)}};
        return std::make_shared<RenamedCodec>(make_blosc(inner, where), name, obj);
    }
    throw FormatError(where + ": unknown bytes->bytes codec \"" + name + "\"");
}

} // namespace zarr3::codecs
