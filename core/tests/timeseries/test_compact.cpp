// Time-series planning in core (compact.hpp, cf_time.hpp): appended_metadata
// merges runs (1,000 daily appends = one run), edge plans (fixed, monthly,
// JSON), compacted_metadata's key namespace toggle, compact_array keeping
// every value and clearing old and leftover chunks, verify_array naming keys.
#include "test_util.hpp"
#include "zarr3/builder.hpp"
#include "zarr3/compact.hpp"
#include "zarr3/counting_store.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <sys/stat.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_timeseries_test_compact {

using namespace zarr3;
using nlohmann::json;

namespace {

ArrayMetadata daily(uint64_t days, bool sharded = false) {
    ArrayBuilder b({days, 4, 6}, data_type_from_name("int32"));
    b.regular_chunk_shape({1, 4, 6}).dimension_names(std::vector<std::string>{"time", "y", "x"});
    if (sharded) b.sharding(ShardingCodecBuilder({1, 2, 3}));
    return b.build("test");
}

} // namespace

TEST(CfTime, DatesAndUnits) {
    EXPECT_EQ(days_from_civil(2024, 1, 5), 19727);
    const auto t = civil_from_days(19727 + 31 + 29); // leap year
    EXPECT_EQ(t.year, 2024);
    EXPECT_EQ(t.month, 3u);
    EXPECT_EQ(t.day, 5u);
    ASSERT_TRUE(parse_date_time("2024:01:05 12:30:00"));
    EXPECT_DOUBLE_EQ(parse_date_time("2024-01-05T12:30")->seconds, 45000);
    EXPECT_FALSE(parse_date_time("2024-02-30"));
    EXPECT_FALSE(parse_date_time("5 Jan 2024"));
    const auto u = parse_cf_time_units("hours since 2024-01-01 00:00:00");
    ASSERT_TRUE(u);
    EXPECT_DOUBLE_EQ(cf_value_of(*u, *parse_date_time("2024-01-02")), 24.0);
    EXPECT_EQ(cf_civil_of(*u, 24.0 * 31).month, 2u);
    EXPECT_FALSE(parse_cf_time_units("fortnights since 2024-01-01"));
    EXPECT_EQ(format_civil(*parse_date_time("20240105")), "2024-01-05");
}

// The calendars whose dates are proleptic Gregorian ones (the only dates the time code computes).
TEST(CfTime, GregorianCalendarsOnlyWhereTheirDatesAgree) {
    const auto modern = *parse_date_time("2024-01-05"), old = *parse_date_time("1500-03-01");
    for (const char* c : {"", "standard", "gregorian", "Gregorian", "proleptic_gregorian"})
        EXPECT_TRUE(cf_calendar_is_gregorian_at(c, modern)) << c;
    EXPECT_TRUE(cf_calendar_is_gregorian_at("proleptic_gregorian", old));
    EXPECT_FALSE(cf_calendar_is_gregorian_at("standard", old)); // a Julian date before 1582-10-15
    EXPECT_FALSE(cf_calendar_is_gregorian_at("", old));
    for (const char* c : {"noleap", "365_day", "360_day", "julian", "all_leap", "none"})
        EXPECT_FALSE(cf_calendar_is_gregorian_at(c, modern)) << c;
}

TEST(Append, ThousandDailyAppendsMergeIntoOneRun) {
    ArrayBuilder b({1, 4, 6}, data_type_from_name("int32"));
    ArrayMetadata m = b.chunk_shapes_text("[[1],4,6]").build("test"); // rectilinear
    for (int i = 0; i < 999; ++i)
        m = appended_metadata(m, 0, 1, "test");
    EXPECT_EQ(m.grid.kind(), GridKind::Rectilinear);
    EXPECT_EQ(m.shape[0], 1000u);
    ASSERT_EQ(m.grid.axis(0).runs().size(), 1u);
    EXPECT_EQ(m.grid.to_json()["configuration"]["chunk_shapes"],
              json::parse("[[[1,1000]],[4],[6]]"));
    m = appended_metadata(m, 0, 3, "test");
    EXPECT_EQ(m.grid.axis(0).to_json(), json::parse("[[1,1000],3]"));
}

