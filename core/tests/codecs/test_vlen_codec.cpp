// The `string` data type and the vlen-utf8 codec: the byte format, round trips
// through codec chains (zstd, crc32c, transpose, sharding), the metadata rules,
// and every malformed-chunk case refused with a FormatError.
#include "zarr3/builder.hpp"
#include "zarr3/codec.hpp"
#include "zarr3/metadata.hpp"
#include "zarr3/sharding.hpp"

#include <gtest/gtest.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_codecs_test_vlen_codec {

using namespace zarr3;
using nlohmann::json;

namespace {

const json kVlen = {{"name", "vlen-utf8"}, {"configuration", json::object()}};

DataType string_type() {
    return parse_data_type(json("string"), "t");
}

ChunkSpec spec_of(const Shape& shape, const std::string& fill = "") {
    return ChunkSpec{shape, string_type(), Bytes(fill.begin(), fill.end())};
}

CodecChain chain_of(const json& codecs, const Shape& shape) {
    return CodecChain::parse(codecs, spec_of(shape), "t/zarr.json");
}

Bytes le32(uint32_t v) {
    return {uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)};
}

Bytes cat(std::initializer_list<Bytes> parts) {
    Bytes out;
    for (const auto& p : parts)
        out.insert(out.end(), p.begin(), p.end());
    return out;
}

Bytes text(const std::string& s) {
    return Bytes(s.begin(), s.end());
}

// The FormatError message of decoding `enc` as a chunk of `n` strings ("" if none).
std::string decode_error(const Bytes& enc, uint64_t n) {
    try {
        chain_of(json::array({kVlen}), {n}).decode_strings(enc, spec_of({n}));
    } catch (const FormatError& e) {
        return e.what();
    }
    return "";
}

} // namespace

TEST(VlenUtf8, ByteFormatIsCountThenLengthPrefixedText) {
    const auto chain = chain_of(json::array({kVlen}), {3});
    const StringChunk v{"x", "", "ζζ"};
    const Bytes enc = chain.encode_strings(v, spec_of({3}));
    EXPECT_EQ(enc, cat({le32(3), le32(1), text("x"), le32(0), le32(4), text("ζζ")}));
    EXPECT_EQ(chain.decode_strings(enc, spec_of({3})), v);
}

TEST(VlenUtf8, RoundTripsThroughCompressorsAndChecksums) {
    const StringChunk v{"", "Zürich", "東京", std::string(5000, 'a'), "\U0001F600", ""};
    for (const json& bb :
         {json{{"name", "zstd"}, {"configuration", {{"level", 3}}}},
          json{{"name", "gzip"}, {"configuration", {{"level", 5}}}}, json{{"name", "crc32c"}}}) {
        SCOPED_TRACE(bb.dump());
        const auto chain = chain_of(json::array({kVlen, bb}), {2, 3});
        const Bytes enc = chain.encode_strings(v, spec_of({2, 3}));
        EXPECT_EQ(chain.decode_strings(enc, spec_of({2, 3})), v);
    }
}

TEST(VlenUtf8, TransposeReordersElements) {
    const json tr = {{"name", "transpose"}, {"configuration", {{"order", {1, 0}}}}};
    const auto chain = chain_of(json::array({tr, kVlen}), {2, 3});
    const StringChunk v{"a", "b", "c", "d", "e", "f"}; // [[a b c] [d e f]]
    const Bytes enc = chain.encode_strings(v, spec_of({2, 3}));
    // Stored in the transposed (3 x 2) order: a d b e c f.
    const auto plain = chain_of(json::array({kVlen}), {6});
    EXPECT_EQ(plain.decode_strings(enc, spec_of({6})), (StringChunk{"a", "d", "b", "e", "c", "f"}));
    EXPECT_EQ(chain.decode_strings(enc, spec_of({2, 3})), v);
}

