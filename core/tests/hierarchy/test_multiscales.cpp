// The multiscales group attribute: parsing, the rules that make a pyramid
// unusable (paths leaving the group, unknown or cyclic derivations), level
// order and the written form.
#include "zarr3/multiscales.hpp"

#include <gtest/gtest.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_hierarchy_test_multiscales {

using namespace zarr3;
using nlohmann::json;

namespace {

json attrs_with(const json& layout) {
    return {{"multiscales", {{"layout", layout}, {"resampling_method", "average"}}}};
}

std::string parse_error(const json& attrs) {
    try {
        parse_multiscales(attrs, "store/zarr.json");
    } catch (const FormatError& e) {
        return e.what();
    } catch (const std::exception& e) {
        return std::string("WRONG EXCEPTION TYPE: ") + e.what();
    }
    return "NO EXCEPTION";
}

json three_levels() {
    return json::array({{{"asset", "0"}, {"spatial:shape", {100, 200}}},
                        {{"asset", "2"},
                         {"derived_from", "1"},
                         {"transform", {{"scale", {2.0, 2.0}}, {"translation", {0.0, 0.0}}}}},
                        {{"asset", "1"},
                         {"derived_from", "0"},
                         {"transform", {{"scale", {1.0, 2.0, 2.0}}}},
                         {"spatial:shape", {50, 100}},
                         {"spatial:transform", {2.0, 0.0, 10.0, 0.0, -2.0, 20.0}}}});
}

} // namespace

TEST(Multiscales, AbsentOrOmeListIsNotAPyramid) {
    EXPECT_FALSE(parse_multiscales(json::object(), "w"));
    EXPECT_FALSE(
        parse_multiscales(json{{"multiscales", json::array({{{"version", "0.4"}}})}}, "w"));
    EXPECT_FALSE(parse_multiscales(json(nullptr), "w"));
}

TEST(Multiscales, ParsesLevelsTransformsAndSpatialMembers) {
    const auto ms = parse_multiscales(attrs_with(three_levels()), "w");
    ASSERT_TRUE(ms);
    ASSERT_EQ(ms->layout.size(), 3u);
    EXPECT_EQ(ms->resampling_method, "average");
    EXPECT_EQ(ms->layout[0].spatial_shape, (std::vector<uint64_t>{100, 200}));
    EXPECT_EQ(ms->layout[2].derived_from, "0");
    EXPECT_EQ(ms->layout[2].scale, (std::vector<double>{1.0, 2.0, 2.0}));
    ASSERT_TRUE(ms->layout[2].spatial_transform);
    EXPECT_EQ((*ms->layout[2].spatial_transform)[2], 10.0);
    EXPECT_EQ(base_level(*ms), 0u);
    // Level "2" is derived from "1" (x2), itself from "0" (x2): 4 in all.
    EXPECT_EQ(level_scale_yx(*ms, 1), (std::array<double, 2>{4.0, 4.0}));
    EXPECT_EQ(overview_order(*ms), (std::vector<size_t>{2, 1}));
}

TEST(Multiscales, PathsOutsideTheGroupAreRefused) {
    for (const char* bad : {"../x", "/abs", "a/../b", "", "a//b", "./a"}) {
        const std::string e = parse_error(attrs_with(json::array({{{"asset", bad}}})));
        EXPECT_NE(e.find("store/zarr.json: multiscales layout[0].asset"), std::string::npos)
            << bad << ": " << e;
    }
    const std::string e = parse_error(
        attrs_with(json::array({{{"asset", "0"}}, {{"asset", "1"}, {"derived_from", "../0"}}})));
    EXPECT_NE(e.find("layout[1].derived_from"), std::string::npos) << e;
}

TEST(Multiscales, UnknownDerivationsCyclesAndDuplicatesAreRefused) {
    EXPECT_NE(parse_error(attrs_with(json::array(
                              {{{"asset", "0"}}, {{"asset", "1"}, {"derived_from", "9"}}})))
                  .find("\"9\" is no level"),
              std::string::npos);
    const std::string cycle = parse_error(attrs_with(json::array(
        {{{"asset", "a"}, {"derived_from", "b"}}, {{"asset", "b"}, {"derived_from", "a"}}})));
    EXPECT_NE(cycle.find("derivation cycle"), std::string::npos) << cycle;
    EXPECT_NE(parse_error(attrs_with(json::array({{{"asset", "0"}}, {{"asset", "0"}}})))
                  .find("appears twice"),
              std::string::npos);
}

TEST(Multiscales, MalformedMembersNameTheMember) {
    EXPECT_NE(parse_error(json{{"multiscales", json::object()}}).find("layout"), std::string::npos);
    EXPECT_NE(parse_error(attrs_with(json::array({{{"asset", "0"}, {"spatial:shape", {0, 3}}}})))
                  .find("spatial:shape"),
              std::string::npos);
    EXPECT_NE(
        parse_error(attrs_with(json::array({{{"asset", "0"}, {"spatial:transform", {1, 2}}}})))
            .find("six numbers"),
        std::string::npos);
    EXPECT_NE(parse_error(
                  attrs_with(json::array({{{"asset", "0"}, {"transform", {{"scale", {"x", 2}}}}}})))
                  .find("transform.scale"),
              std::string::npos);
    EXPECT_NE(parse_error(attrs_with(json::array({{{"asset", 3}}}))).find("asset"),
              std::string::npos);
}

