// ChangeWatch (issue 44): a version reused without a stat is dropped at every
// change of its file, its folder or the path leading to it, and the watch
// refuses where notification cannot be trusted.
#include "test_util.hpp"
#include "zarr3/change_watch.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_store_test_change_watch {

using namespace zarr3;
namespace fs = std::filesystem;

namespace {

void write_file(const fs::path& p, const std::string& text) {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f << text;
}

// A folder a/b under a fresh temporary folder (canonical: no link on its path).
struct Tree {
    testutil::TempDir tmp;
    fs::path root;
    fs::path leaf;
    Tree() {
        root = fs::canonical(tmp.path);
        leaf = root / "a" / "b";
        fs::create_directories(leaf);
        write_file(leaf / "0", "one");
    }
    std::string file() const { return (leaf / "0").string(); }
};

ChangeWatch& watch() {
    return ChangeWatch::process();
}

// The token for `file`, or the test is skipped where this machine's
// temporary folder cannot be watched (not Linux, a network file system).
#define ARM_OR_SKIP(token, file)                                                                   \
    const auto token##_opt = watch().arm(file);                                                    \
    if (!token##_opt) GTEST_SKIP() << "no change watch for " << (file);                            \
    const ChangeWatch::Token token = *token##_opt

} // namespace

TEST(ChangeWatch, NothingChangedKeepsTheToken) {
    Tree t;
    ARM_OR_SKIP(token, t.file());
    EXPECT_TRUE(watch().unchanged(token));
    // Reading, and changes elsewhere on the path's folders, are not changes of it.
    std::ifstream(t.file()).get();
    write_file(t.root / "a" / "unrelated", "x");
    fs::create_directories(t.root / "other");
    EXPECT_TRUE(watch().unchanged(token));
}

TEST(ChangeWatch, FileWrittenInPlaceIsReported) {
    Tree t;
    ARM_OR_SKIP(token, t.file());
    std::ofstream(t.file(), std::ios::app) << "more";
    EXPECT_FALSE(watch().unchanged(token));
}

TEST(ChangeWatch, FileReplacedByRenameIsReported) {
    Tree t;
    ARM_OR_SKIP(token, t.file());
    write_file(t.leaf / "0.tmp", "two");
    fs::rename(t.leaf / "0.tmp", t.file());
    EXPECT_FALSE(watch().unchanged(token));
}

TEST(ChangeWatch, FileDeletedIsReported) {
    Tree t;
    ARM_OR_SKIP(token, t.file());
    fs::remove(t.file());
    EXPECT_FALSE(watch().unchanged(token));
}

TEST(ChangeWatch, AbsentFileCreatedIsReported) {
    Tree t;
    ARM_OR_SKIP(token, (t.leaf / "1").string());
    EXPECT_TRUE(watch().unchanged(token));
    write_file(t.leaf / "1", "new");
    EXPECT_FALSE(watch().unchanged(token));
}

TEST(ChangeWatch, FolderOnThePathReplacedIsReportedAndTheNewOneWatched) {
    Tree t;
    ARM_OR_SKIP(token, t.file());
    // The store's folder swapped for another (a copy moved into place).
    fs::rename(t.root / "a", t.root / "a.old");
    fs::create_directories(t.leaf);
    write_file(t.leaf / "0", "other");
    EXPECT_FALSE(watch().unchanged(token));
    // Armed again: the new folder is the one watched, not the one moved away.
    ARM_OR_SKIP(again, t.file());
    write_file(t.root / "a.old" / "b" / "0", "old one changed");
    EXPECT_TRUE(watch().unchanged(again));
    write_file(t.file(), "new one changed");
    EXPECT_FALSE(watch().unchanged(again));
}

TEST(ChangeWatch, FolderHoldingTheFileMovedIsReported) {
    Tree t;
    ARM_OR_SKIP(token, t.file());
    fs::rename(t.leaf, t.root / "a" / "c");
    EXPECT_FALSE(watch().unchanged(token));
}

TEST(ChangeWatch, PermissionsOfAFolderOnThePathAreReported) {
    Tree t;
    ARM_OR_SKIP(token, t.file());
    fs::permissions(t.root / "a", fs::perms::owner_all);
    EXPECT_FALSE(watch().unchanged(token));
}

TEST(ChangeWatch, SymbolicLinkOnThePathIsRefused) {
    Tree t;
    fs::create_directory_symlink(t.root / "a", t.root / "link");
    EXPECT_FALSE(watch().arm((t.root / "link" / "b" / "0").string()));
    EXPECT_FALSE(watch().arm((t.root / "a" / "b" / ".." / "b" / "0").string()));
    EXPECT_FALSE(watch().arm((t.root / "a" / "." / "b" / "0").string()));
    EXPECT_FALSE(watch().arm(t.root.string() + "/a//b/0"));
    EXPECT_FALSE(watch().arm("a/b/0"));
    EXPECT_FALSE(watch().arm(t.leaf.string() + "/"));
}

TEST(ChangeWatch, FileSystemsWithoutFullNotificationAreRefused) {
    // procfs stands for the file systems whose changes inotify does not see
    // (network, FUSE).
    EXPECT_FALSE(watch().arm("/proc/self/status"));
    EXPECT_FALSE(watch().arm("/proc/sys/fs/inotify/max_user_watches"));
}

TEST(ChangeWatch, OverflowMakesEveryTokenStale) {
    Tree t;
    ARM_OR_SKIP(token, t.file());
    watch().simulate_overflow();
    EXPECT_FALSE(watch().unchanged(token));
    ARM_OR_SKIP(again, t.file());
    EXPECT_TRUE(watch().unchanged(again));
}

TEST(ChangeWatch, MountOverAFolderOnThePathIsReported) {
    Tree t;
    ARM_OR_SKIP(token, t.file());
    if (::mount("tmpfs", (t.root / "a").c_str(), "tmpfs", 0, "size=64k") != 0)
        GTEST_SKIP() << "cannot mount here (not root)";
    const bool still = watch().unchanged(token);
    ::umount2((t.root / "a").c_str(), MNT_DETACH);
    EXPECT_FALSE(still);
}

TEST(ChangeWatch, ForkedChildNeitherTrustsNorTakesTheParentsEvents) {
    Tree t;
    ARM_OR_SKIP(token, t.file());
    // A change whose event is still queued when the process forks.
    std::ofstream(t.file(), std::ios::app) << "more";
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        // The child: the parent's tokens are stale, its own work.
        const bool stale = !ChangeWatch::process().unchanged(token);
        const auto own = ChangeWatch::process().arm(t.file());
        const bool own_ok = own && ChangeWatch::process().unchanged(*own);
        ::_exit(stale && own_ok ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    // The child did not read the parent's event away.
    EXPECT_FALSE(watch().unchanged(token));
}

TEST(ChangeWatch, APassReadsTheEventsOnceAndSeesWhatChangedBeforeIt) {
    Tree t;
    ARM_OR_SKIP(token, t.file());
    std::ofstream(t.file(), std::ios::app) << "before the pass";
    {
        ChangeWatch::Pass pass;
        EXPECT_FALSE(watch().unchanged(token)); // finished before the read began
    }
    ARM_OR_SKIP(again, t.file());
    {
        ChangeWatch::Pass pass;
        EXPECT_TRUE(watch().unchanged(again));
        // Concurrent with the read: its first check already ran.
        std::ofstream(t.file(), std::ios::app) << "during the pass";
        EXPECT_TRUE(watch().unchanged(again));
    }
    EXPECT_FALSE(watch().unchanged(again)); // after the pass
}

} // namespace ut_store_test_change_watch