TEST(VlenUtf8, ShardedInnerChunksRoundTripAndSkipFill) {
    const json shard = {{"name", "sharding_indexed"},
                        {"configuration",
                         {{"chunk_shape", {2}},
                          {"codecs", json::array({kVlen})},
                          {"index_codecs", json::array({{{"name", "bytes"},
                                                         {"configuration", {{"endian", "little"}}}},
                                                        {{"name", "crc32c"}}})}}}};
    const auto chain = chain_of(json::array({shard}), {6});
    const StringChunk v{"a", "bb", "", "", "é", ""};
    const Bytes enc = chain.encode_strings(v, spec_of({6}));
    // Inner chunk 1 (two fill values) is not stored: 2 inner chunks + index.
    const Bytes c0 = cat({le32(2), le32(1), text("a"), le32(2), text("bb")});
    const Bytes c2 = cat({le32(2), le32(2), text("é"), le32(0)});
    EXPECT_EQ(enc.size(), c0.size() + c2.size() + 3 * 16 + 4);
    EXPECT_EQ(chain.decode_strings(enc, spec_of({6})), v);
}

TEST(VlenUtf8, MalformedChunksAreFormatErrors) {
    const Bytes ok = cat({le32(2), le32(1), text("a"), le32(1), text("b")});
    EXPECT_EQ(decode_error(ok, 2), "");
    EXPECT_NE(decode_error(Bytes{1, 0}, 2).find("no element count"), std::string::npos);
    EXPECT_NE(decode_error(cat({le32(3), le32(0)}), 2).find("holds 3 elements, expected 2"),
              std::string::npos);
    // A count matching the chunk but far more than the bytes can hold: refused
    // before anything is allocated for the elements.
    EXPECT_NE(decode_error(le32(1000000), 1000000).find("truncated"), std::string::npos);
    EXPECT_NE(decode_error(cat({le32(2), le32(1), text("a")}), 2).find("truncated"),
              std::string::npos);
    EXPECT_NE(decode_error(cat({le32(2), le32(1), text("a"), le32(7), text("bc"), le32(0)}), 2)
                  .find("has length 7, past the end"),
              std::string::npos);
    EXPECT_NE(decode_error(cat({le32(2), le32(1), text("a"), le32(0xffffffffu), le32(0)}), 2)
                  .find("past the end"),
              std::string::npos);
    EXPECT_NE(decode_error(cat({le32(1), le32(2), Bytes{0xc3, 0x28}}), 1).find("not valid UTF-8"),
              std::string::npos);
    EXPECT_NE(decode_error(cat({le32(1), le32(3), Bytes{0xed, 0xa0, 0x80}}), 1)
                  .find("not valid UTF-8"), // a surrogate
              std::string::npos);
    EXPECT_NE(decode_error(cat({ok, Bytes{0}}), 2).find("1 bytes after the last"),
              std::string::npos);
}

TEST(VlenUtf8, EncodeRefusesInvalidUtf8AndWrongCounts) {
    const auto chain = chain_of(json::array({kVlen}), {2});
    EXPECT_THROW(chain.encode_strings({"a", "\xff"}, spec_of({2})), Error);
    EXPECT_THROW(chain.encode_strings({"a"}, spec_of({2})), Error);
}

TEST(StringType, MetadataRules) {
    const DataType dt = string_type();
    EXPECT_TRUE(dt.is_variable());
    EXPECT_EQ(data_type_to_json(dt), json("string"));
    EXPECT_EQ(parse_fill_value(json("ab"), dt, "t"), text("ab"));
    EXPECT_EQ(fill_value_to_json(text("ζ"), dt), json("ζ"));
    EXPECT_THROW(parse_fill_value(json(0), dt, "t"), FormatError);
    EXPECT_THROW(parse_data_type(json{{"name", "string"}, {"configuration", {{"x", 1}}}}, "t"),
                 FormatError);
    EXPECT_EQ(parse_data_type(json("variable_length_utf8"), "t").kind, DTypeKind::String);
}

TEST(StringType, CodecChainRulesNameTheCodec) {
    const auto msg = [](const json& codecs, const DataType& dt) -> std::string {
        try {
            CodecChain::parse(codecs, ChunkSpec{{4}, dt, {}}, "a/zarr.json");
        } catch (const FormatError& e) {
            return e.what();
        }
        return "";
    };
    const json bytes = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
    const json so = {{"name", "scale_offset"}, {"configuration", {{"offset", 1}, {"scale", 2}}}};
    const std::string a = msg(json::array({bytes}), string_type());
    EXPECT_NE(a.find("a/zarr.json"), std::string::npos) << a;
    EXPECT_NE(a.find("needs the vlen-utf8 codec"), std::string::npos) << a;
    const std::string b = msg(json::array({kVlen}), data_type_from_name("int16"));
    EXPECT_NE(b.find("encodes data type string only, not int16"), std::string::npos) << b;
    const std::string c = msg(json::array({so, kVlen}), string_type());
    EXPECT_NE(c.find("\"scale_offset\" does not apply to data type string"), std::string::npos)
        << c;
    const std::string d = msg(json::array({{{"name", "zstd"}}}), string_type());
    EXPECT_NE(d.find("no array->bytes codec"), std::string::npos) << d;
}

