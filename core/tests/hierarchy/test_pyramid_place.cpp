// Where an array sits in a multiscales pyramid (zarr3/pyramid_place.hpp): the
// one search behind the driver's overviews and the tool's trim.
#include "zarr3/pyramid_place.hpp"

#include "zarr3/store.hpp"

#include <gtest/gtest.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_hierarchy_test_pyramid_place {

using namespace zarr3;
using json = nlohmann::json;

void put_json(Store& store, const std::string& key, const json& j) {
    const std::string t = j.dump();
    store.put(key, ByteView(reinterpret_cast<const uint8_t*>(t.data()), t.size()));
}

json group_with(const json& layout) {
    return {{"zarr_format", 3},
            {"node_type", "group"},
            {"attributes", {{"multiscales", {{"layout", layout}}}}}};
}

const json kArray = {{"zarr_format", 3}, {"node_type", "array"}};

TEST(PyramidPlace, PathInside) {
    EXPECT_EQ(path_inside("a/b/c", "a"), "b/c");
    EXPECT_EQ(path_inside("a/b", ""), "a/b");
    EXPECT_FALSE(path_inside("ab/c", "a"));
    EXPECT_FALSE(path_inside("a", "a"));
    EXPECT_FALSE(path_inside("b/c", "a"));
}

TEST(PyramidPlace, LevelHoldingPrefersTheAssetThenTheLongestHolder) {
    std::vector<MultiscaleLevel> layout(3);
    layout[0].asset = "0";
    layout[1].asset = "1";
    layout[2].asset = "1/sub";
    EXPECT_EQ(level_holding(layout, "0"), std::make_pair(size_t{0}, std::string()));
    EXPECT_EQ(level_holding(layout, "1/t2m"), std::make_pair(size_t{1}, std::string("t2m")));
    EXPECT_EQ(level_holding(layout, "1/sub/t2m"), std::make_pair(size_t{2}, std::string("t2m")));
    EXPECT_FALSE(level_holding(layout, "10"));
    EXPECT_FALSE(level_holding(layout, "2/t2m"));
}

TEST(PyramidPlace, GroupAttributesOnlyOfGroups) {
    MemoryStore s;
    put_json(s, "g/zarr.json", {{"zarr_format", 3}, {"node_type", "group"}});
    put_json(s, "a/zarr.json", kArray);
    EXPECT_EQ(group_attributes(s, "g"), json::object());
    EXPECT_FALSE(group_attributes(s, "a"));
    EXPECT_FALSE(group_attributes(s, "none"));
}

TEST(PyramidPlace, NearestAncestorWithMultiscalesDecides) {
    MemoryStore s;
    // GDAL's layout: one group per level holding an array named like the base.
    put_json(s, "zarr.json",
             group_with(json::array({{{"asset", "0"}}, {{"asset", "1"}, {"derived_from", "0"}}})));
    put_json(s, "1/t2m/zarr.json", kArray);
    auto p = find_pyramid(s, "1/t2m");
    ASSERT_TRUE(p);
    EXPECT_EQ(p->group, "");
    EXPECT_EQ(p->level, 1u);
    EXPECT_EQ(p->suffix, "t2m");
    EXPECT_EQ(p->ms.layout.size(), 2u);
    EXPECT_TRUE(p->group_attributes.contains("multiscales"));
    // A nearer group with a layout that does not hold the array: no pyramid,
    // and no search further up.
    put_json(s, "1/zarr.json", group_with(json::array({{{"asset", "x"}}})));
    EXPECT_FALSE(find_pyramid(s, "1/t2m"));
}

TEST(PyramidPlace, SearchStopsAfterThreeGroupLevels) {
    MemoryStore s;
    put_json(s, "zarr.json", group_with(json::array({{{"asset", "a/b/c/d"}}})));
    put_json(s, "a/b/c/zarr.json", {{"zarr_format", 3}, {"node_type", "group"}});
    EXPECT_FALSE(find_pyramid(s, "a/b/c/d")); // root is 4 levels up
    put_json(s, "zarr.json", group_with(json::array({{{"asset", "b/c/d"}}})));
    EXPECT_FALSE(find_pyramid(s, "a/b/c/d"));
    put_json(s, "a/zarr.json", group_with(json::array({{{"asset", "b/c/d"}}})));
    auto p = find_pyramid(s, "a/b/c/d"); // a is 3 levels up
    ASSERT_TRUE(p);
    EXPECT_EQ(p->group, "a");
    EXPECT_EQ(p->suffix, "");
}

TEST(PyramidPlace, MalformedMultiscalesNamesTheGroup) {
    MemoryStore s;
    put_json(s, "g/zarr.json", group_with(json::array({{{"asset", "../x"}}})));
    try {
        find_pyramid(s, "g/x");
        FAIL() << "expected a FormatError";
    } catch (const FormatError& e) {
        EXPECT_NE(std::string(e.what()).find("g/zarr.json"), std::string::npos) << e.what();
    }
}

} // namespace ut_hierarchy_test_pyramid_place
