// Array::read_strings / write_strings: regular and rectilinear grids, missing
// chunks as the fill value, fill-only chunks erased, partial writes merged with
// the stored chunk, steps, sharding, and malformed chunks named by key.
#include "test_util.hpp"
#include "zarr3/array.hpp"
#include "zarr3/builder.hpp"
#include "zarr3/counting_store.hpp"
#include "zarr3/limits.hpp"

#include <gtest/gtest.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_array_test_string_array {

using namespace zarr3;
using nlohmann::json;

namespace {

const json kVlen = {{"name", "vlen-utf8"}, {"configuration", json::object()}};

json string_json(const json& shape, const json& grid, const json& codecs,
                 const std::string& fill = "") {
    return {{"zarr_format", 3},
            {"node_type", "array"},
            {"shape", shape},
            {"data_type", "string"},
            {"chunk_grid", grid},
            {"chunk_key_encoding", {{"name", "default"}, {"configuration", {{"separator", "/"}}}}},
            {"fill_value", fill},
            {"codecs", codecs}};
}

json regular(const json& cs) {
    return {{"name", "regular"}, {"configuration", {{"chunk_shape", cs}}}};
}

std::shared_ptr<Array> make(std::shared_ptr<Store> store, const json& j) {
    return Array::create(std::move(store), "s", parse_array_metadata(j, "s/zarr.json"));
}

std::vector<std::string> labels(size_t n, const std::string& prefix) {
    std::vector<std::string> v;
    for (size_t i = 0; i < n; ++i)
        v.push_back(prefix + std::to_string(i) + (i % 3 == 0 ? "ß" : ""));
    return v;
}

using testutil::error_of;

} // namespace

TEST(StringArray, RegularGridRoundTripWithOverhangAndMissingChunks) {
    auto store = std::make_shared<MemoryStore>();
    auto a = make(store, string_json({5, 3}, regular({2, 2}), json::array({kVlen}), "-"));
    EXPECT_EQ(a->read_strings(Selection::all({5, 3})), std::vector<std::string>(15, "-"));
    const auto v = labels(15, "v");
    a->write_strings(Selection::all({5, 3}), v);
    EXPECT_EQ(Array::open(store, "s")->read_strings(Selection::all({5, 3})), v);
    EXPECT_TRUE(store->get("s/c/2/1").has_value()); // overhanging corner chunk
    // A reversed, stepped selection.
    const Selection rev{{4, 2}, {3, 2}, {-2, -2}};
    EXPECT_EQ(a->read_strings(rev),
              (std::vector<std::string>{v[14], v[12], v[8], v[6], v[2], v[0]}));
}

TEST(StringArray, FillOnlyChunksAreErasedAndReadAsFill) {
    auto store = std::make_shared<MemoryStore>();
    auto a = make(store, string_json({4}, regular({2}), json::array({kVlen})));
    a->write_strings(Selection::all({4}), {"a", "b", "c", "d"});
    ASSERT_TRUE(store->get("s/c/1").has_value());
    a->write_strings(Selection{{2}, {2}, {1}}, {"", ""});
    EXPECT_FALSE(store->get("s/c/1").has_value());
    EXPECT_EQ(a->read_strings(Selection::all({4})), (std::vector<std::string>{"a", "b", "", ""}));
}

TEST(StringArray, PartialWritesKeepTheOtherElements) {
    auto store = std::make_shared<MemoryStore>();
    auto a = make(store, string_json({3, 4}, regular({3, 4}), json::array({kVlen})));
    a->write_strings(Selection::all({3, 4}), labels(12, "x"));
    a->write_strings(Selection{{0, 1}, {3, 2}, {1, 2}}, {"p", "q", "r", "s", "t", "ü"});
    auto want = labels(12, "x");
    for (size_t r = 0; r < 3; ++r) {
        want[r * 4 + 1] = std::vector<std::string>{"p", "r", "t"}[r];
        want[r * 4 + 3] = std::vector<std::string>{"q", "s", "ü"}[r];
    }
    EXPECT_EQ(Array::open(store, "s")->read_strings(Selection::all({3, 4})), want);
    // A partial write into a missing chunk starts from the fill value.
    auto b = make(std::make_shared<MemoryStore>(),
                  string_json({4}, regular({4}), json::array({kVlen}), "f"));
    b->write_strings(Selection{{1}, {1}, {1}}, {"x"});
    EXPECT_EQ(b->read_strings(Selection::all({4})), (std::vector<std::string>{"f", "x", "f", "f"}));
}

TEST(StringArray, RectilinearGridAndCompressor) {
    auto store = std::make_shared<MemoryStore>();
    const json grid = {{"name", "rectilinear"},
                       {"configuration", {{"kind", "inline"}, {"chunk_shapes", {{1, 3, 2}, 2}}}}};
    const json codecs = json::array({kVlen, {{"name", "zstd"}, {"configuration", {{"level", 1}}}}});
    auto a = make(store, string_json({6, 3}, grid, codecs));
    const auto v = labels(18, "r");
    a->write_strings(Selection::all({6, 3}), v);
    EXPECT_TRUE(store->get("s/c/2/1").has_value());
    EXPECT_FALSE(store->get("s/c/3/0").has_value());
    auto b = Array::open(store, "s");
    EXPECT_EQ(b->read_strings(Selection::all({6, 3})), v);
    // Rows 1..4 (across three chunks), column 1.
    EXPECT_EQ(b->read_strings(Selection{{1, 1}, {4, 1}, {1, 1}}),
              (std::vector<std::string>{v[4], v[7], v[10], v[13]}));
}

