// The `transpose` array->array codec and a cache-blocked N-d permuted copy.
#include "codecs/codecs_internal.hpp"

#include <algorithm>
#include <cstring>

namespace zarr3::codecs {
namespace {

constexpr uint64_t kTile = 32;

struct Elem16 {
    uint64_t a, b;
};

template <size_t N> inline void copy_elem(uint8_t* d, const uint8_t* s, size_t) {
    std::memcpy(d, s, N);
}
template <> inline void copy_elem<0>(uint8_t* d, const uint8_t* s, size_t elem) {
    std::memcpy(d, s, elem);
}

// Output is dense C order over `shape`; `ss` are source byte strides. Axis
// `p` is the one with the smallest source stride, q = last axis; when p != q
// the (p, q) plane is copied in kTile x kTile blocks.
template <size_t N>
void permute_impl(uint8_t* dst, const uint8_t* src, const Shape& shape,
                  const std::vector<uint64_t>& ss, size_t elem) {
    const size_t rank = shape.size();
    std::vector<uint64_t> ds(rank);
    uint64_t acc = elem;
    for (size_t k = rank; k-- > 0;) {
        ds[k] = acc;
        acc *= shape[k];
    }
    const size_t q = rank - 1;
    size_t p = q;
    for (size_t k = 0; k < rank; ++k)
        if (ss[k] < ss[p]) p = k;

    // Odometer over the axes other than p and q.
    std::vector<uint64_t> idx(rank, 0);
    for (;;) {
        uint64_t doff = 0, soff = 0;
        for (size_t k = 0; k < rank; ++k) {
            doff += idx[k] * ds[k];
            soff += idx[k] * ss[k];
        }
        if (p == q) {
            uint8_t* d = dst + doff;
            const uint8_t* s = src + soff;
            for (uint64_t i = 0; i < shape[q]; ++i)
                copy_elem<N>(d + i * elem, s + i * ss[q], elem);
        } else {
            for (uint64_t p0 = 0; p0 < shape[p]; p0 += kTile) {
                uint64_t p1 = std::min(shape[p], p0 + kTile);
                for (uint64_t q0 = 0; q0 < shape[q]; q0 += kTile) {
                    uint64_t q1 = std::min(shape[q], q0 + kTile);
                    for (uint64_t ip = p0; ip < p1; ++ip) {
                        uint8_t* d = dst + doff + ip * ds[p];
                        const uint8_t* s = src + soff + ip * ss[p];
                        for (uint64_t iq = q0; iq < q1; ++iq)
                            copy_elem<N>(d + iq * elem, s + iq * ss[q], elem);
                    }
                }
            }
        }
        size_t k = rank;
        for (;;) {
            if (k == 0) return;
            --k;
            if (k == p || k == q) continue;
            if (++idx[k] < shape[k]) break;
            idx[k] = 0;
        }
    }
}

class TransposeCodec : public ArrayToArrayCodec {
  public:
    explicit TransposeCodec(std::vector<size_t> order) : order_(std::move(order)) {}
    std::string name() const override { return "transpose"; }

    std::vector<size_t> encoded_axis_order(size_t rank) const override {
        if (rank != order_.size())
            throw FormatError("transpose codec: order has " + std::to_string(order_.size()) +
                              " axes but the array has " + std::to_string(rank));
        return order_;
    }
    ChunkSpec encoded_spec(const ChunkSpec& decoded) const override {
        check_rank(decoded);
        ChunkSpec out = decoded;
        for (size_t k = 0; k < order_.size(); ++k)
            out.shape[k] = decoded.shape[order_[k]];
        return out;
    }

    // encoded[j] = decoded[i] with i[order[k]] = j[k].
    Bytes encode(Bytes data, const ChunkSpec& decoded) const override {
        check(data, decoded);
        if (is_identity()) return data;
        auto cs = c_strides_u(decoded.shape, decoded.dtype.size);
        std::vector<uint64_t> ss(order_.size());
        for (size_t k = 0; k < order_.size(); ++k)
            ss[k] = cs[order_[k]];
        Bytes out(data.size());
        permute_copy(out.data(), data.data(), encoded_spec(decoded).shape, ss, decoded.dtype.size);
        return out;
    }

