// Authorization of Icechunk virtual chunk references.
#include "zarr3/icechunk_virtual.hpp"

#include "zarr3/common.hpp"

#include <gtest/gtest.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_icechunk_test_icechunk_virtual {

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

TEST(IcechunkVirtual, FileUrlsNeedAnAbsolutePathWithoutEmptySegments) {
    // "file://vsimem/x" would be the relative path "vsimem/x" (read from the working folder);
    // an empty segment is no folder of the container.
    for (const char* bad : {"file://vsimem/x.nc", "file://host/data/x.nc", "file:///data//x.nc",
                            "file://", "file:///data/"}) {
        EXPECT_THROW(check_virtual_url(bad, "k"), zarr3::Error) << bad;
    }
    // Paths GDAL would read through one of its virtual file systems (network, memory).
    for (const char* bad : {"file:///vsicurl/http://h/x", "file:///vsimem/x.nc",
                            "file:///VSIS3/b/x", "file:///vsizip//tmp/a.zip/x"}) {
        try {
            check_virtual_url(bad, "k");
            ADD_FAILURE() << bad;
        } catch (const zarr3::Error& e) {
            EXPECT_NE(std::string(e.what()).find("virtual file systems"), std::string::npos)
                << e.what();
        }
    }
    EXPECT_NO_THROW(check_virtual_url("file:///data/vsimem/x.nc", "k"));
    EXPECT_NO_THROW(check_virtual_url("file:///data/x.nc", "k"));
    EXPECT_NO_THROW(check_virtual_url("http://h.example//a/x.nc", "k")); // a server's own matter
}

TEST(IcechunkVirtual, GuardIsTheNarrowestPrefixGrantingAccess) {
    // The folder a reference's object must stay inside once links are resolved: its container,
    // or the narrower prefix the user allowed, never the object's own folder.
    const VirtualAccess local({"file:///data/"}, {}, true, "X");
    EXPECT_EQ(local.check("file:///data/sub/x.nc", "k"), "file:///data/");
    const VirtualAccess narrower({"file:///"}, {"file:///data/vdata/", "file:///data/"}, false,
                                 "X");
    EXPECT_EQ(narrower.check("file:///data/vdata/sub/x.nc", "k"), "file:///data/vdata/");
    const VirtualAccess wider({"file:///data/vdata"}, {"file:///data/", "file"}, false, "X");
    EXPECT_EQ(wider.check("file:///data/vdata/sub/x.nc", "k"), "file:///data/vdata");
    const VirtualAccess bare({"file"}, {"file"}, false, "X");
    EXPECT_EQ(bare.check("file:///data/x.nc", "k"), "file");
}

TEST(IcechunkVirtual, PrefixListsSplitOnCommasAndSpaces) {
    EXPECT_EQ(split_prefix_list("s3://a/, file:///b/ ,,gs://c/"),
              (std::vector<std::string>{"s3://a/", "file:///b/", "gs://c/"}));
    EXPECT_TRUE(split_prefix_list("").empty());
}

} // namespace ut_icechunk_test_icechunk_virtual
