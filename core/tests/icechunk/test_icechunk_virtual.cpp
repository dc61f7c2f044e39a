// Authorization of Icechunk virtual chunk references.
#include "zarr3/icechunk_virtual.hpp"

#include "zarr3/common.hpp"

#include <gtest/gtest.h>

using namespace zarr3::icechunk;

namespace {

std::string error_of(const VirtualAccess& a, const std::string& url) {
    try {
        a.check(url, "repo/arr/c/0");
    } catch (const zarr3::Error& e) {
        return e.what();
    }
    return "";
}

} // namespace

TEST(IcechunkVirtual, PrefixMatchStopsAtSegmentBoundaries) {
    EXPECT_TRUE(url_in_prefix("file:///data/x.nc", "file:///data"));
    EXPECT_TRUE(url_in_prefix("file:///data/x.nc", "file:///data/"));
    EXPECT_TRUE(url_in_prefix("file:///data", "file:///data"));
    EXPECT_FALSE(url_in_prefix("file:///data2/x.nc", "file:///data"));
    EXPECT_FALSE(url_in_prefix("file:///dat", "file:///data"));
    EXPECT_FALSE(url_in_prefix("s3://b/x", ""));
    EXPECT_TRUE(url_in_prefix("file:///any/x.nc", "file"));
    EXPECT_FALSE(url_in_prefix("filex:///any/x.nc", "file"));
    EXPECT_FALSE(url_in_prefix("s3://testbucket-evil/x", "s3://testbucket"));
}

TEST(IcechunkVirtual, DotSegmentsEscapesAndUnknownSchemesAreRefused) {
    for (const char* bad :
         {"file:///data/../etc/passwd", "file:///data/./x", "file:///data/..", "s3://b/%2e%2e/x",
          "file:///data\\..\\x", "ftp://host/x", "data/x.nc", "file:///data/x\n"}) {
        EXPECT_THROW(check_virtual_url(bad, "k"), zarr3::Error) << bad;
    }
    EXPECT_NO_THROW(check_virtual_url("s3://bucket/a..b/x.nc", "k"));
    EXPECT_NO_THROW(check_virtual_url("https://h.example/a/x.nc", "k"));
}

TEST(IcechunkVirtual, LocalRepositoryFollowsItsDeclaredFileContainersOnly) {
    const VirtualAccess a({"file:///data/"}, {}, true, "VIRTUAL_ALLOWED_PREFIXES");
    EXPECT_EQ(error_of(a, "file:///data/jan.nc"), "");
    // Not declared by the repository: refused even though it is a local file.
    const std::string e = error_of(a, "file:///etc/passwd");
    EXPECT_NE(e.find("no virtual chunk container the repository declares"), std::string::npos) << e;
    EXPECT_NE(e.find("repo/arr/c/0"), std::string::npos) << e;
    // Climbing out of the container is refused before any matching.
    EXPECT_NE(error_of(a, "file:///data/../etc/passwd"), "");
}

TEST(IcechunkVirtual, RemoteRepositoryNeedsTheUserToAllowEvenFileContainers) {
    const VirtualAccess a({"file:///data/", "s3://bucket/archive/"}, {}, false,
                          "VIRTUAL_ALLOWED_PREFIXES");
    for (const char* url : {"file:///data/jan.nc", "s3://bucket/archive/jan.nc"}) {
        const std::string e = error_of(a, url);
        EXPECT_NE(e.find("VIRTUAL_ALLOWED_PREFIXES"), std::string::npos) << e;
        EXPECT_NE(e.find("not allowed"), std::string::npos) << e;
    }
    const VirtualAccess b({"file:///data/", "s3://bucket/archive/"}, {"s3://bucket/archive/2024"},
                          false, "VIRTUAL_ALLOWED_PREFIXES");
    EXPECT_TRUE(b.allows("s3://bucket/archive/2024/jan.nc"));
    EXPECT_FALSE(b.allows("s3://bucket/archive/2023/jan.nc"));
    EXPECT_FALSE(b.allows("file:///data/jan.nc"));
}

TEST(IcechunkVirtual, UserPrefixOutsideEveryDeclaredContainerAllowsNothing) {
    const VirtualAccess a({"s3://bucket/archive/"}, {"file:///"}, true, "X");
    EXPECT_FALSE(a.allows("file:///etc/passwd"));
    const VirtualAccess none;
    EXPECT_FALSE(none.allows("s3://bucket/archive/jan.nc"));
}

TEST(IcechunkVirtual, PrefixListsSplitOnCommasAndSpaces) {
    EXPECT_EQ(split_prefix_list("s3://a/, file:///b/ ,,gs://c/"),
              (std::vector<std::string>{"s3://a/", "file:///b/", "gs://c/"}));
    EXPECT_TRUE(split_prefix_list("").empty());
}