// Issue 40.4: an append of whole chunks keeps a regular grid regular (GDAL's
// own Zarr driver and zarr-python without the rectilinear flag read it); a
// chunk edge that differs makes the grid rectilinear.
TEST(Append, WholeChunksKeepARegularGridRegular) {
    ArrayMetadata m = daily(1); // chunk [1, 4, 6]
    for (int i = 0; i < 30; ++i)
        m = appended_metadata(m, 0, 1, "test");
    EXPECT_EQ(m.grid.kind(), GridKind::Regular);
    EXPECT_EQ(m.shape[0], 31u);
    EXPECT_EQ(m.grid.to_json(),
              json::parse(R"({"name":"regular","configuration":{"chunk_shape":[1,4,6]}})"));
    EXPECT_EQ(m.grid.axis(0).num_chunks(), 31u);
    ArrayBuilder b({8, 4, 6}, data_type_from_name("int32"));
    const ArrayMetadata four = b.regular_chunk_shape({4, 4, 6}).build("test");
    const ArrayMetadata plus4 = appended_metadata(four, 0, 4, "test");
    EXPECT_EQ(plus4.grid.kind(), GridKind::Regular);
    EXPECT_EQ(plus4.shape[0], 12u);
    EXPECT_EQ(appended_metadata(four, 0, 8, "test").grid.kind(), GridKind::Regular);
    const ArrayMetadata plus3 = appended_metadata(four, 0, 3, "test");
    EXPECT_EQ(plus3.grid.kind(), GridKind::Rectilinear);
    EXPECT_EQ(plus3.grid.to_json()["configuration"]["chunk_shapes"],
              json::parse("[[[4,2],3],[4],[6]]"));
    // Sharded: whole shards stay regular too.
    ArrayBuilder s({4, 4, 6}, data_type_from_name("int32"));
    const auto sharded =
        s.regular_chunk_shape({2, 4, 6}).sharding(ShardingCodecBuilder({1, 2, 3})).build("t");
    EXPECT_EQ(appended_metadata(sharded, 0, 2, "cube").grid.kind(), GridKind::Regular);
    EXPECT_EQ(appended_metadata(sharded, 0, 1, "cube").grid.kind(), GridKind::Rectilinear);
}

// Issue 40.5: a rectilinear grid is written with every axis as a list (the
// real Icechunk 2.2 refuses a bare integer axis; zarr-python and zarrs read
// lists); both forms are read.
TEST(Append, RectilinearAxesAreWrittenAsLists) {
    ArrayBuilder b({10, 50, 64}, data_type_from_name("int16"));
    const auto m = b.chunk_shapes_text("[[4,4,2],32,64]").build("t");
    EXPECT_EQ(m.grid.kind(), GridKind::Rectilinear);
    const json cs = m.grid.to_json()["configuration"]["chunk_shapes"];
    EXPECT_EQ(cs, json::parse("[[[4,2],2],[[32,2]],[64]]"));
    for (const auto& axis : cs)
        EXPECT_TRUE(axis.is_array()) << cs.dump();
    // Read back: the same partition, and the bare form still parses.
    const auto back = ChunkGrid::parse(m.grid.to_json(), m.shape, "t");
    EXPECT_EQ(back.axis(1).num_chunks(), 2u);
    EXPECT_EQ(back.axis(1).chunk_edge(1), 32u);
    const auto bare = ChunkGrid::parse(
        json::parse(
            R"({"name":"rectilinear","configuration":{"kind":"inline","chunk_shapes":[[4,4,2],32,64]}})"),
        m.shape, "t");
    EXPECT_EQ(bare.axis(1).num_chunks(), 2u);
    // An empty axis still lists one chunk (zarr-python refuses an empty list).
    ArrayBuilder e({0, 5, 6}, data_type_from_name("int16"));
    const auto empty = e.chunk_shapes_text("[1,[5],6]").build("t");
    EXPECT_EQ(empty.grid.to_json()["configuration"]["chunk_shapes"][0], json::parse("[1]"));
}

