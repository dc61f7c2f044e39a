// Array engine: planner, strided copies, write/read round trips, buffered
// partial writes, fill-chunk elision, resize and append.
#include "grid/selection.hpp"
#include "test_util.hpp"
#include "zarr3/array.hpp"
#include "zarr3/counting_store.hpp"

#include <atomic>
#include <gtest/gtest.h>
#include <numeric>
#include <thread>
#include <unistd.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_array_test_array {

using namespace zarr3;
using nlohmann::json;

namespace {

ArrayMetadata meta_from(const json& j) {
    return parse_array_metadata(j, "test/zarr.json");
}

json array_json(const json& shape, const json& grid, const std::string& dtype = "int32",
                const json& codecs = json::array({{{"name", "bytes"},
                                                   {"configuration", {{"endian", "little"}}}}}),
                const json& fill = 0) {
    return {{"zarr_format", 3},
            {"node_type", "array"},
            {"shape", shape},
            {"data_type", dtype},
            {"chunk_grid", grid},
            {"chunk_key_encoding", {{"name", "default"}, {"configuration", {{"separator", "/"}}}}},
            {"fill_value", fill},
            {"codecs", codecs}};
}

json rect(const json& axes) {
    return {{"name", "rectilinear"},
            {"configuration", {{"kind", "inline"}, {"chunk_shapes", axes}}}};
}
json regular(const json& cs) {
    return {{"name", "regular"}, {"configuration", {{"chunk_shape", cs}}}};
}

TEST(Planner, AxisPiecesCoverSelection) {
    auto ax = AxisPartition::from_runs({{10, 3}, {5, 1}, {7, 2}});
    for (uint64_t step : {1, 2, 3, 11, 40}) {
        for (uint64_t start : {0, 9, 10, 29, 30}) {
            const uint64_t count = (ax.extent() - 1 - start) / step + 1;
            auto pieces = axis_pieces(ax, start, count, step);
            uint64_t k = 0;
            for (const auto& p : pieces) {
                EXPECT_EQ(p.k0, k);
                for (uint64_t j = 0; j < p.count; ++j) {
                    const uint64_t e = start + (k + j) * step;
                    EXPECT_EQ(ax.chunk_index(e), p.chunk);
                    EXPECT_EQ(e - ax.chunk_start(p.chunk), p.in_chunk + j * step);
                }
                k += p.count;
            }
            EXPECT_EQ(k, count);
        }
    }
}

TEST(Planner, RejectsOutOfBoundsSelections) {
    Shape shape{10, 10};
    Selection s{{0, 5}, {10, 6}, {1, 1}};
    EXPECT_THROW(plan_selection(s, shape, {}, 4, "x"), Error);
    Selection r{{3, 0}, {5, 1}, {-1, 1}}; // 3,2,1,0,-1
    EXPECT_THROW(plan_selection(r, shape, {}, 4, "x"), Error);
    Selection z{{0, 0}, {1, 1}, {0, 1}};
    EXPECT_THROW(plan_selection(z, shape, {}, 4, "x"), Error);
}

TEST(Strided, CopyOutAndInWithSteps) {
    Shape cs{4, 5};
    std::vector<int32_t> chunk(20);
    std::iota(chunk.begin(), chunk.end(), 0);
    Region r{{1, 0}, {2, 3}, {2, 2}};
    std::vector<int32_t> out(6, -1);
    StridedView v{reinterpret_cast<uint8_t*>(out.data()), {12, 4}};
    copy_region_out(reinterpret_cast<uint8_t*>(chunk.data()), cs, 4, r, v);
    EXPECT_EQ(out, (std::vector<int32_t>{5, 7, 9, 15, 17, 19}));
    std::vector<int32_t> back(20, 0);
    copy_region_in(reinterpret_cast<uint8_t*>(back.data()), cs, 4, r, v);
    EXPECT_EQ(back[5], 5);
    EXPECT_EQ(back[19], 19);
    EXPECT_EQ(back[6], 0);
    int32_t f = 7;
    fill_view(v, {2, 3}, ByteView(reinterpret_cast<uint8_t*>(&f), 4));
    EXPECT_EQ(out, std::vector<int32_t>(6, 7));
    EXPECT_TRUE(all_equal_to(ByteView(reinterpret_cast<uint8_t*>(out.data()), 24),
                             ByteView(reinterpret_cast<uint8_t*>(&f), 4)));
}

std::vector<int32_t> iota_vec(size_t n) {
    std::vector<int32_t> v(n);
    std::iota(v.begin(), v.end(), 1);
    return v;
}

TEST(ArrayWrite, RoundTripRectilinearWithOverhang) {
    auto store = std::make_shared<MemoryStore>();
    auto a = Array::create(store, "a", meta_from(array_json({13, 7}, rect({{5, {4, 2}}, 3}))));
    auto data = iota_vec(13 * 7);
    a->write(Selection::all({13, 7}), data.data());
    auto b = Array::open(store, "a");
    std::vector<int32_t> got(13 * 7);
    b->read(Selection::all({13, 7}), got.data());
    EXPECT_EQ(got, data);
    // chunk keys follow the grid: 3 x 3 chunks, last row overhangs (5+4+4=13 fits, 3*3=9>7)
    EXPECT_TRUE(store->get("a/c/2/2").has_value());
    EXPECT_FALSE(store->get("a/c/3/0").has_value());
}

TEST(ArrayWrite, PartialWritesAreBufferedAndMergedWithExistingData) {
    auto store = std::make_shared<CountingStore>(std::make_shared<MemoryStore>());
    auto a = Array::create(store, "a", meta_from(array_json({8, 8}, regular({8, 8}))));
    auto data = iota_vec(64);
    a->write(Selection::all({8, 8}), data.data());
    store->reset();
    // Fill the chunk row by row: only one put, when the chunk is complete.
    for (uint64_t r = 0; r < 8; ++r) {
        std::vector<int32_t> row(8, static_cast<int32_t>(100 + r));
        a->write(Selection{{r, 0}, {1, 8}, {1, 1}}, row.data());
    }
    EXPECT_EQ(store->counts().puts, 1u);
    EXPECT_EQ(store->counts().gets, 0u);
    // An incomplete update merges with the stored chunk at flush.
    int32_t v = -5;
    a->write(Selection{{3, 3}, {1, 1}, {1, 1}}, &v);
    a->flush();
    std::vector<int32_t> got(64);
    Array::open(store, "a")->read(Selection::all({8, 8}), got.data());
    for (int r = 0; r < 8; ++r)
        for (int c = 0; c < 8; ++c)
            EXPECT_EQ(got[r * 8 + c], (r == 3 && c == 3) ? -5 : 100 + r);
}

TEST(ArrayWrite, FillOnlyChunksAreNotStored) {
    auto store = std::make_shared<MemoryStore>();
    auto a = Array::create(
        store, "a",
        meta_from(array_json(
            {4, 4}, regular({2, 2}), "int32",
            json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}}), 9)));
    std::vector<int32_t> d(16, 9);
    d[0] = 1;
    a->write(Selection::all({4, 4}), d.data());
    EXPECT_TRUE(store->get("a/c/0/0").has_value());
    EXPECT_FALSE(store->get("a/c/1/1").has_value());
    std::vector<int32_t> all9(16, 9);
    a->write(Selection::all({4, 4}), all9.data());
    EXPECT_FALSE(store->get("a/c/0/0").has_value()) << "a chunk rewritten as fill is erased";
}

