// Format rules of `zarr3 virtualize` (zarr3/virtualize.hpp): HDF5 filters ->
// Zarr codecs, a file's chunk edges along the concatenated dimension, the
// concatenated CF time axis; and the Icechunk writer's pieces it uses
// (virtual references staged in a session, declared containers).
#include "zarr3/codec.hpp"
#include "zarr3/dtype.hpp"
#include "zarr3/icechunk_write.hpp"
#include "zarr3/virtualize.hpp"

#include <gtest/gtest.h>

#include <zlib.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_timeseries_test_virtualize {

using namespace zarr3;
using namespace zarr3::virtualize;
using nlohmann::json;

TEST(VirtualizeFilters, ShuffleDeflateMapToNumcodecsInPipelineOrder) {
    const std::vector<Hdf5Filter> f = {{kFilterShuffle, {4}, "shuffle"},
                                       {kFilterDeflate, {4}, "deflate"}};
    const auto c = codecs_for_filters(f, 4, false);
    ASSERT_TRUE(c);
    EXPECT_EQ(*c, json::parse(R"([{"name":"bytes","configuration":{"endian":"little"}},
        {"name":"numcodecs.shuffle","configuration":{"elementsize":4}},
        {"name":"numcodecs.zlib","configuration":{"level":4}}])"));
}

TEST(VirtualizeFilters, ByteOrderAndNoFilters) {
    const auto be = codecs_for_filters({}, 2, true);
    ASSERT_TRUE(be);
    EXPECT_EQ(*be, json::parse(R"([{"name":"bytes","configuration":{"endian":"big"}}])"));
    const auto one = codecs_for_filters({}, 1, false);
    ASSERT_TRUE(one);
    EXPECT_EQ(*one, json::parse(R"([{"name":"bytes"}])"));
}

TEST(VirtualizeFilters, FiltersWithoutACodecAreNamed) {
    std::string why;
    EXPECT_FALSE(codecs_for_filters({{kFilterSzip, {}, "szip"}}, 4, false, &why));
    EXPECT_NE(why.find("szip"), std::string::npos) << why;
    EXPECT_FALSE(codecs_for_filters({{kFilterFletcher32, {}, ""}}, 4, false, &why));
    EXPECT_NE(why.find("fletcher32"), std::string::npos) << why;
    EXPECT_FALSE(codecs_for_filters({{32015, {}, ""}}, 4, false, &why));
    EXPECT_NE(why.find("plugin"), std::string::npos) << why;
    EXPECT_FALSE(codecs_for_filters({{kFilterShuffle, {8}, ""}}, 4, false, &why));
    EXPECT_NE(why.find("8-byte"), std::string::npos) << why;
}

// The mapped chain decodes what HDF5's shuffle + deflate wrote.
TEST(VirtualizeFilters, MappedChainDecodesShuffledDeflatedBytes) {
    const std::vector<float> values = {1.5f, -2.25f, 300.f, 0.f, 7.f, 8.f};
    const size_t n = values.size() * 4;
    const auto* raw = reinterpret_cast<const uint8_t*>(values.data());
    Bytes shuffled(n);
    for (size_t i = 0; i < values.size(); ++i)
        for (size_t b = 0; b < 4; ++b)
            shuffled[b * values.size() + i] = raw[i * 4 + b];
    uLongf len = compressBound(uLong(n));
    Bytes z(len);
    ASSERT_EQ(compress2(z.data(), &len, shuffled.data(), uLong(n), 4), Z_OK);
    z.resize(len);
    const auto codecs = codecs_for_filters(
        {{kFilterShuffle, {4}, "shuffle"}, {kFilterDeflate, {4}, "deflate"}}, 4, false);
    ASSERT_TRUE(codecs);
    const ChunkSpec spec{{6}, parse_data_type("float32", "test"), Bytes(4, 0)};
    const auto chain = CodecChain::parse(*codecs, spec, "test");
    std::vector<float> out(values.size());
    chain.decode(z, spec, reinterpret_cast<uint8_t*>(out.data()));
    EXPECT_EQ(out, values);
}

