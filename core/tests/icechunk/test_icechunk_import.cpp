// Replacing an Icechunk branch's contents by a plain store's (store_copy.hpp):
// how the driver makes a copy into a repository one commit.
#include "zarr3/icechunk_write.hpp"
#include "zarr3/store_copy.hpp"

#include <gtest/gtest.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_icechunk_test_icechunk_import {

using namespace zarr3;

namespace {

Bytes bytes_of(const std::string& s) {
    return Bytes(s.begin(), s.end());
}

std::string text_of(const std::optional<Bytes>& b) {
    return b ? std::string(b->begin(), b->end()) : std::string("<absent>");
}

const std::string kGroup = R"({"zarr_format":3,"node_type":"group","attributes":{}})";
const std::string kArray = R"({"zarr_format":3,"node_type":"array","shape":[4],
  "data_type":"uint8","chunk_grid":{"name":"regular","configuration":{"chunk_shape":[2]}},
  "chunk_key_encoding":{"name":"default"},"fill_value":0,
  "codecs":[{"name":"bytes"}]})";

} // namespace

TEST(StoreCopy, ListKeysRecursesAndSorts) {
    MemoryStore s;
    s.put("zarr.json", bytes_of(kGroup));
    s.put("a/zarr.json", bytes_of(kArray));
    s.put("a/c/1", bytes_of("yz"));
    s.put("a/c/0", bytes_of("wx"));
    EXPECT_EQ(list_keys(s),
              (std::vector<std::string>{"a/c/0", "a/c/1", "a/zarr.json", "zarr.json"}));
    EXPECT_EQ(list_keys(s, "a/c"), (std::vector<std::string>{"a/c/0", "a/c/1"}));
    EXPECT_THROW(list_keys(s, "", 3), Error);
}

TEST(StoreCopy, ReplacesABranchInOneCommitAndKeepsTheOldSnapshot) {
    auto storage = std::make_shared<MemoryStore>();
    icechunk::create_repository(storage);
    MemoryStore first;
    first.put("zarr.json", bytes_of(kGroup));
    first.put("a/zarr.json", bytes_of(kArray));
    first.put("a/c/0", bytes_of("wx"));
    first.put("a/c/1", bytes_of("yz"));
    auto s1 = icechunk::IcechunkSession::open(storage);
    EXPECT_EQ(replace_store_contents(first, *s1), 4u);
    const std::string snap1 = s1->commit("first");

    MemoryStore second; // a/c/1 gone, b added
    second.put("zarr.json", bytes_of(kGroup));
    second.put("a/zarr.json", bytes_of(kArray));
    second.put("a/c/0", bytes_of("WX"));
    second.put("b/zarr.json", bytes_of(kGroup));
    auto s2 = icechunk::IcechunkSession::open(storage);
    EXPECT_EQ(replace_store_contents(second, *s2), 4u);
    s2->commit("second");

    auto repo = icechunk::Repository::open(storage);
    icechunk::IcechunkStore now(repo, repo->resolve({}), nullptr);
    EXPECT_EQ(text_of(now.get("a/c/0")), "WX");
    EXPECT_EQ(text_of(now.get("a/c/1")), "<absent>");
    EXPECT_NE(text_of(now.get("b/zarr.json")), "<absent>");
    icechunk::IcechunkStore before(repo, snap1, nullptr);
    EXPECT_EQ(text_of(before.get("a/c/0")), "wx");
    EXPECT_EQ(text_of(before.get("a/c/1")), "yz");
}

} // namespace ut_icechunk_test_icechunk_import
