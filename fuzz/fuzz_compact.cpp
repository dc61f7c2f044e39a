// libFuzzer target: compaction plans (compact.hpp). An array of `length`
// time steps whose time axis is a fuzzed chunk_shapes entry (runs past the
// end included) and a fuzzed key encoding is filled, surrounded with files
// that are not its chunks, and compacted into fuzzed edges. Checked: the call
// ends quickly whatever the runs say; on success every value reads back,
// verify finds nothing, no chunk of the old encoding in the old grid is left
// (unless the edges were already the array's: then nothing at all changed)
// and every foreign file is untouched; on failure the old array reads whole.
//
// Input: [flags u8][length u8] old-axis JSON '\n' new-edges JSON.
// flags bit 0: v2 keys, bit 1: separator '.', bit 2: sharded.
#include "fuzz_util.hpp"

#include "zarr3/builder.hpp"
#include "zarr3/compact.hpp"

#include <cstdio>

using namespace zarr3;

namespace {

constexpr uint64_t kMaxEdge = 64; // chunks stay small (no huge buffers)

bool small_edges(const AxisPartition& a) {
    return a.max_edge() <= kMaxEdge;
}

std::vector<int32_t> read_all(const Array& a) {
    std::vector<int32_t> v(checked_product(a.metadata().shape, "n"));
    a.read(Selection::all(a.metadata().shape), v.data());
    return v;
}

const char* const kForeign[] = {"a/notes.txt", "a/c/x",  "a/0/zz",
                                "a/c.y.0",     "a/00.0", "a/sub/zarr.json"};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzzutil::Reader in(data, size);
    const uint8_t flags = in.u8();
    const uint64_t length = in.u8() % 40 + 1;
    const std::string_view text = in.rest();
    const size_t nl = text.find('\n');
    if (nl == std::string_view::npos) return 0;
    const std::string old_axis(text.substr(0, nl)), new_edges(text.substr(nl + 1));
    using K = ChunkKeyEncoding::Kind;
    const ChunkKeyEncoding enc(flags & 1 ? K::V2 : K::Default, flags & 2 ? '.' : '/');
    ArrayMetadata m;
    try {
        ArrayBuilder b({length, 3}, data_type_from_name("int32"));
        b.chunk_shapes_text("[" + old_axis + ",3]").chunk_key_encoding(enc);
        if (flags & 4) b.sharding(ShardingCodecBuilder({1, 3}));
        m = b.build("fuzz");
    } catch (const Error&) {
        return 0;
    }
    // Every axis: an input may close the axes' list early and give the second axis itself.
    for (size_t d = 0; d < m.shape.size(); ++d)
        if (!small_edges(m.grid.axis(d))) return 0;
    auto store = std::make_shared<MemoryStore>();
    auto a = Array::create(store, "a", m);
    std::vector<int32_t> v(length * 3);
    for (size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<int32_t>(i + 1);
    a->write(Selection::all(m.shape), v.data());
    a->flush();
    const Bytes keep{7};
    for (const char* k : kForeign)
        store->put(k, keep);
    AxisPartition edges;
    try {
        edges = parse_edges(new_edges, length, "--edges");
    } catch (const Error&) {
        return 0;
    }
    if (!small_edges(edges)) return 0;
    CompactResult r;
    try {
        r = compact_array(*a, 0, edges);
    } catch (const Error&) {
        FUZZ_CHECK(read_all(*Array::open(store, "a")) == v); // refused: the old array whole
        return 0;
    }
    auto b = Array::open(store, "a");
    FUZZ_CHECK(read_all(*b) == v);
    FUZZ_CHECK(verify_array(*b).empty());
    // Edges that are already the array's change nothing (no write at all): the old
    // chunks are the array's chunks. Otherwise none of the old namespace is left.
    const auto old_keys = chunk_namespace_keys(*store, "a", m.key_encoding, m.grid.grid_shape());
    if (r.unchanged)
        FUZZ_CHECK(to_json(b->metadata()) == to_json(m) && !old_keys.empty());
    else
        FUZZ_CHECK(old_keys.empty());
    for (const char* k : kForeign)
        FUZZ_CHECK(store->get(k) == keep);
    return 0;
}
