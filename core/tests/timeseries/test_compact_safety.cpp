// Compaction never loses data (issue 33): v2 chunk keys (#1), deletes only
// verified chunk keys of the old encoding inside the old grid, readers open
// across a compaction or a shrink get an error instead of the fill value
// (#7), and loops bounded by the stored extent, not the grid's runs (#8).
#include "test_util.hpp"
#include "zarr3/array_lock.hpp"
#include "zarr3/builder.hpp"
#include "zarr3/compact.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_timeseries_test_compact_safety {

using namespace zarr3;
using nlohmann::json;

namespace {

ArrayMetadata cube(uint64_t days, ChunkKeyEncoding enc = {}, bool sharded = false) {
    ArrayBuilder b({days, 4, 6}, data_type_from_name("int32"));
    b.regular_chunk_shape({1, 4, 6}).chunk_key_encoding(enc);
    if (sharded) b.sharding(ShardingCodecBuilder({1, 2, 3}));
    return b.build("test");
}

std::shared_ptr<Array> filled(const std::shared_ptr<Store>& store, const ArrayMetadata& m) {
    auto a = Array::create(store, "cube", m);
    const auto v = testutil::ramp_values(checked_product(m.shape, "n"));
    a->write(Selection::all(m.shape), v.data());
    a->flush();
    return a;
}

std::vector<int32_t> read_all(const Array& a) {
    std::vector<int32_t> got(checked_product(a.metadata().shape, "n"));
    a.read(Selection::all(a.metadata().shape), got.data());
    return got;
}

std::vector<std::string> keys_of(const MemoryStore& s) {
    std::vector<std::string> k;
    for (const auto& [key, _] : s.snapshot())
        k.push_back(key);
    return k;
}

void expect_changed_error(const std::function<void()>& fn, const std::string& detail) {
    try {
        fn();
        FAIL() << "expected an error naming the change (" << detail << ")";
    } catch (const Error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("cube changed since it was opened"), std::string::npos) << m;
        EXPECT_NE(m.find("reopen it"), std::string::npos) << m;
        EXPECT_NE(m.find(detail), std::string::npos) << m;
    }
}

} // namespace

// #1: v2 keys ("0.0.0" files, "0/0/0" folders) both counted as chunks of the
// other separator: the compaction erased what it wrote, or the old chunks.
TEST(CompactV2, KeepsEveryValueWithEitherSeparator) {
    for (char sep : {'.', '/'}) {
        auto store = std::make_shared<MemoryStore>();
        auto a = filled(store, cube(12, ChunkKeyEncoding(ChunkKeyEncoding::Kind::V2, sep)));
        const auto v = read_all(*a);
        const auto res = compact_array(*a, 0, plan_fixed_edges(12, 5));
        EXPECT_EQ(res.new_chunks, 3u);
        auto b = Array::open(store, "cube");
        EXPECT_EQ(b->metadata().key_encoding.separator(), sep == '.' ? '/' : '.');
        EXPECT_EQ(read_all(*b), v) << "separator " << sep;
        const std::string p = "cube/";
        const char n = sep == '.' ? '/' : '.';
        EXPECT_EQ(keys_of(*store), (std::vector<std::string>{
                                       p + "0" + n + "0" + n + "0", p + "1" + n + "0" + n + "0",
                                       p + "2" + n + "0" + n + "0", "cube/zarr.json"}));
        // And back again.
        compact_array(*b, 0, plan_fixed_edges(12, 12));
        EXPECT_EQ(read_all(*Array::open(store, "cube")), v) << "separator " << sep;
    }
}