TEST(StringType, BuilderWritesVlenUtf8AndCompressors) {
    const ArrayMetadata m =
        ArrayBuilder({5}, string_type()).regular_chunk_shape({2}).zstd(3).build();
    const json j = to_json(m);
    EXPECT_EQ(j["data_type"], "string");
    EXPECT_EQ(j["fill_value"], "");
    ASSERT_EQ(j["codecs"].size(), 2u);
    EXPECT_EQ(j["codecs"][0], kVlen);
    EXPECT_EQ(j["codecs"][1]["name"], "zstd");
    const ArrayMetadata f =
        ArrayBuilder({5}, string_type()).regular_chunk_shape({5}).fill_value(text("n/a")).build();
    EXPECT_EQ(to_json(f)["fill_value"], "n/a");
    // Sharded: vlen-utf8 inside each inner chunk.
    const ArrayMetadata s = ArrayBuilder({8}, string_type())
                                .regular_chunk_shape({8})
                                .sharding(ShardingCodecBuilder({4}))
                                .build();
    EXPECT_EQ(to_json(s)["codecs"][0]["configuration"]["codecs"][0], kVlen);
}

TEST(StringType, CodecChainFindsWhatItsArrayToBytesCodecOffers) {
    const json bytes = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
    const json index = json::array({bytes});
    const json inner_vlen = {
        {"chunk_shape", {2}}, {"codecs", json::array({kVlen})}, {"index_codecs", index}};
    const json inner_bytes = {
        {"chunk_shape", {2}}, {"codecs", json::array({bytes})}, {"index_codecs", index}};
    const json zstd = {{"name", "zstd"}, {"configuration", {{"level", 1}, {"checksum", false}}}};
    const auto int16 = ChunkSpec{{6}, data_type_from_name("int16"), Bytes(2, 0)};
    // vlen-utf8: strings, no partial reads.
    const auto vlen = chain_of(json::array({kVlen}), {6});
    EXPECT_TRUE(vlen.handles_strings());
    EXPECT_EQ(vlen.partial_reader(), nullptr);
    // sharding around vlen-utf8: both; a bytes->bytes codec after it leaves strings only.
    const json s_vlen = {{"name", "sharding_indexed"}, {"configuration", inner_vlen}};
    const auto shard_vlen = chain_of(json::array({s_vlen}), {6});
    EXPECT_TRUE(shard_vlen.handles_strings());
    EXPECT_NE(shard_vlen.partial_reader(), nullptr);
    EXPECT_NE(dynamic_cast<const StringShardingCodec*>(&shard_vlen.array_to_bytes()), nullptr);
    const auto shard_zstd = chain_of(json::array({s_vlen, zstd}), {6});
    EXPECT_TRUE(shard_zstd.handles_strings());
    EXPECT_EQ(shard_zstd.partial_reader(), nullptr);
    // sharding around bytes: partial reads, no strings.
    const json s_bytes = {{"name", "sharding_indexed"}, {"configuration", inner_bytes}};
    const auto shard_num = CodecChain::parse(json::array({s_bytes}), int16, "t");
    EXPECT_FALSE(shard_num.handles_strings());
    EXPECT_NE(shard_num.partial_reader(), nullptr);
    EXPECT_EQ(dynamic_cast<const StringCodec*>(&shard_num.array_to_bytes()), nullptr);
    const auto error_of = [](auto&& f) -> std::string {
        try {
            f();
        } catch (const Error& e) {
            return e.what();
        }
        return "NO ERROR";
    };
    const std::string e = error_of([&] { shard_num.encode_strings({"a"}, int16); });
    EXPECT_NE(e.find("got 1 values for a chunk of 6"), std::string::npos) << e;
    const std::string f = error_of([&] { shard_num.encode_strings(StringChunk(6, "a"), int16); });
    EXPECT_NE(f.find("codec \"sharding_indexed\" cannot encode data type int16"), std::string::npos)
        << f;
}

}  // namespace ut_codecs_test_vlen_codec
