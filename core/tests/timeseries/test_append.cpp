// Daily-append pattern on rectilinear grids (blog "Variable length chunks in
// Zarr"): 1,000 one-day appends leave every existing chunk/shard file
// untouched (bytes and mtime) and add a single [1, 1000] run to the JSON.
#include "test_util.hpp"
#include "zarr3/array.hpp"
#include "zarr3/array_lock.hpp"
#include "zarr3/compact.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <thread>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_timeseries_test_append {

using namespace zarr3;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr uint64_t kY = 4, kX = 6, kDay = kY * kX;

json codecs_plain() {
    return json::array(
        {{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
         {{"name", "zstd"}, {"configuration", {{"level", 1}, {"checksum", false}}}}});
}

json codecs_sharded() {
    return json::array(
        {{{"name", "sharding_indexed"},
          {"configuration",
           {{"chunk_shape", {1, 2, 3}},
            {"codecs", codecs_plain()},
            {"index_codecs",
             json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                          {{"name", "crc32c"}}})},
            {"index_location", "end"}}}}});
}

ArrayMetadata make_meta(const json& time_edges, uint64_t days, const json& codecs) {
    json j = {{"zarr_format", 3},
              {"node_type", "array"},
              {"shape", {days, kY, kX}},
              {"data_type", "float32"},
              {"chunk_grid",
               {{"name", "rectilinear"},
                {"configuration", {{"kind", "inline"}, {"chunk_shapes", {time_edges, kY, kX}}}}}},
              {"chunk_key_encoding", {{"name", "default"}}},
              {"fill_value", "NaN"},
              {"codecs", codecs},
              {"dimension_names", {"time", "y", "x"}}};
    return parse_array_metadata(j, "test zarr.json");
}

std::vector<float> day_values(uint64_t day) {
    std::vector<float> v(kDay);
    for (uint64_t i = 0; i < kDay; ++i)
        v[i] = static_cast<float>(day) * 100.0f + static_cast<float>(i);
    return v;
}

Selection days(uint64_t start, uint64_t n) {
    return Selection{{start, 0, 0}, {n, kY, kX}, {}};
}

struct FileState {
    std::vector<uint8_t> bytes;
    fs::file_time_type mtime;
};

// Every data file under `root` (not zarr.json), by relative path.
std::map<std::string, FileState> snapshot(const fs::path& root) {
    std::map<std::string, FileState> out;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
        if (!e.is_regular_file() || e.path().filename() == "zarr.json") continue;
        out[fs::relative(e.path(), root).string()] = {testutil::read_file(e.path().string()),
                                                      fs::last_write_time(e.path())};
    }
    return out;
}