TEST(ArrayWrite, ReversedAndStridedWritesMatchReads) {
    auto store = std::make_shared<MemoryStore>();
    auto a =
        Array::create(store, "a", meta_from(array_json({10, 9}, rect({{3, 2, 5}, {{2, 4}, 1}}))));
    auto data = iota_vec(90);
    a->write(Selection::all({10, 9}), data.data());
    // reversed read of axis 0 with step -2, axis 1 step 3
    std::vector<int32_t> got(5 * 3);
    a->read(Selection{{9, 1}, {5, 3}, {-2, 3}}, got.data());
    for (int i = 0; i < 5; ++i)
        for (int j = 0; j < 3; ++j)
            EXPECT_EQ(got[i * 3 + j], data[(9 - 2 * i) * 9 + 1 + 3 * j]);
}

TEST(ArrayAppend, DailyAppendKeepsChunksAndJsonCompact) {
    testutil::TempDir tmp;
    auto store = std::make_shared<FileStore>(tmp.str());
    auto a = Array::create(store, "t", meta_from(array_json({10, 4}, rect({{{10, 1}}, 4}))));
    auto data = iota_vec(40);
    a->write(Selection::all({10, 4}), data.data());
    const auto before = store->get("t/c/0/0");
    ASSERT_TRUE(before);
    for (int day = 0; day < 1000; ++day) {
        a->append_edge(0, 1);
        std::vector<int32_t> row(4, day);
        a->write(Selection{{static_cast<uint64_t>(10 + day), 0}, {1, 4}, {1, 1}}, row.data());
    }
    a->flush();
    EXPECT_EQ(*store->get("t/c/0/0"), *before) << "existing chunk rewritten";
    const auto j = testutil::read_json(tmp.str() + "/t/zarr.json");
    EXPECT_EQ(j["shape"], json({1010, 4}));
    EXPECT_EQ(j["chunk_grid"]["configuration"]["chunk_shapes"][0], json({10, {1, 1000}}));
    auto b = Array::open(store, "t");
    std::vector<int32_t> last(4);
    b->read(Selection{{1009, 0}, {1, 4}, {1, 1}}, last.data());
    EXPECT_EQ(last, std::vector<int32_t>(4, 999));
}

