// Codec chain parsing, order rules, expected sizes, region reads; byte sources.
#include "codecs/codec_test_util.hpp"
#include "codecs/codecs_internal.hpp"
#include "zarr3/codec.hpp"

#include <algorithm>
#include <cstring>
#include <gtest/gtest.h>
#include <numeric>
#include <random>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_codecs_test_codec_chain {

using namespace zarr3;
using nlohmann::json;
using namespace codectest;
namespace {

// ------------------------------------------------------------------ crc32c

std::string chain_error(const json& codecs, const ChunkSpec& s) {
    return error_of([&] { CodecChain::parse(codecs, s, "arr/zarr.json"); });
}

TEST(CodecChain, ParseErrorsNameTheCodec) {
    auto s = spec_of({4, 4}, int16_t_());
    json bytes = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
    struct Case {
        json codecs;
        std::vector<std::string> needles;
    };
    std::vector<Case> cases = {
        {json::array({bytes, {{"name", "endian"}, {"configuration", {{"endian", "big"}}}}}),
         {"endian", "array->bytes"}},
        {json::array({{{"name", "gzip"}, {"configuration", {{"level", 1}}}}, bytes}),
         {"\"bytes\"", "gzip"}},
        {json::array({bytes, {{"name", "transpose"}, {"configuration", {{"order", {1, 0}}}}}}),
         {"transpose"}},
        {json::array({bytes, {{"name", "lzma"}}}), {"lzma", "unknown"}},
        {json::array({bytes, {{"name", "lzma"}, {"must_understand", false}}}), {"lzma"}},
        {json::array({bytes, {{"name", "gzip"}, {"configuration", {{"level", 10}}}}}),
         {"gzip", "level"}},
        {json::array({bytes, {{"name", "gzip"}, {"configuration", {{"level", "5"}}}}}),
         {"gzip", "level"}},
        {json::array({bytes, {{"name", "gzip"}, {"configuration", {{"level", -1}}}}}),
         {"gzip", "level"}},
        {json::array({bytes, {{"name", "gzip"}}}), {"gzip", "level"}},
        {json::array({bytes, {{"name", "gzip"}, {"configuration", {{"level", 1}, {"x", 2}}}}}),
         {"gzip", "\"x\""}},
        {json::array(
             {bytes,
              {{"name", "blosc"},
               {"configuration", {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "byteshuffle"}}}}}),
         {"blosc", "shuffle", "byteshuffle"}},
        {json::array(
             {bytes,
              {{"name", "blosc"},
               {"configuration", {{"cname", "lzo"}, {"clevel", 5}, {"shuffle", "shuffle"}}}}}),
         {"blosc", "cname"}},
        {json::array(
             {bytes,
              {{"name", "blosc"},
               {"configuration",
                {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "shuffle"}, {"typesize", 0}}}}}),
         {"blosc", "typesize"}},
        {json::array({bytes, {{"name", "zstd"}, {"configuration", {{"checksum", 1}}}}}),
         {"zstd", "checksum"}},
        {json::array({bytes, {{"name", "zstd"}, {"configuration", {{"level", 100}}}}}),
         {"zstd", "level"}},
        {json::array({{{"name", "transpose"}, {"configuration", {{"order", {0, 0}}}}}, bytes}),
         {"transpose", "order"}},
        {json::array({{{"name", "transpose"}, {"configuration", {{"order", {0, 1, 2}}}}}, bytes}),
         {"transpose", "order"}},
        {json::array({bytes, {{"name", "crc32c"}, {"configuration", {{"a", 1}}}}}),
         {"crc32c", "\"a\""}},
        {json::array({bytes, 42}), {"codecs[1]"}},
        {json::array({{{"configuration", {}}}}), {"name"}},
        {json::array({{{"name", "bytes"}, {"config", {}}}}), {"config"}},
        {json::array({{{"name", "bytes"}, {"configuration", 3}}}), {"bytes", "configuration"}},
        {json({{"name", "bytes"}}), {"list"}},
    };
    for (const auto& c : cases) {
        std::string e = chain_error(c.codecs, s);
        EXPECT_NE(e.find("arr/zarr.json"), std::string::npos) << e;
        EXPECT_EQ(e.find("NOT A"), std::string::npos) << e;
        EXPECT_EQ(e.find("NO ERROR"), std::string::npos) << c.codecs.dump();
        for (const auto& n : c.needles)
            EXPECT_NE(e.find(n), std::string::npos) << "'" << n << "' not in: " << e;
    }
}