// Writes an archive of `archive_days`, then appends 1,000 days one at a time
// and checks files, JSON and values.
void run_daily_append(const json& time_edges, uint64_t archive_days, const json& codecs,
                      const json& expected_axis0, size_t expected_archive_files) {
    testutil::TempDir tmp;
    auto store = std::make_shared<FileStore>(tmp.str());
    auto a = Array::create(store, "t2m", make_meta(time_edges, archive_days, codecs));
    std::vector<float> archive;
    for (uint64_t d = 0; d < archive_days; ++d) {
        auto v = day_values(d);
        archive.insert(archive.end(), v.begin(), v.end());
    }
    a->write(days(0, archive_days), archive.data());
    a->flush();
    const auto before = snapshot(tmp.path / "t2m");
    ASSERT_EQ(before.size(), expected_archive_files);
    const std::string zj = (tmp.path / "t2m" / "zarr.json").string();

    uint64_t json_size_after_two = 0; // the tail is a [1, 2] run from the second append on
    for (uint64_t k = 0; k < 1000; ++k) {
        const uint64_t d = archive_days + k;
        a->append_edge(0, 1);
        const auto v = day_values(d);
        a->write(days(d, 1), v.data());
        if (k == 1) json_size_after_two = fs::file_size(zj);
    }
    a->flush();

    // Existing files: same bytes, same modification time.
    const auto after = snapshot(tmp.path / "t2m");
    for (const auto& [path, st] : before) {
        auto it = after.find(path);
        ASSERT_NE(it, after.end()) << path << " disappeared";
        EXPECT_EQ(it->second.bytes, st.bytes) << path << " rewritten";
        EXPECT_EQ(it->second.mtime, st.mtime) << path << " touched";
    }
    // One new chunk (or shard) file per appended day.
    EXPECT_EQ(after.size(), before.size() + 1000);
    for (uint64_t k : {uint64_t{0}, uint64_t{499}, uint64_t{999}}) {
        const uint64_t chunk = expected_axis0.size() - 1 + k;
        EXPECT_TRUE(after.count("c/" + std::to_string(chunk) + "/0/0")) << "chunk " << chunk;
    }

    // The JSON stays compact: one [1, 1000] run, and its size barely grows.
    const json j = testutil::read_json(zj);
    EXPECT_EQ(j["shape"], json({archive_days + 1000, kY, kX}));
    EXPECT_EQ(j["chunk_grid"]["configuration"]["chunk_shapes"][0], expected_axis0);
    // Only digits grow: the run count ("2" -> "1000") and the shape (e.g. "92" -> "1090").
    EXPECT_LE(fs::file_size(zj), json_size_after_two + 6);
    EXPECT_LT(fs::file_size(zj), 4096u);

    // Values read back through a fresh handle.
    auto b = Array::open(store, "t2m");
    std::vector<float> got(archive.size());
    b->read(days(0, archive_days), got.data());
    EXPECT_EQ(got, archive);
    for (uint64_t d : {archive_days, archive_days + 1, archive_days + 500, archive_days + 999}) {
        std::vector<float> one(kDay);
        b->read(days(d, 1), one.data());
        EXPECT_EQ(one, day_values(d)) << "day " << d;
    }
    // A strided read across the archive/append boundary.
    std::vector<float> col(10);
    b->read(Selection{{archive_days - 5, 1, 2}, {10, 1, 1}, {1, 1, 1}}, col.data());
    for (uint64_t i = 0; i < 10; ++i)
        EXPECT_EQ(col[i], day_values(archive_days - 5 + i)[1 * kX + 2]);
}

} // namespace

TEST(DailyAppend, MonthlyChunksThen1000DaysOnFileStore) {
    // Three months in calendar-month chunks, then 1,000 one-day chunks.
    run_daily_append(json::array({31, 28, 31}), 90, codecs_plain(),
                     json::array({31, 28, 31, {1, 1000}}), 3);
}

TEST(DailyAppend, EachAppendedDayIsItsOwnShard) {
    // Shards of 30 days (inner chunks 1 x 2 x 3), then one shard per day.
    run_daily_append(json::array({{30, 3}}), 90, codecs_sharded(),
                     json::array({{30, 3}, {1, 1000}}), 3);
}

TEST(DailyAppend, AppendsMergeWithAnExistingRunOfOnes) {
    testutil::TempDir tmp;
    auto store = std::make_shared<FileStore>(tmp.str());
    auto a = Array::create(store, "a", make_meta(json::array({10, {1, 5}}), 15, codecs_plain()));
    for (int k = 0; k < 20; ++k)
        a->append_edge(0, 1);
    const json j = testutil::read_json((tmp.path / "a" / "zarr.json").string());
    EXPECT_EQ(j["chunk_grid"]["configuration"]["chunk_shapes"][0], json::array({10, {1, 25}}));
    EXPECT_EQ(j["shape"][0], 35);
}

TEST(DailyAppend, ShrinkKeepsEdgesAndRegrowReusesThem) {
    testutil::TempDir tmp;
    auto store = std::make_shared<FileStore>(tmp.str());
    auto a = Array::create(store, "a", make_meta(json::array({{10, 10}}), 100, codecs_plain()));
    std::vector<float> all(100 * kDay, 1.0f);
    a->write(days(0, 100), all.data());
    a->flush();
    const auto before = snapshot(tmp.path / "a");
    const std::string zj = (tmp.path / "a" / "zarr.json").string();

    a->resize({95, kY, kX});
    json j = testutil::read_json(zj);
    EXPECT_EQ(j["shape"][0], 95);
    EXPECT_EQ(j["chunk_grid"]["configuration"]["chunk_shapes"][0], json::array({{10, 10}}));
    // Edges past the extent are kept: growing back within them adds no edge.
    a->resize({100, kY, kX});
    j = testutil::read_json(zj);
    EXPECT_EQ(j["chunk_grid"]["configuration"]["chunk_shapes"][0], json::array({{10, 10}}));
    // Growing past the extent appends one edge covering the new part.
    a->resize({107, kY, kX});
    j = testutil::read_json(zj);
    EXPECT_EQ(j["chunk_grid"]["configuration"]["chunk_shapes"][0], json::array({{10, 10}, 7}));
    // append_edge refuses while the edges do not end at the array end.
    a->resize({105, kY, kX});
    EXPECT_THROW(a->append_edge(0, 1), Error);

    const auto after = snapshot(tmp.path / "a");
    for (const auto& [path, st] : before) {
        ASSERT_TRUE(after.count(path)) << path;
        EXPECT_EQ(after.at(path).bytes, st.bytes) << path;
    }
}

