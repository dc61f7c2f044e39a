// Chunk key encodings.
#include "zarr3/key_encoding.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_metadata_test_key_encoding {

using namespace zarr3;
using nlohmann::json;

TEST(KeyEncoding, DefaultSlash) {
    const auto e = ChunkKeyEncoding::parse(json::parse(R"({"name":"default"})"), "w");
    EXPECT_EQ(e.kind(), ChunkKeyEncoding::Kind::Default);
    EXPECT_EQ(e.separator(), '/');
    EXPECT_EQ(e.key({1, 0}), "c/1/0");
    EXPECT_EQ(e.key({12, 3, 456}), "c/12/3/456");
    EXPECT_EQ(e.key({}), "c");
    EXPECT_EQ(e.to_json(), json::parse(R"({"name":"default","configuration":{"separator":"/"}})"));
}

TEST(KeyEncoding, DefaultDotAndBareName) {
    const auto e = ChunkKeyEncoding::parse(
        json::parse(R"({"name":"default","configuration":{"separator":"."}})"), "w");
    EXPECT_EQ(e.key({0, 3}), "c.0.3");
    EXPECT_EQ(e.key({}), "c");
    const auto b = ChunkKeyEncoding::parse(json("default"), "w");
    EXPECT_EQ(b.key({2}), "c/2");
    const auto again = ChunkKeyEncoding::parse(e.to_json(), "w");
    EXPECT_EQ(again.key({0, 3}), "c.0.3");
}

TEST(KeyEncoding, V2) {
    const auto e = ChunkKeyEncoding::parse(json("v2"), "w");
    EXPECT_EQ(e.kind(), ChunkKeyEncoding::Kind::V2);
    EXPECT_EQ(e.separator(), '.');
    EXPECT_EQ(e.key({0, 3}), "0.3");
    EXPECT_EQ(e.key({}), "0");
    EXPECT_EQ(e.key({7}), "7");
    const auto s = ChunkKeyEncoding::parse(
        json::parse(R"({"name":"v2","configuration":{"separator":"/"}})"), "w");
    EXPECT_EQ(s.key({4, 5, 6}), "4/5/6");
    EXPECT_EQ(s.to_json(), json::parse(R"({"name":"v2","configuration":{"separator":"/"}})"));
}

TEST(KeyEncoding, Refused) {
    for (const char* bad : {R"({"name":"default","configuration":{"separator":"-"}})",
                            R"({"name":"default","configuration":{"separator":1}})",
                            R"({"name":"default","configuration":{"separator":"//"}})",
                            R"({"name":"v3"})", R"("chunky")", R"(5)", R"({"configuration":{}})",
                            R"({"name":"default","configuration":[]})",
                            R"({"name":"default","configuration":{"sep":"/"}})"}) {
        try {
            ChunkKeyEncoding::parse(json::parse(bad), "s/zarr.json");
            ADD_FAILURE() << "accepted " << bad;
        } catch (const FormatError& e) {
            EXPECT_NE(std::string(e.what()).find("s/zarr.json: chunk_key_encoding"),
                      std::string::npos)
                << e.what();
        }
    }
}

// coords() is key()'s inverse on canonical keys and refuses everything else.
TEST(KeyEncoding, CoordsInvertsKey) {
    using K = ChunkKeyEncoding;
    using V = std::vector<uint64_t>;
    EXPECT_EQ(K(K::Kind::Default, '/').coords("c/3/0/12", 3), V({3, 0, 12}));
    EXPECT_EQ(K(K::Kind::Default, '.').coords("c.3.4", 2), V({3, 4}));
    EXPECT_EQ(K(K::Kind::Default, '/').coords("c", 0), V{});
    EXPECT_EQ(K(K::Kind::V2, '.').coords("7.1", 2), V({7, 1}));
    EXPECT_EQ(K(K::Kind::V2, '/').coords("7/1", 2), V({7, 1}));
    for (const char* bad : {"c/3/0", "c/3/0/12/1", "c.3.0.12", "3/0/12", "c/03/0/12", "c/3//12",
                            "c/-1/0/12", "c/3/0/x", "c/18446744073709551616/0/0", "d/3/0/12"})
        EXPECT_FALSE(K(K::Kind::Default, '/').coords(bad, 3)) << bad;
    EXPECT_FALSE(K(K::Kind::V2, '.').coords("c.7.1", 2));
}

}  // namespace ut_metadata_test_key_encoding
