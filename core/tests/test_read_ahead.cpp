// Reads that fetch ahead in batches (Store::get_batch, read_ahead): each
// chunk fetched once, batches bounded by the store's max_in_flight, shard
// indexes of a window fetched together and then their inner chunks, absent
// chunks as fill value, errors naming the key, and stores without
// concurrency never batched.
#include "zarr3/array.hpp"
#include "zarr3/sharding.hpp"

#include <algorithm>
#include <gtest/gtest.h>
#include <map>
#include <mutex>

using namespace zarr3;
using nlohmann::json;

namespace {

// A MemoryStore seen as a network store: up to `bound` requests per batch,
// run in reverse order (answers must still land on their requests); counts
// every request by key, and requests made outside batches.
class FakeBatchStore : public Store {
  public:
    FakeBatchStore(std::shared_ptr<MemoryStore> inner, size_t bound)
        : inner_(std::move(inner)), bound_(bound) {}
    std::string uri() const override { return inner_->uri(); }
    std::optional<Bytes> get(const std::string& k) override {
        single(k);
        return inner_->get(k);
    }
    std::optional<std::vector<Bytes>> get_ranges(const std::string& k,
                                                 const std::vector<ByteRange>& r) override {
        single(k);
        return inner_->get_ranges(k, r);
    }
    std::optional<uint64_t> size(const std::string& k) override {
        single(k);
        return inner_->size(k);
    }
    std::optional<Bytes> get_versioned(const std::string& k, ObjectVersion& v) override {
        single(k);
        return inner_->get_versioned(k, v);
    }
    std::optional<std::vector<Bytes>> get_ranges_versioned(const std::string& k,
                                                           const std::vector<ByteRange>& r,
                                                           std::optional<uint64_t>& total,
                                                           ObjectVersion& v) override {
        single(k);
        return inner_->get_ranges_versioned(k, r, total, v);
    }
    void put(const std::string& k, ByteView v) override { inner_->put(k, v); }
    void erase(const std::string& k) override { inner_->erase(k); }
    std::vector<std::string> list_dir(const std::string& p) override { return inner_->list_dir(p); }
    size_t max_in_flight() const override { return bound_; }
    std::vector<BatchAnswer> get_batch(const std::vector<BatchRequest>& requests) override {
        std::vector<BatchAnswer> out(requests.size());
        for (size_t i = requests.size(); i-- > 0;) {
            const BatchRequest& r = requests[i];
            {
                std::lock_guard lk(mu_);
                ++(r.ranges.empty() ? whole : ranged)[r.key];
                if (!r.ranges.empty() && std::get_if<RangeSuffix>(&r.ranges[0])) ++suffix_requests;
            }
            if (r.key == failing) {
                out[i].error = std::make_exception_ptr(Error(uri() + "/" + r.key + ": boom"));
                continue;
            }
            out[i] = answer_one(*inner_, r);
        }
        std::lock_guard lk(mu_);
        batches.push_back(requests.size());
        return out;
    }
    void reset() {
        whole.clear();
        ranged.clear();
        batches.clear();
        singles.clear();
        suffix_requests = 0;
    }

    std::map<std::string, int> whole, ranged, singles;
    std::vector<size_t> batches;
    int suffix_requests = 0;
    std::string failing;

  private:
    void single(const std::string& k) {
        std::lock_guard lk(mu_);
        ++singles[k];
    }
    std::shared_ptr<MemoryStore> inner_;
    size_t bound_;
    std::mutex mu_;
};

json regular_meta() { // 32x32 uint16 in 4x4 chunks: 64 chunks
    return {
        {"zarr_format", 3},
        {"node_type", "array"},
        {"shape", {32, 32}},
        {"data_type", "uint16"},
        {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", {4, 4}}}}}},
        {"chunk_key_encoding", {{"name", "default"}}},
        {"fill_value", 0},
        {"codecs", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}})}};
}

json sharded_meta() { // 32x32 uint16 in 16x16 shards of 4x4 inner chunks: 4 shards
    json m = regular_meta();
    m["chunk_grid"]["configuration"]["chunk_shape"] = {16, 16};
    const json bytes_le = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
    m["codecs"] = json::array({{{"name", "sharding_indexed"},
                                {"configuration",
                                 {{"chunk_shape", {4, 4}},
                                  {"codecs", json::array({bytes_le})},
                                  {"index_codecs", json::array({bytes_le})},
                                  {"index_location", "end"}}}}});
    return m;
}

std::vector<uint16_t> values() {
    std::vector<uint16_t> v(32 * 32);
    for (size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<uint16_t>(i + 1);
    return v;
}

struct Fixture {
    std::shared_ptr<MemoryStore> mem = std::make_shared<MemoryStore>();
    std::shared_ptr<FakeBatchStore> fake;
    std::shared_ptr<Array> array;
    ShardIndexCache cache;

    Fixture(const json& meta, size_t bound) {
        auto w = Array::create(mem, "a", parse_array_metadata(meta, "t"));
        const auto v = values();
        w->write(Selection::all({32, 32}), v.data());
        w->flush();
        fake = std::make_shared<FakeBatchStore>(mem, bound);
        array = Array::open(fake, "a");
        ReadOptions opt;
        opt.index_cache = &cache;
        array->set_read_options(opt);
        fake->reset();
    }
    std::vector<uint16_t> read(uint64_t r0, uint64_t c0, uint64_t n) const {
        std::vector<uint16_t> out(n * n);
        array->read(Selection{{r0, c0}, {n, n}, {}}, out.data());
        return out;
    }
};

std::vector<uint16_t> expected_window(const std::vector<uint16_t>& all, uint64_t r0, uint64_t c0,
                                      uint64_t n) {
    std::vector<uint16_t> out;
    for (uint64_t r = r0; r < r0 + n; ++r)
        for (uint64_t c = c0; c < c0 + n; ++c)
            out.push_back(all[r * 32 + c]);
    return out;
}

} // namespace