TEST(CodecChain, MissingArrayToBytesWarnsAndReadsLittleEndian) {
    auto s = spec_of({8, 8}, int16_t_());
    std::vector<int16_t> vals(64);
    for (int i = 0; i < 64; ++i)
        vals[i] = int16_t(i * 300 - 9000);
    ByteView v(reinterpret_cast<const uint8_t*>(vals.data()), 128);
    json gz = {{"name", "gzip"}, {"configuration", {{"level", 5}}}};
    auto full = CodecChain::parse(
        json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}, gz}), s, "w");
    Bytes enc = full.encode(v, s);
    std::vector<std::string> warnings;
    auto chain = CodecChain::parse(json::array({gz}), s, "old/zarr.json", &warnings);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("old/zarr.json"), std::string::npos);
    EXPECT_NE(warnings[0].find("little-endian"), std::string::npos);
    EXPECT_EQ(chain.array_to_bytes().name(), "bytes");
    EXPECT_EQ(chain.bytes_to_bytes().size(), 1u);
    std::vector<int16_t> out(64);
    chain.decode(enc, s, reinterpret_cast<uint8_t*>(out.data()));
    EXPECT_EQ(out, vals);
    // Empty list too; and no warning sink is fine.
    auto empty = CodecChain::parse(json::array(), s, "e");
    EXPECT_EQ(empty.to_json(),
              json::parse(R"([{"name":"bytes","configuration":{"endian":"little"}}])"));
}

TEST(CodecChain, FullChainRoundTripAndJson) {
    auto s = spec_of({5, 6, 7}, int32_t_());
    json codecs = json::parse(R"([
        {"name":"transpose","configuration":{"order":[2,0,1]}},
        "transpose",
        {"name":"bytes","configuration":{"endian":"big"},"must_understand":true},
        {"name":"zstd","configuration":{"level":3,"checksum":true}},
        {"name":"blosc","configuration":{"cname":"lz4","clevel":1,"shuffle":"shuffle","typesize":4,"blocksize":0}},
        {"name":"crc32c"}])");
    // bare "transpose" has no order: must fail; drop it for the real chain
    EXPECT_NE(chain_error(codecs, s).find("transpose"), std::string::npos);
    codecs.erase(1);
    auto chain = CodecChain::parse(codecs, s, "t");
    EXPECT_FALSE(chain.supports_partial_read());
    std::vector<int32_t> vals(210);
    for (int i = 0; i < 210; ++i)
        vals[i] = i * 1000003;
    ByteView v(reinterpret_cast<const uint8_t*>(vals.data()), 840);
    Bytes enc = chain.encode(v, s);
    std::vector<int32_t> out(210);
    chain.decode(enc, s, reinterpret_cast<uint8_t*>(out.data()));
    EXPECT_EQ(out, vals);
    // Decode step by step to check the order of the chain.
    Bytes step = enc;
    step.resize(step.size() - 4);
    step = chain.bytes_to_bytes()[1]->decode(step, std::nullopt, kMaxChunkBytes);
    step = chain.bytes_to_bytes()[0]->decode(step, 840, kMaxChunkBytes);
    // After transpose [2,0,1] the first element is decoded (0,0,0), the second (0,1,0).
    EXPECT_EQ(step[3], uint8_t(vals[0] & 0xff));
    int32_t second;
    std::memcpy(&second, step.data() + 4, 4);
    EXPECT_EQ(__builtin_bswap32(uint32_t(second)), uint32_t(vals[7]));
    json j = chain.to_json();
    ASSERT_EQ(j.size(), 5u);
    EXPECT_EQ(j[0], codecs[0]);
    EXPECT_EQ(j[1], json::parse(R"({"name":"bytes","configuration":{"endian":"big"}})"));
    EXPECT_EQ(j[2], codecs[2]);
    EXPECT_EQ(j[3], codecs[3]);
    EXPECT_EQ(j[4], json::parse(R"({"name":"crc32c"})"));
    auto again = CodecChain::parse(j, s, "t");
    EXPECT_EQ(again.to_json(), j);
    // A corrupted checksum surfaces as a FormatError from decode.
    enc[enc.size() - 1] ^= 1;
    EXPECT_NE(error_of([&] {
                  chain.decode(enc, s, reinterpret_cast<uint8_t*>(out.data()));
              }).find("crc32c checksum mismatch"),
              std::string::npos);
}

