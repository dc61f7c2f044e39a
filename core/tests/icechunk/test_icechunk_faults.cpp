// Faults during Icechunk commits (issue 30): a full disk at every step of a
// commit, and two writer processes committing to one branch while a reader
// process watches the tip.
#include "icechunk_test_util.hpp"
#include "test_util.hpp"
#include "zarr3/icechunk_write.hpp"
#include "zarr3/metadata.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_icechunk_test_icechunk_faults {

using namespace zarr3;
using namespace zarr3::icechunk;
namespace fs = std::filesystem;

namespace {

const std::string kGroup = R"({"zarr_format":3,"node_type":"group","attributes":{}})";

// float32 [10], chunks 2, 3, 5.
ArrayMetadata rect10() {
    const std::string text = R"({"zarr_format":3,"node_type":"array","shape":[10],
        "data_type":"float32","chunk_grid":{"name":"rectilinear","configuration":{"kind":"inline",
        "chunk_shapes":[[2,3,5]]}},"chunk_key_encoding":{"name":"default"},"fill_value":-1,
        "codecs":[{"name":"bytes","configuration":{"endian":"little"}}]})";
    return parse_array_metadata(parse_json_text(text, "test"), "test");
}

void fill(const std::shared_ptr<Store>& s, const std::string& path, uint64_t start, uint64_t n,
          float v) {
    const std::vector<float> vals(n, v);
    Array::open(s, path)->write(Selection{{start}, {n}, {}}, vals.data());
}

std::vector<float> read(const std::shared_ptr<Store>& storage, const std::string& path,
                        const VersionSpec& v = {}) {
    return icetest::read_all<float>(IcechunkStore::open(storage, v), path);
}

// Root group and arrays r, s, c (all 0) in commit "first".
void populate(const std::shared_ptr<Store>& storage) {
    create_repository(storage);
    auto s = IcechunkSession::open(storage);
    s->put("zarr.json", ByteView(reinterpret_cast<const uint8_t*>(kGroup.data()), kGroup.size()));
    for (const char* a : {"r", "s", "c"}) {
        Array::create(s, a, rect10(), true);
        fill(s, a, 0, 10, 0);
    }
    s->commit("first");
}

using testutil::SmallTmpfs;

// Fills the disk at `dir` with `file`, then frees `pages` pages of it.
void fill_disk(const std::string& file, unsigned pages) {
    std::FILE* f = std::fopen(file.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    const std::vector<char> block(4096, 1);
    while (std::fwrite(block.data(), 1, block.size(), f) == block.size()) {
    }
    std::fclose(f);
    const auto size = fs::file_size(file);
    fs::resize_file(file, size > pages * 4096ull ? size - pages * 4096ull : 0);
}

// With ZARR3_ICECHUNK_FAULTS_OUT set, a copy of the repository in `dir`
// goes to $ZARR3_ICECHUNK_FAULTS_OUT/<name> and its expectation (tip of
// every branch, history length of main) into <name>.json, for the real
// Icechunk to open (scripts/icechunk/check_open.mjs in the interop leg).
void keep_for_icechunk(const std::string& dir, const std::string& name) {
    const char* out = std::getenv("ZARR3_ICECHUNK_FAULTS_OUT");
    if (!out) return;
    const fs::path to = fs::path(out) / name;
    fs::create_directories(to.parent_path());
    fs::copy(dir, to, fs::copy_options::recursive);
    auto repo = Repository::open(std::make_shared<FileStore>(dir, false));
    nlohmann::json j;
    for (const auto& b : repo->branches())
        j["branches"][b.name] = b.snapshot;
    j["history"] = repo->history(repo->resolve({})).size();
    const std::string text = j.dump();
    std::FILE* f = std::fopen((to.string() + ".json").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
}

} // namespace

// With 0, 1, 2 ... free pages the commit fails at each of its steps (chunk,
// manifest, snapshot, transaction log, overwritten/ copy, repo file) or
// succeeds: either way the branch points at a complete snapshot, the
// repository opens, and a later commit works once space is back.
TEST(IcechunkFaults, FullDiskAtEveryStepOfACommit) {
    int failed = 0, committed = 0;
    for (unsigned pages = 0; pages <= 10; ++pages) {
        SmallTmpfs disk(512);
        if (!disk.ok) GTEST_SKIP() << "cannot mount a tmpfs here (" << std::strerror(errno) << ")";
        const std::string root = disk.dir.str() + "/repo";
        auto st = std::make_shared<FileStore>(root);
        populate(st);
        const std::string first = Repository::open(st)->resolve({});
        fill_disk(disk.dir.str() + "/filler", pages);
        bool ok = false;
        try {
            auto s = IcechunkSession::open(std::make_shared<FileStore>(root));
            fill(s, "r", 0, 10, 7); // three chunk objects
            s->commit("on a full disk");
            ok = true;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(std::strerror(ENOSPC)), std::string::npos)
                << pages << ": " << e.what();
        }
        (ok ? committed : failed)++;
        auto repo = Repository::open(std::make_shared<FileStore>(root, false));
        const std::string tip = repo->resolve({});
        EXPECT_EQ(tip == first, !ok) << pages;
        EXPECT_EQ(read(st, "r"), std::vector<float>(10, ok ? 7.f : 0.f)) << pages;
        EXPECT_EQ(repo->history(tip).size(), ok ? 3u : 2u) << pages;
        fs::remove(disk.dir.str() + "/filler");
        keep_for_icechunk(root, "full-disk-" + std::to_string(pages));
        auto s = IcechunkSession::open(st);
        fill(s, "r", 0, 2, 9);
        s->commit("space is back");
        EXPECT_EQ(read(st, "r")[0], 9.f) << pages;
        EXPECT_EQ(read(st, "r")[9], ok ? 7.f : 0.f) << pages;
    }
    EXPECT_GE(failed, 5); // the failure reached several steps of the commit
    EXPECT_GE(committed, 1);
}

