// Icechunk repositories built here with the generated flatbuffers writers:
// every kind of chunk reference (inline, native, virtual, absent), and
// files that are well-formed flatbuffers but inconsistent (history cycles,
// indexes out of range, ambiguous or unsorted references, absurd lengths).
#include "icechunk/icechunk_test_util.hpp"

#include <manifest_generated.h>
#include <repo_generated.h>
#include <snapshot_generated.h>
#include <zstd.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_icechunk_test_icechunk_built {

using namespace zarr3;
using namespace zarr3::icechunk;
using icetest::expect_error;
namespace fb = flatbuffers;

namespace {

using Id12 = std::array<uint8_t, 12>;
Id12 id12(uint8_t n) {
    Id12 a{};
    a.fill(n);
    return a;
}
std::string text_of(const Id12& a) {
    return encode_id(ByteView(a.data(), a.size()));
}
const std::array<uint8_t, 8> kNode = {1, 2, 3, 4, 5, 6, 7, 8};
const Id12 kSnap = id12(1), kManifest = id12(2), kChunk = id12(3);

Bytes envelope(uint8_t type, fb::FlatBufferBuilder& b) {
    const std::string head = "ICE\xF0\x9F\xA7\x8A"
                             "CHUNKtest                    ";
    Bytes out(head.begin(), head.end());
    out.push_back(2);
    out.push_back(type);
    out.push_back(0);
    out.insert(out.end(), b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
    return out;
}

struct SnapInfo {
    Id12 id;
    int32_t parent;
    std::string message;
    uint64_t at = 0;
};

Bytes repo_file(const std::vector<SnapInfo>& snaps,
                const std::vector<std::pair<std::string, uint32_t>>& branches) {
    fb::FlatBufferBuilder b;
    std::vector<fb::Offset<generated::SnapshotInfo>> infos;
    for (const auto& s : snaps) {
        const generated::ObjectId12 id(fb::span<const uint8_t, 12>(s.id.data(), 12));
        infos.push_back(
            generated::CreateSnapshotInfo(b, &id, s.parent, s.at, b.CreateString(s.message)));
    }
    std::vector<fb::Offset<generated::Ref>> refs;
    for (const auto& [name, idx] : branches)
        refs.push_back(generated::CreateRef(b, b.CreateString(name), idx));
    const auto no_refs = b.CreateVector(std::vector<fb::Offset<generated::Ref>>{});
    b.Finish(generated::CreateRepo(b, 2, no_refs, b.CreateVector(refs),
                                   b.CreateVector(std::vector<fb::Offset<fb::String>>{}),
                                   b.CreateVector(infos), generated::CreateRepoStatus(b), 0,
                                   b.CreateVector(std::vector<fb::Offset<generated::Update>>{})));
    return envelope(6, b);
}

// Root group and array /a (uint8, shape [4], chunks [2], fill 7) whose
// chunks are in manifest kManifest over `extent`.
const std::string kRegular = R"({"name":"regular","configuration":{"chunk_shape":[2]}})";

const std::string kBytes = R"([{"name":"bytes","configuration":{"endian":"little"}}])";

Bytes snapshot_file(std::pair<uint32_t, uint32_t> extent = {0, 2}, bool twice = false,
                    const std::string& grid = kRegular, const std::string& codecs = kBytes) {
    fb::FlatBufferBuilder b;
    const std::string array_json =
        R"({"zarr_format":3,"node_type":"array","shape":[4],"data_type":"uint8","chunk_grid":)" +
        grid + R"(,"chunk_key_encoding":{"name":"default","configuration":{"separator":"/"}},
            "fill_value":7,"codecs":)" +
        codecs + "}";
    const std::string group_json = R"({"zarr_format":3,"node_type":"group"})";
    const generated::ObjectId8 root_id, node_id(fb::span<const uint8_t, 8>(kNode.data(), 8));
    const generated::ObjectId12 mid(fb::span<const uint8_t, 12>(kManifest.data(), 12));
    const generated::ChunkIndexRange range(extent.first, extent.second);
    const auto mref = generated::CreateManifestRef(b, &mid, b.CreateVectorOfStructs(&range, 1));
    const auto arr = generated::CreateArrayNodeData(
        b, b.CreateVectorOfStructs(std::vector<generated::DimensionShape>{}), 0,
        b.CreateVector(std::vector<fb::Offset<generated::ManifestRef>>{mref}));
    auto bytes = [&](const std::string& s) {
        return b.CreateVector(reinterpret_cast<const uint8_t*>(s.data()), s.size());
    };
    std::vector<fb::Offset<generated::NodeSnapshot>> nodes = {
        generated::CreateNodeSnapshot(b, &root_id, b.CreateString("/"), bytes(group_json),
                                      generated::NodeData::Group,
                                      generated::CreateGroupNodeData(b).Union()),
        generated::CreateNodeSnapshot(b, &node_id, b.CreateString("/a"), bytes(array_json),
                                      generated::NodeData::Array, arr.Union())};
    if (twice) nodes.push_back(nodes.back());
    const generated::ObjectId12 sid(fb::span<const uint8_t, 12>(kSnap.data(), 12));
    b.Finish(generated::CreateSnapshot(
        b, &sid, nullptr, b.CreateVector(nodes), 0, b.CreateString("built"),
        b.CreateVector(std::vector<fb::Offset<generated::MetadataItem>>{}),
        b.CreateVectorOfStructs(std::vector<generated::ManifestFileInfo>{})));
    return envelope(1, b);
}

struct RefSpec {
    uint32_t index;
    Bytes inline_data;
    bool native = false;
    std::string location;
    uint64_t offset = 0, length = 0;
    std::string etag;
};

// compression: -1 plain `location`; 0 raw bytes in `compressed_location`;
// 1 zstd with the dictionary `dict`.
Bytes manifest_file(const std::vector<RefSpec>& specs, Id12 id = kManifest, int compression = -1,
                    const Bytes& dict = {}) {
    fb::FlatBufferBuilder b;
    std::vector<fb::Offset<generated::ChunkRef>> refs;
    const generated::ObjectId12 cid(fb::span<const uint8_t, 12>(kChunk.data(), 12));
    for (const auto& r : specs) {
        const auto index = b.CreateVector(std::vector<uint32_t>{r.index});
        const auto inl = r.inline_data.empty() ? 0 : b.CreateVector(r.inline_data);
        const bool plain = compression < 0 || r.location.empty();
        const auto loc = plain && !r.location.empty() ? b.CreateString(r.location) : 0;
        fb::Offset<fb::Vector<uint8_t>> packed = 0;
        if (!plain) {
            Bytes z(ZSTD_compressBound(r.location.size()));
            if (compression == 1) {
                ZSTD_CCtx* c = ZSTD_createCCtx();
                z.resize(ZSTD_compress_usingDict(c, z.data(), z.size(), r.location.data(),
                                                 r.location.size(), dict.data(), dict.size(), 3));
                ZSTD_freeCCtx(c);
            } else {
                z.assign(r.location.begin(), r.location.end()); // 0, or an unknown algorithm
            }
            packed = b.CreateVector(z);
        }
        const auto etag = r.etag.empty() ? 0 : b.CreateString(r.etag);
        refs.push_back(generated::CreateChunkRef(b, index, inl, r.offset, r.length,
                                                 r.native ? &cid : nullptr, loc, etag, 0, packed));
    }
    const generated::ObjectId8 node(fb::span<const uint8_t, 8>(kNode.data(), 8));
    const generated::ObjectId12 mid(fb::span<const uint8_t, 12>(id.data(), 12));
    const auto arrays = std::vector<fb::Offset<generated::ArrayManifest>>{
        generated::CreateArrayManifest(b, &node, b.CreateVector(refs))};
    b.Finish(generated::CreateManifest(b, &mid, b.CreateVector(arrays),
                                       dict.empty() ? 0 : b.CreateVector(dict),
                                       uint8_t(compression < 0 ? 1 : compression)));
    return envelope(2, b);
}

std::shared_ptr<MemoryStore> built(const std::vector<RefSpec>& refs) {
    auto m = std::make_shared<MemoryStore>();
    m->put("repo", repo_file({{kSnap, -1, "built"}}, {{"main", 0}}));
    m->put("snapshots/" + text_of(kSnap), snapshot_file());
    m->put("manifests/" + text_of(kManifest), manifest_file(refs));
    m->put("chunks/" + text_of(kChunk), Bytes{9, 3, 4, 9});
    return m;
}

class MapResolver : public VirtualResolver {
  public:
    std::vector<VirtualRef> refs;
    std::vector<RangeFromStart> ranges;
    std::vector<Bytes> read(const VirtualRef& ref, const std::vector<RangeFromStart>& r,
                            const std::string&) override {
        refs.push_back(ref);
        ranges.insert(ranges.end(), r.begin(), r.end());
        std::vector<Bytes> out;
        for (const auto& x : r)
            out.push_back(Bytes(x.length, uint8_t(x.offset)));
        return out;
    }
};

} // namespace

