// Undoing appends (trim.hpp): the trim rule on regular and rectilinear axes,
// the append after a trim (filling the cut chunk), and trim_array over a
// store with a coordinate and a multiscales pyramid: values kept, chunks
// past the end erased, kills at each step leaving the old or new length.
#include "test_util.hpp"
#include "zarr3/array.hpp"
#include "zarr3/compact.hpp"
#include "zarr3/trim.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_timeseries_test_trim {

using namespace zarr3;
using nlohmann::json;

namespace {

constexpr uint64_t kY = 2, kX = 3, kDay = kY * kX;

json grid(const json& time_axis, bool rectilinear) {
    if (!rectilinear)
        return {{"name", "regular"}, {"configuration", {{"chunk_shape", {time_axis, kY, kX}}}}};
    return {{"name", "rectilinear"},
            {"configuration", {{"kind", "inline"}, {"chunk_shapes", {time_axis, kY, kX}}}}};
}

ArrayMetadata meta(const json& time_axis, uint64_t days, bool rectilinear, uint64_t y = kY,
                   uint64_t x = kX) {
    json j = {
        {"zarr_format", 3},
        {"node_type", "array"},
        {"shape", {days, y, x}},
        {"data_type", "float32"},
        {"chunk_grid", grid(time_axis, rectilinear)},
        {"chunk_key_encoding", {{"name", "default"}}},
        {"fill_value", "NaN"},
        {"codecs", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}})},
        {"dimension_names", {"time", "y", "x"}}};
    return parse_array_metadata(j, "test zarr.json");
}

Selection rows(uint64_t start, uint64_t n, uint64_t y = kY, uint64_t x = kX) {
    return Selection{{start, 0, 0}, {n, y, x}, {}};
}

std::vector<float> values(uint64_t start, uint64_t n, float base = 0, uint64_t per = kDay) {
    std::vector<float> v(n * per);
    for (size_t i = 0; i < v.size(); ++i)
        v[i] = base + static_cast<float>(start * per + i);
    return v;
}

std::vector<float> read_all(const std::shared_ptr<Store>& store, const std::string& path) {
    auto a = Array::open(store, path);
    const auto& s = a->metadata().shape;
    uint64_t n = 1;
    for (auto d : s)
        n *= d;
    std::vector<float> out(n);
    Selection sel{Shape(s.size(), 0), s, {}};
    a->read(sel, out.data());
    return out;
}

void put_json(Store& store, const std::string& key, const json& j) {
    const std::string t = j.dump();
    store.put(key, ByteView(reinterpret_cast<const uint8_t*>(t.data()), t.size()));
}

// A store as the plugin writes a daily series: root group with a
// multiscales pyramid (t2m, level ovr with halved y/x), data t2m, coordinate
// time (float64 days), `days` rows each.
void make_series(const std::shared_ptr<Store>& store, const json& time_axis, bool rectilinear,
                 uint64_t days) {
    json layout = json::array(
        {{{"asset", "t2m"}},
         {{"asset", "ovr"}, {"derived_from", "t2m"}, {"transform", {{"scale", {1.0, 2.0, 2.0}}}}}});
    put_json(*store, "zarr.json",
             {{"zarr_format", 3},
              {"node_type", "group"},
              {"attributes", {{"multiscales", {{"layout", layout}}}}}});
    auto a = Array::create(store, "t2m", meta(time_axis, days, rectilinear));
    a->write(rows(0, days), values(0, days).data());
    a->flush();
    auto o = Array::create(store, "ovr", meta(time_axis, days, rectilinear, 1, 2));
    o->write(rows(0, days, 1, 2), values(0, days, 1000, 2).data());
    o->flush();
    json cj = {
        {"zarr_format", 3},
        {"node_type", "array"},
        {"shape", {days}},
        {"data_type", "float64"},
        {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", {4}}}}}},
        {"chunk_key_encoding", {{"name", "default"}}},
        {"fill_value", 0},
        {"codecs", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}})},
        {"dimension_names", {"time"}},
        {"attributes", {{"units", "days since 2023-01-01"}}}};
    auto c = Array::create(store, "time", parse_array_metadata(cj, "time"));
    std::vector<double> t(days);
    for (uint64_t i = 0; i < days; ++i)
        t[i] = static_cast<double>(i);
    c->write(Selection{{0}, {days}, {}}, t.data());
    c->flush();
}

} // namespace

