// One list of store cases (read kinds, get, put, erase, list, byte ranges,
// absent keys, limits, versions, atomic replacement, forwarding), run over
// every Store implementation and every adapter as zarrs' store_test does:
// core/tests/test_store_suite.cpp instantiates it for MemoryStore, FileStore
// and the core adapters (forwarding, counting, consolidating) around each,
// driver/tests/test_vsi_store_suite.cpp for the driver's VSIStore (/vsimem/
// and local folders) and the driver's adapters (listing, deferred root).
#pragma once

#include "zarr3/store.hpp"

#include <algorithm>
#include <functional>
#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <thread>

namespace store_suite {

// A fresh, empty store; `cleanup` runs when the case ends. `writer` (when
// set) takes the cases' puts and erases instead of `store`: a read-only view
// (ListingStore) or a store that holds a key back (DeferredRootStore) is then
// read through while its inner store is written.
struct Fresh {
    std::shared_ptr<zarr3::Store> store;
    std::function<void()> cleanup;
    std::shared_ptr<zarr3::Store> writer = nullptr;
};

// An adapter around `inner` (for the forwarding case below).
using Wrap = std::function<std::shared_ptr<zarr3::Store>(std::shared_ptr<zarr3::Store>)>;

struct Kind {
    std::string name;
    std::function<Fresh()> make;
    // Whether two values of the same size written within one second get
    // different versions (not on file systems with one-second times).
    bool same_size_versions_differ = true;
    // Whether put() leaves no file but the value (files: no temporary).
    bool lists_files = false;
    // Adapters: how to wrap any store (AdapterForwardsTheRest checks that it
    // passes what it does not change on to the inner store).
    Wrap wrap = nullptr;
    // Adapters that present the inner store read-only (ListingStore).
    bool read_only_view = false;
};

// A memory store with capabilities and request threads of its own, whose
// run_requests and lock calls are counted: what an adapter must forward.
class ProbeStore : public zarr3::MemoryStore {
  public:
    struct ProbeLock : zarr3::StoreLock {};
    int runs = 0;
    size_t last_threads = 0;
    int locks = 0;
    void run_requests(size_t threads, const std::function<void()>& worker) override {
        ++runs;
        last_threads = threads;
        worker();
    }
    std::unique_ptr<zarr3::StoreLock> lock(const std::string&) override {
        ++locks;
        return std::make_unique<ProbeLock>();
    }
    zarr3::StoreCapabilities capabilities() const override {
        return {.writable = true, .listable = false, .request_threads = true, .max_in_flight = 7};
    }
};

// What `wrap` fails to pass on to the inner store ("" when nothing):
// capabilities, run_requests, lock, versions, sizes, uri, list_dir.
inline std::string forwarding_problems(const Wrap& wrap, bool read_only_view) {
    auto probe = std::make_shared<ProbeStore>();
    probe->put("k", zarr3::Bytes{1, 2, 3});
    probe->put("d/x", zarr3::Bytes{4});
    const auto a = wrap(probe);
    std::string bad;
    const auto c = a->capabilities();
    if (c.max_in_flight != 7) bad += " max_in_flight";
    if (!c.request_threads) bad += " request_threads";
    if (c.listable) bad += " listable";
    if (c.writable == read_only_view) bad += " writable";
    int ran = 0;
    a->run_requests(5, [&] { ++ran; });
    if (probe->runs != 1 || probe->last_threads != 5 || ran != 1) bad += " run_requests";
    if (!dynamic_cast<ProbeStore::ProbeLock*>(a->lock("k").get()) || probe->locks != 1)
        bad += " lock";
    zarr3::ObjectVersion inner_v, outer_v, range_v;
    probe->get_versioned("k", inner_v);
    a->get_versioned("k", outer_v);
    std::optional<uint64_t> total;
    a->get_ranges_versioned("k", {zarr3::RangeSuffix{1}}, total, range_v);
    if (!outer_v.known() || outer_v != inner_v) bad += " get_versioned";
    if (!range_v.known() || range_v != inner_v || total != 3u) bad += " get_ranges_versioned";
    if (a->size("k") != 3u) bad += " size";
    if (a->uri() != probe->uri()) bad += " uri";
    if (a->list_dir("d") != std::vector<std::string>{"x"}) bad += " list_dir";
    return bad;
}

inline void PrintTo(const Kind& k, std::ostream* os) {
    *os << k.name;
}

inline std::string kind_name(const testing::TestParamInfo<Kind>& info) {
    return info.param.name;
}

class StoreSuite : public testing::TestWithParam<Kind> {
  protected:
    void SetUp() override { fresh_ = GetParam().make(); }
    void TearDown() override {
        fresh_.store.reset();
        if (fresh_.cleanup) fresh_.cleanup();
    }
    zarr3::Store& s() { return *fresh_.store; }
    // Where the cases write (the store itself, or the inner store of a view).
    zarr3::Store& w() { return fresh_.writer ? *fresh_.writer : *fresh_.store; }
    static zarr3::Bytes bytes(std::initializer_list<uint8_t> v) { return zarr3::Bytes(v); }
    static zarr3::Bytes group_json() {
        const std::string j = R"({"zarr_format": 3, "node_type": "group"})";
        return zarr3::Bytes(j.begin(), j.end());
    }
    static zarr3::Bytes iota(size_t n) {
        zarr3::Bytes b(n);
        for (size_t i = 0; i < n; ++i)
            b[i] = static_cast<uint8_t>(i * 7 + 1);
        return b;
    }
    std::vector<std::string> sorted_list(const std::string& prefix) {
        auto v = s().list_dir(prefix);
        std::sort(v.begin(), v.end());
        return v;
    }
    Fresh fresh_;
};

using zarr3::ByteRange;
using zarr3::Bytes;
using zarr3::RangeFromStart;
using zarr3::RangeSuffix;

TEST_P(StoreSuite, AbsentKeyIsNulloptEverywhere) {
    EXPECT_EQ(s().get("a/zarr.json"), std::nullopt);
    EXPECT_EQ(s().size("a/zarr.json"), std::nullopt);
    EXPECT_EQ(s().get_bounded("a/zarr.json", 100), std::nullopt);
    EXPECT_EQ(s().get_ranges("a/c/0", {RangeFromStart{0, 1}}), std::nullopt);
    std::optional<uint64_t> total = 5;
    zarr3::ObjectVersion v{"x"};
    EXPECT_EQ(s().get_ranges_versioned("a/c/0", {RangeSuffix{1}}, total, v), std::nullopt);
    EXPECT_FALSE(v.known());
    EXPECT_EQ(s().get_versioned("a/c/0", v), std::nullopt);
    EXPECT_FALSE(v.known());
}

TEST_P(StoreSuite, PutGetSizeRoundTrip) {
    const Bytes v = iota(1000);
    w().put("a/c/0/1", v);
    EXPECT_EQ(s().get("a/c/0/1"), v);
    EXPECT_EQ(s().size("a/c/0/1"), 1000u);
    EXPECT_EQ(s().get_bounded("a/c/0/1", 1000), v);
    EXPECT_THROW(s().get_bounded("a/c/0/1", 999), zarr3::FormatError);
    // A key and its "folder" are different things.
    EXPECT_EQ(s().get("a/c/0"), std::nullopt);
}

TEST_P(StoreSuite, EmptyValueIsPresent) {
    w().put("e", Bytes{});
    const auto got = s().get("e");
    ASSERT_TRUE(got.has_value());
    EXPECT_TRUE(got->empty());
    EXPECT_EQ(s().size("e"), 0u);
}

TEST_P(StoreSuite, PutReplacesWholeValue) {
    w().put("k", iota(500));
    w().put("k", bytes({9, 8, 7}));
    EXPECT_EQ(s().get("k"), bytes({9, 8, 7}));
    EXPECT_EQ(s().size("k"), 3u);
    if (GetParam().lists_files) {
        EXPECT_EQ(sorted_list(""), std::vector<std::string>{"k"});
    }
}

TEST_P(StoreSuite, EraseRemovesAndToleratesAbsent) {
    w().put("a/b", bytes({1}));
    w().erase("a/b");
    EXPECT_EQ(s().get("a/b"), std::nullopt);
    EXPECT_EQ(s().size("a/b"), std::nullopt);
    EXPECT_NO_THROW(w().erase("a/b"));
    EXPECT_NO_THROW(w().erase("never/there"));
}

TEST_P(StoreSuite, ListDirGivesImmediateChildren) {
    // Nodes are groups (a consolidating store reads them back).
    w().put("zarr.json", group_json());
    w().put("a/zarr.json", group_json());
    w().put("a/c/0/0", bytes({3}));
    w().put("a/c/1/0", bytes({4}));
    w().put("b/zarr.json", group_json());
    EXPECT_EQ(sorted_list(""), (std::vector<std::string>{"a", "b", "zarr.json"}));
    EXPECT_EQ(sorted_list("a"), (std::vector<std::string>{"c", "zarr.json"}));
    EXPECT_EQ(sorted_list("a/c"), (std::vector<std::string>{"0", "1"}));
    EXPECT_TRUE(sorted_list("nothing").empty());
}

TEST_P(StoreSuite, RangesFromStartAndSuffix) {
    const Bytes v = iota(100);
    w().put("r", v);
    const auto got =
        s().get_ranges("r", {RangeFromStart{10, 5}, RangeSuffix{4}, RangeFromStart{0, 100},
                             RangeFromStart{99, 1}, RangeSuffix{100}, RangeFromStart{40, 0}});
    ASSERT_TRUE(got.has_value());
    ASSERT_EQ(got->size(), 6u);
    EXPECT_EQ((*got)[0], Bytes(v.begin() + 10, v.begin() + 15));
    EXPECT_EQ((*got)[1], Bytes(v.end() - 4, v.end()));
    EXPECT_EQ((*got)[2], v);
    EXPECT_EQ((*got)[3], Bytes{v[99]});
    EXPECT_EQ((*got)[4], v);
    EXPECT_TRUE((*got)[5].empty());
}

TEST_P(StoreSuite, RangesReportTotalSize) {
    w().put("r", iota(64));
    std::optional<uint64_t> total;
    const auto got = s().get_ranges_sized("r", {RangeSuffix{8}}, total);
    ASSERT_TRUE(got.has_value());
    const Bytes all = iota(64);
    EXPECT_EQ((*got)[0], Bytes(all.end() - 8, all.end()));
    // Every store here learns the size with the read (a stat, an fstat).
    EXPECT_EQ(total, 64u);
}

TEST_P(StoreSuite, RangesPastTheEndAreErrors) {
    w().put("r", iota(10));
    EXPECT_THROW(s().get_ranges("r", {RangeFromStart{5, 6}}), zarr3::FormatError);
    EXPECT_THROW(s().get_ranges("r", {RangeFromStart{11, 0}}), zarr3::FormatError);
    EXPECT_THROW(s().get_ranges("r", {RangeSuffix{11}}), zarr3::FormatError);
    EXPECT_THROW(s().get_ranges("r", {RangeFromStart{~uint64_t{0}, 2}}), zarr3::FormatError);
    // Up to the end exactly is fine.
    EXPECT_EQ(s().get_ranges("r", {RangeFromStart{10, 0}, RangeSuffix{10}})->at(1), iota(10));
}

TEST_P(StoreSuite, VersionsFollowPuts) {
    w().put("v", iota(10));
    zarr3::ObjectVersion a, b, c;
    ASSERT_EQ(s().get_versioned("v", a), iota(10));
    ASSERT_TRUE(a.known());
    std::optional<uint64_t> total;
    ASSERT_TRUE(s().get_ranges_versioned("v", {RangeFromStart{0, 2}}, total, b));
    EXPECT_EQ(a, b);        // one value, one version, whichever way it was read
    w().put("v", iota(20)); // another size: every store tells the difference
    ASSERT_EQ(s().get_versioned("v", c), iota(20));
    EXPECT_TRUE(zarr3::versions_differ(a, c));
    if (GetParam().same_size_versions_differ) {
        zarr3::ObjectVersion d;
        Bytes other = iota(20);
        other[0] ^= 0xff;
        w().put("v", other);
        ASSERT_EQ(s().get_versioned("v", d), other);
        EXPECT_TRUE(zarr3::versions_differ(c, d));
    }
}

TEST_P(StoreSuite, ZeroRangeRequestConfirmsVersion) {
    w().put("v", iota(10));
    zarr3::ObjectVersion a, b;
    ASSERT_TRUE(s().get_versioned("v", a));
    std::optional<uint64_t> total;
    const auto got = s().get_ranges_versioned("v", {}, total, b);
    ASSERT_TRUE(got.has_value());
    EXPECT_TRUE(got->empty());
    EXPECT_EQ(a, b);
}

TEST_P(StoreSuite, UnsafeKeysAreRefused) {
    for (const char* key : {"../x", "/abs", "a//b", "a/./b", "a\\b"})
        EXPECT_THROW(w().put(key, bytes({1})), zarr3::Error) << key;
}

TEST_P(StoreSuite, ReadPrimitiveAnswersEachKind) {
    const Bytes v = iota(50);
    w().put("p/q", v);
    using zarr3::ReadRequest;
    const auto whole = s().read(ReadRequest::value("p/q"));
    ASSERT_TRUE(whole.has_value());
    ASSERT_EQ(whole->data.size(), 1u);
    EXPECT_EQ(whole->data[0], v);
    if (whole->total_size) {
        EXPECT_EQ(*whole->total_size, 50u);
    }
    const auto ranges = s().read(ReadRequest::byte_ranges("p/q", {RangeSuffix{3}}));
    ASSERT_TRUE(ranges.has_value());
    ASSERT_EQ(ranges->data.size(), 1u);
    EXPECT_EQ(ranges->data[0], Bytes(v.end() - 3, v.end()));
    const auto sized = s().read(ReadRequest::size_of("p/q"));
    ASSERT_TRUE(sized.has_value());
    EXPECT_TRUE(sized->data.empty());
    EXPECT_EQ(sized->total_size, 50u);
    EXPECT_EQ(s().read(ReadRequest::value("p/none")), std::nullopt);
    EXPECT_EQ(s().read(ReadRequest::size_of("p/none")), std::nullopt);
    EXPECT_EQ(s().read(ReadRequest::byte_ranges("p/none", {})), std::nullopt);
}

TEST_P(StoreSuite, LimitRefusalNamesKeyAndLimit) {
    w().put("big/v", iota(300));
    try {
        s().get_bounded("big/v", 299);
        FAIL() << "a value above the limit was read";
    } catch (const zarr3::FormatError& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("big/v"), std::string::npos) << m;
        EXPECT_NE(m.find("300"), std::string::npos) << m;
        EXPECT_NE(m.find("299"), std::string::npos) << m;
    }
    zarr3::ObjectVersion v;
    EXPECT_THROW(s().get_bounded_versioned("big/v", 10, v), zarr3::FormatError);
    EXPECT_THROW(s().read(zarr3::ReadRequest::value("big/v", 0)), zarr3::FormatError);
    EXPECT_EQ(s().get_bounded_versioned("big/v", 300, v), iota(300));
}

