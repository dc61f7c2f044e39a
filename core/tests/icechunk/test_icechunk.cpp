// Icechunk repositories written by upstream Icechunk (spec 1 and 2,
// testdata/icechunk/upstream-test-repos, described by
// test_can_read_old.py.txt there) read through FileStore + IcechunkStore +
// Array: branches, tags, history, version selection and values.
#include "icechunk/icechunk_test_util.hpp"
#include "zarr3/counting_store.hpp"

#include <atomic>
#include <cmath>
#include <set>
#include <thread>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_icechunk_test_icechunk {

using namespace zarr3;
using namespace zarr3::icechunk;
using icetest::expect_error;

namespace {

const std::vector<std::string> kMainHistory = {"set virtual chunk", "fill data", "empty structure",
                                               "Repository initialized"};

std::vector<std::string> branch_history() {
    std::vector<std::string> h = {"some more structure", "delete a chunk"};
    h.insert(h.end(), kMainHistory.begin(), kMainHistory.end());
    return h;
}

std::shared_ptr<Repository> open_repo(const std::string& name) {
    return Repository::open(std::make_shared<FileStore>(icetest::upstream(name), false));
}

// Serves virtual chunks from memory, by URL; records what it was asked.
class MapResolver : public VirtualResolver {
  public:
    std::map<std::string, Bytes> objects;
    std::vector<std::string> asked;
    std::vector<Bytes> read(const VirtualRef& ref, const std::vector<RangeFromStart>& ranges,
                            const std::string& chunk_key) override {
        asked.push_back(chunk_key + " " + ref.location);
        const Bytes& o = objects.at(ref.location);
        std::vector<Bytes> out;
        for (const auto& r : ranges)
            out.emplace_back(o.begin() + long(r.offset), o.begin() + long(r.offset + r.length));
        return out;
    }
};

void check_refs_and_history(const std::string& name, int spec) {
    auto repo = open_repo(name);
    EXPECT_EQ(repo->spec_version(), spec);
    const auto& vcc = repo->virtual_chunk_containers();
    EXPECT_NE(std::find(vcc.begin(), vcc.end(), spec == 1 ? "s3://testbucket" : "s3://testbucket/"),
              vcc.end());
    EXPECT_EQ(vcc.size(), spec == 1 ? 5u : 1u);
    EXPECT_EQ(icetest::names(repo->branches()), (std::vector<std::string>{"main", "my-branch"}));
    EXPECT_EQ(icetest::names(repo->tags()),
              (std::vector<std::string>{"it also works!", "it works!"}));
    EXPECT_EQ(icetest::messages(repo->history(repo->resolve({}))), kMainHistory);
    EXPECT_EQ(icetest::messages(repo->history(repo->resolve({.branch = "my-branch"}))),
              branch_history());
    EXPECT_EQ(icetest::messages(repo->history(repo->resolve({.tag = "it also works!"}))),
              branch_history());
    auto h = repo->history(repo->resolve({.tag = "it works!"}));
    const auto bh = branch_history();
    EXPECT_EQ(icetest::messages(h), std::vector<std::string>(bh.begin() + 1, bh.end()));
    EXPECT_EQ(h.front().tags, std::vector<std::string>{"it works!"});
    EXPECT_EQ(h[1].branches, std::vector<std::string>{"main"});
    EXPECT_EQ(h.back().parent, std::nullopt);
    EXPECT_EQ(h[0].parent, h[1].id);
    // A deleted tag and unknown names are refused, listing the valid ones.
    expect_error([&] { repo->resolve({.tag = "deleted"}); },
                 {"no tag 'deleted'", "'it also works!', 'it works!'"});
    expect_error([&] { repo->resolve({.branch = "nope"}); }, {"no branch 'nope'", "'my-branch'"});
    expect_error([&] { repo->resolve({.snapshot = "not-an-id"}); }, {"not a snapshot id"});
    expect_error([&] { repo->resolve({.snapshot = "00000000000000000000"}); },
                 {"no snapshot 00000000000000000000"});
    expect_error([&] { repo->resolve({.branch = "main", .tag = "it works!"}); }, {"one of"});
}

void check_values(const std::string& name) {
    auto storage = std::make_shared<FileStore>(icetest::upstream(name), false);
    auto store = IcechunkStore::open(storage, {.branch = "my-branch"});
    EXPECT_EQ(store->list_dir(""), (std::vector<std::string>{"group1", "group2", "zarr.json"}));
    EXPECT_EQ(store->list_dir("group1"),
              (std::vector<std::string>{"big_chunks", "small_chunks", "zarr.json"}));
    EXPECT_EQ(store->list_dir("group2/group3"), (std::vector<std::string>{"group4", "zarr.json"}));
    EXPECT_EQ(store->list_dir("group2/group3/group4/group5/inner"),
              (std::vector<std::string>{"c", "zarr.json"}));
    for (float v : icetest::read_all<float>(store, "group2/group3/group4/group5/inner"))
        EXPECT_TRUE(std::isnan(v));
    EXPECT_EQ(icetest::read_all<int8_t>(store, "group1/small_chunks"),
              (std::vector<int8_t>{84, 84, 84, 84, 8}));
    auto main = IcechunkStore::open(storage);
    EXPECT_EQ(icetest::read_all<int8_t>(main, "group1/small_chunks"), std::vector<int8_t>(5, 84));
    EXPECT_FALSE(main->get("group2/zarr.json")); // made on my-branch only
    // big_chunks' chunk 0/0 is virtual (s3://testbucket): refused by default.
    expect_error([&] { icetest::read_all<float>(store, "group1/big_chunks"); },
                 {"group1/big_chunks/c/0/0", "s3://testbucket/can_read_old/chunk-1", "refused"});
    // The other three chunks are native; the virtual one served by a resolver.
    auto resolver = std::make_shared<MapResolver>();
    resolver->objects["s3://testbucket/can_read_old/chunk-1"] =
        *store->get("group1/big_chunks/c/0/1");
    auto with = IcechunkStore::open(storage, {.branch = "my-branch"}, resolver);
    EXPECT_EQ(icetest::read_all<float>(with, "group1/big_chunks"), std::vector<float>(100, 42.f));
    EXPECT_EQ(resolver->asked, std::vector<std::string>{
                                   "group1/big_chunks/c/0/0 s3://testbucket/can_read_old/chunk-1"});
    // The state before the virtual chunk: all native.
    auto fill = IcechunkStore::open(
        storage, {.snapshot = main->repository()->history(main->snapshot().id)[1].id});
    EXPECT_EQ(fill->snapshot().message, "fill data");
    EXPECT_EQ(icetest::read_all<float>(fill, "group1/big_chunks"), std::vector<float>(100, 42.f));
}

} // namespace

