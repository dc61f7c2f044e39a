// Conditional writes as a store capability (Store::put_if): local stores
// check them under their lock, object stores (here an in-memory stand-in
// that checks them itself, without locks) at the storage; the Icechunk
// writer commits through the same code on both, and a commit whose answer
// was lost is found in the repo file instead of being rebased or repeated.
#include "icechunk_test_util.hpp"
#include "test_util.hpp"
#include "zarr3/icechunk_write.hpp"
#include "zarr3/metadata.hpp"

#include <atomic>
#include <cstdlib>
#include <mutex>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_icechunk_test_icechunk_conditional {

using namespace zarr3;
using namespace zarr3::icechunk;
using icetest::expect_error;

namespace {

// An object store as S3 is one: no lock, the storage checks If-Match /
// If-None-Match: * itself. `answer_412_once`: the next conditional write is
// stored but answered "precondition failed" (a retry of a request that had
// landed, as GDAL's HTTP retries may send).
class ObjectStoreLike : public MemoryStore {
  public:
    std::unique_ptr<StoreLock> lock(const std::string&) override { return nullptr; }
    StoreCapabilities capabilities() const override {
        return {.locks = false, .conditional_put = true};
    }
    PutResult put_if(const std::string& key, ByteView value,
                     const Precondition& condition) override {
        std::lock_guard lk(mu_);
        ++conditional_puts;
        const auto now = read(ReadRequest::byte_ranges(key, {}));
        const bool ok = condition.kind == Precondition::Kind::Absent
                            ? !now
                            : now && now->version == condition.version;
        if (!ok) return PutResult::PreconditionFailed;
        put(key, value);
        if (key == "repo" && answer_412_once.exchange(false)) return PutResult::PreconditionFailed;
        return PutResult::Written;
    }
    std::atomic<int> conditional_puts{0};
    std::atomic<bool> answer_412_once{false};

  private:
    std::mutex mu_;
};

const std::string kGroup = R"({"zarr_format":3,"node_type":"group","attributes":{}})";

ArrayMetadata meta_of(uint64_t n) {
    return icetest::vector_meta(n, "float32", 2);
}

void write_at(const std::shared_ptr<Store>& s, uint64_t start, float v) {
    Array::open(s, "r")->write(Selection{{start}, {1}, {}}, &v);
}

std::vector<float> read_r(const std::shared_ptr<Store>& storage) {
    return icetest::read_all<float>(IcechunkStore::open(storage, {}), "r");
}

std::vector<std::string> history(const std::shared_ptr<Store>& storage) {
    auto repo = Repository::open(storage);
    return icetest::messages(repo->history(repo->resolve({})));
}

void populate(const std::shared_ptr<Store>& storage) {
    create_repository(storage);
    auto s = IcechunkSession::open(storage);
    s->put("zarr.json", ByteView(reinterpret_cast<const uint8_t*>(kGroup.data()), kGroup.size()));
    const std::vector<float> zeros(8, 0);
    Array::create(s, "r", meta_of(8), true)->write(Selection::all({8}), zeros.data());
    s->commit("first");
}

} // namespace

// put_if on the stores with locks: absent, then the version read; a stale
// version or an existing key fails and writes nothing.
TEST(IcechunkConditional, PutIfOnMemoryAndFolders) {
    testutil::TempDir dir;
    std::vector<std::shared_ptr<Store>> stores = {std::make_shared<MemoryStore>(),
                                                  std::make_shared<FileStore>(dir.str())};
    for (auto& st : stores) {
        SCOPED_TRACE(st->uri());
        EXPECT_EQ(st->put_if("k", Bytes{1}, Precondition::absent()), PutResult::Written);
        EXPECT_EQ(st->put_if("k", Bytes{2}, Precondition::absent()), PutResult::PreconditionFailed);
        ObjectVersion v1;
        ASSERT_TRUE(st->get_versioned("k", v1));
        ASSERT_TRUE(v1.known());
        EXPECT_EQ(st->put_if("k", Bytes{3}, Precondition::matches(v1)), PutResult::Written);
        EXPECT_EQ(st->put_if("k", Bytes{4}, Precondition::matches(v1)),
                  PutResult::PreconditionFailed);
        EXPECT_EQ(st->put_if("k", Bytes{4}, Precondition::matches(v1, Bytes{1})),
                  PutResult::PreconditionFailed);
        EXPECT_EQ(*st->get("k"), Bytes{3});
        expect_error([&] { st->put_if("k", Bytes{5}, Precondition::matches({})); },
                     {"/k", "version", "unknown"});
        EXPECT_EQ(*st->get("k"), Bytes{3});
        // Random-id objects: a plain put where the lock would be the check.
        st->put_new("n", Bytes{7});
        EXPECT_EQ(*st->get("n"), Bytes{7});
    }
}