TEST(ArrayResize, RegularShrinkDropsChunksOutside) {
    auto store = std::make_shared<MemoryStore>();
    auto a = Array::create(store, "a", meta_from(array_json({4, 4}, regular({2, 2}))));
    auto d = iota_vec(16);
    a->write(Selection::all({4, 4}), d.data());
    a->resize({2, 4});
    EXPECT_FALSE(store->get("a/c/1/0").has_value());
    a->resize({4, 4});
    std::vector<int32_t> got(16);
    a->read(Selection::all({4, 4}), got.data());
    EXPECT_EQ(got[15], 0) << "regrown area reads as fill";
    EXPECT_EQ(got[0], 1);
}

TEST(ArrayErrors, CorruptChunkNamesTheKey) {
    auto store = std::make_shared<MemoryStore>();
    auto a = Array::create(store, "a", meta_from(array_json({4}, regular({4}))));
    const uint8_t junk[3] = {1, 2, 3};
    store->put("a/c/0", ByteView(junk, 3));
    std::vector<int32_t> got(4);
    try {
        a->read(Selection::all({4}), got.data());
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("a/c/0"), std::string::npos) << e.what();
    }
}

TEST(StoreKeys, EscapingKeysAreRefused) {
    for (const char* k : {"../x", "a/../b", "/abs", "a//b", "a/./b", "a\\b"})
        EXPECT_THROW(validate_key(k), Error) << k;
    EXPECT_NO_THROW(validate_key("a/c/0/1"));
    testutil::TempDir tmp;
    FileStore fs(tmp.str());
    const uint8_t b[1] = {1};
    EXPECT_THROW(fs.put("../escape", ByteView(b, 1)), Error);
}

} // namespace

namespace {
// GDAL's own driver writes "fill_value": null for arrays without nodata:
// missing chunks are zero, there is no nodata, and a rewrite keeps the null.
TEST(ArrayFill, NullFillValueFromGdalReadsAsZeroWithoutNodata) {
    auto j = array_json(
        {4}, regular({2}), "int16",
        json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}}), nullptr);
    const auto m = parse_array_metadata(j, "gdal313/zarr.json");
    ASSERT_EQ(m.fill_value.size(), 2u);
    EXPECT_EQ(m.fill_value[0] | m.fill_value[1], 0);
    EXPECT_TRUE(m.fill_value_null);
    EXPECT_TRUE(m.warnings.empty());
    EXPECT_TRUE(to_json(m).at("fill_value").is_null());
    auto k = j;
    k["fill_value"] = 0;
    const auto m0 = parse_array_metadata(k, "plugin/zarr.json");
    EXPECT_FALSE(m0.fill_value_null);
    EXPECT_EQ(to_json(m0).at("fill_value"), 0);
}
} // namespace