TEST(Icechunk, IdsAreCrockfordBase32) {
    const Bytes id = {0x0b, 0x1c, 0xc8, 0xd6, 0x78, 0x75, 0x80, 0xf0, 0xe3, 0x3a, 0x65, 0x34};
    EXPECT_EQ(encode_id(id), "1CECHNKREP0F1RSTCMT0");
    auto back = decode_id12("1cechnkrep0f1rstcmt0");
    ASSERT_TRUE(back);
    EXPECT_EQ(Bytes(back->begin(), back->end()), id);
    EXPECT_FALSE(decode_id12("1CECHNKREP0F1RSTCMT"));  // short
    EXPECT_FALSE(decode_id12("1CECHNKREP0F1RSTCMTU")); // U is not a digit
    EXPECT_FALSE(decode_id12("1CECHNKREP0F1RSTCMT1")); // padding bits set
}

TEST(Icechunk, IsoTimes) {
    EXPECT_EQ(parse_iso_time("1970-01-01", "t"), 0u);
    EXPECT_EQ(parse_iso_time("2024-02-29T12:00:00Z", "t"), 1709208000000000u);
    EXPECT_EQ(parse_iso_time("2024-02-29T14:00:00.5+02:00", "t"), 1709208000500000u);
    EXPECT_EQ(format_iso_time(1709208000500000u), "2024-02-29T12:00:00.500000Z");
    expect_error([] { parse_iso_time("2023-02-29", "as_of"); }, {"as_of", "2023-02-29"});
    expect_error([] { parse_iso_time("yesterday", "as_of"); }, {"ISO 8601"});
    expect_error([] { parse_iso_time("1969-12-31T23:59:59Z", "as_of"); }, {"before 1970"});
}

TEST(Icechunk, Spec1RefsAndHistory) {
    ICE_NEED_UPSTREAM("test-repo-v1");
    check_refs_and_history("test-repo-v1", 1);
}

TEST(Icechunk, Spec2RefsAndHistory) {
    ICE_NEED_UPSTREAM("test-repo-v2");
    check_refs_and_history("test-repo-v2", 2);
}

TEST(Icechunk, Spec1Values) {
    ICE_NEED_UPSTREAM("test-repo-v1");
    check_values("test-repo-v1");
}

TEST(Icechunk, Spec2Values) {
    ICE_NEED_UPSTREAM("test-repo-v2");
    check_values("test-repo-v2");
}