TEST_P(StoreSuite, RangePastTheEndNamesTheKey) {
    w().put("some/key", iota(10));
    try {
        s().get_ranges("some/key", {RangeFromStart{8, 5}});
        FAIL() << "no error";
    } catch (const zarr3::FormatError& e) {
        EXPECT_NE(std::string(e.what()).find("some/key"), std::string::npos) << e.what();
    }
}

TEST_P(StoreSuite, SizeOnlyReadsNoBytesAndVersionsChangeOnPut) {
    w().put("s", iota(7));
    EXPECT_EQ(s().size("s"), 7u);
    zarr3::ObjectVersion a, b;
    ASSERT_TRUE(s().get_versioned("s", a));
    w().put("s", iota(9));
    ASSERT_TRUE(s().get_versioned("s", b));
    EXPECT_EQ(s().size("s"), 9u);
    EXPECT_TRUE(zarr3::versions_differ(a, b));
}

// Stores with locks replace a value conditionally, atomically among
// threads; the others refuse, naming the key, and write nothing.
TEST_P(StoreSuite, CompareAndSwapFollowsItsCapability) {
    if (!s().can_compare_and_swap()) {
        try {
            s().compare_and_swap("cas", std::nullopt, bytes({1}));
            FAIL() << "a store without locks replaced a value conditionally";
        } catch (const zarr3::Error& e) {
            EXPECT_NE(std::string(e.what()).find("cas"), std::string::npos) << e.what();
        }
        EXPECT_FALSE(w().get("cas"));
        return;
    }
    EXPECT_TRUE(s().compare_and_swap("cas", std::nullopt, bytes({1})));
    EXPECT_FALSE(s().compare_and_swap("cas", std::nullopt, bytes({2})));
    EXPECT_FALSE(s().compare_and_swap("cas", bytes({3}), bytes({2})));
    EXPECT_EQ(s().get("cas"), bytes({1}));
    // Four threads each add 25 to a counter by compare-and-swap: none lost.
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t)
        ts.emplace_back([&] {
            for (int i = 0; i < 25;) {
                const auto now = s().get("cas");
                Bytes next = *now;
                next[0] = static_cast<uint8_t>(next[0] + 1);
                if (s().compare_and_swap("cas", now, next)) ++i;
            }
        });
    for (auto& t : ts)
        t.join();
    EXPECT_EQ(s().get("cas"), bytes({101}));
}

