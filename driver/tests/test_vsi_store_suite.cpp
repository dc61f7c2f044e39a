// The shared store cases (core/tests/store_suite.hpp) over the driver's
// VSIStore (an in-memory /vsimem/ folder and a local folder) and the driver's
// adapters (ListingStore, DeferredRootStore) around it and around the core
// MemoryStore and FileStore.
#include "storage/store_adapters.hpp"
#include "store/store_suite.hpp"
#include "test_util.hpp"
#include "storage/vsi_store.hpp"

#include "cpl_error.h"
#include "cpl_vsi.h"

#include <atomic>
#include <string>

namespace store_suite {

namespace {

Fresh vsimem_store() {
    static std::atomic<int> n{0};
    const std::string root = "/vsimem/zarr3-store-suite-" + std::to_string(n++);
    return Fresh{std::make_shared<zarr3drv::VSIStore>(root, true),
                 [root] { VSIRmdirRecursive(root.c_str()); }};
}

Fresh local_store() {
    auto dir = std::make_shared<testutil::TempDir>();
    return Fresh{std::make_shared<zarr3drv::VSIStore>(dir->str(), true),
                 [dir]() mutable { dir.reset(); }};
}

} // namespace

// A view `wrap` makes of `base`'s store; the cases write to the inner store.
Kind viewed(const Kind& base, const std::string& name, Wrap wrap, bool read_only) {
    Kind k = base;
    k.name = name + "Over" + base.name;
    k.wrap = wrap;
    k.read_only_view = read_only;
    k.make = [make = base.make, wrap] {
        Fresh f = make();
        f.writer = f.store;
        f.store = wrap(f.store);
        return f;
    };
    return k;
}

std::vector<Kind> vsi_kinds() {
    // /vsimem/ versions are size and modification time in seconds: two values
    // of one size written within a second look alike.
    const std::vector<Kind> bases{
        Kind{"VsiMem", vsimem_store, false, false}, Kind{"VsiLocal", local_store, true, true},
        Kind{"Memory",
             [] {
                 return Fresh{std::make_shared<zarr3::MemoryStore>(), nullptr};
             }},
        Kind{"File",
             [] {
                 auto dir = std::make_shared<testutil::TempDir>();
                 return Fresh{std::make_shared<zarr3::FileStore>(dir->str()),
                              [dir]() mutable { dir.reset(); }};
             },
             true, true}};
    const Wrap listing = [](std::shared_ptr<zarr3::Store> s) {
        return zarr3drv::AsStore(zarr3drv::MakeListingStore(std::move(s)));
    };
    const Wrap deferred = [](std::shared_ptr<zarr3::Store> s) {
        return std::make_shared<zarr3drv::DeferredRootStore>(std::move(s));
    };
    std::vector<Kind> out;
    for (const Kind& base : bases) {
        if (base.name.starts_with("Vsi")) out.push_back(base);
        out.push_back(viewed(base, "Listing", listing, true));
        out.push_back(viewed(base, "DeferredRoot", deferred, false));
    }
    return out;
}

INSTANTIATE_TEST_SUITE_P(Vsi, StoreSuite, testing::ValuesIn(vsi_kinds()), kind_name);

} // namespace store_suite

namespace {

using zarr3::Bytes;
using zarr3::ReadRequest;

// The held-back root zarr.json is read from memory (whole, ranges, size,
// limit) and reaches the inner store only at commit().
TEST(DeferredRootStore, HoldsTheRootUntilCommit) {
    auto mem = std::make_shared<zarr3::MemoryStore>();
    zarr3drv::DeferredRootStore d(mem);
    const Bytes root{'{', '}', ' ', ' '};
    d.put("zarr.json", root);
    d.put("a/zarr.json", Bytes{1});
    EXPECT_EQ(mem->get("zarr.json"), std::nullopt);
    EXPECT_EQ(mem->get("a/zarr.json"), Bytes{1});
    EXPECT_EQ(d.get("zarr.json"), root);
    EXPECT_EQ(d.size("zarr.json"), 4u);
    std::optional<uint64_t> total;
    zarr3::ObjectVersion v{"x"};
    EXPECT_EQ(d.get_ranges_versioned("zarr.json", {zarr3::RangeSuffix{2}}, total, v)->at(0),
              (Bytes{' ', ' '}));
    EXPECT_EQ(total, 4u);
    EXPECT_FALSE(v.known());
    EXPECT_THROW(d.get_bounded("zarr.json", 3), zarr3::FormatError);
    try {
        d.get_ranges("zarr.json", {zarr3::RangeFromStart{3, 2}});
        FAIL() << "no error";
    } catch (const zarr3::FormatError& e) {
        EXPECT_NE(std::string(e.what()).find(mem->uri() + "/zarr.json"), std::string::npos);
    }
    d.commit();
    EXPECT_EQ(mem->get("zarr.json"), root);
    d.put("zarr.json", Bytes{'[', ']'});
    EXPECT_EQ(mem->get("zarr.json"), (Bytes{'[', ']'}));
}

// A zarr.json that does not parse reads as absent through the listing view,
// once reported; ranges and sizes pass through; writes are refused.
TEST(ListingStore, SkipsNodesThatDoNotParse) {
    auto mem = std::make_shared<zarr3::MemoryStore>();
    mem->put("bad/zarr.json", Bytes{'{', 'x'});
    const std::string ok = R"({"zarr_format": 3, "node_type": "group"})";
    mem->put("good/zarr.json", Bytes(ok.begin(), ok.end()));
    const auto listing = zarr3drv::MakeListingStore(mem);
    CPLPushErrorHandler(CPLQuietErrorHandler);
    EXPECT_EQ(listing->get("bad/zarr.json"), std::nullopt);
    EXPECT_EQ(listing->get("bad/zarr.json"), std::nullopt);
    CPLPopErrorHandler();
    EXPECT_EQ(listing->get("good/zarr.json"), Bytes(ok.begin(), ok.end()));
    EXPECT_EQ(listing->size("bad/zarr.json"), 2u);
    const auto skipped = zarr3drv::SkippedNodes(*listing);
    ASSERT_EQ(skipped.size(), 1u);
    EXPECT_NE(skipped[0].find("bad/zarr.json"), std::string::npos) << skipped[0];
    EXPECT_FALSE(listing->writable());
    EXPECT_THROW(listing->put("x", Bytes{1}), zarr3::Error);
    EXPECT_THROW(listing->erase("good/zarr.json"), zarr3::Error);
    EXPECT_TRUE(mem->get("good/zarr.json").has_value());
}

} // namespace
