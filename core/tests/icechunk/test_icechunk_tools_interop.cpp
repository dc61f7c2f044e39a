// Interop of the zarr3 tools' commits with the real Icechunk
// (scripts/icechunk/tools_repo.sh makes the repository, check_tools.mjs reads
// it with Icechunk and commits on top; run by fixtures_lib.sh's
// icechunk_check_written in the interop leg). Skipped without
// ZARR3_ICECHUNK_TOOLS_REPO and ZARR3_ICECHUNK_TOOLS_CHECK.
#include "icechunk_test_util.hpp"
#include "zarr3/array.hpp"
#include "zarr3/icechunk.hpp"

#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_icechunk_test_icechunk_tools_interop {

using namespace zarr3;
using namespace zarr3::icechunk;

TEST(IcechunkWrite, ToolsInteropCheck) {
    const char* repo_dir = std::getenv("ZARR3_ICECHUNK_TOOLS_REPO");
    const char* report = std::getenv("ZARR3_ICECHUNK_TOOLS_CHECK");
    if (!repo_dir || !report) GTEST_SKIP() << "ZARR3_ICECHUNK_TOOLS_CHECK not set";
    const auto bytes = testutil::read_file(report);
    const auto j = nlohmann::json::parse(bytes.begin(), bytes.end());
    auto st = std::make_shared<FileStore>(repo_dir, false);
    // Every key of every snapshot Icechunk read: the same bytes here.
    const size_t keys = icetest::expect_snapshot_keys(st, j["snapshots"]);
    EXPECT_GT(keys, 400u); // the daily snapshot alone holds 360 chunks of t2m
    // Icechunk saw the tools' references and histories as this library does.
    auto repo = Repository::open(st);
    EXPECT_EQ(icetest::refs_of(repo->tags()), j["tags"].get<decltype(icetest::refs_of({}))>());
    auto branches = icetest::refs_of(repo->branches());
    const auto seen = j["branches"].get<decltype(icetest::refs_of({}))>();
    EXPECT_EQ(branches.size(), seen.size());
    for (const auto& [name, id] : seen)
        if (name != "main") {
            EXPECT_EQ(branches[name], id) << name;
        }
    for (const char* t : {"january", "daily", "monthly"})
        EXPECT_TRUE(j["tags"].contains(t)) << t;
    for (const auto& [name, hist] : j["history"].items()) {
        std::vector<std::string> theirs, ours;
        for (const auto& e : hist)
            theirs.push_back(e["id"].get<std::string>() + " " + e["message"].get<std::string>());
        for (const auto& e : repo->history(seen.at(name)))
            ours.push_back(e.id + " " + e.message);
        EXPECT_EQ(ours, theirs) << name;
    }
    const auto& main_msgs = j["history"]["main"];
    ASSERT_GE(main_msgs.size(), 3u);
    EXPECT_EQ(main_msgs[0]["message"], "tools: monthly again");
    EXPECT_EQ(main_msgs[1]["message"], "tools: daily chunks");
    EXPECT_EQ(j["history"]["review"][0]["message"], "tools: weekly on review");
    // GDAL's commits through the plugin (tools_repo.sh): an append, an update, a whole copy.
    EXPECT_EQ(j["history"]["gdal"][0]["message"], "gdal: update day 1");
    EXPECT_EQ(j["history"]["gdal"][1]["message"], "gdal: append 2023-04-01");
    EXPECT_EQ(j["history"]["gdalcopy"][0]["message"], "gdal: copy");
    {
        auto gdal_tip = IcechunkStore::open(st, {.branch = "gdal"});
        EXPECT_EQ(Array::open(gdal_tip, "t2m")->metadata().shape[0], 91u);
    }
    // Icechunk's commit on top of the tools' one, read here.
    const std::string tip = j["icechunk_commit"].get<std::string>();
    EXPECT_EQ(repo->resolve({}), tip);
    const auto h = repo->history(tip);
    EXPECT_EQ(h[0].message, "by icechunk: January = March");
    EXPECT_EQ(*h[0].parent, seen.at("main"));
    auto now = IcechunkStore::open(st, {.branch = "main"});
    auto before = IcechunkStore::open(st, {.snapshot = seen.at("main")});
    const auto a = icetest::read_all<float>(now, "t2m"),
               b = icetest::read_all<float>(before, "t2m");
    ASSERT_EQ(a.size(), b.size());
    const size_t day = a.size() / 90;
    EXPECT_EQ(std::memcmp(a.data(), b.data() + 59 * day, 31 * day * sizeof(float)), 0);
    EXPECT_NE(std::memcmp(b.data(), b.data() + 59 * day, 31 * day * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(a.data() + 31 * day, b.data() + 31 * day, 59 * day * sizeof(float)), 0);
    EXPECT_EQ(Array::open(now, "t2m")->metadata().attributes.value("icechunk_touched", false),
              true);
}

} // namespace ut_icechunk_test_icechunk_tools_interop