TEST(IcechunkBuilt, InlineNativeVirtualAndAbsentChunks) {
    auto m = built({{0, {1, 2}}, {1, {}, true, "", 1, 2}});
    auto s = IcechunkStore::open(m);
    EXPECT_EQ(icetest::read_all<uint8_t>(s, "a"), (std::vector<uint8_t>{1, 2, 3, 4}));
    EXPECT_EQ(s->list_dir("a/c"), (std::vector<std::string>{"0", "1"}));
    // Chunk 1 absent: the fill value.
    auto absent = IcechunkStore::open(built({{0, {1, 2}}}));
    EXPECT_EQ(icetest::read_all<uint8_t>(absent, "a"), (std::vector<uint8_t>{1, 2, 7, 7}));
    // Chunk 1 virtual: refused by default, else read through the resolver
    // with the checksum, at the referenced offset.
    auto vm = built({{0, {1, 2}}, {1, {}, false, "file:///data/x.nc", 10, 2, "\"abc\""}});
    expect_error([&] { icetest::read_all<uint8_t>(IcechunkStore::open(vm), "a"); },
                 {"a/c/1", "file:///data/x.nc", "refused"});
    auto resolver = std::make_shared<MapResolver>();
    auto vs = IcechunkStore::open(vm, {}, resolver);
    EXPECT_EQ(icetest::read_all<uint8_t>(vs, "a"), (std::vector<uint8_t>{1, 2, 10, 10}));
    ASSERT_EQ(resolver->refs.size(), 1u);
    EXPECT_EQ(resolver->refs[0].etag, "\"abc\"");
    EXPECT_EQ(resolver->refs[0].offset, 10u);
    EXPECT_EQ(resolver->ranges[0].offset, 10u);
    std::optional<uint64_t> total;
    auto part = vs->get_ranges_sized("a/c/1", {RangeSuffix{1}}, total);
    EXPECT_EQ(total, 2u);
    EXPECT_EQ(resolver->ranges.back().offset, 11u);
    EXPECT_EQ(part->front(), Bytes{11});
    // Versions: fixed for metadata, inline and native chunks; virtual ones
    // from their checksum, unknown without one.
    ObjectVersion v0, v1, vz, vn;
    vs->get_ranges_versioned("a/c/0", {RangeFromStart{0, 1}}, total, v0);
    vs->get_ranges_versioned("a/c/1", {RangeFromStart{0, 1}}, total, v1);
    vs->get_versioned("a/zarr.json", vz);
    EXPECT_EQ(v0, vz);
    EXPECT_TRUE(v0.known());
    EXPECT_NE(v1.token.find("\"abc\""), std::string::npos);
    s->get_versioned("a/c/1", vn);
    EXPECT_NE(vn.token.find(text_of(kChunk)), std::string::npos);
    auto unchecked = IcechunkStore::open(
        built({{0, {1, 2}}, {1, {}, false, "file:///data/x.nc", 10, 2}}), {}, resolver);
    ObjectVersion vu;
    unchecked->get_versioned("a/c/1", vu);
    EXPECT_FALSE(vu.known());
}

