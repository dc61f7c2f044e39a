// The one rule bounding hierarchy walks (zarr3/walk.hpp, issue 33 #15).
#include "zarr3/walk.hpp"

#include <gtest/gtest.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_hierarchy_test_walk {

using namespace zarr3;

TEST(WalkRule, RemoteStoresGetTheSmallBudget) {
    EXPECT_TRUE(is_remote_uri("/vsicurl/http://h/x.zarr"));
    EXPECT_TRUE(is_remote_uri("/vsis3/bucket/x.zarr"));
    EXPECT_TRUE(is_remote_uri("/vsizip//vsicurl/http://h/x.zip"));
    EXPECT_TRUE(is_remote_uri("https://h/x.zarr"));
    EXPECT_FALSE(is_remote_uri("/data/x.zarr"));
    EXPECT_FALSE(is_remote_uri("/vsimem/x.zarr"));
    EXPECT_EQ(walk_node_budget("/vsicurl/http://h/x", std::nullopt), kDefaultMaxRemoteWalkNodes);
    EXPECT_EQ(walk_node_budget("/data/x", std::nullopt), kDefaultMaxWalkNodes);
    EXPECT_EQ(walk_node_budget("/vsis3/b/x", 5000), 5000u);
    EXPECT_LT(kDefaultMaxRemoteWalkNodes * 100, kDefaultMaxWalkNodes);
}

TEST(WalkRule, BudgetStopsWithOneMessageNamingStoreAndOption) {
    WalkBudget b("/vsis3/b/x.zarr", 3);
    EXPECT_TRUE(b.enter("", {0, 0}));
    EXPECT_TRUE(b.count());
    EXPECT_TRUE(b.enter("g", {0, 0}));
    EXPECT_EQ(b.take_message(), "");
    EXPECT_FALSE(b.count());
    EXPECT_TRUE(b.stopped());
    const std::string msg = b.take_message();
    EXPECT_NE(msg.find("/vsis3/b/x.zarr"), std::string::npos) << msg;
    EXPECT_NE(msg.find("ZARR3_MAX_GROUP_NODES"), std::string::npos) << msg;
    EXPECT_NE(msg.find("more than 3"), std::string::npos) << msg;
    EXPECT_FALSE(b.count());
    EXPECT_EQ(b.take_message(), ""); // once
}

TEST(WalkRule, DepthAndCyclesRefused) {
    WalkBudget b("/data/x.zarr", std::nullopt);
    std::string deep;
    for (int i = 0; i <= kMaxWalkDepth; ++i)
        deep += (i ? "/g" : "g");
    EXPECT_FALSE(b.enter(deep, {0, 0}));
    EXPECT_NE(b.take_message().find("deeper than 32"), std::string::npos);
    EXPECT_TRUE(b.enter("a", {1, 2}));
    EXPECT_FALSE(b.enter("a/b", {1, 2}));
    EXPECT_NE(b.take_message().find("symbolic link cycle"), std::string::npos);
    EXPECT_FALSE(b.stopped());
    EXPECT_EQ(walk_path_depth(""), 0);
    EXPECT_EQ(walk_path_depth("a/b"), 2);
}

}  // namespace ut_hierarchy_test_walk
