// Limits against hostile stores: compressed frames claiming huge sizes, chunks
// of the wrong decoded size, shard index entries outside the data region,
// oversized zarr.json, overflowing rectilinear runs; and concurrent readers of
// one Array giving the same values as a serial read.
#include "test_util.hpp"
#include "zarr3/array.hpp"
#include "zarr3/sharding.hpp"

#include <atomic>
#include <cstring>
#include <gtest/gtest.h>
#include <random>
#include <sys/mman.h>
#include <sys/resource.h>
#include <thread>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_metadata_test_limits {

using namespace zarr3;
using nlohmann::json;

namespace {

constexpr uint64_t kHugeClaim = 3ull << 30; // 3 GiB: below kMaxChunkBytes, far above any chunk here

// Peak resident set size in MiB (a claimed size that got allocated and
// zero-filled shows up here).
long peak_rss_mib() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss / 1024;
}

Bytes le64(uint64_t v) {
    Bytes b(8);
    std::memcpy(b.data(), &v, 8);
    return b;
}

// A single zstd frame whose header states `content_size` but which holds one
// 4-byte raw block.
Bytes zstd_frame_claiming(uint64_t content_size) {
    Bytes f{0x28, 0xb5, 0x2f, 0xfd, 0xc0 /* FCS 8 bytes, not single segment */, 0x00 /* window */};
    const Bytes fcs = le64(content_size);
    f.insert(f.end(), fcs.begin(), fcs.end());
    f.insert(f.end(), {0x21, 0x00, 0x00 /* last raw block, 4 bytes */, 1, 2, 3, 4});
    return f;
}

std::shared_ptr<BytesToBytesCodec> codec(const std::string& name) {
    if (name == "gzip") return make_bytes_to_bytes("gzip", {{"level", 1}}, "test");
    if (name == "zstd") return make_bytes_to_bytes("zstd", {{"level", 1}}, "test");
    if (name == "blosc")
        return make_bytes_to_bytes(
            "blosc", {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "noshuffle"}}, "test");
    return make_bytes_to_bytes(name, nullptr, "test");
}

Bytes pattern(size_t n, uint32_t seed = 1) {
    Bytes b(n);
    for (size_t i = 0; i < n; ++i)
        b[i] = uint8_t((i * 2654435761u + seed) >> 13);
    return b;
}

json array_json(const Shape& shape, const json& grid, const json& codecs,
                const std::string& dtype = "uint8") {
    return {{"zarr_format", 3},   {"node_type", "array"},
            {"shape", shape},     {"data_type", dtype},
            {"chunk_grid", grid}, {"chunk_key_encoding", {{"name", "default"}}},
            {"fill_value", 0},    {"codecs", codecs}};
}

json regular(const Shape& chunk) {
    return {{"name", "regular"}, {"configuration", {{"chunk_shape", chunk}}}};
}

// An array on a fresh MemoryStore, with no shard index cache (the stores'
// addresses, hence cache keys, are reused across tests).
std::shared_ptr<Array> make_array(const json& meta, std::shared_ptr<MemoryStore>* out = nullptr) {
    auto store = std::make_shared<MemoryStore>();
    auto arr = Array::create(store, "", parse_array_metadata(meta, "test zarr.json"));
    ReadOptions opt;
    arr->set_read_options(opt);
    if (out) *out = store;
    return arr;
}

Bytes read_all(const Array& a) {
    const Shape& s = a.metadata().shape;
    Bytes out(checked_product(s, "n") * a.metadata().dtype.size);
    a.read(Selection::all(s), out.data());
    return out;
}

} // namespace

// ------------------------------------------------------- claimed decoded sizes

TEST(LimitsClaims, ZstdFrameClaimingHugeSizeRefusedByCodec) {
    const auto z = codec("zstd");
    const Bytes f = zstd_frame_claiming(kHugeClaim);
    const long before = peak_rss_mib();
    EXPECT_THROW(z->decode(f, 100, kMaxChunkBytes), FormatError);   // differs from expected
    EXPECT_THROW(z->decode(f, std::nullopt, 1 << 20), FormatError); // above max_size
    EXPECT_THROW(z->decode(f, 1ull << 40, 1 << 20), FormatError);   // expected above max_size
    EXPECT_LT(peak_rss_mib() - before, 256);
    // The same frame stating its true size decodes.
    Bytes ok = zstd_frame_claiming(4);
    EXPECT_EQ(z->decode(ok, 4, 4), (Bytes{1, 2, 3, 4}));
}