TEST(CodecChain, DecodePassesExpectedSizes) {
    auto s = spec_of({10}, int32_t_());
    auto chain =
        CodecChain::parse(json::parse(R"([{"name":"bytes","configuration":{"endian":"little"}},
                        {"name":"gzip","configuration":{"level":1}}, "crc32c"])"),
                          s, "t");
    // A gzip stream of 41 bytes (one too many) inside a valid crc32c wrapper.
    auto gz = make_bytes_to_bytes("gzip", {{"level", 1}}, "t");
    auto crc = make_bytes_to_bytes("crc32c", nullptr, "t");
    Bytes wrong = crc->encode(gz->encode(Bytes(41, 7)));
    Bytes out(40);
    EXPECT_NE(error_of([&] { chain.decode(wrong, s, out.data()); }).find("gzip"),
              std::string::npos);
    Bytes right = crc->encode(gz->encode(Bytes(40, 7)));
    chain.decode(right, s, out.data());
    EXPECT_EQ(out, Bytes(40, 7));
}

class NullSource : public ByteSource {
  public:
    std::string describe() const override { return "null"; }
    std::optional<Bytes> read_all(uint64_t, ObjectVersion&) override { return std::nullopt; }
    std::optional<std::vector<Bytes>>
    read_ranges(const std::vector<ByteRange>&, std::optional<uint64_t>&, ObjectVersion&) override {
        return std::nullopt;
    }
};

TEST(CodecChain, ReadRegion) {
    auto s = spec_of({6, 5}, int16_t_());
    auto chain =
        CodecChain::parse(json::parse(R"([{"name":"transpose","configuration":{"order":[1,0]}},
                        {"name":"bytes","configuration":{"endian":"big"}},
                        {"name":"zstd","configuration":{"level":1,"checksum":false}}])"),
                          s, "t");
    std::vector<int16_t> vals(30);
    for (int i = 0; i < 30; ++i)
        vals[i] = int16_t(i * 7 - 50);
    Bytes enc = chain.encode(ByteView(reinterpret_cast<const uint8_t*>(vals.data()), 60), s);
    MemoryByteSource src(enc, "mem/c/0/0");
    // Whole chunk into a contiguous buffer.
    std::vector<int16_t> whole(30, 0);
    Region all{{0, 0}, {6, 5}, {}};
    ASSERT_TRUE(
        chain.read_region(src, s, all, {reinterpret_cast<uint8_t*>(whole.data()), {10, 2}}, {}));
    EXPECT_EQ(whole, vals);
    // Rows 1..4 step 2, columns 1..3 into a 2x3 buffer with a row pitch of 4.
    std::vector<int16_t> part(8, -1);
    Region r{{1, 1}, {2, 3}, {2, 1}};
    ASSERT_TRUE(
        chain.read_region(src, s, r, {reinterpret_cast<uint8_t*>(part.data()), {8, 2}}, {}));
    EXPECT_EQ(part, (std::vector<int16_t>{vals[6], vals[7], vals[8], -1, vals[16], vals[17],
                                          vals[18], -1}));
    NullSource none;
    EXPECT_FALSE(
        chain.read_region(none, s, all, {reinterpret_cast<uint8_t*>(whole.data()), {10, 2}}, {}));
    // Decode errors name the source.
    Bytes bad = enc;
    bad.resize(bad.size() / 2);
    MemoryByteSource bsrc(bad, "mem/c/9/9");
    EXPECT_NE(error_of([&] {
                  chain.read_region(bsrc, s, all,
                                    {reinterpret_cast<uint8_t*>(whole.data()), {10, 2}}, {});
              }).find("mem/c/9/9"),
              std::string::npos);
}

