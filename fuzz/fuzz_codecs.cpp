// libFuzzer target: each codec's decode on fuzzed encoded bytes.
//
// Input: [codec u8][param u8][size u16] encoded bytes.
//   codec % 11: 0 gzip, 1 zstd, 2 blosc, 3 crc32c, 7 numcodecs.zlib / lz4, 8 numcodecs.shuffle,
//   10 numcodecs.crc32 / adler32 (checksum first or last)
//   (bytes->bytes: decode with an expected size when param bit 0 is set, always bounded by a
//   max_size), 4 bytes (array->bytes, data type and endianness from param), 5 transpose (rank
//   and order from param), 6 vlen-utf8 (a string chunk of size % 4096 elements), 9 a numcodecs
//   filter (delta, fixedscaleoffset, bitround or quantize, data types from param). A successful
//   decode must honour the sizes, and re-encoding the result must decode back to it (for the
//   lossless codecs; bitround and quantize must round idempotently).
#include "fuzz_util.hpp"

#include "zarr3/codec.hpp"

#include <cstdio>

using namespace zarr3;
using nlohmann::json;

namespace {

const std::string kWhere = "fuzz codecs[0]";
constexpr uint64_t kMaxSize = 1 << 20;
const char* const kTypes[] = {"bool",    "int8",    "uint16",    "int32",      "float32",
                              "float64", "float16", "complex64", "complex128", "uint64"};

ChunkSpec spec_of(const Shape& shape, const char* dtype) {
    ChunkSpec s;
    s.shape = shape;
    s.dtype = data_type_from_name(dtype);
    s.fill_value.assign(s.dtype.size, 0);
    return s;
}

void bytes_to_bytes(uint8_t codec, uint8_t param, uint16_t size, ByteView in) {
    std::shared_ptr<BytesToBytesCodec> c;
    switch (codec) {
    case 0:
        c = make_bytes_to_bytes("gzip", {{"level", 1}}, kWhere);
        break;
    case 1:
        c = make_bytes_to_bytes("zstd", {{"level", 1}, {"checksum", bool(param & 2)}}, kWhere);
        break;
    case 2:
        c = make_bytes_to_bytes("blosc",
                                {{"cname", (param & 2) ? "zstd" : "lz4"},
                                 {"clevel", 5},
                                 {"shuffle", (param & 4) ? "bitshuffle" : "shuffle"},
                                 {"typesize", 1 + (param >> 4)}},
                                kWhere);
        break;
    case 7:
        c = (param & 2) ? make_bytes_to_bytes("numcodecs.lz4", {{"acceleration", 1}}, kWhere)
                        : make_bytes_to_bytes("numcodecs.zlib", {{"level", 1}}, kWhere);
        break;
    case 8:
        c = make_bytes_to_bytes("numcodecs.shuffle", {{"elementsize", param >> 4}}, kWhere);
        break;
    case 10:
        c = make_bytes_to_bytes((param & 2) ? "numcodecs.adler32" : "numcodecs.crc32",
                                {{"location", (param & 4) ? "end" : "start"}}, kWhere);
        break;
    default:
        c = make_bytes_to_bytes("crc32c", nullptr, kWhere);
        break;
    }
    std::optional<uint64_t> expected;
    if (param & 1) expected = size;
    const uint64_t max_size = (param & 8) ? size : kMaxSize;
    Bytes out;
    try {
        out = c->decode(in, expected, max_size);
    } catch (const Error&) {
        return;
    }
    FUZZ_CHECK(out.size() <= max_size);
    if (expected) FUZZ_CHECK(out.size() == *expected);
    const Bytes again = c->encode(out);
    try {
        FUZZ_CHECK(c->decode(again, out.size(), out.size()) == out);
    } catch (const Error& e) {
        fprintf(stderr, "re-encoded value failed to decode: %s\n", e.what());
        __builtin_trap();
    }
}

void array_to_bytes(uint8_t param, uint16_t size, ByteView in) {
    const char* dtype = kTypes[(param >> 1) % 10];
    const ChunkSpec spec = spec_of({uint64_t(size % 512), uint64_t(1 + (size >> 9) % 8)}, dtype);
    auto c =
        make_array_to_bytes("bytes", {{"endian", (param & 1) ? "big" : "little"}}, spec, kWhere);
    Bytes out(spec.num_bytes());
    try {
        c->decode(in, spec, out.data());
    } catch (const Error&) {
        return;
    }
    FUZZ_CHECK(in.size() == out.size());
    const Bytes again = c->encode(out, spec);
    FUZZ_CHECK(again.size() == in.size() && std::equal(again.begin(), again.end(), in.begin()));
}

// The fuzzed bytes cut or padded to an encoded chunk (`data`) and decoded (`dec`, checked
// for its size); false when decoding refuses them.
bool decode_fuzzed(const ArrayToArrayCodec& c, const ChunkSpec& spec, ByteView in, Bytes& data,
                   Bytes& dec) {
    data.assign(in.begin(), in.end());
    data.resize(c.encoded_spec(spec).num_bytes());
    try {
        dec = c.decode(data, spec);
    } catch (const Error&) {
        return false;
    }
    FUZZ_CHECK(dec.size() == spec.num_bytes());
    return true;
}

void array_to_array(uint8_t param, uint16_t size, ByteView in) {
    const size_t rank = 1 + param % 4;
    Shape shape;
    for (size_t k = 0; k < rank; ++k)
        shape.push_back(1 + ((size >> (4 * k)) & 7));
    // order: a permutation picked by param, or "C"/"F", or (bad) a repeated axis
    json order = json::array();
    std::vector<size_t> perm(rank);
    for (size_t k = 0; k < rank; ++k)
        perm[k] = k;
    unsigned r = param >> 2;
    for (size_t k = rank; k > 1; --k) {
        std::swap(perm[k - 1], perm[r % k]);
        r /= unsigned(k);
    }
    for (size_t v : perm)
        order.push_back(v);
    if (param & 0x80) order = (param & 0x40) ? json("F") : json("C");
    const char* dtype = kTypes[(size >> 12) % 10];
    ChunkSpec spec = spec_of(shape, dtype);
    std::shared_ptr<ArrayToArrayCodec> c;
    try {
        c = make_array_to_array("transpose", {{"order", order}}, spec, kWhere);
    } catch (const Error&) {
        return;
    }
    const ChunkSpec enc = c->encoded_spec(spec);
    FUZZ_CHECK(enc.num_bytes() == spec.num_bytes());
    Bytes data, dec;
    if (!decode_fuzzed(*c, spec, in, data, dec)) return;
    FUZZ_CHECK(c->encode(dec, spec) == data);
}

// numcodecs filters on a 1-D chunk of `size % 2048` elements.
void numcodecs_filter(uint8_t param, uint16_t size, ByteView in) {
    const char* dtype = kTypes[1 + (param >> 4) % 9]; // not bool
    const ChunkSpec spec = spec_of({uint64_t(size % 2048)}, dtype);
    const char* astypes[] = {"<i1", "<u2", "<i4", "<f4", "<f8", "|u1", "<i8", "<u8"};
    const char* astype = astypes[(param >> 2) % 8];
    json config;
    const char* name = "numcodecs.bitround";
    switch (param % 4) {
    case 0:
        name = "numcodecs.delta";
        config = {{"astype", astype}};
        break;
    case 1:
        name = "numcodecs.fixedscaleoffset";
        config = {{"offset", double(size) / 7}, {"scale", 1 + (param >> 5)}, {"astype", astype}};
        break;
    case 2:
        config = {{"keepbits", param >> 3}};
        break;
    default:
        name = "numcodecs.quantize";
        config = {{"digits", int(param >> 2) - 20}};
        break;
    }
    std::shared_ptr<ArrayToArrayCodec> c;
    try {
        c = make_array_to_array(name, config, spec, kWhere);
    } catch (const Error&) {
        return;
    }
    const ChunkSpec enc = c->encoded_spec(spec);
    Bytes data, dec;
    if (!decode_fuzzed(*c, spec, in, data, dec)) return;
    Bytes again;
    try {
        again = c->encode(dec, spec);
    } catch (const Error&) {
        return; // fixedscaleoffset: a decoded value may not pack again (NaN, range)
    }
    FUZZ_CHECK(again.size() == enc.num_bytes());
    // delta on integers: one-to-one unless the differences are stored wider than the values
    if (param % 4 == 0 && spec.dtype.kind != DTypeKind::Float && enc.dtype.size <= spec.dtype.size)
        FUZZ_CHECK(again == data);
    if (param % 4 >= 2) FUZZ_CHECK(c->encode(again, spec) == again);
}

// A decoded string chunk must encode back to exactly the input (the format has
// one encoding per value).
void vlen_utf8(uint16_t size, ByteView in) {
    ChunkSpec spec;
    spec.shape = {uint64_t(size % 4096)};
    spec.dtype = parse_data_type(json("string"), kWhere);
    const auto codec = make_array_to_bytes("vlen-utf8", nullptr, spec, kWhere);
    const auto* c = dynamic_cast<const StringCodec*>(codec.get());
    FUZZ_CHECK(c != nullptr);
    StringChunk v;
    try {
        v = c->decode_strings(in, spec);
    } catch (const Error&) {
        return;
    }
    FUZZ_CHECK(v.size() == spec.num_elements());
    const Bytes again = c->encode_strings(v, spec);
    FUZZ_CHECK(again.size() == in.size() && std::equal(again.begin(), again.end(), in.begin()));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzzutil::Reader r(data, size);
    const uint8_t codec = r.u8() % 11, param = r.u8();
    const uint16_t n = r.u16();
    const std::string_view rest = r.rest();
    const ByteView in(reinterpret_cast<const uint8_t*>(rest.data()), rest.size());
    if (codec < 4 || codec == 7 || codec == 8 || codec == 10)
        bytes_to_bytes(codec, param, n, in);
    else if (codec == 9)
        numcodecs_filter(param, n, in);
    else if (codec == 4)
        array_to_bytes(param, n, in);
    else if (codec == 5)
        array_to_array(param, n, in);
    else
        vlen_utf8(n, in);
    return 0;
}
