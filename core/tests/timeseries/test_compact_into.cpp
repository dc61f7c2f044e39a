// compact_array_into: a compaction inside an Icechunk session (one commit).
#include "../icechunk/icechunk_test_util.hpp"
#include "zarr3/compact.hpp"
#include "zarr3/icechunk_write.hpp"
#include "zarr3/metadata.hpp"

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_timeseries_test_compact_into {

using namespace zarr3;
using namespace zarr3::icechunk;

namespace {

ArrayMetadata daily(uint64_t days, const std::string& codecs) {
    const std::string text = R"({"zarr_format":3,"node_type":"array","shape":[)" +
                             std::to_string(days) + R"(,4],"data_type":"int32","chunk_grid":{
        "name":"rectilinear","configuration":{"kind":"inline","chunk_shapes":[[[1,)" +
                             std::to_string(days) + R"(]],2]}},"chunk_key_encoding":{
        "name":"default"},"fill_value":0,"codecs":)" +
                             codecs + "}";
    return parse_array_metadata(parse_json_text(text, "test"), "test");
}

const std::string kZstd = R"([{"name":"bytes","configuration":{"endian":"little"}},
    {"name":"zstd","configuration":{"level":1}}])";

std::vector<int32_t> values(uint64_t days) {
    std::vector<int32_t> v(days * 4);
    for (size_t i = 0; i < v.size(); ++i)
        v[i] = int32_t(i * 7 + 1);
    return v;
}

// Repository with group g (consolidated metadata listing a) and g/a daily.
std::string populate(const std::shared_ptr<Store>& st, uint64_t days) {
    create_repository(st);
    auto s = IcechunkSession::open(st);
    auto a = Array::create(s, "g/a", daily(days, kZstd), true);
    const auto v = values(days);
    a->write(Selection::all(a->metadata().shape), v.data());
    nlohmann::json g = {{"zarr_format", 3}, {"node_type", "group"}, {"attributes", {}}};
    g["consolidated_metadata"] = {{"kind", "inline"},
                                  {"must_understand", false},
                                  {"metadata", {{"a", to_json(a->metadata())}}}};
    const std::string text = g.dump();
    s->put("g/zarr.json", ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
    return s->commit("daily");
}

} // namespace

TEST(CompactInto, OneCommitNewGridOldSnapshotUnchanged) {
    auto st = std::make_shared<MemoryStore>();
    const std::string before = populate(st, 20);
    auto session = IcechunkSession::open(st);
    auto old_store = IcechunkStore::open(st, {.snapshot = before});
    auto old = Array::open(old_store, "g/a");
    const auto res = compact_array_into(*old, *session, 0, plan_fixed_edges(20, 7));
    EXPECT_EQ(res.old_chunks, 40u);
    EXPECT_EQ(res.new_chunks, 6u);
    EXPECT_EQ(res.new_axis, nlohmann::json(7));
    // nothing visible before the commit
    EXPECT_EQ(Repository::open(st)->resolve({}), before);
    const std::string after = session->commit("compacted");
    auto now = IcechunkStore::open(st);
    auto a = Array::open(now, "g/a");
    EXPECT_EQ(a->metadata().grid.axis(0).to_json(),
              nlohmann::json::parse("[[7,3]]")); // a list (40.5)
    EXPECT_EQ(to_json(a->metadata()).at("chunk_key_encoding"),
              to_json(old->metadata()).at("chunk_key_encoding"));
    EXPECT_EQ(icetest::read_all<int32_t>(now, "g/a"), values(20));
    // only the new chunks are referenced: 3 x 2 of them
    size_t keys = 0;
    for (const auto& d : now->list_dir("g/a/c"))
        keys += now->list_dir("g/a/c/" + d).size();
    EXPECT_EQ(keys, 6u);
    EXPECT_EQ(now->list_dir("g/a/c"), (std::vector<std::string>{"0", "1", "2"}));
    // the old snapshot, read again
    EXPECT_EQ(icetest::read_all<int32_t>(IcechunkStore::open(st, {.snapshot = before}), "g/a"),
              values(20));
    EXPECT_EQ(Array::open(IcechunkStore::open(st, {.snapshot = before}), "g/a")
                  ->metadata()
                  .grid.axis(0)
                  .to_json(),
              nlohmann::json::parse("[[1,20]]"));
    // the group's consolidated entry follows
    const auto g = read_node_json(*now, "g");
    EXPECT_EQ(g->at("consolidated_metadata").at("metadata").at("a").at("chunk_grid"),
              to_json(a->metadata()).at("chunk_grid"));
    auto repo = Repository::open(st);
    EXPECT_EQ(icetest::messages(repo->history(after)),
              (std::vector<std::string>{"compacted", "daily", "Repository initialized"}));
}

size_t chunk_objects(const MemoryStore& st) {
    size_t n = 0;
    for (const auto& [k, _] : st.snapshot())
        n += k.rfind("chunks/", 0) == 0;
    return n;
}

// Compacts g/a at the tip of main into `edges` in one session; commits when
// anything changed. Returns the result.
CompactResult compact_tip(const std::shared_ptr<MemoryStore>& st, const std::string& edges,
                          std::string* commit = nullptr) {
    auto session = IcechunkSession::open(st);
    auto old = Array::open(IcechunkStore::open(st, {.snapshot = session->base_snapshot()}), "g/a");
    const auto res = compact_array_into(*old, *session, 0, parse_edges(edges, 59, "--edges"));
    EXPECT_EQ(session->has_changes(), !res.unchanged);
    if (!res.unchanged) {
        const std::string id = session->commit("compacted " + edges);
        if (commit) *commit = id;
    }
    return res;
}

TEST(CompactInto, WritesOnlyTheChunksWhoseEdgesChange) {
    auto st = std::make_shared<MemoryStore>();
    populate(st, 59);               // 2024-01-01 .. 2024-02-28, daily, 2 chunks per day
    compact_tip(st, "[31,[1,28]]"); // January first
    const size_t objects = chunk_objects(*st);
    const auto january = Array::open(IcechunkStore::open(st), "g/a");
    std::string id;
    const auto res = compact_tip(st, "[31,28]", &id);
    EXPECT_FALSE(res.unchanged);
    EXPECT_EQ(res.new_chunks, 4u);
    EXPECT_EQ(res.kept_chunks, 2u);
    EXPECT_EQ(chunk_objects(*st), objects + 2); // February's two chunks only
    auto now = IcechunkStore::open(st);
    EXPECT_EQ(Array::open(now, "g/a")->metadata().grid.axis(0).to_json(),
              nlohmann::json::parse("[31,28]"));
    EXPECT_EQ(icetest::read_all<int32_t>(now, "g/a"), values(59));
    EXPECT_EQ(now->list_dir("g/a/c"), (std::vector<std::string>{"0", "1"}));
    // Nothing to do: no change staged, no commit, no object.
    const auto again = compact_tip(st, "[31,28]");
    EXPECT_TRUE(again.unchanged);
    EXPECT_EQ(chunk_objects(*st), objects + 2);
    EXPECT_EQ(Repository::open(st)->resolve({}), id);
}

TEST(CompactInto, BadEdgesChangeNothing) {
    auto st = std::make_shared<MemoryStore>();
    const std::string before = populate(st, 10);
    auto session = IcechunkSession::open(st);
    auto old = Array::open(IcechunkStore::open(st, {.snapshot = before}), "g/a");
    EXPECT_THROW(compact_array_into(*old, *session, 0, parse_edges("[3,3]", 10, "--edges")), Error);
    EXPECT_FALSE(session->has_changes());
}

} // namespace ut_timeseries_test_compact_into
