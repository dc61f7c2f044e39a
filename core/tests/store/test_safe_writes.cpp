// Safe writes on local stores (issue 15): a failed write leaves the old
// value and no temporary file; two processes updating different inner
// chunks of one shard both survive (the read-modify-write holds a lock).
#include "test_util.hpp"
#include "zarr3/array.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_store_test_safe_writes {

using namespace zarr3;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

using testutil::SmallTmpfs;

std::vector<std::string> names_in(const std::string& d) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(d))
        out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

TEST(SafeWrites, FullDiskKeepsOldValueAndRemovesTemporary) {
    SmallTmpfs disk(256);
    if (!disk.ok) GTEST_SKIP() << "cannot mount a tmpfs here (" << std::strerror(errno) << ")";
    FileStore store(disk.dir.str());
    const Bytes old_value(1000, 7);
    store.put("a/c/0", old_value);
    // Fill the rest of the disk, then try to replace the chunk.
    {
        std::FILE* f = std::fopen((disk.dir.str() + "/filler").c_str(), "wb");
        ASSERT_NE(f, nullptr);
        const std::vector<char> block(4096, 1);
        while (std::fwrite(block.data(), 1, block.size(), f) == block.size()) {
        }
        std::fclose(f);
    }
    bool failed = false;
    try {
        store.put("a/c/0", Bytes(200 * 1024, 9));
    } catch (const Error& e) {
        failed = true;
        const std::string msg = e.what();
        EXPECT_NE(msg.find("a/c/0"), std::string::npos) << msg;
        EXPECT_NE(msg.find(std::strerror(ENOSPC)), std::string::npos) << msg;
    }
    EXPECT_TRUE(failed);
    EXPECT_EQ(store.get("a/c/0"), std::optional<Bytes>(old_value));
    EXPECT_EQ(names_in(disk.dir.str() + "/a/c"), std::vector<std::string>{"0"});
}

TEST(SafeWrites, ReadOnlyFolderFailsWithOsError) {
    if (::geteuid() == 0) {
        // root ignores permissions: use a read-only tmpfs instead.
        SmallTmpfs disk(64);
        if (!disk.ok) GTEST_SKIP() << "cannot mount a tmpfs here";
        FileStore(disk.dir.str()).put("x", Bytes(10, 3));
        ASSERT_EQ(
            ::mount("tmpfs", disk.dir.str().c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, "size=64k"),
            0)
            << std::strerror(errno);
        FileStore store(disk.dir.str());
        try {
            store.put("x", Bytes(10, 4));
            FAIL() << "write into a read-only file system succeeded";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(std::strerror(EROFS)), std::string::npos)
                << e.what();
        }
        EXPECT_EQ(store.get("x"), std::optional<Bytes>(Bytes(10, 3)));
        return;
    }
    testutil::TempDir dir;
    FileStore store(dir.str());
    store.put("x", Bytes(10, 3));
    fs::permissions(dir.path, fs::perms::owner_read | fs::perms::owner_exec);
    try {
        store.put("x", Bytes(10, 4));
        FAIL() << "write into a read-only folder succeeded";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(std::strerror(EACCES)), std::string::npos) << e.what();
    }
    fs::permissions(dir.path, fs::perms::owner_all);
    EXPECT_EQ(store.get("x"), std::optional<Bytes>(Bytes(10, 3)));
}

// Shape [8, 8] in one shard of 2x2 inner chunks [4, 4].
ArrayMetadata shard_meta() {
    return parse_array_metadata(testutil::sharded_8x8_json("int32"), "test zarr.json");
}

Selection inner_chunk(uint64_t col) {
    return Selection{{0, col * 4}, {4, 4}, {}};
}

// One writer: `rounds` times, checks that its inner chunk still holds the
// value it wrote last, then writes the next. Returns the number of rounds
// whose value had vanished (another writer's stale read-modify-write).
int writer(const std::string& root, uint64_t col, int rounds) {
    int lost = 0;
    for (int k = 1; k <= rounds; ++k) {
        auto store = std::make_shared<FileStore>(root);
        auto a = Array::open(store, "a");
        std::vector<int32_t> v(16);
        a->read(inner_chunk(col), v.data());
        if (v[0] != k - 1 || v[15] != k - 1) ++lost;
        std::fill(v.begin(), v.end(), k);
        a->write(inner_chunk(col), v.data());
        a->flush();
    }
    std::vector<int32_t> v(16);
    Array::open(std::make_shared<FileStore>(root), "a")->read(inner_chunk(col), v.data());
    if (v[0] != rounds) ++lost;
    return lost;
}

TEST(SafeWrites, TwoProcessesUpdatingOneShardBothSurvive) {
    testutil::TempDir dir;
    auto store = std::make_shared<FileStore>(dir.str());
    Array::create(store, "a", shard_meta());
    constexpr int kRounds = 300;
    pid_t kids[2];
    for (uint64_t w = 0; w < 2; ++w) {
        kids[w] = ::fork();
        ASSERT_GE(kids[w], 0);
        if (kids[w] == 0) {
            int lost = 0;
            try {
                lost = writer(dir.str(), w, kRounds);
            } catch (...) {
                ::_exit(100);
            }
            ::_exit(lost > 99 ? 99 : lost);
        }
    }
    for (pid_t k : kids) {
        int status = 0;
        ASSERT_EQ(::waitpid(k, &status, 0), k);
        ASSERT_TRUE(WIFEXITED(status));
        EXPECT_EQ(WEXITSTATUS(status), 0) << "updates lost (exit 100: the writer threw)";
    }
    std::vector<int32_t> all(64);
    Array::open(store, "a")->read(Selection::all({8, 8}), all.data());
    for (size_t y = 0; y < 4; ++y)
        for (size_t x = 0; x < 8; ++x)
            EXPECT_EQ(all[y * 8 + x], kRounds) << y << "," << x;
    // No lock file is left behind.
    for (const auto& e : fs::recursive_directory_iterator(dir.path))
        EXPECT_EQ(e.path().string().find(".lock"), std::string::npos) << e.path();
}

TEST(SafeWrites, StoreLockExcludesOtherProcesses) {
    testutil::TempDir dir;
    // Fork before locking: a child forked while the lock is held would share
    // the parent's open file description, and with it the lock.
    int go[2];
    ASSERT_EQ(::pipe(go), 0);
    const pid_t kid = ::fork();
    ASSERT_GE(kid, 0);
    if (kid == 0) {
        ::close(go[1]);
        char c = 0;
        if (::read(go[0], &c, 1) != 1) ::_exit(2); // the parent holds the lock now
        // Must wait for the parent: report how long that took.
        const auto t0 = std::chrono::steady_clock::now();
        FileStore s(dir.str());
        auto l = s.lock("a/c/0");
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - t0)
                            .count();
        ::_exit(l && ms >= 150 ? 0 : 1);
    }
    ::close(go[0]);
    FileStore store(dir.str());
    auto held = store.lock("a/c/0");
    ASSERT_TRUE(held);
    ASSERT_EQ(::write(go[1], "x", 1), 1);
    ::close(go[1]);
    ::usleep(300 * 1000);
    held.reset();
    int status = 0;
    ASSERT_EQ(::waitpid(kid, &status, 0), kid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the lock did not exclude";
    MemoryStore mem; // lives in this process: its lock is an in-process one
    EXPECT_NE(mem.lock("x"), nullptr);
    EXPECT_TRUE(mem.capabilities().locks);
}

} // namespace

}  // namespace ut_store_test_safe_writes