TEST(IcechunkBuilt, ManifestsOutsideTheExtentsAreNotRead) {
    auto m = built({{0, {1, 2}}, {1, {}, true, "", 1, 2}});
    m->put("snapshots/" + text_of(kSnap), snapshot_file({0, 1}));
    auto s = IcechunkStore::open(m);
    EXPECT_FALSE(s->get("a/c/1")); // outside [0, 1): no manifest read
    EXPECT_EQ(s->manifests_loaded(), 0u);
    EXPECT_TRUE(s->get("a/c/0"));
    EXPECT_EQ(s->manifests_loaded(), 1u);
}

TEST(IcechunkBuilt, RepoFileInconsistencies) {
    auto open_with = [](const Bytes& repo) {
        auto m = built({{0, {1, 2}}});
        m->put("repo", repo);
        return Repository::open(m);
    };
    // Two snapshots that are each other's parent.
    auto cyc = open_with(repo_file({{kSnap, 1, "a"}, {id12(9), 0, "b"}}, {{"main", 0}}));
    expect_error([&] { cyc->history(cyc->resolve({})); }, {"cycle"});
    expect_error([&] { cyc->resolve({.as_of = "1970-01-01"}); }, {"cycle"});
    expect_error(
        [&] {
            open_with(repo_file({{kSnap, 0, "self"}}, {{"main", 0}}));
        },
        {"/repo", "parent index 0"});
    expect_error(
        [&] {
            open_with(repo_file({{kSnap, 5, "far"}}, {{"main", 0}}));
        },
        {"/repo", "parent index 5"});
    expect_error(
        [&] {
            open_with(repo_file({{kSnap, -2, "neg"}}, {{"main", 0}}));
        },
        {"parent index -2"});
    expect_error(
        [&] {
            open_with(repo_file({{kSnap, -1, "x"}}, {{"main", 3}}));
        },
        {"/repo", "ref 'main' points to snapshot index 3"});
    expect_error(
        [&] {
            open_with(repo_file({{kSnap, -1, "x"}, {kSnap, -1, "y"}}, {{"main", 0}}));
        },
        {"listed twice"});
    // A long, well-formed history is walked and bounded by the limit asked.
    std::vector<SnapInfo> chain;
    for (int i = 0; i < 200; ++i)
        chain.push_back({id12(uint8_t(i + 10)), i == 199 ? -1 : i + 1, "c", uint64_t(200 - i)});
    auto long_repo = open_with(repo_file(chain, {{"main", 0}}));
    EXPECT_EQ(long_repo->history(long_repo->resolve({})).size(), 200u);
    EXPECT_EQ(long_repo->history(long_repo->resolve({}), 5).size(), 5u);
}