TEST(ReadAhead, EachChunkFetchedOnceInBatchesOfTheBound) {
    Fixture f(regular_meta(), 5);
    f.mem->erase("a/c/0/0"); // absent: fill value
    f.mem->erase("a/c/3/5");
    auto want = values();
    for (uint64_t r = 0; r < 4; ++r)
        for (uint64_t c = 0; c < 4; ++c) {
            want[r * 32 + c] = 0;
            want[(12 + r) * 32 + 20 + c] = 0;
        }
    EXPECT_EQ(f.read(0, 0, 32), want);
    EXPECT_TRUE(f.fake->singles.empty());
    EXPECT_EQ(f.fake->whole.size(), 64u);
    for (const auto& [key, n] : f.fake->whole)
        EXPECT_EQ(n, 1) << key;
    EXPECT_EQ(f.fake->batches.size(), 13u); // ceil(64 / 5)
    for (size_t b : f.fake->batches)
        EXPECT_LE(b, 5u);
}

TEST(ReadAhead, SameValuesAsASerialRead) {
    Fixture f(regular_meta(), 7);
    auto serial = Array::open(f.mem, "a");
    std::vector<uint16_t> want(13 * 13);
    serial->read(Selection{{3, 9}, {13, 13}, {}}, want.data());
    EXPECT_EQ(f.read(3, 9, 13), want);
    EXPECT_EQ(want, expected_window(values(), 3, 9, 13));
    EXPECT_TRUE(f.fake->singles.empty());
}

TEST(ReadAhead, ShardIndexesTogetherThenTheirInnerChunks) {
    Fixture f(sharded_meta(), 8);
    // A window inside all four shards, none of them whole (it skips inner
    // chunk row and column 0 of the first shards, 3 of the last).
    EXPECT_EQ(f.read(5, 5, 23), expected_window(values(), 5, 5, 23));
    EXPECT_TRUE(f.fake->singles.empty());
    ASSERT_EQ(f.fake->batches, (std::vector<size_t>{4, 4})); // 4 indexes, then 4 data requests
    EXPECT_EQ(f.fake->suffix_requests, 4);
    for (const auto& [key, n] : f.fake->ranged)
        EXPECT_EQ(n, 2) << key; // its index, then its inner chunks
    // Again: the indexes are cached, only the data is fetched.
    f.fake->reset();
    EXPECT_EQ(f.read(5, 5, 23), expected_window(values(), 5, 5, 23));
    EXPECT_EQ(f.fake->batches, (std::vector<size_t>{4}));
    EXPECT_EQ(f.fake->suffix_requests, 0);
    EXPECT_TRUE(f.fake->singles.empty());
    // A full read: each shard whole, once.
    f.fake->reset();
    EXPECT_EQ(f.read(0, 0, 32), values());
    EXPECT_EQ(f.fake->batches, (std::vector<size_t>{4}));
    EXPECT_EQ(f.fake->whole.size(), 4u);
    EXPECT_TRUE(f.fake->ranged.empty());
}

TEST(ReadAhead, AbsentShardIsFillValue) {
    Fixture f(sharded_meta(), 8);
    f.mem->erase("a/c/1/0");
    auto want = values();
    for (uint64_t r = 16; r < 32; ++r)
        for (uint64_t c = 0; c < 16; ++c)
            want[r * 32 + c] = 0;
    EXPECT_EQ(f.read(5, 5, 23), expected_window(want, 5, 5, 23));
    EXPECT_EQ(f.read(0, 0, 32), want);
}

TEST(ReadAhead, ErrorNamesTheChunk) {
    Fixture f(regular_meta(), 4);
    f.fake->failing = "a/c/2/3";
    try {
        f.read(0, 0, 32);
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("a/c/2/3"), std::string::npos) << e.what();
    }
}

TEST(ReadAhead, ShardIndexErrorNamesTheShard) {
    Fixture f(sharded_meta(), 4);
    f.fake->failing = "a/c/1/1";
    try {
        f.read(5, 5, 23);
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("a/c/1/1"), std::string::npos) << e.what();
    }
}

TEST(ReadAhead, StoreWithoutConcurrencyIsNeverBatched) {
    Fixture f(sharded_meta(), 1);
    EXPECT_EQ(f.read(5, 5, 23), expected_window(values(), 5, 5, 23));
    EXPECT_TRUE(f.fake->batches.empty());
    EXPECT_FALSE(f.fake->singles.empty());
}

TEST(StoreBatch, SerialDefaultAnswersEachRequest) {
    MemoryStore s;
    s.put("k", Bytes{1, 2, 3, 4});
    const auto answers = s.get_batch(
        {BatchRequest{"k", {}, kMaxChunkBytes}, BatchRequest{"missing", {}, kMaxChunkBytes},
         BatchRequest{"k", {RangeSuffix{2}}, kMaxChunkBytes}, BatchRequest{"k", {}, 3}});
    ASSERT_EQ(answers.size(), 4u);
    ASSERT_TRUE(answers[0].data);
    EXPECT_EQ(answers[0].data->at(0), (Bytes{1, 2, 3, 4}));
    EXPECT_TRUE(answers[0].version.known());
    EXPECT_FALSE(answers[1].data);
    EXPECT_FALSE(answers[1].error);
    ASSERT_TRUE(answers[2].data);
    EXPECT_EQ(answers[2].data->at(0), (Bytes{3, 4}));
    EXPECT_TRUE(answers[3].error); // above its limit
}
