// Every array of every conformance case reads back bit-exact through core.
#include "test_util.hpp"
#include "zarr3/array.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_metadata_test_conformance {

using namespace zarr3;

namespace {

std::vector<std::string> cases() {
    std::vector<std::string> out;
    std::ifstream f(testutil::conformance_dir() + "/cases.txt");
    std::string line;
    while (std::getline(f, line))
        if (!line.empty()) out.push_back(line);
    return out;
}

class Conformance : public ::testing::TestWithParam<std::string> {};

TEST_P(Conformance, ReadsBitExact) {
    const std::string dir = testutil::conformance_dir() + "/" + GetParam();
    const auto cj = testutil::read_json(dir + "/case.json");
    auto store = std::make_shared<FileStore>(dir + "/" + cj["store"].get<std::string>(), false);
    auto root = Group::open(store, "");
    ASSERT_FALSE(cj["arrays"].empty());
    for (const auto& aj : cj["arrays"]) {
        const std::string path = aj["path"];
        SCOPED_TRACE(path);
        auto a = Array::open(store, path);
        const auto& m = a->metadata();
        EXPECT_EQ(m.dtype.name, aj["data_type"].get<std::string>());
        EXPECT_EQ(m.shape, aj["shape"].get<Shape>());
        const auto expected = testutil::read_file(dir + "/" + aj["expected"].get<std::string>());
        uint64_t n = 1;
        for (auto s : m.shape)
            n *= s;
        ASSERT_EQ(expected.size(), n * m.dtype.size);
        std::vector<uint8_t> got(expected.size() + 1, 0xAB);
        a->read(Selection::all(m.shape), got.data());
        EXPECT_EQ(got.back(), 0xAB) << "wrote past the buffer";
        got.pop_back();
        EXPECT_TRUE(got == expected) << "values differ";
        // The array is listed by its parent group.
        if (path.find('/') == std::string::npos) {
            auto names = root->array_names();
            EXPECT_NE(std::find(names.begin(), names.end(), path), names.end());
        }
    }
}

INSTANTIATE_TEST_SUITE_P(All, Conformance, ::testing::ValuesIn(cases()),
                         [](const auto& tpi) { return tpi.param; });

TEST(Conformance, WindowsEqualSlicesOfFullRead) {
    // Random windows with steps (positive and negative) over rectilinear and
    // sharded arrays equal the same slice of a full read.
    for (const char* c : {"rect_rle_int16", "rect_overhang_uint16", "shard_rect_outer",
                          "shard_sparse_fill", "rect_3d_monthly_f32"}) {
        SCOPED_TRACE(c);
        const std::string dir = testutil::conformance_dir() + "/" + c;
        const auto cj = testutil::read_json(dir + "/case.json");
        auto store = std::make_shared<FileStore>(dir + "/store.zarr", false);
        auto a = Array::open(store, cj["arrays"][0]["path"].get<std::string>());
        const auto& m = a->metadata();
        const size_t elem = m.dtype.size, rank = m.rank();
        std::vector<uint8_t> full(checked_product(m.shape, "n") * elem);
        a->read(Selection::all(m.shape), full.data());
        const auto fs = c_strides(m.shape, elem);
        srand(42);
        for (int trial = 0; trial < 200; ++trial) {
            Selection s;
            for (size_t d = 0; d < rank; ++d) {
                const uint64_t L = m.shape[d];
                int64_t step = 1 + rand() % 4;
                if (rand() % 3 == 0) step = -step;
                uint64_t a0 = rand() % L;
                uint64_t maxc = step > 0 ? (L - 1 - a0) / step + 1 : a0 / (-step) + 1;
                uint64_t cnt = 1 + rand() % maxc;
                s.start.push_back(a0);
                s.count.push_back(cnt);
                s.step.push_back(step);
            }
            std::vector<uint8_t> got(checked_product(s.count, "n") * elem);
            a->read(s, got.data());
            // naive expected
            std::vector<uint64_t> k(rank, 0);
            size_t o = 0;
            bool ok = true;
            while (true) {
                int64_t off = 0;
                for (size_t d = 0; d < rank; ++d)
                    off += (static_cast<int64_t>(s.start[d]) +
                            static_cast<int64_t>(k[d]) * s.step[d]) *
                           fs[d];
                ok &= std::memcmp(got.data() + o, full.data() + off, elem) == 0;
                o += elem;
                size_t d = rank;
                bool done = false;
                while (d > 0) {
                    --d;
                    if (++k[d] < s.count[d]) break;
                    k[d] = 0;
                    if (d == 0) done = true;
                }
                if (done) break;
            }
            ASSERT_TRUE(ok) << "trial " << trial;
        }
    }
}

} // namespace

}  // namespace ut_metadata_test_conformance
