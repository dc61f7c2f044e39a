// Hostile Icechunk repositories: the upstream repositories copied into
// memory and damaged (truncated, wrong magic / version / type /
// compression, flatbuffer offsets outside the buffer, absurd sizes, ".."
// node paths, history cycles, mismatched ids, missing files). Each is
// refused with an error naming the file; nothing crashes.
#include "icechunk/icechunk_test_util.hpp"

#include <algorithm>
#include <cstring>
#include <zstd.h>

// One namespace per test file: the suite is unity-built (file-local helpers may share names).
namespace ut_icechunk_test_icechunk_hostile {

using namespace zarr3;
using namespace zarr3::icechunk;
using icetest::expect_error;

namespace {

constexpr size_t kHeader = 39;

Bytes payload_of(const Bytes& file) {
    const ByteView body(file.data() + kHeader, file.size() - kHeader);
    if (file[38] == 0) return Bytes(body.begin(), body.end());
    const auto n = ZSTD_getFrameContentSize(body.data(), body.size());
    Bytes out(n == ZSTD_CONTENTSIZE_UNKNOWN ? (1 << 20) : size_t(n));
    const size_t got = ZSTD_decompress(out.data(), out.size(), body.data(), body.size());
    if (ZSTD_isError(got)) throw std::runtime_error("test: cannot decompress");
    out.resize(got);
    return out;
}

// `file`'s header with `payload` uncompressed.
Bytes rewrap(const Bytes& file, const Bytes& payload, uint8_t compression = 0) {
    Bytes out(kHeader + payload.size());
    std::memcpy(out.data(), file.data(), kHeader);
    out[38] = compression;
    if (!payload.empty()) std::memcpy(out.data() + kHeader, payload.data(), payload.size());
    return out;
}

void replace_all(Bytes& b, const Bytes& from, const Bytes& to) {
    for (auto it = std::search(b.begin(), b.end(), from.begin(), from.end()); it != b.end();
         it = std::search(it + long(to.size()), b.end(), from.begin(), from.end()))
        std::copy(to.begin(), to.end(), it);
}

Bytes text(const std::string& s, bool nul = false) {
    Bytes b(s.begin(), s.end());
    if (nul) b.push_back(0);
    return b;
}

std::shared_ptr<MemoryStore> v2() {
    return icetest::load(icetest::upstream("test-repo-v2"));
}

} // namespace

TEST(IcechunkHostile, EnvelopeRefusals) {
    ICE_NEED_UPSTREAM("test-repo-v2");
    const Bytes good = *v2()->get("repo");
    struct Case {
        std::function<void(Bytes&)> damage;
        std::string message;
    };
    const std::vector<Case> cases = {
        {[](Bytes& b) { b.resize(20); }, "truncated"},
        {[](Bytes& b) { b.resize(kHeader); }, "repo"},
        {[](Bytes& b) { b[3] = 'X'; }, "wrong magic"},
        {[](Bytes& b) { b[36] = 3; }, "unknown Icechunk spec version 3"},
        {[](Bytes& b) { b[37] = 1; }, "file type 1 where a repo info file"},
        {[](Bytes& b) { b[38] = 7; }, "unknown compression 7"},
        // erase, not resize(size() - 10): GCC 12 with ASan cannot see size() >= 10.
        {[](Bytes& b) { b.erase(b.end() - std::min<ptrdiff_t>(10, std::ssize(b)), b.end()); },
         "zstd"},
        {[](Bytes& b) { std::fill(b.begin() + kHeader + 4, b.end(), 0xAB); }, "zstd"},
        {[](Bytes& b) { b = rewrap(b, Bytes(3, 0)); }, "not a valid size"},
    };
    for (const auto& c : cases) {
        auto m = v2();
        Bytes bad = good;
        c.damage(bad);
        m->put("repo", bad);
        expect_error([&] { Repository::open(m); }, {m->uri() + "/repo", c.message});
    }
    // The same payload uncompressed (compression 0) is fine.
    auto m = v2();
    m->put("repo", rewrap(good, payload_of(good)));
    EXPECT_EQ(Repository::open(m)->branches().size(), 2u);
}

TEST(IcechunkHostile, FlatbufferOffsetsOutsideTheBuffer) {
    ICE_NEED_UPSTREAM("test-repo-v2");
    auto m = v2();
    const Bytes good = *m->get("repo");
    Bytes p = payload_of(good);
    const uint32_t far = 0x7FFFFFF0u;
    std::memcpy(p.data(), &far, 4); // root table offset
    m->put("repo", rewrap(good, p));
    expect_error([&] { Repository::open(m); }, {"/repo", "failed verification"});
    // A snapshot whose root is fine but whose vtable offset points away.
    auto m2 = v2();
    auto repo = Repository::open(m2);
    const std::string id = repo->resolve({});
    const std::string key = "snapshots/" + id;
    Bytes s = payload_of(*m2->get(key));
    uint32_t root = 0;
    std::memcpy(&root, s.data(), 4);
    const int32_t vt = 0x40000000;
    std::memcpy(s.data() + root, &vt, 4);
    m2->put(key, rewrap(*m2->get(key), s));
    expect_error([&] { IcechunkStore(repo, id); }, {key, "failed verification"});
}

TEST(IcechunkHostile, AbsurdDecompressedSize) {
    ICE_NEED_UPSTREAM("test-repo-v2");
    // A zstd frame stating 1 TiB of content.
    ZSTD_CCtx* c = ZSTD_createCCtx();
    ZSTD_CCtx_setPledgedSrcSize(c, 1ull << 40);
    Bytes zero(1024, 0), frame(4096);
    ZSTD_inBuffer in{zero.data(), zero.size(), 0};
    ZSTD_outBuffer out{frame.data(), frame.size(), 0};
    ZSTD_compressStream2(c, &out, &in, ZSTD_e_flush);
    ZSTD_freeCCtx(c);
    frame.resize(out.pos);
    auto m = v2();
    m->put("repo", rewrap(*m->get("repo"), frame, 1));
    expect_error([&] { Repository::open(m); }, {"/repo", "exceeds the limit"});
}

TEST(IcechunkHostile, NodePathsEscaping) {
    ICE_NEED_UPSTREAM("test-repo-v2");
    for (const std::string bad : {"/../ab1", "//roup1", "/./oup1", "group1/"}) {
        auto m = v2();
        auto repo = Repository::open(m);
        const std::string id = repo->resolve({});
        const std::string key = "snapshots/" + id;
        Bytes s = payload_of(*m->get(key));
        replace_all(s, text("/group1", true), text(bad, true));
        m->put(key, rewrap(*m->get(key), s));
        expect_error([&] { IcechunkStore(repo, id); }, {key, "node path '" + bad + "'"});
    }
}

TEST(IcechunkHostile, HistoryCycleAndMismatchedIds) {
    ICE_NEED_UPSTREAM("test-repo-v1");
    auto m = icetest::load(icetest::upstream("test-repo-v1"));
    auto repo = Repository::open(m);
    const auto h = repo->history(repo->resolve({}));
    ASSERT_GE(h.size(), 3u);
    // The parent of main's head names main's head as its own parent.
    const std::string pkey = "snapshots/" + h[1].id;
    Bytes p = payload_of(*m->get(pkey));
    const auto grand = *decode_id12(h[2].id), head = *decode_id12(h[0].id);
    replace_all(p, Bytes(grand.begin(), grand.end()), Bytes(head.begin(), head.end()));
    m->put(pkey, rewrap(*m->get(pkey), p));
    auto cyclic = Repository::open(m);
    expect_error([&] { cyclic->history(cyclic->resolve({})); }, {"cycle", h[0].id});
    expect_error([&] { cyclic->resolve({.as_of = "1971-01-01"}); }, {"cycle"});
    // A snapshot file holding another snapshot.
    m->put("snapshots/" + h[0].id, *m->get("snapshots/" + h[2].id));
    expect_error([&] { Repository::open(m)->snapshot(h[0].id); },
                 {"snapshots/" + h[0].id, "holds snapshot " + h[2].id});
}

TEST(IcechunkHostile, MissingFilesAndBadRefs) {
    ICE_NEED_UPSTREAM("test-repo-v1");
    auto empty = std::make_shared<MemoryStore>();
    expect_error([&] { Repository::open(empty); }, {"not an Icechunk repository"});
    // Spec 1 ref files that are not {"snapshot": id}.
    for (const std::string bad : {"[]", "{\"snapshot\": 3}", "{\"snapshot\": \"../../x\"}", "{"}) {
        auto m = icetest::load(icetest::upstream("test-repo-v1"));
        m->put("refs/branch.main/ref.json", text(bad));
        expect_error([&] { Repository::open(m); }, {"refs/branch.main/ref.json"});
    }
    // Missing chunk files and manifests are errors naming them, not absent chunks.
    auto m = v2();
    for (const auto& name : m->list_dir("chunks"))
        m->erase("chunks/" + name);
    auto s = IcechunkStore::open(m);
    expect_error([&] { s->get("group1/big_chunks/c/1/1"); }, {"chunks/", "missing"});
    auto m2 = v2();
    for (const auto& name : m2->list_dir("manifests"))
        m2->erase("manifests/" + name);
    auto s2 = IcechunkStore::open(m2);
    expect_error([&] { s2->get("group1/big_chunks/c/1/1"); }, {"manifests/", "not found"});
    // A missing snapshot.
    m2->erase("snapshots/" + s2->snapshot().id);
    expect_error([&] { IcechunkStore::open(m2); }, {"snapshots/" + s2->snapshot().id});
    // Keys escaping the store are refused.
    EXPECT_THROW(s->get("../repo"), Error);
    EXPECT_THROW(s->list_dir("group1/../.."), Error);
}

TEST(IcechunkHostile, CorruptManifestNamedAndRetried) {
    ICE_NEED_UPSTREAM("test-repo-v2");
    auto m = v2();
    auto s = IcechunkStore::open(m);
    std::vector<std::string> names = m->list_dir("manifests");
    std::map<std::string, Bytes> saved;
    for (const auto& n : names) {
        saved[n] = *m->get("manifests/" + n);
        Bytes p = payload_of(saved[n]);
        const uint32_t far = 0x7FFFFFF0u;
        std::memcpy(p.data(), &far, 4);
        m->put("manifests/" + n, rewrap(saved[n], p));
    }
    expect_error([&] { s->get("group1/big_chunks/c/1/1"); }, {"manifests/", "failed verification"});
    EXPECT_EQ(s->manifests_loaded(), 0u);
    for (const auto& [n, b] : saved)
        m->put("manifests/" + n, b);
    EXPECT_TRUE(s->get("group1/big_chunks/c/1/1")); // the failure was not cached
    EXPECT_EQ(s->manifests_loaded(), 1u);
}

} // namespace ut_icechunk_test_icechunk_hostile