TEST(VirtualizeEdges, WholeChunksAndAPaddedRemainder) {
    auto e = file_edges(31, 31);
    EXPECT_EQ(e.edges, (std::vector<uint64_t>{31}));
    EXPECT_FALSE(e.padded_last);
    e = file_edges(28, 7);
    EXPECT_EQ(e.edges, (std::vector<uint64_t>{7, 7, 7, 7}));
    EXPECT_FALSE(e.padded_last);
    e = file_edges(31, 10);
    EXPECT_EQ(e.edges, (std::vector<uint64_t>{10, 10, 10, 1}));
    EXPECT_TRUE(e.padded_last);
    e = file_edges(5, 10); // a chunk longer than the file
    EXPECT_EQ(e.edges, (std::vector<uint64_t>{5}));
    EXPECT_TRUE(e.padded_last);
    EXPECT_THROW(file_edges(5, 0), Error);
}

TEST(VirtualizeTime, ConcatenatesAndConvertsToTheFirstFilesUnits) {
    const std::vector<TimePiece> p = {
        {"a.nc", {0, 1, 2}, "days since 2023-01-01", ""},
        {"b.nc", {72, 96}, "hours since 2023-01-01 00:00:00", "standard"}, // days 3, 4
        {"c.nc", {0}, "days since 2023-01-06", "gregorian"},               // day 5
    };
    EXPECT_EQ(concatenate_time(p), (std::vector<double>{0, 1, 2, 3, 4, 5}));
}

TEST(VirtualizeTime, DuplicatesAndOverlapsNameBothFiles) {
    try {
        concatenate_time({{"jan.nc", {0, 1, 2}, "days since 2023-01-01", ""},
                          {"feb.nc", {2, 3}, "days since 2023-01-01", ""}});
        FAIL() << "no error";
    } catch (const Error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("feb.nc"), std::string::npos) << m;
        EXPECT_NE(m.find("jan.nc"), std::string::npos) << m;
        EXPECT_NE(m.find("duplicates"), std::string::npos) << m;
        EXPECT_NE(m.find("2023-01-03"), std::string::npos) << m;
    }
    try {
        concatenate_time({{"jan.nc", {0, 1, 2}, "days since 2023-01-01", ""},
                          {"dec.nc", {-5}, "days since 2023-01-01", ""}});
        FAIL() << "no error";
    } catch (const Error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("dec.nc"), std::string::npos) << m;
        EXPECT_NE(m.find("jan.nc"), std::string::npos) << m;
        EXPECT_NE(m.find("before"), std::string::npos) << m;
    }
    EXPECT_THROW(concatenate_time({{"a.nc", {0, 0}, "days since 2023-01-01", ""}}), Error);
}

TEST(VirtualizeTime, BadUnitsAndOtherCalendarsWithOtherUnitsAreRefused) {
    EXPECT_THROW(concatenate_time({{"a.nc", {0}, "days", ""}}), Error);
    // A noleap calendar is kept when every file has the same units ...
    EXPECT_EQ(concatenate_time({{"a.nc", {0}, "days since 2023-01-01", "noleap"},
                                {"b.nc", {1}, "days since 2023-01-01", "noleap"}}),
              (std::vector<double>{0, 1}));
    // ... but not converted.
    EXPECT_THROW(concatenate_time({{"a.nc", {0}, "days since 2023-01-01", "noleap"},
                                   {"b.nc", {0}, "days since 2023-01-02", "noleap"}}),
                 Error);
}

TEST(VirtualizeUrl, PlainNamesUnderAPrefix) {
    EXPECT_EQ(reference_url("file:///data/era5/", "t2m.nc"), "file:///data/era5/t2m.nc");
    EXPECT_THROW(reference_url("/data/era5/", "t2m.nc"), Error);
    EXPECT_THROW(reference_url("file:///data/era5", "t2m.nc"), Error);
    EXPECT_THROW(reference_url("file:///data/", "a%20b.nc"), Error);
    EXPECT_THROW(reference_url("file:///data/", "../x.nc"), Error);
}