TEST(LimitsClaims, GzipStreamClaimingHugeSizeRefusedByCodec) {
    const auto g = codec("gzip");
    const Bytes data = pattern(100);
    Bytes enc = g->encode(data);
    const uint32_t claim = 0xC0000000u; // ISIZE trailer: 3 GiB
    std::memcpy(enc.data() + enc.size() - 4, &claim, 4);
    const long before = peak_rss_mib();
    EXPECT_THROW(g->decode(enc, 100, kMaxChunkBytes), FormatError);
    EXPECT_THROW(g->decode(enc, std::nullopt, 1 << 20), FormatError);
    EXPECT_LT(peak_rss_mib() - before, 256);
    // A real bomb (16 MiB of zeros) is cut at max_size / the expected size.
    const Bytes bomb = g->encode(Bytes(16 << 20, 0));
    EXPECT_LT(bomb.size(), 64u * 1024);
    EXPECT_THROW(g->decode(bomb, std::nullopt, 1 << 20), FormatError);
    EXPECT_THROW(g->decode(bomb, 1000, 1 << 20), FormatError);
    EXPECT_EQ(g->decode(bomb, 16 << 20, 16 << 20).size(), size_t(16 << 20));
}

TEST(LimitsClaims, BloscHeaderClaimingHugeSizeRefusedByCodec) {
    const auto b = codec("blosc");
    const Bytes data = pattern(1000);
    Bytes enc = b->encode(data);
    ASSERT_GE(enc.size(), 16u);
    const uint32_t claim = 1500u << 20; // nbytes field: 1.5 GiB
    std::memcpy(enc.data() + 4, &claim, 4);
    const long before = peak_rss_mib();
    EXPECT_THROW(b->decode(enc, 1000, kMaxChunkBytes), FormatError);
    EXPECT_THROW(b->decode(enc, std::nullopt, 1 << 20), FormatError);
    EXPECT_LT(peak_rss_mib() - before, 256);
    EXPECT_EQ(b->decode(b->encode(data), 1000, 1000), data);
}

TEST(LimitsClaims, ChunkClaimingHugeSizeRefusedByArray) {
    for (const std::string name : {"zstd", "gzip", "blosc"}) {
        SCOPED_TRACE(name);
        std::shared_ptr<MemoryStore> store;
        json bb = {{"name", name}};
        if (name == "gzip") bb["configuration"] = {{"level", 1}};
        if (name == "blosc")
            bb["configuration"] = {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "noshuffle"}};
        auto arr = make_array(
            array_json({10, 10}, regular({10, 10}), json::array({{{"name", "bytes"}}, bb})),
            &store);
        Bytes bad;
        if (name == "zstd") {
            bad = zstd_frame_claiming(kHugeClaim);
        } else if (name == "gzip") {
            bad = codec("gzip")->encode(pattern(100));
            const uint32_t claim = 0xC0000000u;
            std::memcpy(bad.data() + bad.size() - 4, &claim, 4);
        } else {
            bad = codec("blosc")->encode(pattern(100));
            const uint32_t claim = 1500u << 20;
            std::memcpy(bad.data() + 4, &claim, 4);
        }
        store->put("c/0/0", bad);
        const long before = peak_rss_mib();
        Bytes out(100);
        EXPECT_THROW(arr->read(Selection::all({10, 10}), out.data()), FormatError);
        EXPECT_LT(peak_rss_mib() - before, 256);
        // The well-formed chunk reads back.
        store->put("c/0/0", codec(name)->encode(pattern(100)));
        EXPECT_EQ(read_all(*arr), pattern(100));
    }
}

