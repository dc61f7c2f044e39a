// Shard index entries are validated against the shard size on partial reads
// too: the store reports the size with the index range at no extra request.
#include "address_space_guard.hpp"
#include "test_util.hpp"
#include "zarr3/array.hpp"
#include "zarr3/counting_store.hpp"
#include "zarr3/sharding.hpp"

#include <cstring>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_codecs_test_shard_bounds {

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

// Issue 33 #11: an index entry claiming gigabytes inside a sparse shard file
// of that size is refused before the range is read (the inner codecs, a
// bytes codec of 4x4 uint8, produce exactly 16 bytes).
TEST(ShardBounds, EntryClaimingMoreThanTheInnerCodecsProduceIsRefusedBeforeReading) {
    testutil::TempDir tmp;
    auto store = std::make_shared<FileStore>(tmp.str());
    auto a = Array::create(store, "a", parse_array_metadata(sharded_uint8(false), "t"));
    std::vector<uint8_t> d(64, 5);
    a->write(Selection::all({8, 8}), d.data());
    auto shard = *store->get("a/c/0/0");
    ASSERT_EQ(shard.size(), 128u);
    // The same shard in a 3.5 GiB sparse file, its index moved to the end,
    // inner chunk (0,0) claiming 3 GiB from offset 0.
    const uint64_t size = 3584ull << 20, claim = 3ull << 30, zero = 0;
    std::vector<uint8_t> index(shard.begin() + 64, shard.end());
    std::memcpy(index.data(), &zero, 8);
    std::memcpy(index.data() + 8, &claim, 8);
    const std::string path = tmp.str() + "/a/c/0/0";
    const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, shard.data(), 64, 0), 64);
    ASSERT_EQ(::pwrite(fd, index.data(), 64, static_cast<off_t>(size - 64)), 64);
    ::close(fd);
    ShardIndexCache::global().clear();
    auto b = Array::open(store, "a");
    testutil::AddressSpaceGuard guard(1ull << 30);
    std::string msg = "(no error)";
    try {
        uint8_t one = 0;
        b->read(Selection{{0, 0}, {1, 1}, {1, 1}}, &one);
    } catch (const Error& e) {
        msg = e.what();
    } catch (const std::bad_alloc&) {
        msg = "bad_alloc";
    }
    EXPECT_NE(msg.find("a/c/0/0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("inner chunk (0,0)"), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::to_string(claim) + " bytes"), std::string::npos) << msg;
    EXPECT_NE(msg.find("the 16 bytes its codecs can produce"), std::string::npos) << msg;
    // The other inner chunks still read.
    uint8_t v = 0;
    b->read(Selection{{5, 5}, {1, 1}, {1, 1}}, &v);
    EXPECT_EQ(v, 5);
}

} // namespace

}  // namespace ut_codecs_test_shard_bounds