// A last chunk reaching past the array (as a trim inside a chunk leaves it,
// issue 40.8) is filled first; a new edge only for the rest.
TEST(Append, FillsAnOverhangFirstAndRefusesShardMisfit) {
    ArrayBuilder b({5, 4, 6}, data_type_from_name("int32"));
    const ArrayMetadata over = b.regular_chunk_shape({2, 4, 6}).build("test");
    const auto one = appended_metadata(over, 0, 1, "cube");
    EXPECT_EQ(one.shape[0], 6u);
    EXPECT_EQ(one.grid.kind(), GridKind::Regular);
    const auto two = appended_metadata(over, 0, 2, "cube"); // fills 1, adds an edge of 1
    EXPECT_EQ(two.shape[0], 7u);
    EXPECT_EQ(to_json(two)["chunk_grid"]["configuration"]["chunk_shapes"][0], json({{2, 3}, 1}));
    ArrayBuilder s({4, 4, 6}, data_type_from_name("int32"));
    const auto sharded =
        s.regular_chunk_shape({2, 4, 6}).sharding(ShardingCodecBuilder({2, 2, 3})).build("t");
    EXPECT_THROW(appended_metadata(sharded, 0, 1, "cube"), Error);
    EXPECT_EQ(appended_metadata(sharded, 0, 2, "cube").shape[0], 6u);
}

TEST(Plan, FixedMonthlyAndJsonEdges) {
    EXPECT_EQ(plan_fixed_edges(40, 7).to_json(), json(7));
    EXPECT_EQ(plan_fixed_edges(40, 7).num_chunks(), 6u);
    const auto u = *parse_cf_time_units("days since 1970-01-01");
    std::vector<double> v;
    for (int d = 0; d < 70; ++d) // 2024-01-01 .. 2024-03-10
        v.push_back(static_cast<double>(days_from_civil(2024, 1, 1) + d));
    const AxisPartition months = plan_monthly_edges(v, u);
    EXPECT_EQ(months.to_json(), json::parse("[31,29,10]"));
    EXPECT_EQ(months.length(), 70u);
    EXPECT_EQ(parse_edges("[[10,3],5,5]", 40, "--edges").to_json(), json::parse("[[10,3],[5,2]]"));
    EXPECT_THROW(parse_edges("[10,0]", 10, "--edges"), FormatError);
}

TEST(Plan, MonthlyRefusesAnUnsortedAxisNamingTheFirstPair) {
    const auto u = *parse_cf_time_units("days since 1970-01-01");
    const auto jan1 = static_cast<double>(days_from_civil(2024, 1, 1));
    // Jan 1, Feb 1, Jan 2, Feb 2 (appended with APPEND_ORDER=ANY): 4 runs of 1 before
    const std::vector<double> v = {jan1, jan1 + 31, jan1 + 1, jan1 + 32};
    try {
        plan_monthly_edges(v, u, "t2m/time");
        FAIL() << "an unsorted axis was planned";
    } catch (const Error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("t2m/time"), std::string::npos) << m;
        EXPECT_NE(m.find("value 2 (2024-01-02)"), std::string::npos) << m;
        EXPECT_NE(m.find("value 1 (2024-02-01)"), std::string::npos) << m;
    }
    const std::vector<double> repeated = {jan1, jan1 + 1, jan1 + 1};
    EXPECT_THROW(plan_monthly_edges(repeated, u, "t"), Error);
}

TEST(Plan, CompactedMetadataTogglesTheKeyNamespace) {
    const ArrayMetadata m = appended_metadata(daily(10), 0, 1, "t");
    const auto c = compacted_metadata(m, 0, parse_edges("[5,6]", 11, "e"), "t");
    EXPECT_EQ(c.key_encoding.separator(), '.');
    EXPECT_EQ(c.grid.axis(0).to_json(), json::parse("[5,6]"));
    EXPECT_EQ(c.key_encoding.key({1, 0, 0}), "c.1.0.0");
    EXPECT_NE(c.key_encoding.key({1, 0, 0}), m.key_encoding.key({1, 0, 0}));
    EXPECT_EQ(compacted_metadata(c, 0, plan_fixed_edges(11, 11), "t").key_encoding.separator(),
              '/');
    EXPECT_THROW(compacted_metadata(m, 0, parse_edges("[5]", 5, "e"), "t"), Error);
    EXPECT_NO_THROW(compacted_metadata(daily(10, true), 0, plan_fixed_edges(10, 5), "t"));
    ArrayBuilder b({10, 4, 6}, data_type_from_name("int32"));
    const auto inner2 =
        b.regular_chunk_shape({2, 4, 6}).sharding(ShardingCodecBuilder({2, 2, 3})).build("t");
    EXPECT_THROW(compacted_metadata(inner2, 0, plan_fixed_edges(10, 3), "t"), Error);
    EXPECT_NO_THROW(compacted_metadata(inner2, 0, plan_fixed_edges(10, 4), "t"));
}