TEST(Icechunk, AsOfPicksTheLatestSnapshotAtOrBefore) {
    ICE_NEED_UPSTREAM("test-repo-v2");
    for (const char* name : {"test-repo-v1", "test-repo-v2"}) {
        auto repo = open_repo(name);
        const auto h = repo->history(repo->resolve({}));
        ASSERT_EQ(h.size(), 4u);
        const std::string fill_time = format_iso_time(h[1].flushed_at_us);
        EXPECT_EQ(repo->resolve({.as_of = fill_time}), h[1].id) << name;
        EXPECT_EQ(repo->resolve({.as_of = format_iso_time(h[1].flushed_at_us + 1)}), h[1].id);
        EXPECT_EQ(repo->resolve({.as_of = format_iso_time(h[0].flushed_at_us)}), h[0].id);
        EXPECT_EQ(repo->resolve({.as_of = "2999-01-01"}), h[0].id);
        expect_error([&] { repo->resolve({.as_of = "1971-01-01"}); },
                     {"no snapshot at or before 1971-01-01"});
        // Lower case ids are accepted.
        std::string lower = h[2].id;
        for (char& c : lower)
            c = char(std::tolower(c));
        EXPECT_EQ(repo->resolve({.snapshot = lower}), h[2].id);
    }
}

TEST(Icechunk, SplitManifestsAreReadOnlyWhenNeeded) {
    ICE_NEED_UPSTREAM("split-repo-v2");
    auto storage = std::make_shared<CountingStore>(
        std::make_shared<FileStore>(icetest::upstream("split-repo-v2"), false));
    auto repo = Repository::open(storage);
    auto h = repo->history(repo->resolve({}));
    EXPECT_TRUE(repo->virtual_chunk_containers().empty());
    ASSERT_EQ(
        icetest::messages(h),
        (std::vector<std::string>{"write data again with more splits", "write data again",
                                  "write data", "empty structure", "Repository initialized"}));
    auto manifest_files = [&](const std::string& id) {
        std::set<std::string> ids;
        for (const auto& n : repo->snapshot(id)->nodes)
            for (const auto& m : n.manifests)
                ids.insert(m.manifest_id);
        return ids.size();
    };
    EXPECT_EQ(manifest_files(h[3].id), 0u);
    EXPECT_EQ(manifest_files(h[2].id), 9u);
    EXPECT_EQ(manifest_files(h[1].id), 9u);
    EXPECT_EQ(manifest_files(h[0].id), 17u);
    const std::vector<std::pair<size_t, float>> values = {{0, 14.f}, {1, 12.f}, {2, 120.f}};
    for (auto [i, v] : values) {
        IcechunkStore s(repo, h[i].id);
        EXPECT_EQ(
            icetest::read_all<float>(std::shared_ptr<Store>(&s, [](Store*) {}), "group1/split"),
            std::vector<float>(100, v));
    }
    // One chunk read loads exactly the manifest whose extents hold it (a
    // repository of its own: the one above keeps the manifests it read).
    storage->reset();
    auto s = std::make_shared<IcechunkStore>(Repository::open(storage), h[0].id);
    ASSERT_TRUE(s->get("group1/split/c/3/3"));
    EXPECT_EQ(s->manifests_loaded(), 1u);
    ASSERT_TRUE(s->get("group1/split/c/3/2"));
    ASSERT_TRUE(s->get("group1/split/c/3/3")); // cached manifest: no second read
    size_t manifest_reads = 0;
    for (const auto& line : storage->log())
        manifest_reads += line.find("manifests/") != std::string::npos;
    EXPECT_EQ(manifest_reads, s->manifests_loaded());
    EXPECT_FALSE(s->get("group1/split/c/4/0"));  // outside the grid: absent
    EXPECT_FALSE(s->get("group1/split/c/0"));    // wrong rank
    EXPECT_FALSE(s->get("group1/split/c/00/0")); // not canonical
    EXPECT_EQ(icetest::read_all<int8_t>(s, "group1/small_chunks"), std::vector<int8_t>(5, 3));
    EXPECT_THROW(s->put("group1/zarr.json", Bytes{}), Error);
    EXPECT_THROW(s->erase("group1/zarr.json"), Error);
    EXPECT_FALSE(s->writable());
}