// Outer compressors of a shard have no exact expected size (the shard's
// encoded size varies); their bound is kMaxChunkBytes, so a 3 GiB claim is
// allocated before the frame is found corrupt. Enable when CodecChain::decode
// bounds intermediate sizes by the chunk's decoded size (see fuzz report).
TEST(LimitsClaims, ShardOuterZstdClaimingHugeSizeRefused) {
    std::shared_ptr<MemoryStore> store;
    const json shard = {
        {"name", "sharding_indexed"},
        {"configuration",
         {{"chunk_shape", {4, 4}},
          {"codecs", json::array({json{{"name", "bytes"}}})},
          {"index_codecs",
           json::array({json{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}})}}}};
    auto arr = make_array(
        array_json({16, 16}, regular({16, 16}), json::array({shard, json{{"name", "zstd"}}})),
        &store);
    store->put("c/0/0", zstd_frame_claiming(kHugeClaim));
    const long before = peak_rss_mib();
    Bytes out(256);
    EXPECT_THROW(arr->read(Selection::all({16, 16}), out.data()), FormatError);
    EXPECT_LT(peak_rss_mib() - before, 256);
}

// ------------------------------------------------------- decoded size mismatch

TEST(LimitsSizes, ChunkOfWrongDecodedSizeRefused) {
    for (const std::string name : {"zstd", "gzip", "blosc", "none"}) {
        for (const size_t n : {99u, 101u, 0u, 200u}) {
            SCOPED_TRACE(name + " " + std::to_string(n));
            std::shared_ptr<MemoryStore> store;
            json codecs = json::array({json{{"name", "bytes"}}});
            if (name != "none") {
                json bb = {{"name", name}};
                if (name == "gzip") bb["configuration"] = {{"level", 1}};
                if (name == "blosc")
                    bb["configuration"] = {
                        {"cname", "lz4"}, {"clevel", 5}, {"shuffle", "noshuffle"}};
                codecs.push_back(bb);
            }
            auto arr = make_array(array_json({10, 10}, regular({10, 10}), codecs), &store);
            const Bytes data = pattern(n);
            store->put("c/0/0", name == "none" ? data : codec(name)->encode(data));
            Bytes out(100);
            EXPECT_THROW(arr->read(Selection::all({10, 10}), out.data()), FormatError);
            // Partial window of the same chunk: refused too.
            Selection sel{{2, 3}, {4, 5}, {}};
            EXPECT_THROW(arr->read(sel, out.data()), FormatError);
        }
    }
}

TEST(LimitsSizes, Crc32cMismatchAndTruncationRefused) {
    std::shared_ptr<MemoryStore> store;
    auto arr =
        make_array(array_json({10, 10}, regular({10, 10}),
                              json::array({json{{"name", "bytes"}}, json{{"name", "crc32c"}}})),
                   &store);
    Bytes enc = codec("crc32c")->encode(pattern(100));
    store->put("c/0/0", enc);
    EXPECT_EQ(read_all(*arr), pattern(100));
    enc[7] ^= 1;
    store->put("c/0/0", enc);
    Bytes out(100);
    EXPECT_THROW(arr->read(Selection::all({10, 10}), out.data()), FormatError);
    store->put("c/0/0", Bytes{1, 2, 3});
    EXPECT_THROW(arr->read(Selection::all({10, 10}), out.data()), FormatError);
}

// ------------------------------------------------------- shard index entries