TEST(Compact, KeepsEveryValueAndRemovesOldAndLeftoverChunks) {
    for (bool sharded : {false, true}) {
        auto store = std::make_shared<MemoryStore>();
        auto a = Array::create(store, "cube", daily(40, sharded));
        const auto v = testutil::ramp_values(40 * 4 * 6);
        a->write(Selection::all(a->metadata().shape), v.data());
        a->flush();
        store->put("cube/c.9.9.9", Bytes{1, 2, 3}); // what a killed compaction left
        const auto res = compact_array(*a, 0, plan_fixed_edges(40, 16));
        EXPECT_EQ(res.old_chunks, 40u);
        EXPECT_EQ(res.new_chunks, 3u);
        auto b = Array::open(store, "cube");
        EXPECT_EQ(b->metadata().grid.axis(0).to_json(),
                  json::parse("[[16,3]]")); // written as a list
        std::vector<int32_t> got(v.size());
        b->read(Selection::all(b->metadata().shape), got.data());
        EXPECT_EQ(got, v);
        std::vector<std::string> keys;
        for (const auto& [k, _] : store->snapshot())
            keys.push_back(k);
        EXPECT_EQ(keys, (std::vector<std::string>{"cube/c.0.0.0", "cube/c.1.0.0", "cube/c.2.0.0",
                                                  "cube/zarr.json"}))
            << "sharded=" << sharded;
        EXPECT_TRUE(verify_array(*b).empty());
    }
}

// January already one chunk, February still daily (59 days of 2024).
ArrayMetadata january_compacted() {
    return compacted_metadata(daily(59), 0, parse_edges("[31,[1,28]]", 59, "e"), "t");
}

struct FileId {
    ino_t inode;
    int64_t mtime_ns;
    bool operator==(const FileId&) const = default;
};