TEST(StringArray, ShardedWithPartialUpdate) {
    auto store = std::make_shared<MemoryStore>();
    const DataType dt = parse_data_type(json("string"), "t");
    auto a = Array::create(store, "s",
                           ArrayBuilder({8}, dt)
                               .regular_chunk_shape({8})
                               .sharding(ShardingCodecBuilder({2}))
                               .zstd(3)
                               .build());
    std::vector<std::string> v(8, "");
    v[1] = "one";
    v[6] = "six";
    a->write_strings(Selection::all({8}), v);
    a->write_strings(Selection{{3}, {1}, {1}}, {"three"});
    v[3] = "three";
    EXPECT_EQ(Array::open(store, "s")->read_strings(Selection::all({8})), v);
    EXPECT_EQ(a->read_strings(Selection{{6}, {2}, {1}}), (std::vector<std::string>{"six", ""}));
}

TEST(StringArray, NumericAndStringCallsAreKeptApart) {
    auto store = std::make_shared<MemoryStore>();
    auto a = make(store, string_json({2}, regular({2}), json::array({kVlen})));
    uint8_t buf[16] = {};
    EXPECT_NE(error_of([&] { a->read(Selection::all({2}), buf); }).find("read_strings"),
              std::string::npos);
    EXPECT_NE(error_of([&] { a->write(Selection::all({2}), buf); }).find("write_strings"),
              std::string::npos);
    EXPECT_NE(error_of([&] { a->write_strings(Selection::all({2}), {"a"}); }).find("1 strings"),
              std::string::npos);
    auto n = Array::create(
        store, "n",
        ArrayBuilder({2}, data_type_from_name("int8")).regular_chunk_shape({2}).build());
    EXPECT_NE(error_of([&] { n->read_strings(Selection::all({2})); }).find("not string"),
              std::string::npos);
}