// A reference the tool writes is one the reader follows: the container is
// checked like a reference (no dot or empty segment, no /vsi path, a file URL
// names an absolute path), and a '?' or '#' in a file name, which URL parsers
// read as a query or fragment, is refused naming the file.
TEST(VirtualizeUrl, ContainersOutsideWhatTheUserNamedAreRefused) {
    for (const char* bad :
         {"file:///data/../etc/", "file:///data/./era5/", "file:///data//era5/", "file:////data/",
          "file:///vsicurl/http://127.0.0.1/", "file:///VSIMEM/x/", "file://data/",
          "s3://bucket/a/../b/", "file:///data?x=1/", "ftp://host/data/", "file:///data/%2e%2e/"}) {
        EXPECT_THROW(reference_url(bad, "t2m.nc"), Error) << bad;
    }
    EXPECT_EQ(reference_url("s3://bucket/era5/", "2023/t2m.nc"), "s3://bucket/era5/2023/t2m.nc");
    EXPECT_EQ(reference_url("file:///data/", "a b&c=d'e\"f.nc"), "file:///data/a b&c=d'e\"f.nc");
    for (const char* name : {"a?b.nc", "a#b.nc", "x/y?z=1.nc"}) {
        try {
            reference_url("file:///data/", name);
            ADD_FAILURE() << name;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
        }
    }
}

// A remote source (`gdal driver zarr3 virtualize` on GDAL >= 3.12) is
// referenced by the URL a repository's reader follows: /vsis3/ -> s3://,
// /vsicurl/http(s):// -> the URL; other file systems and bare URLs refused
// naming the path.
TEST(VirtualizeUrl, RemoteSourcesAreNamedByTheirUrl) {
    EXPECT_EQ(remote_source_url("/data/a.nc"), std::nullopt);
    EXPECT_EQ(remote_source_url("a.nc"), std::nullopt);
    EXPECT_EQ(remote_source_url("/vsis3/bucket/era5/a.nc"), "s3://bucket/era5/a.nc");
    EXPECT_EQ(remote_source_url("/vsicurl/http://127.0.0.1:8080/x/a.nc"),
              "http://127.0.0.1:8080/x/a.nc");
    EXPECT_EQ(remote_source_url("/vsicurl/https://host/a.nc"), "https://host/a.nc");
    for (const char* bad : {"/vsis3/bucket", "/vsis3/bucket/", "/vsis3//a.nc", "/vsigs/b/a.nc",
                            "/vsimem/a.nc", "/vsizip//data/a.zip/a.nc", "/vsicurl/ftp://h/a.nc",
                            "/vsicurl?url=http://h/a.nc", "http://host/a.nc", "s3://b/a.nc"}) {
        try {
            (void)remote_source_url(bad);
            ADD_FAILURE() << bad;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
        }
    }
}

TEST(VirtualizeUrl, CommonPrefixOfRemoteFilesIsOneServerOrBucket) {
    EXPECT_EQ(common_url_prefix({"s3://b/era5/2023/a.nc", "s3://b/era5/2024/b.nc"}),
              "s3://b/era5/");
    EXPECT_EQ(common_url_prefix({"http://h:1/x/a.nc", "http://h:1/x/ab.nc"}), "http://h:1/x/");
    EXPECT_EQ(common_url_prefix({"http://h/a.nc", "http://h/y/b.nc"}), "http://h/");
    EXPECT_EQ(common_url_prefix({"s3://b/abc/a.nc", "s3://b/abd/a.nc"}), "s3://b/");
    for (const std::vector<std::string>& bad :
         {std::vector<std::string>{"s3://b1/a.nc", "s3://b2/a.nc"},
          std::vector<std::string>{"http://h/a.nc", "s3://h/a.nc"},
          std::vector<std::string>{"http://h:1/a.nc", "http://h:2/a.nc"}})
        EXPECT_THROW(common_url_prefix(bad), Error) << bad[0] << " " << bad[1];
}

