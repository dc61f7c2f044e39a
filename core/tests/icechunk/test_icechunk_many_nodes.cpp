// A snapshot with thousands of nodes (issue 29, "snapshots with many nodes"):
// opening and reading one array by name reads the repo file, the snapshot and
// that array's manifest, never another array's; listing groups and reading
// every array's metadata read no manifest at all.
#include "icechunk/icechunk_test_util.hpp"
#include "icechunk/icechunk_writer.hpp"

#include "zarr3/counting_store.hpp"
#include "zarr3/hierarchy.hpp"
#include "zarr3/walk.hpp"

#include <algorithm>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_icechunk_test_icechunk_many_nodes {

using namespace zarr3;
using namespace zarr3::icechunk;

namespace {

constexpr int kGroups = 30, kPerGroup = 100; // 3000 arrays, 3031 nodes with the groups

std::string group_name(int g) {
    return "g" + std::to_string(100 + g).substr(1);
}
std::string array_name(int a) {
    return "a" + std::to_string(1000 + a).substr(1);
}

std::string zarr_json() {
    return R"({"zarr_format":3,"node_type":"array","shape":[4],"data_type":"uint8",
        "chunk_grid":{"name":"regular","configuration":{"chunk_shape":[2]}},
        "chunk_key_encoding":{"name":"default","configuration":{"separator":"/"}},
        "fill_value":0,"codecs":[{"name":"bytes","configuration":{"endian":"little"}}]})";
}

// Array i holds {i % 256, 1, 2, 3}: chunk 0 inline, chunk 1 native.
icewriter::RepoSpec many_arrays() {
    icewriter::RepoSpec spec;
    for (int g = 0; g < kGroups; ++g) {
        spec.groups.push_back("/" + group_name(g));
        for (int a = 0; a < kPerGroup; ++a) {
            const int i = g * kPerGroup + a;
            icewriter::ArraySpec arr{"/" + group_name(g) + "/" + array_name(a), zarr_json(), {}};
            arr.refs.push_back({{0}, {uint8_t(i % 256), 1}, {}, "", 0, 0, "", 0});
            arr.refs.push_back({{1}, {}, {2, 3}, "", 0, 0, "", 0});
            spec.arrays.push_back(std::move(arr));
        }
    }
    return spec;
}

std::shared_ptr<CountingStore> counted(const icewriter::RepoSpec& spec) {
    auto mem = std::make_shared<MemoryStore>();
    for (const auto& [key, bytes] : icewriter::build(spec))
        mem->put(key, bytes);
    return std::make_shared<CountingStore>(mem);
}

std::vector<std::string> keys_read(const CountingStore& s, const std::string& prefix) {
    std::vector<std::string> out;
    for (const auto& line : s.log()) {
        const auto space = line.find(' ');
        const auto key = line.substr(space + 1, line.find(' ', space + 1) - space - 1);
        if (key.rfind(prefix, 0) == 0) out.push_back(key);
    }
    return out;
}

} // namespace

TEST(IcechunkManyNodes, ReadingOneArrayReadsOnlyItsManifest) {
    const auto spec = many_arrays();
    auto files = icewriter::build(spec);
    ASSERT_EQ(std::count_if(files.begin(), files.end(),
                            [](const auto& f) { return f.first.rfind("manifests/", 0) == 0; }),
              kGroups * kPerGroup);
    auto storage = counted(spec);
    auto store = IcechunkStore::open(storage);
    EXPECT_EQ(store->snapshot().nodes.size(), size_t(1 + kGroups + kGroups * kPerGroup));
    const int g = 17, a = 42, i = g * kPerGroup + a;
    const std::string path = group_name(g) + "/" + array_name(a);
    EXPECT_EQ(icetest::read_all<uint8_t>(store, path),
              (std::vector<uint8_t>{uint8_t(i % 256), 1, 2, 3}));
    // The array's one manifest (id 2/i in icechunk_writer.hpp), nothing else.
    const std::string manifest = "manifests/" + icewriter::text_of(icewriter::id12(2, uint32_t(i)));
    EXPECT_EQ(keys_read(*storage, "manifests/"), std::vector<std::string>{manifest});
    EXPECT_EQ(keys_read(*storage, "repo").size(), 1u);
    EXPECT_EQ(keys_read(*storage, "snapshots/").size(), 1u);
    EXPECT_EQ(keys_read(*storage, "chunks/").size(), 1u);
    EXPECT_EQ(store->manifests_loaded(), 1u);
    // Another array of another group: its own manifest once more.
    EXPECT_EQ(icetest::read_all<uint8_t>(store, group_name(3) + "/" + array_name(7)),
              (std::vector<uint8_t>{uint8_t((3 * kPerGroup + 7) % 256), 1, 2, 3}));
    EXPECT_EQ(keys_read(*storage, "manifests/").size(), 2u);
    EXPECT_EQ(keys_read(*storage, "snapshots/").size(), 1u);
}

