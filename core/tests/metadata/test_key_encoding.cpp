// Chunk key encodings.
#include "zarr3/key_encoding.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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