// A remote file's reader (GDAL's HDF5 driver) gives no fill value where the
// variable has no _FillValue: the one libnetcdf stored (netcdf.h's NC_FILL_*),
// as the libhdf5 path reads it from the dataset.
TEST(VirtualizeFill, NetcdfDefaultFillValues) {
    EXPECT_EQ(netcdf_default_fill("float32").get<double>(), double(9.96921e36f));
    EXPECT_EQ(netcdf_default_fill("float64").get<double>(), 9.969209968386869e36);
    EXPECT_EQ(netcdf_default_fill("int16"), json(-32767));
    EXPECT_EQ(netcdf_default_fill("uint8"), json(255));
    EXPECT_EQ(netcdf_default_fill("int32"), json(-2147483647));
    EXPECT_EQ(netcdf_default_fill("uint64").get<uint64_t>(), 18446744073709551614ULL);
    EXPECT_TRUE(netcdf_default_fill("string").is_null());
}

TEST(VirtualizeRepository, VirtualReferencesAndContainersAreCommitted) {
    auto storage = std::make_shared<MemoryStore>();
    icechunk::create_repository(storage);
    icechunk::declare_virtual_container(*storage, "file:///data/a/");
    icechunk::declare_virtual_container(*storage, "s3://bucket/b/");
    icechunk::declare_virtual_container(*storage, "file:///data/a/"); // no duplicate
    EXPECT_EQ(icechunk::declared_virtual_containers(*storage),
              (std::vector<std::string>{"file:///data/a/", "s3://bucket/b/"}));
    // http(s):// containers (remote sources served by a web server) are declared too.
    icechunk::declare_virtual_container(*storage, "http://127.0.0.1:8080/x/");
    EXPECT_EQ(icechunk::declared_virtual_containers(*storage),
              (std::vector<std::string>{"file:///data/a/", "http://127.0.0.1:8080/x/",
                                        "s3://bucket/b/"}));
    EXPECT_THROW(icechunk::declare_virtual_container(*storage, "ftp://x/"), Error);
    auto s = icechunk::IcechunkSession::open(storage);
    const std::string a = R"({"zarr_format":3,"node_type":"array","shape":[4],
      "data_type":"uint8","chunk_grid":{"name":"regular","configuration":{"chunk_shape":[2]}},
      "chunk_key_encoding":{"name":"default"},"fill_value":0,"codecs":[{"name":"bytes"}]})";
    const std::string g = R"({"zarr_format":3,"node_type":"group"})";
    s->put("zarr.json", Bytes(g.begin(), g.end()));
    s->put("a/zarr.json", Bytes(a.begin(), a.end()));
    s->put_virtual("a/c/1", "file:///data/a/f.nc", 100, 2, 1700000000);
    EXPECT_THROW(s->put_virtual("b/c/0", "file:///data/a/f.nc", 0, 2, 0), Error);
    s->commit("virtual");
    auto repo = icechunk::Repository::open(storage);
    struct Capture : icechunk::VirtualResolver {
        icechunk::VirtualRef seen;
        std::vector<Bytes> read(const icechunk::VirtualRef& ref,
                                const std::vector<RangeFromStart>& ranges,
                                const std::string&) override {
            seen = ref;
            return std::vector<Bytes>(ranges.size(), Bytes{7, 8});
        }
    };
    auto capture = std::make_shared<Capture>();
    icechunk::IcechunkStore st(repo, repo->resolve({}), capture);
    const auto got = st.get("a/c/1");
    ASSERT_TRUE(got);
    EXPECT_EQ(*got, (Bytes{7, 8}));
    EXPECT_EQ(capture->seen.location, "file:///data/a/f.nc");
    EXPECT_EQ(capture->seen.offset, 100u);
    EXPECT_EQ(capture->seen.last_modified, 1700000000u);
}

} // namespace ut_timeseries_test_virtualize