TEST(IcechunkManyNodes, ListingAndEveryArraysMetadataReadNoManifest) {
    auto storage = counted(many_arrays());
    auto store = IcechunkStore::open(storage);
    auto groups = store->list_dir("");
    EXPECT_EQ(std::count_if(groups.begin(), groups.end(),
                            [](const std::string& n) { return n.rfind("g", 0) == 0; }),
              kGroups);
    size_t arrays = 0;
    for (int g = 0; g < kGroups; ++g) {
        const auto children = store->list_dir(group_name(g));
        EXPECT_EQ(children.size(), size_t(kPerGroup + 1)) << group_name(g); // + zarr.json
        for (int a = 0; a < kPerGroup; ++a) {
            auto arr = Array::open(store, group_name(g) + "/" + array_name(a));
            arrays += arr->metadata().shape == std::vector<uint64_t>{4};
        }
    }
    EXPECT_EQ(arrays, size_t(kGroups * kPerGroup));
    EXPECT_TRUE(keys_read(*storage, "manifests/").empty());
    EXPECT_EQ(store->manifests_loaded(), 0u);
    EXPECT_EQ(keys_read(*storage, "snapshots/").size(), 1u);
}

// Issue 39 (10): a walk of every group of a snapshot costs work linear in the
// nodes it visits: each listing examines the children of its group, not every
// node of the snapshot (20,200 groups: 400 million entries when quadratic).
TEST(IcechunkManyNodes, WalkingEveryGroupIsLinearInTheNodes) {
    constexpr int kTop = 200, kSub = 100;
    icewriter::RepoSpec spec;
    for (int t = 0; t < kTop; ++t) {
        const std::string top = "/t" + std::to_string(t);
        spec.groups.push_back(top);
        for (int s = 0; s < kSub; ++s)
            spec.groups.push_back(top + "/s" + std::to_string(s));
        spec.arrays.push_back({top + "/a", zarr_json(), {}});
    }
    auto store = IcechunkStore::open(counted(spec));
    const size_t nodes = store->snapshot().nodes.size();
    ASSERT_EQ(nodes, size_t(1 + kTop * (kSub + 2)));
    WalkBudget budget(store->uri(), uint64_t(1) << 20);
    size_t arrays = 0;
    HierarchyVisitor visit;
    visit.array = [&](const Group&, const std::string&) { return ++arrays, true; };
    walk_hierarchy(*Group::open(store, ""), budget, visit);
    EXPECT_EQ(arrays, size_t(kTop));
    EXPECT_FALSE(budget.stopped());
    EXPECT_LE(store->listing_work(), 4 * nodes)
        << "listings examined " << store->listing_work() << " entries for " << nodes << " nodes";
}

// The children index lists a path that is only the ancestor of nodes (a
// snapshot without its intermediate groups), as the listing always did.
TEST(IcechunkManyNodes, ListingNamesAncestorsThatAreNoNodes) {
    icewriter::RepoSpec spec;
    spec.groups = {"/g"};
    spec.arrays.push_back({"/x/y/a", zarr_json(), {}});
    spec.arrays.push_back({"/x/y/b", zarr_json(), {}});
    spec.arrays.push_back({"/g/h/c", zarr_json(), {}});
    auto store = IcechunkStore::open(counted(spec));
    EXPECT_EQ(store->list_dir(""), (std::vector<std::string>{"g", "x", "zarr.json"}));
    EXPECT_EQ(store->list_dir("x"), (std::vector<std::string>{"y"}));
    EXPECT_EQ(store->list_dir("x/y"), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(store->list_dir("g"), (std::vector<std::string>{"h", "zarr.json"}));
    EXPECT_EQ(store->list_dir("g/h"), (std::vector<std::string>{"c"}));
    EXPECT_TRUE(store->list_dir("nothing").empty());
}

} // namespace ut_icechunk_test_icechunk_many_nodes