TEST(ByteSources, MemoryRangesAndSpecSizes) {
    Bytes data = random_bytes(100, 1);
    MemoryByteSource m(data, "m");
    std::optional<uint64_t> total;
    ObjectVersion version;
    auto ranges = [&](const std::vector<ByteRange>& want) {
        return m.read_ranges(want, total, version);
    };
    auto r = ranges(
        {RangeFromStart{10, 5}, RangeSuffix{3}, RangeFromStart{0, 0}, RangeFromStart{0, 100}});
    ASSERT_TRUE(r);
    EXPECT_EQ((*r)[0], Bytes(data.begin() + 10, data.begin() + 15));
    EXPECT_EQ((*r)[1], Bytes(data.end() - 3, data.end()));
    EXPECT_TRUE((*r)[2].empty());
    EXPECT_EQ((*r)[3], data);
    EXPECT_NE(error_of([&] { ranges({RangeFromStart{98, 5}}); }).find("m"), std::string::npos);
    EXPECT_NE(error_of([&] { ranges({RangeSuffix{101}}); }).find("m"), std::string::npos);
    EXPECT_NE(error_of([&] { ranges({RangeFromStart{~0ull, 2}}); }), "NO ERROR");
    ASSERT_TRUE(ranges({}));
    EXPECT_EQ(total, 100u); // the size, with no bytes read
    ASSERT_TRUE(m.read_all(100, version));
    EXPECT_NE(error_of([&] { m.read_all(99, version); }).find("m"), std::string::npos);
    auto s = spec_of({3, 4, 5}, int32_t_());
    EXPECT_EQ(s.num_elements(), 60u);
    EXPECT_EQ(s.num_bytes(), 240u);
    auto huge = spec_of({1u << 20, 1u << 20}, int32_t_());
    EXPECT_NE(error_of([&] { (void)huge.num_bytes(); }), "NO ERROR");
    auto over = spec_of({1ull << 40, 1ull << 40, 1ull << 40}, int32_t_());
    EXPECT_THROW((void)over.num_bytes(), Error);
}

TEST(CodecRegistry, Kinds) {
    EXPECT_EQ(codec_kind("transpose"), CodecKind::ArrayToArray);
    EXPECT_EQ(codec_kind("bytes"), CodecKind::ArrayToBytes);
    EXPECT_EQ(codec_kind("endian"), CodecKind::ArrayToBytes);
    EXPECT_EQ(codec_kind("sharding_indexed"), CodecKind::ArrayToBytes);
    for (const char* n : {"gzip", "zstd", "blosc", "crc32c"})
        EXPECT_EQ(codec_kind(n), CodecKind::BytesToBytes);
    EXPECT_EQ(codec_kind("lzma"), CodecKind::Unknown);
    auto s = spec_of({4}, uint8_t_());
    EXPECT_NE(error_of([&] { make_bytes_to_bytes("lz", nullptr, "w"); }).find("\"lz\""),
              std::string::npos);
    EXPECT_NE(error_of([&] { make_array_to_array("gzip", nullptr, s, "w"); }).find("\"gzip\""),
              std::string::npos);
    EXPECT_NE(error_of([&] { make_array_to_bytes("gzip", nullptr, s, "w"); }).find("w: "),
              std::string::npos);
}

} // namespace

}  // namespace ut_codecs_test_codec_chain