TEST(IcechunkBuilt, SnapshotAndManifestInconsistencies) {
    auto m = built({{0, {1, 2}}});
    m->put("snapshots/" + text_of(kSnap), snapshot_file({2, 1}));
    expect_error([&] { IcechunkStore::open(m); }, {"snapshots/", "empty extent [2, 1)"});
    m->put("snapshots/" + text_of(kSnap), snapshot_file({0, 2}, true));
    expect_error([&] { IcechunkStore::open(m); }, {"snapshots/", "'/a' appears twice"});

    auto read1 = [](const std::vector<RefSpec>& refs) {
        return IcechunkStore::open(built(refs))->get("a/c/1");
    };
    RefSpec both{1, {5}, true, "", 0, 1};
    expect_error([&] { read1({both}); },
                 {"manifests/", "exactly one of inline, native and virtual"});
    expect_error([&] { read1({{1, {5}}, {0, {6}}}); }, {"manifests/", "not sorted"});
    expect_error(
        [&] {
            read1({{1, {}, true, "", 0, 1ull << 62}});
        },
        {"a/c/1", "exceeds the limit"});
    expect_error([&] { read1({{1, {}, true, "", ~0ull, 2}}); }, {"a/c/1", "offset + length"});
    expect_error([&] { read1({{1, {}, true, "", 2, 4}}); }, {"a/c/1"}); // past the chunk file's end
    // A manifest file holding another manifest's id.
    auto w = built({{0, {1, 2}}});
    w->put("manifests/" + text_of(kManifest), manifest_file({{0, {1, 2}}}, id12(4)));
    expect_error([&] { IcechunkStore::open(w)->get("a/c/0"); },
                 {"manifests/" + text_of(kManifest), "holds manifest " + text_of(id12(4))});
}

