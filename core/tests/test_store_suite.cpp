// The shared store cases (store_suite.hpp) over MemoryStore and FileStore,
// and the atomic-write helper both file-writing stores use.
#include "store_suite.hpp"
#include "test_util.hpp"
#include "zarr3/array.hpp"

#include <filesystem>
#include <map>
#include <unistd.h>

using namespace zarr3;

namespace store_suite {

INSTANTIATE_TEST_SUITE_P(
    Core, StoreSuite,
    testing::Values(Kind{"Memory",
                         [] {
                             return Fresh{std::make_shared<MemoryStore>(), nullptr};
                         }},
                    Kind{"File",
                         [] {
                             auto dir = std::make_shared<testutil::TempDir>();
                             return Fresh{std::make_shared<FileStore>(dir->str()),
                                          [dir]() mutable { dir.reset(); }};
                         },
                         true, true}),
    kind_name);

} // namespace store_suite

namespace {

struct FakeFs {
    std::map<std::string, Bytes> files;
    std::string write_error, rename_error;
    std::vector<std::string> removed;
    AtomicWriteOps ops() {
        return {[this](const std::string& tmp, ByteView v) -> std::string {
                    files[tmp] = Bytes(v.begin(), v.end());
                    return write_error;
                },
                [this](const std::string& from, const std::string& to) -> std::string {
                    if (!rename_error.empty()) return rename_error;
                    files[to] = files[from];
                    files.erase(from);
                    return {};
                },
                [this](const std::string& tmp) {
                    removed.push_back(tmp);
                    files.erase(tmp);
                }};
    }
};

TEST(AtomicWrite, WritesTemporaryThenRenames) {
    FakeFs fs;
    write_atomically("root/a/c/0", Bytes{1, 2, 3}, fs.ops());
    EXPECT_EQ(fs.files.size(), 1u);
    EXPECT_EQ(fs.files["root/a/c/0"], (Bytes{1, 2, 3}));
    EXPECT_TRUE(fs.removed.empty());
}

TEST(AtomicWrite, FailedWriteRemovesTemporaryAndKeepsOldValue) {
    FakeFs fs;
    fs.files["root/k"] = Bytes{7};
    fs.write_error = "No space left on device";
    try {
        write_atomically("root/k", Bytes{1, 2}, fs.ops());
        FAIL() << "no error";
    } catch (const Error& e) {
        const std::string m = e.what();
        EXPECT_EQ(m.rfind("root/k: ", 0), 0u) << m;
        EXPECT_NE(m.find("No space left on device"), std::string::npos) << m;
        EXPECT_NE(m.find("the old value is kept"), std::string::npos) << m;
    }
    ASSERT_EQ(fs.removed.size(), 1u);
    EXPECT_EQ(temp_file_pid(fs.removed[0]), static_cast<long>(::getpid()));
    EXPECT_EQ(fs.files, (std::map<std::string, Bytes>{{"root/k", Bytes{7}}}));
}

TEST(AtomicWrite, FailedRenameRemovesTemporary) {
    FakeFs fs;
    fs.files["root/k"] = Bytes{7};
    fs.rename_error = "Permission denied";
    EXPECT_THROW(write_atomically("root/k", Bytes{1, 2}, fs.ops()), Error);
    EXPECT_EQ(fs.removed.size(), 1u);
    EXPECT_EQ(fs.files, (std::map<std::string, Bytes>{{"root/k", Bytes{7}}}));
}

TEST(AtomicWrite, TemporaryNamesAreUniqueAndCarryThePid) {
    const std::string a = temp_path_for("d/x"), b = temp_path_for("d/x");
    EXPECT_NE(a, b);
    EXPECT_EQ(a.rfind("d/x.tmp.", 0), 0u) << a;
    EXPECT_EQ(temp_file_pid(a), static_cast<long>(::getpid()));
    EXPECT_EQ(temp_file_pid("d/x"), 0);
    EXPECT_EQ(temp_file_pid("d/x.tmp.otherhost-x.123.4"), 0);
    EXPECT_EQ(temp_file_pid(a + "x"), 0);
}

TEST(ByteRanges, TextAndStart) {
    EXPECT_EQ(range_text(RangeFromStart{3, 4}), "3+4");
    EXPECT_EQ(range_text(RangeSuffix{9}), "-9");
    EXPECT_EQ(range_start(RangeSuffix{9}, 10, "w"), 1u);
    EXPECT_EQ(range_start(RangeFromStart{3, 7}, 10, "w"), 3u);
    EXPECT_THROW(range_start(RangeFromStart{3, 8}, 10, "w"), FormatError);
    EXPECT_THROW(range_start(RangeSuffix{11}, 10, "w"), FormatError);
    EXPECT_EQ(range_length(RangeSuffix{9}), 9u);
    EXPECT_TRUE(is_suffix(RangeSuffix{9}));
    EXPECT_FALSE(is_suffix(RangeFromStart{0, 9}));
}

TEST(NotFoundError, OpeningAMissingNodeIsNotFound) {
    auto store = std::make_shared<MemoryStore>();
    EXPECT_THROW(Array::open(store, "nothing"), NotFound);
    EXPECT_THROW(Group::open(store, "nothing"), NotFound);
    store->put("g/zarr.json", Bytes{'{'}); // present but broken: another error
    try {
        Group::open(store, "g");
        FAIL() << "a broken document opened";
    } catch (const NotFound&) {
        FAIL() << "a broken document reported as absent";
    } catch (const Error&) {
    }
}

} // namespace