// The class: only names that parse as chunk keys of the encoding, inside the
// bounds, holding a value, are listed (and so erased).
TEST(CompactErase, OnlyVerifiedChunkKeysOfTheEncoding) {
    auto store = std::make_shared<MemoryStore>();
    const Bytes one{1};
    for (const char* k : {"a/c/0/0", "a/c/1/2", "a/c/2/0", "a/c/00/1", "a/c/0/1/5", "a/c/+1/0",
                          "a/c/0/x", "a/c.0.0", "a/0.0", "a/0/0", "a/c/1/0.lock", "a/sub/zarr.json",
                          "a/c/3/zarr.json", "a/zarr.json"})
        store->put(k, one);
    const Shape bounds{2, 3};
    using K = ChunkKeyEncoding::Kind;
    EXPECT_EQ(chunk_namespace_keys(*store, "a", ChunkKeyEncoding(K::Default, '/'), bounds),
              (std::vector<std::string>{"a/c/0/0", "a/c/1/2"}));
    EXPECT_EQ(chunk_namespace_keys(*store, "a", ChunkKeyEncoding(K::Default, '.'), bounds),
              (std::vector<std::string>{"a/c.0.0"}));
    EXPECT_EQ(chunk_namespace_keys(*store, "a", ChunkKeyEncoding(K::V2, '.'), bounds),
              (std::vector<std::string>{"a/0.0"}));
    EXPECT_EQ(chunk_namespace_keys(*store, "a", ChunkKeyEncoding(K::V2, '/'), bounds),
              (std::vector<std::string>{"a/0/0"}));
    EXPECT_EQ(erase_chunk_namespace(*store, "a", ChunkKeyEncoding(K::Default, '/'), bounds), 2u);
    EXPECT_EQ(keys_of(*store).size(), 12u);
    EXPECT_FALSE(store->size("a/c/0/0"));
    EXPECT_TRUE(store->size("a/c/2/0") && store->size("a/c/0/1/5") &&
                store->size("a/sub/zarr.json"));
}

// #7: a handle opened before a compaction reads an error, never the fill
// value; the same across two compactions (the same key names again) and
// after a shrink; an append keeps the old chunks valid, so no error.
TEST(ReaderAcrossCompaction, GetsAnErrorNeverTheFillValue) {
    for (bool sharded : {false, true}) {
        auto store = std::make_shared<MemoryStore>();
        auto w = filled(store, cube(12, {}, sharded));
        const auto v = read_all(*w);
        auto r = Array::open(store, "cube");
        EXPECT_EQ(read_all(*r), v);
        compact_array(*Array::open(store, "cube"), 0, plan_fixed_edges(12, 4));
        expect_changed_error([&] { read_all(*r); }, "chunk key encoding");
        // A second compaction writes the old key names again, another grid.
        compact_array(*Array::open(store, "cube"), 0, plan_fixed_edges(12, 2));
        EXPECT_EQ(Array::open(store, "cube")->metadata().key_encoding.separator(), '/');
        expect_changed_error([&] { read_all(*r); }, "chunk edges of axis 0 changed");
        EXPECT_EQ(read_all(*Array::open(store, "cube")), v);
    }
}

TEST(ReaderAcrossResize, ShrinkIsAnErrorAppendIsNot) {
    auto store = std::make_shared<MemoryStore>();
    auto w = filled(store, cube(6));
    const auto v = read_all(*w);
    auto r = Array::open(store, "cube");
    // An append (the grid becomes rectilinear): the old chunks still hold.
    Array::open(store, "cube", appended_metadata(w->metadata(), 0, 2, "t"))->write_metadata();
    EXPECT_EQ(read_all(*r), v);
    Array::open(store, "cube")->resize({8, 4, 6});
    EXPECT_EQ(read_all(*r), v);
    Array::open(store, "cube")->resize({3, 4, 6});
    expect_changed_error([&] { read_all(*r); }, "axis 0 shrank from 6 to 3");
}