namespace {
// A memory store whose puts of one key fail while `fail_key` is set.
class FailingPutStore : public MemoryStore {
  public:
    std::string fail_key;
    void put(const std::string& key, ByteView value) override {
        if (key == fail_key) throw Error("disk full (test)");
        MemoryStore::put(key, value);
    }
};

// 16x16 int32 in 4x4 chunks, all written, then one element of each chunk
// rewritten: 16 chunks wait in the write-back buffer.
std::shared_ptr<Array> sixteen_buffered_chunks(const std::shared_ptr<Store>& store) {
    auto a = Array::create(store, "a", meta_from(array_json({16, 16}, regular({4, 4}))));
    auto data = iota_vec(256);
    a->write(Selection::all({16, 16}), data.data());
    for (uint64_t r = 0; r < 16; r += 4)
        for (uint64_t c = 0; c < 16; c += 4) {
            const int32_t v = -static_cast<int32_t>(r * 16 + c) - 1;
            a->write(Selection{{r + 1, c + 2}, {1, 1}, {1, 1}}, &v);
        }
    return a;
}

int32_t expected_after_flush(uint64_t r, uint64_t c) {
    if (r % 4 == 1 && c % 4 == 2) return -static_cast<int32_t>((r - 1) * 16 + (c - 2)) - 1;
    return static_cast<int32_t>(r * 16 + c + 1); // iota_vec starts at 1
}
} // namespace

namespace {
// Runs each batch on two threads and records the largest batch.
struct RecordingExecutor {
    std::shared_ptr<std::atomic<size_t>> largest = std::make_shared<std::atomic<size_t>>(0);
    void operator()(size_t n, const std::function<void(size_t)>& task) const {
        if (n > *largest) *largest = n;
        std::atomic<size_t> next{0};
        auto drain = [&] {
            for (size_t i; (i = next.fetch_add(1)) < n;)
                task(i);
        };
        std::thread t(drain);
        drain();
        t.join();
    }
};
} // namespace

TEST(ArrayWrite, FlushStoresBufferedChunksAsParallelTasks) {
    auto store = std::make_shared<MemoryStore>();
    auto a = sixteen_buffered_chunks(store);
    RecordingExecutor ex;
    a->set_executor(ex);
    a->flush();
    EXPECT_EQ(*ex.largest, 16u); // one task per buffered chunk, handed over at once
    std::vector<int32_t> got(256);
    Array::open(store, "a")->read(Selection::all({16, 16}), got.data());
    for (uint64_t r = 0; r < 16; ++r)
        for (uint64_t c = 0; c < 16; ++c)
            ASSERT_EQ(got[r * 16 + c], expected_after_flush(r, c)) << r << "," << c;
}

TEST(ArrayWrite, FailedFlushKeepsTheChunksNoTaskStarted) {
    auto store = std::make_shared<FailingPutStore>();
    auto a = sixteen_buffered_chunks(store);
    store->fail_key = "a/c/0/1"; // the second chunk in key order
    // An executor that stops at the first error, as GDAL's pool does.
    a->set_executor([](size_t n, const std::function<void(size_t)>& task) {
        for (size_t i = 0; i < n; ++i)
            task(i);
    });
    try {
        a->flush();
        FAIL() << "flush should fail";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("a/c/0/1"), std::string::npos) << e.what();
    }
    store->fail_key.clear();
    // The 14 chunks after the failed one were kept and are stored now; the
    // flush still fails: chunk 0/1 was lost (issue 33 #9, sticky until rewritten).
    EXPECT_THROW(a->flush(), Error);
    std::vector<int32_t> got(256);
    Array::open(store, "a")->read(Selection::all({16, 16}), got.data());
    for (uint64_t r = 0; r < 16; ++r)
        for (uint64_t c = 0; c < 16; ++c) {
            const bool lost = r < 4 && c >= 4 && c < 8; // chunk 0/1: its update failed
            ASSERT_EQ(got[r * 16 + c], lost ? int32_t(r * 16 + c + 1) : expected_after_flush(r, c))
                << r << "," << c;
        }
}