// Appends under the array lock (array_lock.hpp, issue 33 #5 and #6): the
// length comes from the array's zarr.json read under the lock; stores
// without locks detect a concurrent switch instead of losing a step.
namespace {

// One day appended as an appending tool does it: lock, read the length from
// zarr.json, write the chunk, check, switch. `between` runs after the chunk
// is written and before the check (another writer, in the conflict tests).
void append_day(const std::shared_ptr<Store>& store, float day,
                const std::function<void()>& between = {}) {
    const auto lock = lock_array(*store, "t2m");
    NodeSnapshot seen;
    auto a = open_array_fresh(store, "t2m", seen);
    const uint64_t start = a->metadata().shape[0];
    auto nm = appended_metadata(a->metadata(), 0, 1, a->describe());
    auto out = Array::open(store, "t2m", nm);
    const std::vector<float> v(kDay, day);
    out->write(days(start, 1), v.data());
    out->flush();
    if (between) between();
    require_node_unchanged(*store, "t2m", seen, "append");
    out->write_metadata();
}

// The first value of every day of the array, in order.
std::vector<float> stored_days(const std::shared_ptr<Store>& store) {
    auto a = Array::open(store, "t2m");
    const uint64_t n = a->metadata().shape[0];
    std::vector<float> all(n * kDay);
    a->read(days(0, n), all.data());
    std::vector<float> out;
    for (uint64_t d = 0; d < n; ++d)
        out.push_back(all[d * kDay]);
    return out;
}

// Another process's view of the same storage: a different uri, so that the
// in-process mutex does not exclude it (as a second process would not be).
class OtherProcess final : public ForwardingStore {
  public:
    using ForwardingStore::ForwardingStore;
    std::string uri() const override { return inner_->uri() + "#other"; }
};

// A store without locks (an object store), over memory.
class Lockless final : public ForwardingStore {
  public:
    Lockless() : ForwardingStore(std::make_shared<MemoryStore>()) {}
    std::unique_ptr<StoreLock> lock(const std::string&) override { return nullptr; }
    StoreCapabilities capabilities() const override { return {.locks = false}; }
};

// Array t2m holding day 0.
void new_t2m(const std::shared_ptr<Store>& store) {
    auto a = Array::create(store, "t2m", make_meta(json::array({1}), 1, codecs_plain()));
    const std::vector<float> v(kDay, 0.0f);
    a->write(days(0, 1), v.data());
    a->flush();
}

// Each store on its own thread appends `per_thread` days, all starting
// together, each pausing between its read and its switch (where an unlocked
// writer would lose the other's day). Errors are counted, not thrown.
void threads_append(const std::vector<std::shared_ptr<Store>>& stores, int per_thread) {
    std::atomic<size_t> ready{0}, errors{0};
    std::vector<std::thread> threads;
    for (size_t k = 0; k < stores.size(); ++k)
        threads.emplace_back([&, k] {
            ++ready;
            while (ready < stores.size())
                std::this_thread::yield();
            for (int i = 0; i < per_thread; ++i) {
                try {
                    append_day(stores[k], static_cast<float>(100 * (k + 1) + i),
                               [] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); });
                } catch (const std::exception&) {
                    ++errors;
                }
            }
        });
    for (auto& t : threads)
        t.join();
    EXPECT_EQ(errors, 0u);
}