TEST(IcechunkBuilt, RectilinearArray) {
    auto m = built({{0, {1}}, {1, {}, true, "", 1, 3}});
    m->put("snapshots/" + text_of(kSnap),
           snapshot_file({0, 2}, false,
                         R"({"name":"rectilinear","configuration":{"kind":"inline",
                             "chunk_shapes":[[1,3]]}})"));
    auto s = IcechunkStore::open(m);
    EXPECT_EQ(icetest::read_all<uint8_t>(s, "a"), (std::vector<uint8_t>{1, 3, 4, 9}));
}

TEST(IcechunkBuilt, ShardedArray) {
    // One shard of the whole array (native chunk, at offset 3 of its chunk
    // file): inner chunks {1, 2} and {3, 4}, then the index (offset, nbytes) x 2.
    Bytes file = {0, 0, 0, 1, 2, 3, 4};
    for (uint64_t v : {0, 2, 2, 2})
        for (int i = 0; i < 8; ++i)
            file.push_back(uint8_t(v >> (8 * i)));
    auto m = built({{0, {}, true, "", 3, file.size() - 3}});
    m->put("chunks/" + text_of(kChunk), file);
    m->put("snapshots/" + text_of(kSnap),
           snapshot_file({0, 1}, false, R"({"name":"regular","configuration":{"chunk_shape":[4]}})",
                         R"([{"name":"sharding_indexed","configuration":{"chunk_shape":[2],
                              "codecs":)" +
                             kBytes + R"(,"index_codecs":)" + kBytes +
                             R"(,"index_location":"end"}}])"));
    auto s = IcechunkStore::open(m);
    EXPECT_EQ(icetest::read_all<uint8_t>(s, "a"), (std::vector<uint8_t>{1, 2, 3, 4}));
    auto a = Array::open(s, "a");
    uint8_t v = 0;
    a->read(Selection{{2}, {1}, {}}, &v);
    EXPECT_EQ(v, 3);
}

TEST(IcechunkBuilt, CompressedVirtualLocations) {
    const std::string url = "s3://bucket/archive/2024-01.nc";
    const std::string dict_text = "s3://bucket/archive/2024-02.nc s3://bucket/archive/2024-03.nc";
    const Bytes dict(dict_text.begin(), dict_text.end());
    for (int compression : {0, 1}) {
        auto m = built({});
        m->put(
            "manifests/" + text_of(kManifest),
            manifest_file({{0, {1, 2}}, {1, {}, false, url, 4, 2}}, kManifest, compression, dict));
        auto resolver = std::make_shared<MapResolver>();
        auto s = IcechunkStore::open(m, {}, resolver);
        EXPECT_EQ(icetest::read_all<uint8_t>(s, "a"), (std::vector<uint8_t>{1, 2, 4, 4}));
        ASSERT_EQ(resolver->refs.size(), 1u);
        EXPECT_EQ(resolver->refs[0].location, url) << compression;
    }
    // A compressed location that does not decode, and an unknown algorithm,
    // are errors naming the manifest.
    auto m = built({});
    Bytes raw = manifest_file({{1, {}, false, url, 4, 2}}, kManifest, 1, dict);
    const Bytes magic = {0x28, 0xB5, 0x2F, 0xFD};
    auto pos = std::search(raw.begin(), raw.end(), magic.begin(), magic.end());
    ASSERT_NE(pos, raw.end());
    *pos = 0;
    m->put("manifests/" + text_of(kManifest), raw);
    auto s = IcechunkStore::open(m, {}, std::make_shared<MapResolver>());
    expect_error([&] { s->get("a/c/1"); },
                 {"manifests/", "cannot decompress a virtual chunk location"});
    m->put("manifests/" + text_of(kManifest),
           manifest_file({{1, {}, false, url, 4, 2}}, kManifest, 7, dict));
    auto s7 = IcechunkStore::open(m, {}, std::make_shared<MapResolver>());
    expect_error([&] { s7->get("a/c/1"); }, {"manifests/", "unknown location compression 7"});
}

} // namespace ut_icechunk_test_icechunk_built