namespace {

constexpr int kRounds = 20;

// Writer w: kRounds commits "w<w> k<k>", each setting its array (r or s)
// whole to w*1000+k, chunk 0 (w0) or 2 (w1) of c to it, and every fourth
// round chunk 1 of c too (both writers: a conflict; the loser retries on the
// new tip). Returns the number of retries, or -1 on an error.
int writer(const std::string& dir, int w) {
    int retries = 0;
    auto storage = std::make_shared<FileStore>(dir);
    for (int k = 0; k < kRounds; ++k) {
        const float v = float(w * 1000 + k);
        for (int attempt = 0;; ++attempt) {
            try {
                auto s = IcechunkSession::open(storage);
                fill(s, w == 0 ? "r" : "s", 0, 10, v);
                if (w == 0) fill(s, "c", 0, 2, v);
                if (w == 1) fill(s, "c", 5, 5, v);
                if (k % 4 == 0) fill(s, "c", 2, 3, v);
                s->commit("w" + std::to_string(w) + " k" + std::to_string(k));
                break;
            } catch (const CommitConflict&) {
                if (attempt > 50) return -1;
                ++retries;
            }
        }
    }
    return retries;
}

// The values of one snapshot hold together (never half a commit): r and s
// each one value; c's chunks each one value; r's value is w0's c chunk 0.
std::string check_snapshot(const std::shared_ptr<Store>& st, const std::string& id) {
    const auto r = read(st, "r", {.snapshot = id}), s = read(st, "s", {.snapshot = id}),
               c = read(st, "c", {.snapshot = id});
    auto same = [](const std::vector<float>& v, size_t a, size_t b) {
        return std::all_of(v.begin() + long(a), v.begin() + long(b),
                           [&](float x) { return x == v[a]; });
    };
    if (!same(r, 0, 10) || !same(s, 0, 10)) return id + ": r or s half written";
    if (!same(c, 0, 2) || !same(c, 2, 5) || !same(c, 5, 10)) return id + ": a chunk of c mixed";
    if (c[0] != r[0] || c[5] != s[0]) return id + ": c and r/s from different commits";
    return {};
}

// Reads the tip of main until `stop` exists; exit status 0 when every
// snapshot seen held together and r/s never went back.
int reader(const std::string& dir, const std::string& stop) {
    auto st = std::make_shared<FileStore>(dir, false);
    float last_r = -1, last_s = -1;
    int seen = 0;
    while (true) {
        const bool last = fs::exists(stop);
        try {
            const std::string tip = Repository::open(st)->resolve({});
            const std::string bad = check_snapshot(st, tip);
            if (!bad.empty()) {
                std::fprintf(stderr, "reader: %s\n", bad.c_str());
                return 1;
            }
            const float r = read(st, "r", {.snapshot = tip})[0];
            const float s = read(st, "s", {.snapshot = tip})[0];
            if (r < last_r || s < last_s) {
                std::fprintf(stderr, "reader: went back at %s\n", tip.c_str());
                return 1;
            }
            last_r = r, last_s = s, ++seen;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "reader: %s\n", e.what());
            return 1;
        }
        if (last) break;
    }
    return seen > 0 ? 0 : 1;
}

} // namespace

TEST(IcechunkFaults, TwoWritersAndAReaderLoseNothing) {
    testutil::TempDir dir;
    auto st = std::make_shared<FileStore>(dir.str());
    populate(st);
    const std::string stop = dir.str() + "/../" + fs::path(dir.str()).filename().string() + ".stop";
    const pid_t rd = ::fork();
    ASSERT_GE(rd, 0);
    if (rd == 0) ::_exit(reader(dir.str(), stop));
    pid_t w[2];
    for (int i = 0; i < 2; ++i) {
        w[i] = ::fork();
        ASSERT_GE(w[i], 0);
        if (w[i] == 0) ::_exit(writer(dir.str(), i) < 0 ? 1 : 0);
    }
    for (pid_t kid : w) {
        int status = 0;
        ASSERT_EQ(::waitpid(kid, &status, 0), kid);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    {
        std::FILE* f = std::fopen(stop.c_str(), "w");
        ASSERT_NE(f, nullptr);
        std::fclose(f);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(rd, &status, 0), rd);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the reader saw a half commit";
    fs::remove(stop);
    // Every commit once, in a history whose every snapshot holds together.
    auto repo = Repository::open(st);
    const auto h = repo->history(repo->resolve({}));
    auto msgs = icetest::messages(h);
    EXPECT_EQ(msgs.size(), 2u + 2 * kRounds);
    for (int i = 0; i < 2; ++i)
        for (int k = 0; k < kRounds; ++k)
            EXPECT_EQ(std::count(msgs.begin(), msgs.end(),
                                 "w" + std::to_string(i) + " k" + std::to_string(k)),
                      1);
    for (const auto& e : h)
        if (e.message != "Repository initialized") {
            EXPECT_EQ(check_snapshot(st, e.id), "");
        }
    EXPECT_EQ(read(st, "r"), std::vector<float>(10, float(kRounds - 1)));
    EXPECT_EQ(read(st, "s"), std::vector<float>(10, float(1000 + kRounds - 1)));
    EXPECT_EQ(icetest::names(repo->branches()), std::vector<std::string>{"main"});
    keep_for_icechunk(dir.str(), "two-writers");
}

} // namespace ut_icechunk_test_icechunk_faults
