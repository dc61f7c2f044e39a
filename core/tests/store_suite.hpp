// One list of store cases (get, put, erase, list, byte ranges, absent keys,
// versions, atomic replacement), run over every Store implementation as
// zarrs' store_test does: core/tests/test_store_suite.cpp instantiates it for
// MemoryStore and FileStore, driver/tests/test_vsi_store_suite.cpp for the
// driver's VSIStore (/vsimem/ and local folders).
#pragma once

#include "zarr3/store.hpp"

#include <algorithm>
#include <functional>
#include <gtest/gtest.h>
#include <memory>
#include <string>

namespace store_suite {

// A fresh, empty, writable store; `cleanup` runs when the case ends.
struct Fresh {
    std::shared_ptr<zarr3::Store> store;
    std::function<void()> cleanup;
};

struct Kind {
    std::string name;
    std::function<Fresh()> make;
    // Whether two values of the same size written within one second get
    // different versions (not on file systems with one-second times).
    bool same_size_versions_differ = true;
    // Whether put() leaves no file but the value (files: no temporary).
    bool lists_files = false;
};

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
    static zarr3::Bytes bytes(std::initializer_list<uint8_t> v) { return zarr3::Bytes(v); }
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
    s().put("a/c/0/1", v);
    EXPECT_EQ(s().get("a/c/0/1"), v);
    EXPECT_EQ(s().size("a/c/0/1"), 1000u);
    EXPECT_EQ(s().get_bounded("a/c/0/1", 1000), v);
    EXPECT_THROW(s().get_bounded("a/c/0/1", 999), zarr3::FormatError);
    // A key and its "folder" are different things.
    EXPECT_EQ(s().get("a/c/0"), std::nullopt);
}

TEST_P(StoreSuite, EmptyValueIsPresent) {
    s().put("e", Bytes{});
    const auto got = s().get("e");
    ASSERT_TRUE(got.has_value());
    EXPECT_TRUE(got->empty());
    EXPECT_EQ(s().size("e"), 0u);
}

TEST_P(StoreSuite, PutReplacesWholeValue) {
    s().put("k", iota(500));
    s().put("k", bytes({9, 8, 7}));
    EXPECT_EQ(s().get("k"), bytes({9, 8, 7}));
    EXPECT_EQ(s().size("k"), 3u);
    if (GetParam().lists_files) {
        EXPECT_EQ(sorted_list(""), std::vector<std::string>{"k"});
    }
}

TEST_P(StoreSuite, EraseRemovesAndToleratesAbsent) {
    s().put("a/b", bytes({1}));
    s().erase("a/b");
    EXPECT_EQ(s().get("a/b"), std::nullopt);
    EXPECT_EQ(s().size("a/b"), std::nullopt);
    EXPECT_NO_THROW(s().erase("a/b"));
    EXPECT_NO_THROW(s().erase("never/there"));
}

TEST_P(StoreSuite, ListDirGivesImmediateChildren) {
    s().put("zarr.json", bytes({1}));
    s().put("a/zarr.json", bytes({2}));
    s().put("a/c/0/0", bytes({3}));
    s().put("a/c/1/0", bytes({4}));
    s().put("b/zarr.json", bytes({5}));
    EXPECT_EQ(sorted_list(""), (std::vector<std::string>{"a", "b", "zarr.json"}));
    EXPECT_EQ(sorted_list("a"), (std::vector<std::string>{"c", "zarr.json"}));
    EXPECT_EQ(sorted_list("a/c"), (std::vector<std::string>{"0", "1"}));
    EXPECT_TRUE(sorted_list("nothing").empty());
}

TEST_P(StoreSuite, RangesFromStartAndSuffix) {
    const Bytes v = iota(100);
    s().put("r", v);
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
    s().put("r", iota(64));
    std::optional<uint64_t> total;
    const auto got = s().get_ranges_sized("r", {RangeSuffix{8}}, total);
    ASSERT_TRUE(got.has_value());
    const Bytes all = iota(64);
    EXPECT_EQ((*got)[0], Bytes(all.end() - 8, all.end()));
    // Every store here learns the size with the read (a stat, an fstat).
    EXPECT_EQ(total, 64u);
}

TEST_P(StoreSuite, RangesPastTheEndAreErrors) {
    s().put("r", iota(10));
    EXPECT_THROW(s().get_ranges("r", {RangeFromStart{5, 6}}), zarr3::FormatError);
    EXPECT_THROW(s().get_ranges("r", {RangeFromStart{11, 0}}), zarr3::FormatError);
    EXPECT_THROW(s().get_ranges("r", {RangeSuffix{11}}), zarr3::FormatError);
    EXPECT_THROW(s().get_ranges("r", {RangeFromStart{~uint64_t{0}, 2}}), zarr3::FormatError);
    // Up to the end exactly is fine.
    EXPECT_EQ(s().get_ranges("r", {RangeFromStart{10, 0}, RangeSuffix{10}})->at(1), iota(10));
}

TEST_P(StoreSuite, VersionsFollowPuts) {
    s().put("v", iota(10));
    zarr3::ObjectVersion a, b, c;
    ASSERT_EQ(s().get_versioned("v", a), iota(10));
    ASSERT_TRUE(a.known());
    std::optional<uint64_t> total;
    ASSERT_TRUE(s().get_ranges_versioned("v", {RangeFromStart{0, 2}}, total, b));
    EXPECT_EQ(a, b);        // one value, one version, whichever way it was read
    s().put("v", iota(20)); // another size: every store tells the difference
    ASSERT_EQ(s().get_versioned("v", c), iota(20));
    EXPECT_TRUE(zarr3::versions_differ(a, c));
    if (GetParam().same_size_versions_differ) {
        zarr3::ObjectVersion d;
        Bytes other = iota(20);
        other[0] ^= 0xff;
        s().put("v", other);
        ASSERT_EQ(s().get_versioned("v", d), other);
        EXPECT_TRUE(zarr3::versions_differ(c, d));
    }
}

TEST_P(StoreSuite, ZeroRangeRequestConfirmsVersion) {
    s().put("v", iota(10));
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
        EXPECT_THROW(s().put(key, bytes({1})), zarr3::Error) << key;
}

} // namespace store_suite