FileId file_id(const std::filesystem::path& p) {
    struct stat st {};
    EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
    return {st.st_ino, int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

TEST(Compact, RewritesOnlyTheChunksWhoseEdgesChange) {
    testutil::TempDir dir;
    auto store = std::make_shared<FileStore>(dir.str());
    auto a = Array::create(store, "cube", january_compacted());
    const auto v = testutil::ramp_values(59 * 4 * 6);
    a->write(Selection::all(a->metadata().shape), v.data());
    a->flush();
    const FileId january = file_id(dir.path / a->chunk_key({0, 0, 0}));
    auto b = Array::open(store, "cube");
    const auto link = [&](const std::string& from, const std::string& to) {
        return store->link(from, to);
    };
    const auto res = compact_array(*b, 0, parse_edges("[31,28]", 59, "e"), {}, link);
    EXPECT_FALSE(res.unchanged);
    EXPECT_EQ(res.old_chunks, 29u);
    EXPECT_EQ(res.new_chunks, 2u);
    EXPECT_EQ(res.kept_chunks, 1u); // January: the same object (inode, mtime) under its new key
    auto c = Array::open(store, "cube");
    EXPECT_EQ(c->metadata().grid.axis(0).to_json(), json::parse("[31,28]"));
    EXPECT_EQ(file_id(dir.path / c->chunk_key({0, 0, 0})), january);
    EXPECT_FALSE(std::filesystem::exists(dir.path / a->chunk_key({0, 0, 0})));
    std::vector<int32_t> got(v.size());
    c->read(Selection::all(c->metadata().shape), got.data());
    EXPECT_EQ(got, v);
    EXPECT_TRUE(verify_array(*c).empty());
}

TEST(Compact, NothingToDoWritesNothing) {
    auto inner = std::make_shared<MemoryStore>();
    auto a = Array::create(inner, "cube", january_compacted());
    const auto v = testutil::ramp_values(59 * 4 * 6);
    a->write(Selection::all(a->metadata().shape), v.data());
    a->flush();
    const auto before = inner->snapshot();
    auto counting = std::make_shared<CountingStore>(inner);
    auto b = Array::open(counting, "cube");
    const auto res = compact_array(*b, 0, parse_edges("[31,[1,28]]", 59, "e"));
    EXPECT_TRUE(res.unchanged);
    EXPECT_EQ(res.kept_chunks, 29u);
    EXPECT_EQ(counting->counts().puts, 0u);
    EXPECT_EQ(inner->snapshot(), before);
    // A regular axis planned again with its own chunk length: nothing to do either.
    auto d = Array::create(inner, "daily", daily(10));
    EXPECT_TRUE(compact_array(*d, 0, plan_fixed_edges(10, 1)).unchanged);
}

TEST(Verify, NamesTheBadChunk) {
    auto store = std::make_shared<MemoryStore>();
    auto a = Array::create(store, "cube", daily(3, true));
    const auto v = testutil::ramp_values(3 * 4 * 6);
    a->write(Selection::all(a->metadata().shape), v.data());
    a->flush();
    Bytes shard = *store->get("cube/c/1/0/0");
    shard[shard.size() - 6] ^= 0xFF; // the shard index (crc32c)
    store->put("cube/c/1/0/0", shard);
    const auto problems = verify_array(*Array::open(store, "cube"));
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].rfind("cube/c/1/0/0: ", 0), 0u) << problems[0];
    EXPECT_NE(describe_array(*a).find("\"chunk_shapes\"") == std::string::npos &&
                  describe_array(*a).find("regular") != std::string::npos,
              false);
}

// The chunks an append from element `start` writes, from the grid: a
// rectilinear time axis [2, 3, 1] (chunks 0, 1, 2 start at 0, 2, 5), two
// chunks along y; a start inside a chunk leaves that chunk out.
TEST(Verify, ChunkKeysFromAnElementOn) {
    auto store = std::make_shared<MemoryStore>();
    ArrayBuilder b({6, 4, 6}, data_type_from_name("int32"));
    b.chunk_shapes_text("[[2,3,1],2,6]");
    const auto a = Array::create(store, "cube", b.build("test"));
    EXPECT_EQ(chunk_keys_from(*a, 2), (std::vector<std::string>{"cube/c/1/0/0", "cube/c/1/1/0",
                                                                "cube/c/2/0/0", "cube/c/2/1/0"}));
    EXPECT_EQ(chunk_keys_from(*a, 3), (std::vector<std::string>{"cube/c/2/0/0", "cube/c/2/1/0"}));
    EXPECT_EQ(chunk_keys_from(*a, 0).size(), 6u);
    EXPECT_TRUE(chunk_keys_from(*a, 6).empty());
}

// Chunks stored past the array's end (a killed append's c/3/0/0, an index
// past the grid on another axis) are listed; chunks inside, other files and
// keys of the other separator are not.
TEST(Verify, ListsChunksOutsideTheExtent) {
    auto store = std::make_shared<MemoryStore>();
    auto a = Array::create(store, "cube", daily(3, true));
    const auto v = testutil::ramp_values(3 * 4 * 6);
    a->write(Selection::all(a->metadata().shape), v.data());
    a->flush();
    EXPECT_TRUE(chunks_outside_extent(*a).empty());
    const Bytes stray = *store->get("cube/c/1/0/0");
    for (const char* k : {"cube/c/3/0/0", "cube/c/0/1/0", "cube/c/12/0/0", "cube/c/3/notes",
                          "cube/c.3.0.0", "cube/c/03/0/0"})
        store->put(k, stray);
    const auto b = Array::open(store, "cube");
    EXPECT_EQ(chunks_outside_extent(*b),
              (std::vector<std::string>{"cube/c/0/1/0", "cube/c/12/0/0", "cube/c/3/0/0"}));
    EXPECT_TRUE(verify_array(*b).empty()); // they are never read
}

} // namespace ut_timeseries_test_compact
