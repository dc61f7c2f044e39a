// Daily-append pattern on rectilinear grids (blog "Variable length chunks in
// Zarr"): 1,000 one-day appends leave every existing chunk/shard file
// untouched (bytes and mtime) and add a single [1, 1000] run to the JSON.
#include "test_util.hpp"
#include "zarr3/array.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

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