    Bytes decode(Bytes data, const ChunkSpec& decoded) const override {
        check(data, decoded);
        if (is_identity()) return data;
        ChunkSpec enc = encoded_spec(decoded);
        auto cs = c_strides_u(enc.shape, decoded.dtype.size);
        std::vector<uint64_t> ss(order_.size());
        for (size_t k = 0; k < order_.size(); ++k)
            ss[order_[k]] = cs[k];
        Bytes out(data.size());
        permute_copy(out.data(), data.data(), decoded.shape, ss, decoded.dtype.size);
        return out;
    }

    nlohmann::json to_json() const override {
        return {{"name", "transpose"}, {"configuration", {{"order", order_}}}};
    }

  private:
    static std::vector<uint64_t> c_strides_u(const Shape& shape, uint64_t elem) {
        std::vector<uint64_t> s(shape.size());
        for (size_t k = shape.size(); k-- > 0;) {
            s[k] = elem;
            elem *= shape[k];
        }
        return s;
    }
    bool is_identity() const {
        for (size_t k = 0; k < order_.size(); ++k)
            if (order_[k] != k) return false;
        return true;
    }
    void check_rank(const ChunkSpec& s) const {
        if (s.shape.size() != order_.size())
            throw Error("transpose codec: order has " + std::to_string(order_.size()) +
                        " axes but the chunk has " + std::to_string(s.shape.size()));
    }
    void check(const Bytes& data, const ChunkSpec& s) const {
        check_rank(s);
        if (data.size() != s.num_bytes())
            throw FormatError("transpose codec: got " + std::to_string(data.size()) +
                              " bytes for a chunk of " + std::to_string(s.num_bytes()));
    }
    std::vector<size_t> order_;
};

} // namespace

void permute_copy(uint8_t* dst, const uint8_t* src, const Shape& out_shape,
                  const std::vector<uint64_t>& src_strides, size_t elem) {
    // Drop unit axes; an empty array copies nothing.
    Shape shape;
    std::vector<uint64_t> ss;
    for (size_t k = 0; k < out_shape.size(); ++k) {
        if (out_shape[k] == 0) return;
        if (out_shape[k] == 1) continue;
        shape.push_back(out_shape[k]);
        ss.push_back(src_strides[k]);
    }
    if (shape.empty()) {
        std::memcpy(dst, src, elem);
        return;
    }
    switch (elem) {
    case 1:
        permute_impl<1>(dst, src, shape, ss, elem);
        break;
    case 2:
        permute_impl<2>(dst, src, shape, ss, elem);
        break;
    case 4:
        permute_impl<4>(dst, src, shape, ss, elem);
        break;
    case 8:
        permute_impl<8>(dst, src, shape, ss, elem);
        break;
    case 16:
        permute_impl<16>(dst, src, shape, ss, elem);
        break;
    default:
        permute_impl<0>(dst, src, shape, ss, elem);
        break;
    }
}

std::shared_ptr<ArrayToArrayCodec> make_transpose(const nlohmann::json& config,
                                                  const ChunkSpec& spec, const std::string& where) {
    auto obj = config_object(config, "transpose", where, {"order"});
    const size_t rank = spec.shape.size();
    if (!obj.contains("order"))
        throw FormatError(prefix(where, "transpose") +
                          "configuration member \"order\" is required");
    const auto& o = obj["order"];
    std::vector<size_t> order(rank);
    if (o.is_string() && (o == "C" || o == "F")) {
        for (size_t k = 0; k < rank; ++k)
            order[k] = o == "C" ? k : rank - 1 - k;
        return std::make_shared<TransposeCodec>(order);
    }
    std::string bad = prefix(where, "transpose") +
                      "configuration member \"order\" must be a "
                      "permutation of 0.." +
                      std::to_string(rank) + "-1 (array rank " + std::to_string(rank) + "), got " +
                      o.dump();
    if (!o.is_array() || o.size() != rank) throw FormatError(bad);
    std::vector<bool> seen(rank, false);
    for (size_t k = 0; k < rank; ++k) {
        if (!o[k].is_number_integer()) throw FormatError(bad);
        int64_t v = o[k].get<int64_t>();
        if (v < 0 || static_cast<uint64_t>(v) >= rank || seen[v]) throw FormatError(bad);
        seen[v] = true;
        order[k] = static_cast<size_t>(v);
    }
    return std::make_shared<TransposeCodec>(order);
}

} // namespace zarr3::codecs