namespace {

// An array of length 10 whose time axis has a run of 10^12 chunks past its end.
std::shared_ptr<Array> long_tail(const std::shared_ptr<Store>& store) {
    json j = to_json(cube(10));
    j["chunk_grid"] = json::parse(R"({"name":"rectilinear","configuration":
        {"kind":"inline","chunk_shapes":[[[5,2],[1,1000000000000]],4,6]}})");
    const std::string text = j.dump();
    store->put("cube/zarr.json",
               ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
    auto a = Array::open(store, "cube");
    const auto v = testutil::ramp_values(10 * 4 * 6);
    a->write(Selection::all(a->metadata().shape), v.data());
    a->flush();
    return a;
}

} // namespace

// #8: verify and compaction visit the chunks inside the extent only.
TEST(CompactBounds, RunsPastTheEndAreNotWalked) {
    auto store = std::make_shared<MemoryStore>();
    auto a = long_tail(store);
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_TRUE(verify_array(*a).empty());
    const auto v = read_all(*a);
    const auto res = compact_array(*a, 0, parse_edges("[[5,1000000000000]]", 10, "--edges"));
    EXPECT_EQ(res.old_chunks, 2u);
    EXPECT_EQ(res.new_chunks, 2u);
    auto b = Array::open(store, "cube");
    EXPECT_EQ(read_all(*b), v);
    EXPECT_TRUE(verify_array(*b).empty());
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

// The class "plan from the array's own zarr.json at that moment": a handle
// opened before an append must not compact (it would drop the new step);
// and a compaction waits for the array's write lock.
TEST(CompactMetadata, RefusesWhenZarrJsonChangedSinceTheOpen) {
    auto store = std::make_shared<MemoryStore>();
    auto a = filled(store, cube(6));
    Array::open(store, "cube", appended_metadata(a->metadata(), 0, 1, "t"))->write_metadata();
    try {
        compact_array(*a, 0, plan_fixed_edges(6, 3));
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("cube/zarr.json: changed since the array was opened"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_EQ(Array::open(store, "cube")->metadata().shape[0], 7u);
    EXPECT_EQ(keys_of(*store).size(), 7u); // 6 chunks and zarr.json: nothing erased
}

TEST(CompactMetadata, WaitsForTheArrayLock) {
    auto store = std::make_shared<MemoryStore>();
    auto a = filled(store, cube(6));
    std::atomic<bool> done{false};
    std::thread t;
    {
        const auto held = lock_array(*store, "cube");
        t = std::thread([&] {
            compact_array(*Array::open(store, "cube"), 0, plan_fixed_edges(6, 3));
            done = true;
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        EXPECT_FALSE(done.load());
    }
    t.join();
    EXPECT_TRUE(done.load());
    EXPECT_EQ(Array::open(store, "cube")->metadata().grid.axis(0).to_json(),
              json::parse("[[3,2]]")); // a list (40.5)
}

} // namespace ut_timeseries_test_compact_safety

namespace ut_timeseries_test_compact_safety {

// Reads after the first compare only zarr.json's version with the one last
// found compatible (a stat): a layout rewritten after several reads is still
// seen by the next read, on a folder (versions from stat) and in memory.
TEST(CompactSafety, LayoutChangedAfterSeveralReadsIsSeenByTheNextRead) {
    testutil::TempDir tmp;
    for (const bool on_disk : {true, false}) {
        std::shared_ptr<Store> store;
        if (on_disk)
            store = std::make_shared<FileStore>(tmp.str());
        else
            store = std::make_shared<MemoryStore>();
        filled(store, cube(8));
        auto reader = Array::open(store, "cube");
        std::vector<int32_t> one(4);
        for (int i = 0; i < 3; ++i) // partial reads: each checks zarr.json
            reader->read(Selection{{1, 0, 0}, {1, 2, 2}, {1, 1, 1}}, one.data());
        // Another writer: the same shape, now sharded.
        const std::string text = to_json(cube(8, {}, true)).dump();
        store->put("cube/zarr.json",
                   ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
        expect_changed_error(
            [&] {
                reader->read(Selection{{1, 0, 0}, {1, 2, 2}, {1, 1, 1}}, one.data());
            },
            "codecs");
    }
}

} // namespace ut_timeseries_test_compact_safety
