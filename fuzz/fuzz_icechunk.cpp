// libFuzzer target: the Icechunk file parsers (icechunk.hpp). The input is
// one metadata file, handed to the envelope and flatbuffers parsers of its
// kind; a repo info file is also opened as a repository (branches, tags,
// version selection, history walks) in a memory store with no snapshots.
// Checked: every call ends in a value or a zarr3::Error, quickly and within
// bounded memory; ids round-trip.
//
// Input: [mode u8] file bytes.
// mode bits 0-1: 0 repo info, 1 snapshot, 2 manifest, 3 ids and ISO times (text)
// mode bit 2: prepend a valid header (spec version 1 + bit 3, the kind's file type,
//             no compression) so that the fuzzer reaches the flatbuffers directly.
#include "fuzz_util.hpp"

#include "zarr3/icechunk.hpp"

#include <cstdio>

using namespace zarr3;
using namespace zarr3::icechunk;

namespace {

constexpr uint8_t kTypes[] = {6, 1, 2};

Bytes with_header(uint8_t type, int version, std::string_view body) {
    const std::string magic = "ICE\xF0\x9F\xA7\x8A"
                              "CHUNK";
    Bytes b(magic.begin(), magic.end());
    const std::string impl = "fuzz                    ";
    b.insert(b.end(), impl.begin(), impl.end());
    b.push_back(uint8_t(version));
    b.push_back(type);
    b.push_back(0);
    b.insert(b.end(), body.begin(), body.end());
    return b;
}

void repo_info(const Bytes& file) {
    auto store = std::make_shared<MemoryStore>();
    store->put("repo", file);
    auto repo = Repository::open(store);
    for (const auto& b : repo->branches()) {
        try {
            repo->history(repo->resolve({.branch = b.name}), 10000);
            repo->resolve({.branch = b.name, .as_of = "2024-01-01T00:00:00Z"});
        } catch (const Error&) {
        }
    }
    for (const auto& t : repo->tags())
        FUZZ_CHECK(!repo->resolve({.tag = t.name}).empty());
}

void manifest(const Bytes& file) {
    Manifest m(file, "fuzz");
    std::array<uint8_t, 8> node{};
    for (int n = 0; n < 4; ++n) {
        for (const auto& c : m.coords_of(node)) {
            auto ref = m.find(node, c);
            FUZZ_CHECK(ref.has_value());
        }
        m.find(node, {0, 0});
        node[7] = uint8_t(n + 1);
    }
}

void ids_and_times(std::string_view text) {
    const std::string s(text);
    if (auto id = decode_id12(s)) {
        const std::string back = encode_id(ByteView(id->data(), id->size()));
        FUZZ_CHECK(decode_id12(back) == id);
    }
    try {
        const uint64_t t = parse_iso_time(s, "fuzz");
        FUZZ_CHECK(parse_iso_time(format_iso_time(t), "fuzz") == t);
    } catch (const Error&) {
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzzutil::Reader in(data, size);
    const uint8_t mode = in.u8();
    const int kind = mode & 3;
    const std::string_view body = in.rest();
    if (kind == 3) {
        ids_and_times(body);
        return 0;
    }
    const Bytes file = (mode & 4) ? with_header(kTypes[kind], 1 + ((mode >> 3) & 1), body)
                                  : Bytes(body.begin(), body.end());
    try {
        if (kind == 0) repo_info(file);
        if (kind == 1) parse_snapshot(file, "fuzz");
        if (kind == 2) manifest(file);
    } catch (const Error&) {
    }
    return 0;
}
