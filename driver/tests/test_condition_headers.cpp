// The header each object storage's conditional PUT sends (conditional_put.hpp):
// one code path, the storages' condition names as data. GCS has no server
// here: these cases are what shows its headers.
#include "storage/conditional_put.hpp"

#include <gtest/gtest.h>

#include <string>

namespace ut_driver_condition_headers {

using zarr3::ObjectVersion;
using zarr3::Precondition;
using zarr3drv::ConditionHeader;
using zarr3drv::PutHeaders;

// HttpDirect's version of an answer: "http:<validator>:<value>|<size>".
Precondition matches(const std::string& token) {
    return Precondition::matches(ObjectVersion{token});
}

TEST(ConditionHeaders, S3TakesTheETagAndIfNoneMatch) {
    EXPECT_EQ(ConditionHeader("/vsis3/b/r", Precondition::absent()), "If-None-Match: *");
    EXPECT_EQ(ConditionHeader("/vsis3/b/r", matches("http:etag:\"9f2c\"|12")),
              "If-Match: \"9f2c\"");
    EXPECT_EQ(PutHeaders("/vsis3/b/r", "If-Match: \"9f2c\""),
              std::vector<std::string>{"If-Match: \"9f2c\""});
}

TEST(ConditionHeaders, AzureTakesTheETagAndSendsItsBlobType) {
    EXPECT_EQ(ConditionHeader("/vsiaz/c/r", Precondition::absent()), "If-None-Match: *");
    EXPECT_EQ(ConditionHeader("/vsiaz/c/r", matches("http:etag:\"0x8DC1\"|7")),
              "If-Match: \"0x8DC1\"");
    EXPECT_EQ(PutHeaders("/vsiaz/c/r", "If-None-Match: *"),
              (std::vector<std::string>{"If-None-Match: *", "x-ms-blob-type: BlockBlob"}));
}

// GCS: the headers are data of the same path, but GDAL's V2-signed URLs do
// not let an x-goog-* header through: /vsigs/ is not committed to yet.
TEST(ConditionHeaders, GcsTakesTheGenerationZeroForAbsent) {
    EXPECT_EQ(ConditionHeader("/vsigs/b/r", Precondition::absent()),
              "x-goog-if-generation-match: 0");
    EXPECT_EQ(ConditionHeader("/vsigs/b/r", matches("http:gen:1700000000123456|40")),
              "x-goog-if-generation-match: 1700000000123456");
    EXPECT_EQ(PutHeaders("/vsigs/b/r", "x-goog-if-generation-match: 0"),
              std::vector<std::string>{"x-goog-if-generation-match: 0"});
    // An ETag is not a generation: no condition can be made of it.
    EXPECT_EQ(ConditionHeader("/vsigs/b/r", matches("http:etag:\"9f2c\"|12")), std::nullopt);
}

TEST(ConditionHeaders, AVersionWithoutTheValidatorMakesNoCondition) {
    // Last-Modified, a local file's identity, nothing: refused by the caller.
    EXPECT_EQ(ConditionHeader("/vsis3/b/r", matches("http:lm:Tue, 01 Jan 2030|5")), std::nullopt);
    EXPECT_EQ(ConditionHeader("/vsiaz/c/r", matches("file:1:2:3:4.5:6.7")), std::nullopt);
    EXPECT_EQ(ConditionHeader("/vsis3/b/r", matches("")), std::nullopt);
    EXPECT_EQ(ConditionHeader("/vsiaz/c/r", matches("http:gen:17|5")), std::nullopt);
}

TEST(ConditionHeaders, OnlyTheObjectStoragesThemselvesTakeConditions) {
    for (const char* root : {"/vsis3/b", "/vsiaz/c"})
        EXPECT_TRUE(zarr3drv::TakesConditionalPut(root)) << root;
    EXPECT_FALSE(zarr3drv::TakesConditionalPut("/vsigs/b")); // GDAL's V2 signature, see the header
    for (const char* root : {"/vsizip//vsis3/b/x.zip", "/vsicurl/http://h/r", "/vsimem/r", "/tmp/r",
                             "/vsiadls/c", "/vsioss/b"}) {
        EXPECT_FALSE(zarr3drv::TakesConditionalPut(root)) << root;
        EXPECT_EQ(ConditionHeader(root, Precondition::absent()), std::nullopt) << root;
    }
}

TEST(ConditionHeaders, OnePutCarriesWhatTheStorageTakes) {
    EXPECT_EQ(zarr3drv::SinglePutLimit("/vsis3/b"), 5ull << 30);
    EXPECT_EQ(zarr3drv::SinglePutLimit("/vsiaz/c"), 5000ull << 20);
    EXPECT_EQ(zarr3drv::SinglePutLimit("/vsigs/b"), 5ull << 30);
}

} // namespace ut_driver_condition_headers