TEST(TrimRule, RegularAxisKeepsItsEdge) {
    const auto m = trimmed_metadata(meta(1, 10, false), 0, 4, "t");
    EXPECT_EQ(m.shape, (Shape{4, kY, kX}));
    EXPECT_EQ(m.grid.kind(), GridKind::Regular);
    EXPECT_EQ(m.grid.axis(0).num_chunks(), 4u);
    EXPECT_EQ(to_json(m)["chunk_grid"]["configuration"]["chunk_shape"][0], 1);
}

TEST(TrimRule, RectilinearDropsChunksPastTheNewLength) {
    const auto m = trimmed_metadata(meta({31, 28, 31}, 90, true), 0, 40, "t");
    EXPECT_EQ(m.shape[0], 40u);
    EXPECT_EQ(m.grid.axis(0).num_chunks(), 2u);
    EXPECT_EQ(m.grid.axis(0).extent(), 59u); // the cut chunk keeps its edge (its bytes)
    EXPECT_EQ(to_json(m)["chunk_grid"]["configuration"]["chunk_shapes"][0], json({31, 28}));
    // A cut on a chunk boundary leaves no overhang.
    const auto b = trimmed_metadata(meta({31, 28, 31}, 90, true), 0, 59, "t");
    EXPECT_EQ(b.grid.axis(0).extent(), 59u);
    const auto r = trimmed_metadata(meta(json::array({json::array({1, 10})}), 10, true), 0, 3, "t");
    EXPECT_EQ(to_json(r)["chunk_grid"]["configuration"]["chunk_shapes"][0], json({{1, 3}}));
}

TEST(TrimRule, RefusesALengthThatDoesNotShorten) {
    for (uint64_t n : {0u, 10u, 11u}) {
        try {
            trimmed_metadata(meta(1, 10, false), 0, n, "s.zarr/t2m");
            FAIL() << n;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("s.zarr/t2m: cannot trim axis 0 to " +
                                                 std::to_string(n) + " elements: it has 10"),
                      std::string::npos)
                << e.what();
        }
    }
}

TEST(TrimRule, AnAppendAfterATrimFillsTheCutChunkFirst) {
    const auto t = trimmed_metadata(meta({31, 28, 31}, 90, true), 0, 40, "t");
    const auto a = appended_metadata(t, 0, 5, "t"); // inside the cut chunk
    EXPECT_EQ(a.shape[0], 45u);
    EXPECT_EQ(to_json(a)["chunk_grid"]["configuration"]["chunk_shapes"][0], json({31, 28}));
    const auto b = appended_metadata(t, 0, 30, "t"); // fills it, 11 more
    EXPECT_EQ(b.shape[0], 70u);
    EXPECT_EQ(to_json(b)["chunk_grid"]["configuration"]["chunk_shapes"][0], json({31, 28, 11}));
    // A regular grid cut inside a chunk stays regular when the rest lands on whole chunks.
    const auto r = trimmed_metadata(meta(4, 12, false), 0, 6, "t");
    const auto c = appended_metadata(r, 0, 6, "t");
    EXPECT_EQ(c.grid.kind(), GridKind::Regular);
    EXPECT_EQ(c.shape[0], 12u);
}

