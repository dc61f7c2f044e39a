// The `scale_offset` array->array codec (zarr-extensions): encode (x - offset) * scale,
// decode x / scale + offset, in the arithmetic of the array's own data type; integer
// results out of range, and integer divisions with a remainder, are errors.
#include "codecs/codecs_internal.hpp"
#include "codecs/numeric.hpp"

#include <cmath>

namespace zarr3::codecs {
namespace {

class ScaleOffsetCodec : public ArrayToArrayCodec {
  public:
    ScaleOffsetCodec(nlohmann::json config, Num offset, Num scale, std::string where)
        : config_(std::move(config)), offset_(offset), scale_(scale), where_(std::move(where)) {}

    std::string name() const override { return "scale_offset"; }

    ChunkSpec encoded_spec(const ChunkSpec& decoded) const override {
        ChunkSpec s = decoded;
        try { // the encoded fill value (what inner chunks of a shard are compared against)
            if (s.fill_value.size() == s.dtype.size) apply(s.fill_value.data(), 1, s.dtype, true);
        } catch (const FormatError&) {
            s.fill_value = decoded.fill_value;
        }
        return s;
    }

    Bytes encode(Bytes data, const ChunkSpec& decoded) const override {
        apply(data.data(), data.size() / decoded.dtype.size, decoded.dtype, true);
        return data;
    }

    Bytes decode(Bytes data, const ChunkSpec& decoded) const override {
        apply(data.data(), data.size() / decoded.dtype.size, decoded.dtype, false);
        return data;
    }

    nlohmann::json to_json() const override {
        return {{"name", "scale_offset"}, {"configuration", config_}};
    }

  private:
    // One element, in place.
    void one(uint8_t* p, const DataType& dt, bool enc) const {
        const Num x = load_num(dt, p);
        Num r;
        if (dt.kind == DTypeKind::Float) {
            r.is_float = true;
            if (dt.size == 8) {
                r.f = enc ? (x.f - offset_.f) * scale_.f : x.f / scale_.f + offset_.f;
            } else { // float32 arithmetic (float16 rounds each step to half, as numpy does)
                const auto h = [&](float v) {
                    return dt.size == 2 ? half_to_float(float_to_half(v)) : v;
                };
                const auto xf = float(x.f), of = float(offset_.f), sf = float(scale_.f);
                r.f = enc ? h(h(xf - of) * sf) : h(h(xf / sf) + of);
            }
            store_num(dt, r, p, Rounding::NearestEven, OutOfRange::Clamp, "");
            return;
        }
        if (enc) {
            if (__builtin_mul_overflow(x.i - offset_.i, scale_.i, &r.i))
                throw FormatError(prefix(where_, "scale_offset") + "encoding overflows " + dt.name);
        } else {
            if (x.i % scale_.i != 0)
                throw FormatError(prefix(where_, "scale_offset") + "decoding " +
                                  std::to_string(static_cast<double>(x.i)) +
                                  " leaves a remainder when divided by the scale");
            r.i = x.i / scale_.i + offset_.i;
        }
        store_num(dt, r, p, Rounding::NearestEven, OutOfRange::Error,
                  prefix(where_, "scale_offset") + (enc ? "encoding" : "decoding"));
    }

    void apply(uint8_t* p, uint64_t n, const DataType& dt, bool enc) const {
        for (uint64_t k = 0; k < n; ++k)
            one(p + k * dt.size, dt, enc);
    }

    nlohmann::json config_;
    Num offset_, scale_;
    std::string where_;
};

} // namespace

std::shared_ptr<ArrayToArrayCodec>
make_scale_offset(const nlohmann::json& config, const ChunkSpec& spec, const std::string& where) {
    const auto obj = config_object(config, "scale_offset", where, {"offset", "scale"});
    if (!is_numeric(spec.dtype))
        throw FormatError(prefix(where, "scale_offset") +
                          "applies to integer and floating-point data types, not " +
                          spec.dtype.name);
    const auto value = [&](const char* member, int def) {
        if (!obj.contains(member)) {
            Num n;
            n.is_float = spec.dtype.kind == DTypeKind::Float;
            n.f = def;
            n.i = def;
            return n;
        }
        const Bytes b = parse_fill_value(obj[member], spec.dtype,
                                         prefix(where, "scale_offset") + "configuration");
        return load_num(spec.dtype, b.data());
    };
    const Num offset = value("offset", 0), scale = value("scale", 1);
    if (scale.as_double() == 0 || std::isnan(scale.as_double()))
        throw FormatError(prefix(where, "scale_offset") + "\"scale\" must be non-zero");
    return std::make_shared<ScaleOffsetCodec>(obj, offset, scale, where);
}

} // namespace zarr3::codecs
