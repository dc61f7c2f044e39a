// Consolidated metadata: written on request and kept current by later metadata writes;
// read back by the existing reader (GroupMetadata::consolidated).
#include "zarr3/array.hpp"
#include "zarr3/builder.hpp"
#include "zarr3/consolidated.hpp"
#include "zarr3/metadata.hpp"

#include <gtest/gtest.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_store_test_consolidated {

using namespace zarr3;
using nlohmann::json;

namespace {

json root_of(Store& s) {
    return *read_node_json(s, "");
}

ArrayMetadata meta(Shape shape) {
    Shape chunks = shape;
    return ArrayBuilder(std::move(shape), data_type_from_name("int16"))
        .regular_chunk_shape(chunks)
        .build();
}

} // namespace

TEST(Consolidated, WrittenAndKeptCurrent) {
    auto mem = std::make_shared<MemoryStore>();
    auto store = consolidating_store(mem);
    Group::create(store, "", {{"title", "t"}});
    Group::create(store, "g");
    auto a = Array::create(store, "g/a", meta({4, 6}));
    Array::create(store, "b", meta({3}));
    json root = root_of(*mem);
    ASSERT_TRUE(has_consolidated(root));
    const json& md = root["consolidated_metadata"]["metadata"];
    EXPECT_EQ(root["consolidated_metadata"]["kind"], "inline");
    EXPECT_EQ(md.size(), 3u);
    EXPECT_EQ(md["g"]["node_type"], "group");
    EXPECT_EQ(md["g/a"]["shape"], json({4, 6}));
    EXPECT_EQ(md["b"]["shape"], json({3}));
    EXPECT_EQ(root["attributes"]["title"], "t");

    // Later writes: a resize and new attributes show in the root.
    a->resize({8, 6});
    a->set_attributes({{"units", "K"}});
    root = root_of(*mem);
    EXPECT_EQ(root["consolidated_metadata"]["metadata"]["g/a"]["shape"], json({8, 6}));
    EXPECT_EQ(root["consolidated_metadata"]["metadata"]["g/a"]["attributes"]["units"], "K");

    // The group attributes rewrite (which drops the in-memory copy) keeps it on disk.
    auto g = Group::open(store, "");
    g->set_attributes({{"title", "u"}});
    root = root_of(*mem);
    EXPECT_EQ(root["attributes"]["title"], "u");
    EXPECT_EQ(root["consolidated_metadata"]["metadata"].size(), 3u);

    // The reader sees it: the root group lists its children from it.
    const auto parsed = parse_group_metadata(root, "zarr.json");
    ASSERT_TRUE(parsed.consolidated.has_value());
    EXPECT_EQ(parsed.consolidated->count("g/a"), 1u);
    auto reopened = Group::open(mem, "");
    EXPECT_EQ(reopened->array_names(), std::vector<std::string>{"b"});
    EXPECT_EQ(reopened->open_array("b")->metadata().shape, Shape{3});
}

TEST(Consolidated, WriteOnceAndRootArrayRefused) {
    auto mem = std::make_shared<MemoryStore>();
    Group::create(mem, "");
    Array::create(mem, "x", meta({2}));
    EXPECT_FALSE(has_consolidated(root_of(*mem)));
    write_consolidated(*mem);
    EXPECT_EQ(root_of(*mem)["consolidated_metadata"]["metadata"]["x"]["shape"], json({2}));

    auto arr = std::make_shared<MemoryStore>();
    Array::create(arr, "", meta({2}));
    try {
        write_consolidated(*arr);
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("root group"), std::string::npos) << e.what();
    }
}

namespace {
// A store that lists nothing (an S3 bucket without list permission).
class Unlisted : public ForwardingStore {
  public:
    using ForwardingStore::ForwardingStore;
    std::vector<std::string> list_dir(const std::string&) override { return {}; }
};
} // namespace

TEST(Consolidated, RefusedListingIsAnErrorWhenAskedAndGivenUpByDefault) {
    // Asked for (no on_refused): the array's write fails, as consolidated metadata from the
    // listing would hide it.
    auto mem = std::make_shared<MemoryStore>();
    auto asked = consolidating_store(std::make_shared<Unlisted>(mem));
    Group::create(asked, "");
    EXPECT_THROW(Array::create(asked, "a", meta({2})), ListingRefused);

    // By default (on_refused): the root is written without consolidated metadata, the reason
    // is reported once, and later writes go through unchanged.
    auto mem2 = std::make_shared<MemoryStore>();
    std::vector<std::string> reasons;
    auto by_default = consolidating_store(std::make_shared<Unlisted>(mem2),
                                          [&](const std::string& why) { reasons.push_back(why); });
    Group::create(by_default, "");
    Array::create(by_default, "a", meta({2}));
    Array::create(by_default, "b", meta({3}));
    Group::open(by_default, "")->set_attributes({{"title", "t"}});
    ASSERT_EQ(reasons.size(), 1u);
    EXPECT_NE(reasons[0].find("does not show /a"), std::string::npos) << reasons[0];
    const json root = root_of(*mem2);
    EXPECT_FALSE(has_consolidated(root));
    EXPECT_EQ(root["attributes"]["title"], "t");
    EXPECT_EQ(Array::open(mem2, "b")->metadata().shape, Shape{3});

    // A store that lists: on_refused changes nothing.
    auto mem3 = std::make_shared<MemoryStore>();
    auto listed =
        consolidating_store(mem3, [&](const std::string& why) { reasons.push_back(why); });
    Group::create(listed, "");
    Array::create(listed, "a", meta({2}));
    EXPECT_EQ(reasons.size(), 1u);
    EXPECT_EQ(root_of(*mem3)["consolidated_metadata"]["metadata"]["a"]["shape"], json({2}));
}

}  // namespace ut_store_test_consolidated
