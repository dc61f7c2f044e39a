// Navigation of a hierarchy (zarr3/hierarchy.hpp): path parts, the nearest
// ancestor holding a name, the walk of the arrays, dimension names.
#include "zarr3/hierarchy.hpp"

#include "zarr3/builder.hpp"

#include <gtest/gtest.h>

#include <set>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_hierarchy_test_hierarchy {

using namespace zarr3;

namespace {

ArrayMetadata meta(Shape shape) {
    Shape chunks = shape;
    return ArrayBuilder(std::move(shape), data_type_from_name("int16"))
        .regular_chunk_shape(chunks)
        .build();
}

// root: a, g/{b, h/{c}}, k/{d}
std::shared_ptr<Store> tree() {
    auto s = std::make_shared<MemoryStore>();
    Group::create(s, "");
    Array::create(s, "a", meta({2}));
    Group::create(s, "g");
    Array::create(s, "g/b", meta({3}));
    Group::create(s, "g/h");
    Array::create(s, "g/h/c", meta({4}));
    Group::create(s, "k");
    Array::create(s, "k/d", meta({5}));
    return s;
}

std::vector<std::string> walk(const std::shared_ptr<Store>& s, WalkBudget& budget,
                              std::vector<std::string>* messages = nullptr, size_t stop_at = 100) {
    std::vector<std::string> out;
    HierarchyVisitor v;
    v.array = [&](const Group& g, const std::string& name) {
        out.push_back(join_key(g.path(), name));
        return out.size() < stop_at;
    };
    v.warn = [&](const std::string& m) {
        if (messages) messages->push_back(m);
    };
    walk_hierarchy(*Group::open(s, ""), budget, v);
    return out;
}

} // namespace

TEST(Hierarchy, PathParts) {
    EXPECT_EQ(parent_path("a/b/c"), "a/b");
    EXPECT_EQ(parent_path("c"), "");
    EXPECT_EQ(parent_path(""), "");
    EXPECT_EQ(base_name("a/b/c"), "c");
    EXPECT_EQ(base_name("c"), "c");
}

TEST(Hierarchy, NearestAncestorPathIsNearestFirstAndStopsAtRoot) {
    std::vector<std::string> asked;
    const std::set<std::string> holding = {"", "a"};
    auto found = nearest_ancestor_path("a/b/c", [&](const std::string& g) {
        asked.push_back(g);
        return holding.count(g) > 0;
    });
    ASSERT_TRUE(found);
    EXPECT_EQ(*found, "a");
    EXPECT_EQ(asked, (std::vector<std::string>{"a/b/c", "a/b", "a"}));
    asked.clear();
    EXPECT_FALSE(nearest_ancestor_path("x/y", [&](const std::string& g) {
        asked.push_back(g);
        return false;
    }));
    EXPECT_EQ(asked, (std::vector<std::string>{"x/y", "x", ""}));
}

TEST(Hierarchy, NearestAncestorIsBounded) {
    int asked = 0;
    // A parent step that never reaches a top (a cycle) still ends.
    auto found = nearest_ancestor(
        0,
        [&](int) {
            ++asked;
            return false;
        },
        [](int n) { return std::optional<int>(n + 1); });
    EXPECT_FALSE(found);
    EXPECT_EQ(asked, kMaxAncestorSteps);
    EXPECT_EQ(*nearest_ancestor(
                  10, [](int n) { return n == 7; },
                  [](int n) { return n > 0 ? std::optional<int>(n - 1) : std::nullopt; }),
              7);
}

TEST(Hierarchy, WalkIsDepthFirstArraysBeforeGroups) {
    auto s = tree();
    WalkBudget budget(s->uri(), std::nullopt);
    EXPECT_EQ(walk(s, budget), (std::vector<std::string>{"a", "g/b", "g/h/c", "k/d"}));
}

TEST(Hierarchy, WalkStopsWhenTheVisitorSaysSo) {
    auto s = tree();
    WalkBudget budget(s->uri(), std::nullopt);
    EXPECT_EQ(walk(s, budget, nullptr, 2), (std::vector<std::string>{"a", "g/b"}));
}

TEST(Hierarchy, WalkStopsAtTheBudgetWithOneMessage) {
    auto s = tree();
    WalkBudget budget("/vsis3/b/t.zarr", 4); // root, a, g, g/b: then stop
    std::vector<std::string> messages;
    EXPECT_EQ(walk(s, budget, &messages), (std::vector<std::string>{"a", "g/b"}));
    EXPECT_TRUE(budget.stopped());
    ASSERT_EQ(messages.size(), 1u);
    EXPECT_NE(messages[0].find("more than 4"), std::string::npos) << messages[0];
}

TEST(Hierarchy, DimensionNames) {
    auto m = meta({2, 3, 4});
    m.dimension_names = {std::string("time"), std::nullopt, std::string()};
    EXPECT_EQ(dimension_name(m, 0), "time");
    EXPECT_EQ(dimension_name(m, 1), "dim1");
    EXPECT_EQ(dimension_name(m, 2), "dim2"); // empty: unnamed
    EXPECT_TRUE(has_dimension_name(m, 0));
    EXPECT_FALSE(has_dimension_name(m, 2));
    EXPECT_EQ(unnamed_dimension_name(7), "dim7");
    m.dimension_names.clear();
    EXPECT_EQ(dimension_name(m, 0), "dim0");
}

TEST(Hierarchy, WalkSkipsAFolderSeenBeforeAndUsesTheGroupOpener) {
    auto s = tree();
    WalkBudget budget(s->uri(), std::nullopt);
    std::vector<std::string> out, opened, messages;
    HierarchyVisitor v;
    v.array = [&](const Group& g, const std::string& name) {
        out.push_back(join_key(g.path(), name));
        return true;
    };
    // g/h is the folder of g (a symbolic link cycle): not entered.
    v.folder_id = [](const std::string& p) {
        return p == "g/h" || p == "g" ? std::pair<uint64_t, uint64_t>{1, 2}
                                      : std::pair<uint64_t, uint64_t>{1, p.size() + 10};
    };
    v.warn = [&](const std::string& m) { messages.push_back(m); };
    v.open_group = [&](const Group& g, const std::string& name) {
        opened.push_back(join_key(g.path(), name));
        return Group::open(g.store(), join_key(g.path(), name));
    };
    walk_hierarchy(*Group::open(s, ""), budget, v);
    EXPECT_EQ(out, (std::vector<std::string>{"a", "g/b", "k/d"}));
    EXPECT_EQ(opened, (std::vector<std::string>{"g", "k"}));
    ASSERT_EQ(messages.size(), 1u);
    EXPECT_NE(messages[0].find("g/h"), std::string::npos) << messages[0];
}

}  // namespace ut_hierarchy_test_hierarchy