TEST(TrimArray, CutsDataLevelsAndCoordinateAndErasesChunksPastTheEnd) {
    auto store = std::make_shared<MemoryStore>();
    make_series(store, {4, 4, 4}, true, 12);
    const auto res = trim_array(store, "t2m", "time", 6);
    EXPECT_EQ(res.old_length, 12u);
    EXPECT_EQ(res.new_length, 6u);
    EXPECT_EQ(res.arrays, (std::vector<std::string>{"t2m", "ovr", "time"}));
    EXPECT_EQ(Array::open(store, "t2m")->metadata().shape[0], 6u);
    EXPECT_EQ(Array::open(store, "ovr")->metadata().shape[0], 6u);
    EXPECT_EQ(Array::open(store, "time")->metadata().shape[0], 6u);
    EXPECT_EQ(read_all(store, "t2m"), values(0, 6));
    EXPECT_EQ(read_all(store, "ovr"), values(0, 6, 1000, 2));
    EXPECT_FALSE(store->size("t2m/c/2/0/0")); // wholly past 6
    EXPECT_TRUE(store->size("t2m/c/1/0/0"));  // holds rows 4, 5: kept
    EXPECT_FALSE(store->size("time/c/2"));
    EXPECT_EQ(res.erased, 3u);
    // Refused again at the same length; nothing changed.
    EXPECT_THROW(trim_array(store, "t2m", "time", 6), Error);
    EXPECT_THROW(trim_array(store, "t2m", "y", 2), Error); // not the append axis
}

TEST(TrimArray, AnAppendAfterATrimOverwritesTheHiddenValues) {
    auto store = std::make_shared<MemoryStore>();
    make_series(store, {4, 4, 4}, true, 12);
    trim_array(store, "t2m", "time", 6);
    auto a = Array::open(store, "t2m");
    const auto nm = appended_metadata(a->metadata(), 0, 3, a->describe());
    auto out = Array::open(store, "t2m", nm);
    out->write(rows(6, 3), values(6, 3, 500).data());
    out->flush();
    out->write_metadata();
    auto expect = values(0, 6);
    const auto added = values(6, 3, 500);
    expect.insert(expect.end(), added.begin(), added.end());
    EXPECT_EQ(read_all(store, "t2m"), expect);
    EXPECT_EQ(to_json(Array::open(store, "t2m")
                          ->metadata())["chunk_grid"]["configuration"]["chunk_shapes"][0],
              json({{4, 2}, 1}));
}

TEST(TrimArray, TheCoordinateStaysAsLongAsAnotherArrayUsingIt) {
    auto store = std::make_shared<MemoryStore>();
    make_series(store, 4, false, 12);
    Array::create(store, "sp", meta(4, 10, false)); // another variable on time, 10 long
    trim_array(store, "t2m", "time", 6);
    EXPECT_EQ(Array::open(store, "time")->metadata().shape[0], 10u);
    EXPECT_EQ(Array::open(store, "sp")->metadata().shape[0], 10u);
}

// A process killed at each step leaves the old or the new length, each with
// its values; a second run finishes a trim killed before its switch.
TEST(TrimArray, AKillAtEachStepLeavesTheOldOrTheNewLength) {
    for (const char* step : {"trim-levels", "trim-switch", "trim-coord"}) {
        testutil::TempDir tmp;
        auto store = std::make_shared<FileStore>(tmp.str());
        make_series(store, {4, 4, 4}, true, 12);
        const pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            setenv("ZARR3_TEST_KILL_AT", step, 1);
            try {
                auto s = std::make_shared<FileStore>(tmp.str());
                trim_array(s, "t2m", "time", 6);
            } catch (...) {
                _exit(3);
            }
            _exit(0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        ASSERT_TRUE(WIFSIGNALED(status)) << step;
        auto after = std::make_shared<FileStore>(tmp.str());
        const uint64_t len = Array::open(after, "t2m")->metadata().shape[0];
        EXPECT_EQ(len, std::string(step) == "trim-levels" ? 12u : 6u) << step;
        EXPECT_EQ(read_all(after, "t2m"), values(0, len)) << step;
        EXPECT_GE(Array::open(after, "time")->metadata().shape[0], len) << step;
        if (len == 12) {
            trim_array(after, "t2m", "time", 6); // the re-run finishes
            EXPECT_EQ(Array::open(after, "ovr")->metadata().shape[0], 6u);
        }
        EXPECT_EQ(read_all(after, "t2m"), values(0, 6)) << step;
    }
}

} // namespace ut_timeseries_test_trim