namespace {

// 8x8 uint8 shard of 4x4 inner chunks (2x2 of them), bytes only; index =
// 4 entries x 16 bytes + crc32c = 68 bytes.
struct ShardFixture {
    std::shared_ptr<MemoryStore> store;
    std::shared_ptr<Array> arr;
    bool at_start;
    explicit ShardFixture(bool start) : at_start(start) {
        const json shard = {
            {"name", "sharding_indexed"},
            {"configuration",
             {{"chunk_shape", {4, 4}},
              {"codecs", json::array({json{{"name", "bytes"}}})},
              {"index_codecs",
               json::array({json{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                            json{{"name", "crc32c"}}})},
              {"index_location", start ? "start" : "end"}}}};
        arr = make_array(array_json({8, 8}, regular({8, 8}), json::array({shard})), &store);
    }
    // A shard with 4 inner chunks of 16 bytes, entries given explicitly.
    Bytes build(const std::vector<std::pair<uint64_t, uint64_t>>& entries) const {
        Bytes index;
        for (auto [off, nb] : entries) {
            const Bytes a = le64(off), b = le64(nb);
            index.insert(index.end(), a.begin(), a.end());
            index.insert(index.end(), b.begin(), b.end());
        }
        const uint32_t c = crc32c(index);
        index.resize(index.size() + 4);
        std::memcpy(index.data() + index.size() - 4, &c, 4);
        Bytes data = pattern(64, 7);
        Bytes s;
        if (at_start) s = index;
        s.insert(s.end(), data.begin(), data.end());
        if (!at_start) s.insert(s.end(), index.begin(), index.end());
        return s;
    }
    uint64_t data_start() const { return at_start ? 68 : 0; }
    // Whole and partial reads of the shard must both refuse (FormatError).
    void expect_refused(const Bytes& shard) const {
        store->put("c/0/0", shard);
        Bytes out(64);
        EXPECT_THROW(arr->read(Selection::all({8, 8}), out.data()), FormatError);
        Selection one{{0, 0}, {4, 4}, {}}; // inner chunk 0 only
        EXPECT_THROW(arr->read(one, out.data()), FormatError);
    }
};

} // namespace

TEST(LimitsShardIndex, ValidShardReads) {
    for (bool start : {false, true}) {
        ShardFixture f(start);
        const uint64_t d = f.data_start();
        f.store->put("c/0/0", f.build({{d, 16}, {d + 16, 16}, {d + 32, 16}, {d + 48, 16}}));
        const Bytes v = read_all(*f.arr);
        const Bytes p = pattern(64, 7);
        // inner chunk (0,0) holds bytes 0..15 of the data region as a 4x4 block
        EXPECT_EQ(v[0], p[0]);
        EXPECT_EQ(v[1 * 8 + 3], p[7]);
        EXPECT_EQ(v[4 * 8 + 4], p[48]);
    }
}

TEST(LimitsShardIndex, EntryPastTheEndRefused) {
    for (bool start : {false, true}) {
        SCOPED_TRACE(start ? "index at start" : "index at end");
        ShardFixture f(start);
        const uint64_t d = f.data_start(), size = 64 + 68;
        f.expect_refused(f.build({{size - 8, 16}, {d + 16, 16}, {d + 32, 16}, {d + 48, 16}}));
        f.expect_refused(f.build({{size + 1000, 16}, {d + 16, 16}, {d + 32, 16}, {d + 48, 16}}));
        f.expect_refused(f.build({{~0ull - 8, 16}, {d + 16, 16}, {d + 32, 16}, {d + 48, 16}}));
        f.expect_refused(f.build({{d, 1ull << 40}, {d + 16, 16}, {d + 32, 16}, {d + 48, 16}}));
    }
}

TEST(LimitsShardIndex, EntryOverlappingTheIndexRefused) {
    ShardFixture end(false); // index occupies bytes 64..131: whole reads refuse
    for (const Bytes& s : {end.build({{56, 16}, {16, 16}, {32, 16}, {48, 16}}),
                           end.build({{64, 16}, {16, 16}, {32, 16}, {48, 16}})}) {
        end.store->put("c/0/0", s);
        Bytes out(64);
        EXPECT_THROW(end.arr->read(Selection::all({8, 8}), out.data()), FormatError);
    }
    ShardFixture start(true); // index occupies bytes 0..67
    start.expect_refused(start.build({{0, 16}, {84, 16}, {100, 16}, {116, 16}}));
    start.expect_refused(start.build({{60, 16}, {84, 16}, {100, 16}, {116, 16}}));
}

TEST(LimitsShardIndex, HalfEmptyEntryAndBadChecksumRefused) {
    ShardFixture f(false);
    f.expect_refused(f.build({{kEmptyEntry, 16}, {16, 16}, {32, 16}, {48, 16}}));
    Bytes s = f.build({{0, 16}, {16, 16}, {32, 16}, {48, 16}});
    s[70] ^= 0x40; // an index byte: crc32c mismatch
    f.expect_refused(s);
    f.expect_refused(Bytes(s.begin(), s.begin() + 60)); // truncated below the index size
}

// A partial read of a shard whose index is at the end does not know the shard
// size, so an entry reaching into the index is read as data. Enable when the
// partial read learns the size (e.g. from the suffix request) and checks it.
TEST(LimitsShardIndex, PartialReadEntryOverlappingEndIndexRefused) {
    ShardFixture end(false);
    end.expect_refused(end.build({{56, 16}, {16, 16}, {32, 16}, {48, 16}}));
    end.expect_refused(end.build({{64, 16}, {16, 16}, {32, 16}, {48, 16}}));
}

// ------------------------------------------------------- metadata size

namespace {

// A store whose zarr.json reports a size past the limit; get() is counted
// and must not be called for it.
class HugeMetadataStore : public MemoryStore {
  public:
    std::atomic<int> gets{0};
    // Learns the size before the value (as files and HTTP do): a bounded
    // read of a zarr.json is refused before get() is counted.
    std::optional<ReadResult> read(const ReadRequest& r) override {
        if (!r.key.ends_with("zarr.json")) return MemoryStore::read(r);
        const uint64_t claim = kMaxMetadataBytes + 1;
        if (r.kind == ReadRequest::Kind::Size) return ReadResult{{}, claim, {}};
        if (r.kind == ReadRequest::Kind::Value && r.limit && claim > *r.limit)
            throw_too_large(uri() + "/" + r.key, claim, *r.limit);
        if (r.kind == ReadRequest::Kind::Value) ++gets;
        return MemoryStore::read(r);
    }
};

} // namespace

TEST(LimitsMetadata, OversizedZarrJsonRefusedWithoutReading) {
    auto store = std::make_shared<HugeMetadataStore>();
    const std::string j =
        array_json({4}, regular({4}), json::array({json{{"name", "bytes"}}})).dump();
    store->put("zarr.json", ByteView(reinterpret_cast<const uint8_t*>(j.data()), j.size()));
    store->put("g/zarr.json", ByteView(reinterpret_cast<const uint8_t*>(j.data()), j.size()));
    EXPECT_THROW(Array::open(store, ""), FormatError);
    EXPECT_THROW(Group::open(store, "g"), FormatError);
    EXPECT_THROW(read_node_json(*store, ""), FormatError);
    EXPECT_EQ(store->gets.load(), 0);
    try {
        read_node_json(*store, "");
    } catch (const FormatError& e) {
        EXPECT_NE(std::string(e.what()).find("zarr.json"), std::string::npos) << e.what();
    }
}

TEST(LimitsMetadata, OversizedJsonTextRefusedBeforeParsing) {
    // Address space only: the pages are never touched when the size check
    // comes first.
    const size_t n = kMaxMetadataBytes + 1;
    void* p = mmap(nullptr, n, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ASSERT_NE(p, MAP_FAILED);
    const long before = peak_rss_mib();
    EXPECT_THROW(parse_json_text(std::string_view(static_cast<const char*>(p), n), "big/zarr.json"),
                 FormatError);
    EXPECT_LT(peak_rss_mib() - before, 64);
    munmap(p, n);
    EXPECT_NO_THROW(parse_json_text("{}", "small/zarr.json"));
}

// ------------------------------------------------------- rectilinear runs

TEST(LimitsGrid, OverflowingRunCountsRefused) {
    const auto rect = [](const json& axes) {
        return json{{"name", "rectilinear"},
                    {"configuration", {{"kind", "inline"}, {"chunk_shapes", axes}}}};
    };
    const std::vector<json> bad = {
        json::array({json::array({json::array({4, 4611686018427387904ull})})}),     // edge*count
        json::array({json::array({json::array({1, 18446744073709551615ull}), 1})}), // sum
        json::array({json::array({json::array({4294967296ull, 4294967296ull})})}),
        json::array({json::array({18446744073709551615ull, 1})}),
        json::array({json::array({json::array({3, 0})})}),    // count 0
        json::array({json::array({json::array({0, 3})})}),    // edge 0
        json::array({json::array({json::array({3, -1})})}),   // negative count
        json::array({json::array({json::array({3, 1.5})})}),  // float count
        json::array({json::array({json::array({3, 2, 1})})}), // not a pair
    };
    for (const auto& axes : bad) {
        SCOPED_TRACE(axes.dump());
        EXPECT_THROW(ChunkGrid::parse(rect(axes), {10}, "test zarr.json"), FormatError);
        EXPECT_THROW(parse_array_metadata(
                         array_json({10}, rect(axes), json::array({json{{"name", "bytes"}}})),
                         "test zarr.json"),
                     FormatError);
    }
    // A huge but representable run is fine and costs O(1) memory.
    const json ok = json::array({json::array({json::array({1, 1ull << 62})})});
    const ChunkGrid g = ChunkGrid::parse(rect(ok), {1ull << 62}, "test zarr.json");
    EXPECT_EQ(g.grid_shape(), Shape{1ull << 62});
    EXPECT_EQ(g.axis(0).runs().size(), 1u);
    EXPECT_EQ(g.axis(0).chunk_index((1ull << 62) - 1), (1ull << 62) - 1);
    // Regular grid: ceil(length / edge) * edge overflowing is refused too.
    EXPECT_THROW(ChunkGrid::parse(regular({2}), {~0ull}, "test zarr.json"), FormatError);
}

// ------------------------------------------------------- concurrent readers

namespace {

void concurrent_windows_match_serial(const json& meta) {
    std::shared_ptr<MemoryStore> store;
    auto arr = make_array(meta, &store);
    const Shape shape = arr->metadata().shape;
    const size_t n = shape[0] * shape[1];
    std::vector<int32_t> data(n);
    for (size_t i = 0; i < n; ++i)
        data[i] = int32_t(i * 2654435761u);
    arr->write(Selection::all(shape), data.data());
    arr->flush();

    // Reopen (as a reader would) with a threaded executor; its sharding codec
    // uses the process-wide shard index cache, emptied first.
    ShardIndexCache::global().clear();
    auto reader = Array::open(store, "");
    ReadOptions opt;
    opt.executor = testutil::thread_executor(3);
    reader->set_read_options(opt);

    // The windows each thread reads, and their serial results.
    struct Win {
        Selection sel;
        std::vector<int32_t> serial;
    };
    std::vector<std::vector<Win>> plan(8);
    std::mt19937_64 rng(42);
    for (auto& p : plan)
        for (int k = 0; k < 12; ++k) {
            Win w;
            for (size_t ax = 0; ax < 2; ++ax) {
                const uint64_t a = rng() % shape[ax], b = rng() % shape[ax];
                w.sel.start.push_back(std::min(a, b));
                w.sel.count.push_back(std::max(a, b) - std::min(a, b) + 1);
            }
            w.serial.resize(w.sel.count[0] * w.sel.count[1]);
            arr->read(w.sel, w.serial.data()); // serial executor, no cache
            for (uint64_t i = 0; i < w.sel.count[0]; ++i)
                for (uint64_t j = 0; j < w.sel.count[1]; ++j)
                    ASSERT_EQ(w.serial[i * w.sel.count[1] + j],
                              data[(w.sel.start[0] + i) * shape[1] + w.sel.start[1] + j]);
            p.push_back(std::move(w));
        }

    std::atomic<int> mismatches{0}, errors{0};
    std::vector<std::thread> th;
    for (int t = 0; t < 8; ++t)
        th.emplace_back([&, t] {
            for (int rep = 0; rep < 3; ++rep)
                for (const auto& w : plan[t]) {
                    std::vector<int32_t> out(w.serial.size(), -1);
                    try {
                        reader->read(w.sel, out.data());
                    } catch (...) {
                        ++errors;
                        continue;
                    }
                    if (out != w.serial) ++mismatches;
                }
        });
    for (auto& t : th)
        t.join();
    EXPECT_EQ(errors.load(), 0);
    EXPECT_EQ(mismatches.load(), 0);
    std::vector<int32_t> all(n);
    reader->read(Selection::all(shape), all.data());
    EXPECT_EQ(all, data);
}

} // namespace

TEST(LimitsConcurrency, EightThreadsRectilinearGzip) {
    const json grid = {
        {"name", "rectilinear"},
        {"configuration",
         {{"kind", "inline"}, {"chunk_shapes", {{7, {5, 3}, 11, 13, {20, 2}}, {{9, 4}, 17, 30}}}}}};
    concurrent_windows_match_serial(
        array_json({81, 80}, grid,
                   json::array({json{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                json{{"name", "gzip"}, {"configuration", {{"level", 1}}}}}),
                   "int32"));
}

TEST(LimitsConcurrency, EightThreadsShardedZstd) {
    const json shard = {
        {"name", "sharding_indexed"},
        {"configuration",
         {{"chunk_shape", {8, 8}},
          {"codecs",
           json::array({json{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                        json{{"name", "zstd"}, {"configuration", {{"level", 1}}}}})},
          {"index_codecs",
           json::array({json{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                        json{{"name", "crc32c"}}})},
          {"index_location", "end"}}}};
    concurrent_windows_match_serial(
        array_json({90, 70}, regular({32, 32}), json::array({shard}), "int32"));
}

}  // namespace ut_metadata_test_limits
