// Bounded work for hostile metadata (issue 15): the JSON value budget, zstd
// frames without a content size decoded straight into the chunk, and the
// decoded-chunk cap checked before allocating.
#include "address_space_guard.hpp"
#include "test_util.hpp"
#include "zarr3/array.hpp"
#include "zarr3/consolidated.hpp"
#include "zarr3/limits.hpp"

#include <chrono>
#include <cstring>
#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_metadata_test_hostile_limits {

using namespace zarr3;
using nlohmann::json;

namespace {

// Limits the tests set through the LimitSource hook (0 = default).
uint64_t g_json_nodes = 0;
uint64_t g_chunk_bytes = 0;

std::optional<uint64_t> test_source(Limit which) {
    const uint64_t v = which == Limit::JsonNodes ? g_json_nodes : g_chunk_bytes;
    if (v == 0) return std::nullopt;
    return v;
}

// Installs the test source for one test, restoring the defaults after it.
struct Limits {
    Limits(uint64_t json_nodes, uint64_t chunk_bytes) {
        g_json_nodes = json_nodes;
        g_chunk_bytes = chunk_bytes;
        set_limit_source(&test_source);
    }
    ~Limits() {
        set_limit_source(nullptr);
        g_json_nodes = g_chunk_bytes = 0;
    }
};

// {"zarr_format":3,"node_type":"group","attributes":{"a":[{},{},...]}} with
// `n` empty objects: n + 5 values.
std::string many_objects(size_t n) {
    std::string s = R"({"zarr_format":3,"node_type":"group","attributes":{"a":[)";
    s.reserve(s.size() + 3 * n + 8);
    for (size_t i = 0; i < n; ++i)
        s += i ? ",{}" : "{}";
    s += "]}}";
    return s;
}

// A zstd frame without Frame_Content_Size (as streaming writers produce it):
// raw blocks of at most 128 KiB holding `data`.
Bytes zstd_frame_unknown_size(ByteView data) {
    Bytes f{0x28, 0xb5, 0x2f, 0xfd, 0x00 /* no FCS, not single segment */,
            0x38 /* window 128 KiB */};
    constexpr size_t kBlock = 128 * 1024;
    size_t pos = 0;
    do {
        const size_t n = std::min(kBlock, data.size() - pos);
        const bool last = pos + n == data.size();
        const uint32_t h = uint32_t(last) | (0u << 1) | uint32_t(n << 3);
        f.insert(f.end(), {uint8_t(h), uint8_t(h >> 8), uint8_t(h >> 16)});
        f.insert(f.end(), data.begin() + pos, data.begin() + pos + n);
        pos += n;
    } while (pos < data.size());
    return f;
}

// Same, as RLE blocks of `value` (a frame of a few bytes per 128 KiB).
Bytes zstd_rle_frame_unknown_size(uint64_t size, uint8_t value) {
    Bytes f{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38};
    constexpr uint64_t kBlock = 128 * 1024;
    for (uint64_t pos = 0; pos < size; pos += kBlock) {
        const uint64_t n = std::min(kBlock, size - pos);
        const bool last = pos + n == size;
        const uint32_t h = uint32_t(last) | (1u << 1) | uint32_t(n << 3);
        f.insert(f.end(), {uint8_t(h), uint8_t(h >> 8), uint8_t(h >> 16), value});
    }
    return f;
}

Bytes pattern(size_t n) {
    Bytes b(n);
    for (size_t i = 0; i < n; ++i)
        b[i] = uint8_t((i * 2654435761u) >> 13);
    return b;
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

// An array of `shape` (uint8) with one regular chunk of `chunk` elements,
// compressed with zstd, in a memory store.
std::shared_ptr<Array> zstd_array(const std::shared_ptr<Store>& store, uint64_t shape,
                                  uint64_t chunk) {
    const json meta = {
        {"zarr_format", 3},
        {"node_type", "array"},
        {"shape", {shape}},
        {"data_type", "uint8"},
        {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", {chunk}}}}}},
        {"chunk_key_encoding", {{"name", "default"}}},
        {"fill_value", 0},
        {"codecs", {{{"name", "bytes"}}, {{"name", "zstd"}, {"configuration", {{"level", 1}}}}}}};
    const std::string text = meta.dump();
    store->put("arr/zarr.json",
               ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
    return Array::open(store, "arr");
}

} // namespace

// ------------------------------------------------------------------ JSON budget

TEST(HostileJson, DocumentPastTheValueBudgetIsRefusedNamingFileAndLimit) {
    Limits lim(1000, 0);
    const std::string where = "/tmp/store.zarr/zarr.json";
    EXPECT_NO_THROW(parse_json_text(many_objects(995), where)); // 1000 values
    const std::string msg = error_of([&] { parse_json_text(many_objects(996), where); });
    EXPECT_NE(msg.find(where), std::string::npos) << msg;
    EXPECT_NE(msg.find("1000 values"), std::string::npos) << msg;
    EXPECT_NE(msg.find("ZARR3_MAX_JSON_NODES"), std::string::npos) << msg;
    // The one-pass array parse applies the same budget.
    const std::string msg2 = error_of([&] { parse_node_metadata_text(many_objects(5000), where); });
    EXPECT_NE(msg2.find("ZARR3_MAX_JSON_NODES"), std::string::npos) << msg2;
}

TEST(HostileJson, DefaultBudgetRefusesMillionsOfEmptyObjectsQuickly) {
    // 5 million {} (15 MB of text; a DOM of about 400 MB without the budget).
    const std::string text = many_objects(5'000'000);
    const auto t0 = std::chrono::steady_clock::now();
    const std::string msg = error_of([&] { parse_json_text(text, "big/zarr.json"); });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_NE(msg.find("big/zarr.json"), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::to_string(kDefaultMaxJsonNodes) + " values"), std::string::npos) << msg;
    EXPECT_LT(s, 20.0);
}

TEST(HostileJson, EdgeListsCountOncePerRun) {
    // 100,000 equal rectilinear edges are one run: far under a budget of 200.
    Limits lim(200, 0);
    json meta = {{"zarr_format", 3},
                 {"node_type", "array"},
                 {"shape", {100000}},
                 {"data_type", "uint8"},
                 {"chunk_key_encoding", {{"name", "default"}}},
                 {"fill_value", 0},
                 {"codecs", {{{"name", "bytes"}}}}};
    meta["chunk_grid"] = {{"name", "rectilinear"},
                          {"configuration", {{"kind", "inline"}, {"chunk_shapes", json::array()}}}};
    std::string text = meta.dump();
    std::string edges = "[";
    for (int i = 0; i < 100000; ++i)
        edges += i ? ",1" : "1";
    edges += "]";
    const std::string key = "\"chunk_shapes\":[]";
    const size_t p = text.find(key);
    ASSERT_NE(p, std::string::npos);
    text.replace(p, key.size(), "\"chunk_shapes\":[" + edges + "]");
    const NodeMetadata node = parse_node_metadata_text(text, "edges/zarr.json");
    ASSERT_TRUE(node.array);
    EXPECT_EQ(node.array->grid.axis(0).num_chunks(), 100000u);
    // 100,000 distinct edges are 100,000 runs: over the budget.
    std::string distinct = "[";
    for (int i = 0; i < 100000; ++i)
        distinct += (i ? "," : "") + std::to_string(1 + i % 2);
    distinct += "]";
    std::string text2 = meta.dump();
    text2.replace(text2.find(key), key.size(), "\"chunk_shapes\":[" + distinct + "]");
    const std::string msg = error_of([&] { parse_node_metadata_text(text2, "edges/zarr.json"); });
    EXPECT_NE(msg.find("ZARR3_MAX_JSON_NODES"), std::string::npos) << msg;
}

TEST(HostileJson, LimitSourceValuesOutOfRangeFallBackToDefaults) {
    Limits lim(0, uint64_t(1) << 40); // 1 TiB chunk cap: above kMaxChunkBytes
    EXPECT_EQ(max_json_nodes(), kDefaultMaxJsonNodes);
    EXPECT_EQ(max_decoded_chunk_bytes(), kDefaultMaxDecodedChunkBytes);
    g_json_nodes = 7;
    g_chunk_bytes = 4096;
    EXPECT_EQ(max_json_nodes(), 7u);
    EXPECT_EQ(max_decoded_chunk_bytes(), 4096u);
}

// ------------------------------------------------------------------ zstd

TEST(HostileZstd, FrameWithoutContentSizeDecodesStraightIntoTheChunk) {
    const auto z = make_bytes_to_bytes("zstd", {{"level", 1}}, "test");
    const Bytes data = pattern(300 * 1024 + 17); // three raw blocks
    const Bytes frame = zstd_frame_unknown_size(data);
    Bytes out(data.size(), 0xAA);
    // The fast path takes it (no intermediate buffer), and the values match.
    ASSERT_TRUE(z->decode_into(frame, out.data(), out.size()));
    EXPECT_EQ(out, data);
    // Two frames back to back as well.
    Bytes two = zstd_frame_unknown_size(ByteView(data).first(1000));
    const Bytes second = zstd_frame_unknown_size(ByteView(data).subspan(1000));
    two.insert(two.end(), second.begin(), second.end());
    std::fill(out.begin(), out.end(), 0);
    ASSERT_TRUE(z->decode_into(two, out.data(), out.size()));
    EXPECT_EQ(out, data);
}

TEST(HostileZstd, FrameWithoutContentSizeOfTheWrongSizeIsAnError) {
    const auto z = make_bytes_to_bytes("zstd", {{"level", 1}}, "test");
    const Bytes data = pattern(5000);
    const Bytes frame = zstd_frame_unknown_size(data);
    Bytes small(4999), large(5001);
    EXPECT_THROW(z->decode_into(frame, small.data(), small.size()), FormatError);
    const std::string msg = error_of([&] { z->decode_into(frame, large.data(), large.size()); });
    EXPECT_NE(msg.find("decoded 5000 bytes, expected 5001"), std::string::npos) << msg;
    Bytes cut(frame.begin(), frame.end() - 100);
    Bytes out(5000);
    EXPECT_THROW(z->decode_into(cut, out.data(), out.size()), FormatError);
}

TEST(HostileZstd, ChainDecodesFrameWithoutContentSizeIntoOutput) {
    auto store = std::make_shared<MemoryStore>();
    auto a = zstd_array(store, 1 << 20, 1 << 20);
    const Bytes data = pattern(1 << 20);
    store->put("arr/c/0", zstd_frame_unknown_size(data));
    Bytes out(1 << 20);
    a->read(Selection::all(a->metadata().shape), out.data());
    EXPECT_EQ(out, data);
    // A one-element read (through the scratch chunk) as well.
    uint8_t one = 0;
    Selection s{{12345}, {1}, {}};
    a->read(s, &one);
    EXPECT_EQ(one, data[12345]);
}

// ------------------------------------------------------------------ chunk cap

TEST(HostileChunk, ChunkAboveTheCapIsRefusedBeforeAllocatingNamingArrayAndChunk) {
    Limits lim(0, 1 << 20); // 1 MiB
    auto store = std::make_shared<MemoryStore>();
    // shape [10], one chunk of 2 MiB: a one-element read must not decode it.
    auto a = zstd_array(store, 10, 2 << 20);
    store->put("arr/c/0", zstd_rle_frame_unknown_size(2 << 20, 7));
    uint8_t one = 0;
    const std::string msg = error_of([&] { a->read(Selection{{3}, {1}, {}}, &one); });
    EXPECT_NE(msg.find("arr/c/0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("2097152 bytes"), std::string::npos) << msg;
    EXPECT_NE(msg.find("limit of 1048576"), std::string::npos) << msg;
    EXPECT_NE(msg.find("ZARR3_MAX_CHUNK_BYTES"), std::string::npos) << msg;
    // Under the cap the same chunk reads.
    g_chunk_bytes = 2 << 20;
    a->read(Selection{{3}, {1}, {}}, &one);
    EXPECT_EQ(one, 7);
}

TEST(HostileChunk, DefaultCapRefusesAFourGiBChunkOfATenElementArray) {
    // The reproducer: shape [10], chunk [2^32] uint8, a 128 KiB RLE frame.
    auto store = std::make_shared<MemoryStore>();
    auto a = zstd_array(store, 10, uint64_t(1) << 32);
    store->put("arr/c/0", zstd_rle_frame_unknown_size(uint64_t(1) << 32, 7));
    uint8_t one = 0;
    const std::string msg = error_of([&] { a->read(Selection{{0}, {1}, {}}, &one); });
    EXPECT_NE(msg.find("4294967296 bytes"), std::string::npos) << msg;
    EXPECT_NE(msg.find("arr/c/0"), std::string::npos) << msg;
}

// ------------------------------------------------- stored and claimed sizes (issue 33 #11)

namespace {

constexpr uint64_t kSparse = 3584ull << 20; // 3.5 GiB

// An array of shape [n] uint8 in one chunk of n, under `codecs`.
std::shared_ptr<Array> one_chunk_array(const std::shared_ptr<Store>& store, uint64_t n,
                                       const json& codecs) {
    const json meta = {
        {"zarr_format", 3},
        {"node_type", "array"},
        {"shape", {n}},
        {"data_type", "uint8"},
        {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", {n}}}}}},
        {"chunk_key_encoding", {{"name", "default"}}},
        {"fill_value", 0},
        {"codecs", codecs}};
    const std::string text = meta.dump();
    store->put("arr/zarr.json",
               ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
    return Array::open(store, "arr");
}

// The message of the error a one-element read throws; "bad_alloc" when it
// tried to allocate past the address-space guard.
std::string one_element_error(const Array& a) {
    try {
        uint8_t one = 0;
        a.read(Selection{{0}, {1}, {}}, &one);
    } catch (const Error& e) {
        return e.what();
    } catch (const std::bad_alloc&) {
        return "bad_alloc";
    }
    return "(no error)";
}

// A store whose value `key` claims `claim` bytes (as a HEAD or a sparse file
// would): the claim is refused when above the limit a bounded read passes;
// an unbounded read "allocates" it (recorded, then std::bad_alloc).
class ClaimingStore : public MemoryStore {
  public:
    ClaimingStore(std::string key, uint64_t claim) : key_(std::move(key)), claim_(claim) {}
    std::optional<ReadResult> read(const ReadRequest& r) override {
        if (r.kind == ReadRequest::Kind::Value && r.limit) {
            if (!r.key.ends_with("zarr.json")) limits.push_back(*r.limit);
            if (r.key == key_ && claim_ > *r.limit)
                throw_too_large(uri() + "/" + r.key, claim_, *r.limit);
        }
        if (r.key != key_) return MemoryStore::read(r);
        if (r.kind == ReadRequest::Kind::Size) return ReadResult{{}, claim_, {}};
        allocate();
    }
    std::vector<uint64_t> limits; // the limit of each bounded read of a chunk
    bool allocated = false;

  private:
    [[noreturn]] void allocate() {
        allocated = true;
        throw std::bad_alloc();
    }
    std::string key_;
    uint64_t claim_;
};

} // namespace

namespace {

// The error of a one-element read of an 8 KiB chunk (bytes codec: the stored
// chunk holds exactly 8192 bytes) stored as a sparse file of kSparse bytes, in
// folder `dir` of `store` (a FileStore, or a wrapper of one).
std::string sparse_chunk_error(const std::shared_ptr<Store>& store, const testutil::TempDir& dir) {
    auto a = one_chunk_array(store, 8192, json::array({{{"name", "bytes"}}}));
    std::filesystem::create_directories(dir.path / "arr" / "c");
    const std::string chunk = (dir.path / "arr" / "c" / "0").string();
    { std::ofstream(chunk).put('x'); }
    if (::truncate(chunk.c_str(), static_cast<off_t>(kSparse)) != 0) return "truncate failed";
    testutil::AddressSpaceGuard guard(1ull << 30);
    return one_element_error(*a);
}

} // namespace

TEST(HostileStored, SparseChunkFileIsRefusedBeforeAllocatingNamingKeySizeAndBound) {
    testutil::TempDir tmp;
    const std::string msg = sparse_chunk_error(std::make_shared<FileStore>(tmp.str()), tmp);
    EXPECT_NE(msg.find("arr/c/0"), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::to_string(kSparse) + " bytes"), std::string::npos) << msg;
    EXPECT_NE(msg.find("limit of 8192 bytes"), std::string::npos) << msg;
    EXPECT_NE(msg.find("ZARR3_MAX_CHUNK_BYTES"), std::string::npos) << msg;
}

// The same through the consolidating wrapper (update opens of consolidated
// stores): a wrapper forwards the bounded read, the check still comes first.
TEST(HostileStored, SparseChunkIsRefusedBeforeAllocatingThroughTheConsolidatingWrapper) {
    testutil::TempDir tmp;
    const std::string msg =
        sparse_chunk_error(consolidating_store(std::make_shared<FileStore>(tmp.str())), tmp);
    EXPECT_NE(msg.find("limit of 8192 bytes"), std::string::npos) << msg;
}

TEST(HostileStored, CompressedChunkBoundIsTheCompressorsWorstCase) {
    // zstd after bytes: at most n + n/8 + 4096 bytes for n = 8192.
    auto store = std::make_shared<ClaimingStore>("arr/c/0", kSparse);
    auto a = one_chunk_array(
        store, 8192,
        json::array({{{"name", "bytes"}}, {{"name", "zstd"}, {"configuration", {{"level", 1}}}}}));
    store->put("arr/c/0", Bytes(10, 0));
    const std::string msg = one_element_error(*a);
    EXPECT_FALSE(store->allocated) << "the claimed size was allocated";
    EXPECT_NE(msg.find("arr/c/0"), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::to_string(kSparse)), std::string::npos) << msg;
    EXPECT_NE(msg.find("limit of " + std::to_string(8192 + 1024 + 4096)), std::string::npos) << msg;
}

TEST(HostileStored, Crc32cBoundIsExactlyFourMore) {
    auto store = std::make_shared<ClaimingStore>("arr/c/0", 1ull << 31);
    auto a = one_chunk_array(store, 100, json::array({{{"name", "bytes"}}, {{"name", "crc32c"}}}));
    store->put("arr/c/0", Bytes(104, 0));
    const std::string msg = one_element_error(*a);
    EXPECT_FALSE(store->allocated);
    ASSERT_FALSE(store->limits.empty());
    EXPECT_EQ(store->limits.back(), 104u);
    EXPECT_NE(msg.find("2147483648"), std::string::npos) << msg;
}

TEST(HostileStored, NoChunkBoundIsAboveTheCap) {
    Limits lim(0, 4096);
    auto store = std::make_shared<ClaimingStore>("arr/c/0", 1ull << 31);
    // Decoded 4000 bytes (below the cap); zstd's worst case is above it.
    auto a = one_chunk_array(store, 4000, json::array({{{"name", "bytes"}}, {{"name", "zstd"}}}));
    store->put("arr/c/0", Bytes(10, 0));
    const std::string msg = one_element_error(*a);
    EXPECT_FALSE(store->allocated);
    ASSERT_FALSE(store->limits.empty());
    EXPECT_EQ(store->limits.back(), 4096u);
    EXPECT_NE(msg.find("limit of 4096 bytes"), std::string::npos) << msg;
}

TEST(HostileStored, ValidChunksStillReadThroughTheBoundedPath) {
    testutil::TempDir tmp;
    auto store = std::make_shared<FileStore>(tmp.str());
    auto a = one_chunk_array(store, 8192, json::array({{{"name", "bytes"}}, {{"name", "zstd"}}}));
    const Bytes data = pattern(8192);
    a->write(Selection::all({8192}), data.data());
    Bytes back(8192);
    Array::open(store, "arr")->read(Selection::all({8192}), back.data());
    EXPECT_EQ(back, data);
}

TEST(HostileStored, FileStoreWholeGetsAreBoundedByTheCap) {
    Limits lim(0, 1 << 20);
    testutil::TempDir tmp;
    FileStore store(tmp.str());
    const std::string p = tmp.str() + "/big";
    { std::ofstream(p).put('x'); }
    ASSERT_EQ(::truncate(p.c_str(), static_cast<off_t>(kSparse)), 0);
    testutil::AddressSpaceGuard guard(1ull << 30);
    ObjectVersion v;
    const std::string msg = [&]() -> std::string {
        try {
            store.get_versioned("big", v);
        } catch (const FormatError& e) {
            return e.what();
        } catch (const std::bad_alloc&) {
            return "bad_alloc";
        }
        return "(no error)";
    }();
    EXPECT_NE(msg.find(std::to_string(kSparse) + " bytes exceeds the limit of 1048576"),
              std::string::npos)
        << msg;
    EXPECT_THROW(store.get_bounded("big", 100), FormatError);
}

}  // namespace ut_metadata_test_hostile_limits
