// The `cast_value` array->array codec (zarr-extensions): converts values to another
// numeric data type with the stated rounding and out-of-range rules, and back on
// decode; an optional `scalar_map` maps given values (such as NaN) first.
#include "codecs/codecs_internal.hpp"
#include "codecs/numeric.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace zarr3::codecs {
namespace {

using Map = std::vector<std::pair<Num, Bytes>>; // source value -> target element

bool same_value(const Num& a, const Num& b) {
    if (a.is_float || b.is_float) {
        const double x = a.as_double(), y = b.as_double();
        return (std::isnan(x) && std::isnan(y)) || x == y;
    }
    return a.i == b.i;
}

class CastValueCodec : public ArrayToArrayCodec {
  public:
    CastValueCodec(nlohmann::json config, DataType target, Rounding r, OutOfRange oor,
                   Map encode_map, Map decode_map, std::string where)
        : config_(std::move(config)), target_(std::move(target)), rounding_(r), oor_(oor),
          encode_map_(std::move(encode_map)), decode_map_(std::move(decode_map)),
          where_(std::move(where)) {}

    std::string name() const override { return "cast_value"; }

    ChunkSpec encoded_spec(const ChunkSpec& decoded) const override {
        ChunkSpec s = decoded;
        s.dtype = target_;
        s.fill_value.assign(target_.size, 0);
        try {
            if (decoded.fill_value.size() == decoded.dtype.size)
                convert(decoded.fill_value.data(), decoded.dtype, s.fill_value.data(), target_, 1,
                        encode_map_, "encoding");
        } catch (const FormatError&) {
            s.fill_value.assign(target_.size, 0); // a fill value the target cannot hold
        }
        return s;
    }

    Bytes encode(Bytes data, const ChunkSpec& decoded) const override {
        const uint64_t n = data.size() / decoded.dtype.size;
        Bytes out(static_cast<size_t>(n * target_.size));
        convert(data.data(), decoded.dtype, out.data(), target_, n, encode_map_, "encoding");
        return out;
    }

    Bytes decode(Bytes data, const ChunkSpec& decoded) const override {
        const uint64_t n = data.size() / target_.size;
        Bytes out(static_cast<size_t>(n * decoded.dtype.size));
        convert(data.data(), target_, out.data(), decoded.dtype, n, decode_map_, "decoding");
        return out;
    }

    nlohmann::json to_json() const override {
        return {{"name", "cast_value"}, {"configuration", config_}};
    }

  private:
    void convert(const uint8_t* src, const DataType& from, uint8_t* dst, const DataType& to,
                 uint64_t n, const Map& map, const char* what) const {
        const std::string ctx = prefix(where_, "cast_value") + what;
        for (uint64_t k = 0; k < n; ++k) {
            const Num v = load_num(from, src + k * from.size);
            uint8_t* d = dst + k * to.size;
            bool mapped = false;
            for (const auto& [key, value] : map)
                if (!mapped && same_value(v, key)) {
                    std::copy(value.begin(), value.end(), d);
                    mapped = true;
                }
            if (!mapped) store_num(to, v, d, rounding_, oor_, ctx);
        }
    }

    nlohmann::json config_;
    DataType target_;
    Rounding rounding_;
    OutOfRange oor_;
    Map encode_map_, decode_map_;
    std::string where_;
};

// scalar_map.encode / .decode: a list of [from, to] pairs in fill-value encoding (or an
// object {"from": to}, the key being the JSON text of the value or a string such as "NaN").
Map parse_map(const nlohmann::json& obj, const char* dir, const DataType& from, const DataType& to,
              const std::string& where) {
    Map map;
    const auto it = obj.find(dir);
    if (it == obj.end() || it->is_null()) return map;
    const std::string at = prefix(where, "cast_value") + "scalar_map." + dir;
    nlohmann::json pairs = *it;
    if (pairs.is_object()) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& [key, value] : pairs.items()) {
            nlohmann::json k = nlohmann::json::parse(key, nullptr, false);
            list.push_back(
                nlohmann::json::array({k.is_discarded() ? nlohmann::json(key) : k, value}));
        }
        pairs = std::move(list);
    }
    if (!pairs.is_array() || pairs.size() > 1024)
        throw FormatError(at + ": expected a list of [from, to] pairs");
    for (const auto& pair : pairs) {
        if (!pair.is_array() || pair.size() != 2)
            throw FormatError(at + ": expected a list of [from, to] pairs, got " + pair.dump());
        const Bytes key = parse_fill_value(pair[0], from, at);
        map.emplace_back(load_num(from, key.data()), parse_fill_value(pair[1], to, at));
    }
    return map;
}

} // namespace

std::shared_ptr<ArrayToArrayCodec>
make_cast_value(const nlohmann::json& config, const ChunkSpec& spec, const std::string& where) {
    const auto obj = config_object(config, "cast_value", where,
                                   {"data_type", "rounding", "out_of_range", "scalar_map"});
    if (!obj.contains("data_type"))
        throw FormatError(prefix(where, "cast_value") +
                          "configuration member \"data_type\" is required");
    const DataType target = parse_data_type(obj["data_type"], prefix(where, "cast_value"));
    for (const DataType* dt : {&spec.dtype, &target})
        if (!is_numeric(*dt))
            throw FormatError(prefix(where, "cast_value") +
                              "casts between integer and floating-point data types, not " +
                              dt->name);
    const std::string r = get_choice(
        obj, "rounding", "cast_value", where,
        {"nearest-even", "towards-zero", "towards-positive", "towards-negative", "nearest-away"},
        "nearest-even");
    const std::string o =
        get_choice(obj, "out_of_range", "cast_value", where, {"error", "clamp", "wrap"}, "error");
    if (o == "wrap" && target.kind == DTypeKind::Float)
        throw FormatError(prefix(where, "cast_value") +
                          "out_of_range \"wrap\" needs an integer data_type");
    const Rounding rounding = r == "towards-zero"       ? Rounding::TowardsZero
                              : r == "towards-positive" ? Rounding::TowardsPositive
                              : r == "towards-negative" ? Rounding::TowardsNegative
                              : r == "nearest-away"     ? Rounding::NearestAway
                                                        : Rounding::NearestEven;
    const OutOfRange oor = o == "clamp"  ? OutOfRange::Clamp
                           : o == "wrap" ? OutOfRange::Wrap
                                         : OutOfRange::Error;
    Map enc, dec;
    if (const auto sm = obj.find("scalar_map"); sm != obj.end()) {
        if (!sm->is_object())
            throw FormatError(prefix(where, "cast_value") + "scalar_map must be an object");
        enc = parse_map(*sm, "encode", spec.dtype, target, where);
        dec = parse_map(*sm, "decode", target, spec.dtype, where);
    }
    return std::make_shared<CastValueCodec>(obj, target, rounding, oor, std::move(enc),
                                            std::move(dec), where);
}

} // namespace zarr3::codecs