TEST(Icechunk, RangesOfChunksAndListingChunks) {
    ICE_NEED_UPSTREAM("split-repo-v2");
    auto s =
        IcechunkStore::open(std::make_shared<FileStore>(icetest::upstream("split-repo-v2"), false));
    const auto whole = s->get("group1/split/c/0/0");
    ASSERT_TRUE(whole);
    std::optional<uint64_t> total;
    auto parts =
        s->get_ranges_sized("group1/split/c/0/0", {RangeFromStart{1, 3}, RangeSuffix{2}}, total);
    ASSERT_TRUE(parts);
    EXPECT_EQ(total, whole->size());
    EXPECT_EQ((*parts)[0], Bytes(whole->begin() + 1, whole->begin() + 4));
    EXPECT_EQ((*parts)[1], Bytes(whole->end() - 2, whole->end()));
    EXPECT_EQ(s->size("group1/split/c/0/0"), whole->size());
    EXPECT_THROW(s->get_ranges("group1/split/c/0/0", {RangeFromStart{whole->size(), 1}}),
                 FormatError);
    EXPECT_EQ(s->list_dir("group1/split/c"), (std::vector<std::string>{"0", "1", "2", "3"}));
    EXPECT_EQ(s->list_dir("group1/split/c/3"), (std::vector<std::string>{"0", "1", "2", "3"}));
    EXPECT_EQ(s->list_dir("group1/small_chunks/c"),
              (std::vector<std::string>{"0", "1", "2", "3", "4"}));
    // Inline chunks (small_chunks: one zstd frame of 10 bytes each).
    EXPECT_EQ(s->size("group1/small_chunks/c/2"), 10u);
    const Bytes inl = *s->get("group1/small_chunks/c/2");
    EXPECT_EQ(Bytes(inl.begin(), inl.begin() + 4), (Bytes{0x28, 0xB5, 0x2F, 0xFD}));
    EXPECT_NE(s->uri().find("@" + s->snapshot().id), std::string::npos);
}

TEST(Icechunk, ConcurrentReadsLoadEachManifestOnce) {
    ICE_NEED_UPSTREAM("split-repo-v2");
    auto storage = std::make_shared<CountingStore>(
        std::make_shared<FileStore>(icetest::upstream("split-repo-v2"), false));
    auto s = IcechunkStore::open(storage);
    EXPECT_EQ(s->has_request_threads(), storage->has_request_threads());
    EXPECT_EQ(s->max_in_flight(), storage->max_in_flight());
    std::set<std::string> needed;
    for (const auto& m : s->snapshot().find("/group1/split")->manifests)
        needed.insert(m.manifest_id);
    storage->reset();
    std::vector<std::thread> threads;
    std::atomic<int> ok{0};
    for (int t = 0; t < 8; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < 4; ++i)
                for (int j = 0; j < 4; ++j)
                    ok += s->get("group1/split/c/" + std::to_string(i) + "/" + std::to_string(j))
                              .has_value();
        });
    for (auto& t : threads)
        t.join();
    EXPECT_EQ(ok.load(), 8 * 16);
    EXPECT_EQ(s->manifests_loaded(), needed.size());
    size_t manifest_reads = 0;
    for (const auto& line : storage->log())
        manifest_reads += line.find("manifests/") != std::string::npos;
    EXPECT_EQ(manifest_reads, needed.size());
}

namespace {
// A storage that cannot list (plain HTTP servers).
class NoListing : public CountingStore {
  public:
    using CountingStore::CountingStore;
    std::vector<std::string> list_dir(const std::string&) override { return {}; }
};
} // namespace

TEST(Icechunk, OpeningCostsTwoRequestsAndNeedsNoListing) {
    ICE_NEED_UPSTREAM("test-repo-v1");
    for (const char* name : {"test-repo-v2", "split-repo-v2"}) {
        auto storage = std::make_shared<NoListing>(
            std::make_shared<FileStore>(icetest::upstream(name), false));
        auto s = IcechunkStore::open(storage);
        EXPECT_EQ(storage->log().size(), 2u) << name; // repo, snapshots/<id>
        EXPECT_TRUE(s->get("group1/zarr.json"));
        EXPECT_EQ(storage->log().size(), 2u) << name; // metadata comes from the snapshot
    }
    // Spec 1 without listing: the main branch is found all the same.
    auto v1 = std::make_shared<NoListing>(
        std::make_shared<FileStore>(icetest::upstream("test-repo-v1"), false));
    auto repo = Repository::open(v1);
    EXPECT_EQ(icetest::names(repo->branches()), std::vector<std::string>{"main"});
    EXPECT_EQ(icetest::read_all<int8_t>(IcechunkStore::open(v1), "group1/small_chunks"),
              std::vector<int8_t>(5, 84));
}

} // namespace ut_icechunk_test_icechunk