TEST(ArrayWrite, OneChunkWritesAreQueuedAndEncodedInParallelBatches) {
    auto store = std::make_shared<CountingStore>(std::make_shared<MemoryStore>());
    // 64 chunks of 4x4, written one chunk per call (GDAL's IWriteBlock pattern).
    auto a = Array::create(store, "a", meta_from(array_json({32, 32}, regular({4, 4}))));
    RecordingExecutor ex;
    a->set_executor(ex);
    store->reset();
    auto write_chunk = [&](uint64_t k) {
        std::vector<int32_t> v(16, static_cast<int32_t>(k + 1));
        a->write(Selection{{(k / 8) * 4, (k % 8) * 4}, {4, 4}, {1, 1}}, v.data(), {},
                 Array::WriteMode::Batched);
    };
    for (uint64_t k = 0; k < 31; ++k)
        write_chunk(k);
    EXPECT_EQ(store->counts().puts, 0u); // queued
    write_chunk(31);
    EXPECT_EQ(store->counts().puts, 32u); // the batch of 32, handed over at once
    EXPECT_EQ(*ex.largest, 32u);
    EXPECT_EQ(store->counts().gets, 0u); // whole chunks: nothing read to merge
    write_chunk(32);
    // A read sees the queued chunk (it is stored first).
    std::vector<int32_t> got(32 * 32);
    a->read(Selection::all({32, 32}), got.data());
    EXPECT_EQ(got[16 * 32 + 0], 33);
    EXPECT_EQ(got[31 * 32 + 31], 0);
    EXPECT_EQ(store->counts().puts, 33u);
}

TEST(ArrayWrite, QueuedChunkTakesLaterPartialWrites) {
    auto store = std::make_shared<CountingStore>(std::make_shared<MemoryStore>());
    auto a = Array::create(store, "a", meta_from(array_json({8, 8}, regular({4, 4}))));
    a->set_executor(RecordingExecutor{});
    std::vector<int32_t> v(16, 7);
    a->write(Selection{{0, 0}, {4, 4}, {1, 1}}, v.data(), {},
             Array::WriteMode::Batched); // queued whole chunk
    const int32_t x = -1;
    a->write(Selection{{1, 1}, {1, 1}, {1, 1}}, &x, {},
             Array::WriteMode::Batched); // lands in the queued chunk
    // A partial chunk completed by one-chunk writes is queued too.
    std::vector<int32_t> half(8, 9);
    a->write(Selection{{0, 4}, {2, 4}, {1, 1}}, half.data(), {}, Array::WriteMode::Batched);
    a->write(Selection{{2, 4}, {2, 4}, {1, 1}}, half.data(), {}, Array::WriteMode::Batched);
    store->reset();
    a->flush();
    EXPECT_EQ(store->counts().gets, 0u); // both complete: no merge reads
    EXPECT_EQ(store->counts().puts, 2u);
    std::vector<int32_t> got(64);
    Array::open(store, "a")->read(Selection::all({8, 8}), got.data());
    EXPECT_EQ(got[0], 7);
    EXPECT_EQ(got[1 * 8 + 1], -1);
    EXPECT_EQ(got[3 * 8 + 7], 9);
    EXPECT_EQ(got[5 * 8 + 5], 0);
}

TEST(ArrayWrite, OneChunkWritesAreQueuedOnlyWhenBatchedAndWithAnExecutor) {
    auto store = std::make_shared<CountingStore>(std::make_shared<MemoryStore>());
    auto a = Array::create(store, "a", meta_from(array_json({8, 8}, regular({4, 4}))));
    store->reset();
    std::vector<int32_t> v(16, 7);
    a->write(Selection{{4, 4}, {4, 4}, {1, 1}}, v.data(), {}, Array::WriteMode::Batched);
    EXPECT_EQ(store->counts().puts, 1u); // no executor: nothing to batch for
    a->set_executor(RecordingExecutor{});
    a->write(Selection{{0, 4}, {4, 4}, {1, 1}}, v.data()); // WriteMode::Now
    EXPECT_EQ(store->counts().puts, 2u);
}

}  // namespace ut_array_test_array