// A storage that checks conditions itself, without any lock: the same
// Icechunk code commits, rebases disjoint writers and refuses conflicts;
// objects named by id are written only if absent.
TEST(IcechunkConditional, CommitsOnAStoreWithoutLocks) {
    auto st = std::make_shared<ObjectStoreLike>();
    ASSERT_TRUE(st->can_compare_and_swap());
    populate(st);
    EXPECT_GE(st->conditional_puts.load(), 5); // repo x2, chunks, manifest, snapshot, log
    auto a = IcechunkSession::open(st), b = IcechunkSession::open(st);
    write_at(a, 0, 1);
    write_at(b, 6, 2); // another chunk: rebased
    a->commit("a");
    b->commit("b");
    EXPECT_EQ(read_r(st), (std::vector<float>{1, 0, 0, 0, 0, 0, 2, 0}));
    auto c = IcechunkSession::open(st), d = IcechunkSession::open(st);
    write_at(c, 2, 3);
    write_at(d, 3, 4); // the same chunk: conflict
    c->commit("c");
    expect_error([&] { d->commit("d"); }, {"conflict", "chunk (1)"});
    EXPECT_EQ(history(st),
              (std::vector<std::string>{"c", "b", "a", "first", "Repository initialized"}));
    expect_error([&] { st->put_new("chunks/x", Bytes{1}), st->put_new("chunks/x", Bytes{2}); },
                 {"chunks/x", "already exists"});
}

// A repo update that landed but was answered "precondition failed" (GDAL
// retried the PUT after a lost answer): found in the repo file, not rebased
// onto itself, not committed twice.
TEST(IcechunkConditional, LandedCommitAnsweredAsFailedIsKeptOnce) {
    auto st = std::make_shared<ObjectStoreLike>();
    populate(st);
    auto s = IcechunkSession::open(st);
    write_at(s, 0, 5);
    st->answer_412_once = true;
    const std::string id = s->commit("x");
    EXPECT_EQ(Repository::open(st)->resolve({}), id);
    EXPECT_EQ(history(st), (std::vector<std::string>{"x", "first", "Repository initialized"}));
    EXPECT_EQ(read_r(st)[0], 5);
}

// The answer to the repo update is lost (ZARR3_TEST_LOSE_RESPONSE: an error
// after the write succeeded): the commit reads the repo back, finds its
// snapshot there, and reports success once.
TEST(IcechunkConditional, LostAnswerIsResolvedByReadingTheRepoBack) {
    auto st = std::make_shared<ObjectStoreLike>();
    populate(st);
    auto s = IcechunkSession::open(st);
    write_at(s, 0, 6);
    ::setenv("ZARR3_TEST_LOSE_RESPONSE", "repo", 1); // fires once per process
    std::string id;
    try {
        id = s->commit("x");
    } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
    }
    ::unsetenv("ZARR3_TEST_LOSE_RESPONSE");
    EXPECT_EQ(Repository::open(st)->resolve({}), id);
    EXPECT_EQ(history(st), (std::vector<std::string>{"x", "first", "Repository initialized"}));
    EXPECT_EQ(read_r(st)[0], 6);
}

// Many writers of one array (a dask job's windows): every session opens the
// same base and writes its own chunks, the commits land in another order,
// each rebasing over those before it. Manifests are split every 3 chunks, so
// the merge keeps, rewrites and adds manifests: no chunk of a writer or of
// the base is lost, and the history has one commit per writer.
TEST(IcechunkConditional, ManyWritersOfOneArrayKeepEveryChunk) {
    ::setenv("ZARR3_ICECHUNK_SPLIT_CHUNKS", "3", 1);
    auto st = std::make_shared<ObjectStoreLike>();
    create_repository(st);
    std::vector<float> expected(32);
    for (size_t i = 0; i < expected.size(); ++i)
        expected[i] = float(i);
    auto first = IcechunkSession::open(st);
    first->put("zarr.json",
               ByteView(reinterpret_cast<const uint8_t*>(kGroup.data()), kGroup.size()));
    Array::create(first, "r", meta_of(32), true)->write(Selection::all({32}), expected.data());
    first->commit("first");
    constexpr size_t kWriters = 8; // writer i: chunk 2i (elements 4i, 4i+1)
    std::vector<std::shared_ptr<IcechunkSession>> writers;
    for (size_t i = 0; i < kWriters; ++i) {
        writers.push_back(IcechunkSession::open(st));
        const std::vector<float> v(2, 100.0f + float(i));
        Array::open(writers[i], "r")->write(Selection{{4 * i}, {2}, {}}, v.data());
        expected[4 * i] = expected[4 * i + 1] = 100.0f + float(i);
    }
    std::vector<std::string> messages = {"first", "Repository initialized"};
    for (size_t i : {3, 0, 7, 1, 6, 2, 5, 4}) {
        writers[i]->commit("window " + std::to_string(i));
        messages.insert(messages.begin(), "window " + std::to_string(i));
    }
    ::unsetenv("ZARR3_ICECHUNK_SPLIT_CHUNKS");
    EXPECT_EQ(read_r(st), expected);
    EXPECT_EQ(history(st), messages);
}

} // namespace ut_icechunk_test_icechunk_conditional
