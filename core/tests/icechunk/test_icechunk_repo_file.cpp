// Repository::open with the `repo` file as the caller already read it (the
// driver's remote detection, icechunk_open.cpp): the same repository as
// reading it from storage, the storage not asked for `repo` again, and a
// damaged file still refused naming it.
#include "icechunk/icechunk_test_util.hpp"

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_icechunk_test_icechunk_repo_file {

using namespace zarr3;
using namespace zarr3::icechunk;

namespace {

// A FileStore that counts the reads of each key.
class RepoGetCounter : public FileStore {
  public:
    using FileStore::FileStore;
    std::map<std::string, int> gets;
    std::optional<ReadResult> read(const ReadRequest& request) override {
        ++gets[request.key];
        return FileStore::read(request);
    }
};

} // namespace

TEST(IcechunkRepoFile, OpenWithBytesReadsNoRepoFileAgain) {
    ICE_NEED_UPSTREAM("test-repo-v2");
    const std::string dir = icetest::upstream("test-repo-v2");
    auto plain = Repository::open(std::make_shared<FileStore>(dir, false));
    auto counting = std::make_shared<RepoGetCounter>(dir, false);
    auto bytes = counting->get_bounded("repo", kMaxFileBytes);
    ASSERT_TRUE(bytes.has_value());
    counting->gets.clear();
    auto given = Repository::open(counting, std::move(*bytes));
    EXPECT_EQ(counting->gets["repo"], 0);
    EXPECT_EQ(given->spec_version(), 2);
    ASSERT_EQ(given->branches().size(), plain->branches().size());
    for (size_t i = 0; i < plain->branches().size(); ++i) {
        EXPECT_EQ(given->branches()[i].name, plain->branches()[i].name);
        EXPECT_EQ(given->branches()[i].snapshot, plain->branches()[i].snapshot);
    }
    ASSERT_EQ(given->tags().size(), plain->tags().size());
    EXPECT_EQ(given->resolve(VersionSpec{}), plain->resolve(VersionSpec{}));
}

TEST(IcechunkRepoFile, DamagedBytesNameTheRepoFile) {
    ICE_NEED_UPSTREAM("test-repo-v2");
    auto store = std::make_shared<FileStore>(icetest::upstream("test-repo-v2"), false);
    Bytes bad = *store->get_bounded("repo", kMaxFileBytes);
    bad.resize(20);
    icetest::expect_error([&] { Repository::open(store, bad); }, {store->uri() + "/repo"});
}

} // namespace ut_icechunk_test_icechunk_repo_file