// put_if follows the same capability: absent, then the version (and bytes)
// read; an existing key or a replaced value fails and writes nothing.
TEST_P(StoreSuite, PutIfFollowsItsCapability) {
    if (!s().can_compare_and_swap()) {
        try {
            s().put_if("pif", bytes({1}), zarr3::Precondition::absent());
            FAIL() << "a store without locks or conditions wrote conditionally";
        } catch (const zarr3::Error& e) {
            EXPECT_NE(std::string(e.what()).find("pif"), std::string::npos) << e.what();
        }
        EXPECT_FALSE(w().get("pif"));
        return;
    }
    using zarr3::Precondition;
    using zarr3::PutResult;
    EXPECT_EQ(s().put_if("pif", bytes({1}), Precondition::absent()), PutResult::Written);
    EXPECT_EQ(s().put_if("pif", bytes({2}), Precondition::absent()), PutResult::PreconditionFailed);
    zarr3::ObjectVersion v;
    const auto first = s().get_fresh("pif", 16, v);
    ASSERT_EQ(first, bytes({1}));
    EXPECT_EQ(s().put_if("pif", bytes({3}), Precondition::matches(v, first)), PutResult::Written);
    EXPECT_EQ(s().put_if("pif", bytes({4}), Precondition::matches(v, first)),
              PutResult::PreconditionFailed);
    EXPECT_EQ(w().get("pif"), bytes({3}));
}

TEST_P(StoreSuite, AdapterForwardsTheRest) {
    if (!GetParam().wrap) GTEST_SKIP() << "not an adapter";
    EXPECT_EQ(forwarding_problems(GetParam().wrap, GetParam().read_only_view), "");
}

} // namespace store_suite