TEST(StringArray, MalformedChunkErrorNamesTheKey) {
    auto store = std::make_shared<MemoryStore>();
    auto a = make(store, string_json({4}, regular({2}), json::array({kVlen})));
    const Bytes bad{2, 0, 0, 0, 9, 0, 0, 0, 'a'}; // element 0 claims 9 bytes
    store->put("s/c/1", bad);
    const std::string msg = error_of([&] { a->read_strings(Selection::all({4})); });
    EXPECT_NE(msg.find("s/c/1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("vlen-utf8"), std::string::npos) << msg;
    // A partial write over it refuses too, leaving the stored bytes alone.
    EXPECT_NE(error_of([&] {
                  a->write_strings(Selection{{2}, {1}, {1}}, {"x"});
              }).find("s/c/1"),
              std::string::npos);
    EXPECT_EQ(*store->get("s/c/1"), bad);
}

TEST(StringArray, ZarrPythonStoreReadsExactly) {
    const std::string dir = std::string(ZARR3_SOURCE_DIR) + "/data/zp-dev";
    const json ex = testutil::read_json(dir + "/expected.json")["vlen"];
    auto a = Array::open(std::make_shared<FileStore>(dir + "/zp_dev.zarr", false), "vlen");
    EXPECT_EQ(data_type_to_json(a->metadata().dtype), ex["data_type"]);
    EXPECT_EQ(a->read_strings(Selection::all(a->metadata().shape)),
              ex["text"].get<std::vector<std::string>>());
}

// ------------------------------------------- string shards (issue 33 #10)

namespace {

uint64_t g_cap = 0; // ZARR3_MAX_CHUNK_BYTES for the test; 0 = default

std::optional<uint64_t> cap_source(Limit which) {
    if (which != Limit::DecodedChunkBytes || g_cap == 0) return std::nullopt;
    return g_cap;
}

struct Cap {
    explicit Cap(uint64_t bytes) {
        g_cap = bytes;
        set_limit_source(&cap_source);
    }
    ~Cap() {
        set_limit_source(nullptr);
        g_cap = 0;
    }
};

// One shard of 8 strings of 300 KiB each (2.4 MiB of text) in inner chunks
// of 2, zstd inside the shard: a few KiB stored.
std::vector<std::string> long_strings(const std::shared_ptr<Store>& store) {
    const DataType dt = parse_data_type(json("string"), "t");
    auto a = Array::create(store, "s",
                           ArrayBuilder({8}, dt)
                               .regular_chunk_shape({8})
                               .sharding(ShardingCodecBuilder({2}))
                               .zstd(1)
                               .build());
    std::vector<std::string> v;
    for (int i = 0; i < 8; ++i)
        v.push_back(std::string(300 << 10, char('a' + i)));
    a->write_strings(Selection::all({8}), v);
    return v;
}

} // namespace

TEST(StringShards, OneElementReadFetchesOnlyItsInnerChunk) {
    auto mem = std::make_shared<MemoryStore>();
    const auto v = long_strings(mem);
    const uint64_t stored = mem->size("s/c/0").value();
    Cap cap(1 << 20); // 1 MiB: less than the shard's 2.4 MiB of text
    auto counting = std::make_shared<CountingStore>(mem);
    auto a = Array::open(counting, "s");
    counting->reset();
    EXPECT_EQ(a->read_strings(Selection{{5}, {1}, {1}}), (std::vector<std::string>{v[5]}));
    for (const auto& line : counting->log())
        EXPECT_NE(line, "get s/c/0") << "the whole shard was read";
    EXPECT_EQ(counting->counts().range_calls, 2u); // index + one inner chunk
    // Less than the shard, not counting the reads of zarr.json by which a
    // local reader checks that the array did not change since its open.
    uint64_t meta_reads = 0;
    for (const auto& line : counting->log())
        meta_reads += line.find("s/zarr.json") != std::string::npos;
    EXPECT_LE(meta_reads, 1u);
    EXPECT_LT(counting->counts().bytes - meta_reads * mem->size("s/zarr.json").value(), stored);
}

TEST(StringShards, DecodedTextIsBoundedInBytesNotElements) {
    auto store = std::make_shared<MemoryStore>();
    const auto v = long_strings(store);
    auto a = Array::open(store, "s");
    {
        Cap cap(1 << 20);
        // 8 elements (256 bytes of string objects) but 2.4 MiB of text.
        const std::string msg = error_of([&] { a->read_strings(Selection::all({8})); });
        EXPECT_NE(msg.find("s/c/0"), std::string::npos) << msg;
        EXPECT_NE(msg.find("ZARR3_MAX_CHUNK_BYTES"), std::string::npos) << msg;
        EXPECT_NE(msg.find("limit of 1048576"), std::string::npos) << msg;
        // A partial write merges the stored shard, decoded whole: refused too.
        const std::string w = error_of([&] { a->write_strings(Selection{{0}, {1}, {1}}, {"x"}); });
        EXPECT_NE(w.find("ZARR3_MAX_CHUNK_BYTES"), std::string::npos) << w;
        // Two inner chunks (1.2 MiB of text): refused; one reads.
        EXPECT_NE(error_of([&] { a->read_strings(Selection{{2}, {4}, {1}}); }), "");
        EXPECT_EQ(a->read_strings(Selection{{2}, {2}, {1}}),
                  (std::vector<std::string>{v[2], v[3]}));
    }
    Cap big(4 << 20);
    EXPECT_EQ(a->read_strings(Selection::all({8})), v);
    EXPECT_EQ(a->read_strings(Selection{{1}, {4}, {2}}),
              (std::vector<std::string>{v[1], v[3], v[5], v[7]}));
}

TEST(StringShards, RegionReadsMatchWholeReadsWithFillAndSteps) {
    auto store = std::make_shared<MemoryStore>();
    const DataType dt = parse_data_type(json("string"), "t");
    auto a = Array::create(store, "s",
                           ArrayBuilder({6, 6}, dt)
                               .regular_chunk_shape({4, 4})
                               .sharding(ShardingCodecBuilder({2, 2}))
                               .build());
    std::vector<std::string> v(36);
    for (size_t i = 0; i < v.size(); ++i)
        v[i] = i % 5 == 0 ? "" : "v" + std::to_string(i);
    a->write_strings(Selection::all({6, 6}), v);
    auto b = Array::open(store, "s");
    EXPECT_EQ(b->read_strings(Selection::all({6, 6})), v);
    std::vector<std::string> want;
    for (uint64_t r = 1; r < 6; r += 2)
        for (uint64_t c = 0; c < 6; c += 3)
            want.push_back(v[r * 6 + c]);
    EXPECT_EQ(b->read_strings(Selection{{1, 0}, {3, 2}, {2, 3}}), want);
    // A missing shard reads as the fill value.
    store->erase("s/c/1/1");
    EXPECT_EQ(b->read_strings(Selection{{5, 5}, {1, 1}, {1, 1}}), (std::vector<std::string>{""}));
}

// A `string` reader open across a shrink (chunks gone) gets the changed-array
// error, as numeric arrays do, never the fill value in place of data.
TEST(StringArray, ReaderAcrossAShrinkGetsAnErrorNotTheFill) {
    auto store = std::make_shared<MemoryStore>();
    auto w = make(store, string_json({6}, regular({2}), json::array({kVlen})));
    const auto v = labels(6, "v");
    w->write_strings(Selection::all({6}), v);
    auto r = Array::open(store, "s");
    EXPECT_EQ(r->read_strings(Selection::all({6})), v);
    Array::open(store, "s")->resize({2});
    const std::string e = error_of([&] { r->read_strings(Selection::all({6})); });
    EXPECT_NE(e.find("changed since it was opened"), std::string::npos) << e;
    EXPECT_NE(e.find("axis 0 shrank from 6 to 2"), std::string::npos) << e;
}

}  // namespace ut_array_test_string_array