void expect_every_day(const std::shared_ptr<Store>& store, size_t writers, int per_thread) {
    auto got = stored_days(store);
    ASSERT_EQ(got.size(), 1 + writers * static_cast<size_t>(per_thread));
    std::sort(got.begin(), got.end());
    std::vector<float> want{0.0f};
    for (size_t k = 0; k < writers; ++k)
        for (int i = 0; i < per_thread; ++i)
            want.push_back(static_cast<float>(100 * (k + 1) + i));
    std::sort(want.begin(), want.end());
    EXPECT_EQ(got, want);
}

} // namespace

TEST(ArrayLock, ThreadsAppendingToAMemoryStoreKeepEveryDay) {
    auto store = std::make_shared<MemoryStore>();
    new_t2m(store);
    EXPECT_TRUE(lock_array(*store, "t2m")->across_processes()); // its in-process lock
    threads_append({store, store, store, store}, 10);
    expect_every_day(store, 4, 10);
}

TEST(ArrayLock, SeparateFileStoresOnOneFolderKeepEveryDay) {
    testutil::TempDir tmp;
    auto first = std::make_shared<FileStore>(tmp.str());
    new_t2m(first);
    EXPECT_TRUE(lock_array(*first, "t2m")->across_processes());
    // Another uri: only the fcntl lock on t2m/zarr.json.lock excludes them.
    auto second = std::make_shared<OtherProcess>(std::make_shared<FileStore>(tmp.str()));
    threads_append({first, second, second}, 8);
    expect_every_day(first, 3, 8);
    EXPECT_FALSE(fs::exists(tmp.path / "t2m" / "zarr.json.lock"));
}

TEST(ArrayLock, WithoutLocksAConcurrentSwitchIsAConflictNotALostDay) {
    auto mem = std::make_shared<Lockless>();
    new_t2m(mem);
    auto other = std::make_shared<OtherProcess>(mem);
    try {
        append_day(mem, 1.0f, [&] { append_day(other, 2.0f); });
        FAIL() << "the interrupted append switched";
    } catch (const Error& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("t2m/zarr.json"), std::string::npos) << msg;
        EXPECT_NE(msg.find("changed by another writer during this append"), std::string::npos)
            << msg;
    }
    // The other writer's day is kept; nothing of the failed switch shows.
    EXPECT_EQ(stored_days(mem), (std::vector<float>{0.0f, 2.0f}));
}

TEST(ArrayLock, SameBytesWithAnotherVersionIsAConflict) {
    auto mem = std::make_shared<MemoryStore>();
    Array::create(mem, "t2m", make_meta(json::array({1}), 1, codecs_plain()));
    const NodeSnapshot seen = snapshot_node(*mem, "t2m");
    ASSERT_TRUE(seen.version.known());
    EXPECT_NO_THROW(require_node_unchanged(*mem, "t2m", seen, "append"));
    const auto bytes = *mem->get("t2m/zarr.json");
    mem->put("t2m/zarr.json", bytes); // rewritten: a new ETag-like version
    EXPECT_THROW(require_node_unchanged(*mem, "t2m", seen, "append"), Error);
    mem->erase("t2m/zarr.json");
    try {
        require_node_unchanged(*mem, "t2m", seen, "append");
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("it is gone"), std::string::npos);
    }
}

TEST(ArrayLock, FreshOpenIgnoresStaleConsolidatedMetadata) {
    auto mem = std::make_shared<MemoryStore>();
    Group::create(mem, "");
    new_t2m(mem);
    json root = *read_node_json(*mem, "");
    root["consolidated_metadata"] = {{"kind", "inline"},
                                     {"must_understand", false},
                                     {"metadata", {{"t2m", *read_node_json(*mem, "t2m")}}}};
    const std::string text = root.dump();
    mem->put("zarr.json", ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
    append_day(mem, 1.0f);
    append_day(mem, 2.0f);
    // The consolidated copy still says one day; a write must not use it.
    const auto g = Group::open(mem, "");
    ASSERT_EQ(g->array_names(), std::vector<std::string>{"t2m"}); // listed from the copy
    EXPECT_EQ(g->open_array("t2m")->metadata().shape[0], 1u);
    NodeSnapshot seen;
    EXPECT_EQ(open_array_fresh(mem, "t2m", seen)->metadata().shape[0], 3u);
    EXPECT_EQ(stored_days(mem), (std::vector<float>{0.0f, 1.0f, 2.0f}));
}

}  // namespace ut_timeseries_test_append
