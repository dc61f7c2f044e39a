// Shard index entries are validated against the shard size on partial reads
// too: the store reports the size with the index range at no extra request.
#include "test_util.hpp"
#include "zarr3/array.hpp"
#include "zarr3/sharding.hpp"

#include <cstring>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace zarr3;
using nlohmann::json;

namespace {

json sharded_uint8(bool crc) {
    return testutil::sharded_8x8_json("uint8", crc);
}

TEST(ShardBounds, EntryOverlappingTheIndexIsRefusedOnPartialRead) {
    testutil::TempDir tmp;
    auto store = std::make_shared<FileStore>(tmp.str());
    auto a = Array::create(store, "a", parse_array_metadata(sharded_uint8(false), "t"));
    std::vector<uint8_t> d(64);
    for (size_t i = 0; i < d.size(); ++i)
        d[i] = static_cast<uint8_t>(i + 1);
    a->write(Selection::all({8, 8}), d.data());
    auto shard = *store->get("a/c/0/0");
    ASSERT_EQ(shard.size(), 4 * 16 + 4 * 16u); // 4 inner chunks + 4 index entries
    // Point inner chunk 0 at bytes overlapping the index, inside the file.
    const uint64_t off = 60, nb = 16;
    std::memcpy(shard.data() + 64, &off, 8);
    std::memcpy(shard.data() + 72, &nb, 8);
    store->put("a/c/0/0", shard);
    ShardIndexCache::global().clear();
    auto b = Array::open(store, "a");
    uint8_t one = 0;
    try {
        b->read(Selection{{0, 0}, {1, 1}, {1, 1}}, &one);
        FAIL() << "entry overlapping the index was accepted";
    } catch (const FormatError& e) {
        EXPECT_NE(std::string(e.what()).find("a/c/0/0"), std::string::npos) << e.what();
    }
}

TEST(ShardBounds, CountingStoreSeesOneRangeCallPerFreshIndex) {
    testutil::TempDir tmp;
    auto file = std::make_shared<FileStore>(tmp.str());
    auto a = Array::create(file, "a", parse_array_metadata(sharded_uint8(true), "t"));
    std::vector<uint8_t> d(64, 7);
    a->write(Selection::all({8, 8}), d.data());
    ShardIndexCache::global().clear();
    auto counting = std::make_shared<CountingStore>(file);
    auto b = Array::open(counting, "a");
    counting->reset();
    uint8_t v = 0;
    b->read(Selection{{5, 5}, {1, 1}, {1, 1}}, &v);
    EXPECT_EQ(v, 7);
    EXPECT_EQ(counting->counts().sizes, 0u);
    EXPECT_EQ(counting->counts().range_calls, 2u); // index + one inner chunk
}

} // namespace