TEST(Multiscales, WriteRoundTripsAndRegistersConventionsOnce) {
    const auto ms = parse_multiscales(attrs_with(three_levels()), "w");
    ASSERT_TRUE(ms);
    json attrs = {{"zarr_conventions", json::array({{{"uuid", "other"}, {"name", "x"}}})}};
    write_multiscales(attrs, *ms);
    write_multiscales(attrs, *ms);
    ASSERT_EQ(attrs["zarr_conventions"].size(), 3u);
    EXPECT_EQ(attrs["zarr_conventions"][1]["uuid"], kMultiscalesUuid);
    EXPECT_EQ(attrs["zarr_conventions"][1]["name"], "multiscales");
    EXPECT_EQ(attrs["zarr_conventions"][2]["uuid"], kSpatialUuid);
    const auto back = parse_multiscales(attrs, "w");
    ASSERT_TRUE(back);
    EXPECT_EQ(multiscales_to_json(*back), multiscales_to_json(*ms));
    EXPECT_EQ(attrs["multiscales"]["layout"][2]["spatial:shape"], json({50, 100}));
    EXPECT_EQ(attrs["multiscales"]["layout"][1]["transform"]["scale"], json({2.0, 2.0}));
}

namespace {

// Two pyramids in one layout (GDAL's layout, one per variable of a group):
// temp -> ovr_2x -> ovr_4x and precip -> ovr_2x_1.
Multiscales two_pyramids() {
    const auto ms = parse_multiscales(
        attrs_with(json::array({{{"asset", "temp"}},
                                {{"asset", "ovr_2x"}, {"derived_from", "temp"}},
                                {{"asset", "precip"}},
                                {{"asset", "ovr_4x"}, {"derived_from", "ovr_2x"}},
                                {{"asset", "ovr_2x_1"}, {"derived_from", "precip"}}})),
        "w");
    return *ms;
}

std::vector<std::string> assets(const Multiscales& ms) {
    std::vector<std::string> out;
    for (const auto& l : ms.layout)
        out.push_back(l.asset);
    return out;
}

} // namespace

TEST(Multiscales, SeveralPyramidsInOneLayoutAreKeptApart) {
    const auto ms = two_pyramids();
    EXPECT_EQ(root_of(ms, 3), 0u);
    EXPECT_EQ(root_of(ms, 4), 2u);
    size_t at = 99;
    const auto temp = pyramid_of(ms, 3, &at);
    EXPECT_EQ(assets(temp), (std::vector<std::string>{"temp", "ovr_2x", "ovr_4x"}));
    EXPECT_EQ(at, 2u);
    EXPECT_EQ(assets(pyramid_of(ms, 2)), (std::vector<std::string>{"precip", "ovr_2x_1"}));
    EXPECT_EQ(overview_order(pyramid_of(ms, 2)), (std::vector<size_t>{1}));
    const auto rest = without_pyramid_of(ms, 1);
    ASSERT_TRUE(rest);
    EXPECT_EQ(assets(*rest), (std::vector<std::string>{"precip", "ovr_2x_1"}));
    EXPECT_FALSE(without_pyramid_of(pyramid_of(ms, 0), 0));
}

TEST(Multiscales, CleanSetHoldsOnlyAcceptedLevelsOfTheBasesOwnPyramid) {
    const auto ms = two_pyramids();
    const std::vector<std::string> paths = {"g/temp", "g/ovr_2x/temp", "g/precip", "g/ovr_4x/temp",
                                            "g/ovr_2x_1/precip"};
    const std::vector<std::string> all = paths;
    EXPECT_EQ(clean_set(ms, 0, paths, all),
              (std::vector<std::string>{"g/ovr_2x/temp", "g/ovr_4x/temp"}));
    EXPECT_EQ(clean_set(ms, 2, paths, all), (std::vector<std::string>{"g/ovr_2x_1/precip"}));
    // A level (not a base) cleans nothing; neither does a base whose levels
    // the reader did not accept.
    EXPECT_TRUE(clean_set(ms, 1, paths, all).empty());
    EXPECT_TRUE(clean_set(ms, 0, paths, {"g/precip", "g/ovr_2x_1/precip"}).empty());
    EXPECT_EQ(clean_set(ms, 0, paths, {"g/ovr_4x/temp"}),
              (std::vector<std::string>{"g/ovr_4x/temp"}));
}

TEST(Multiscales, CleanSetNeverHoldsABaseOrAnotherPyramidsArray) {
    const auto ms = two_pyramids();
    // Hostile paths: a level naming the base, a folder holding the base, the
    // other variable, or a level of the other pyramid.
    const std::vector<std::string> paths = {"g/temp", "g/temp", "g/precip", "g",
                                            "g/ovr_2x_1/precip"};
    EXPECT_TRUE(clean_set(ms, 0, paths, paths).empty());
    const std::vector<std::string> shared = {"g/temp", "g/ovr_2x_1/precip", "g/precip",
                                             "g/ovr_4x/temp", "g/ovr_2x_1/precip"};
    EXPECT_EQ(clean_set(ms, 0, shared, shared), (std::vector<std::string>{"g/ovr_4x/temp"}));
    EXPECT_TRUE(clean_set(ms, 0, {"a"}, {"a"}).empty()); // sizes differ: nothing
}

}  // namespace ut_hierarchy_test_multiscales
