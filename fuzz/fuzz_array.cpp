// libFuzzer target: a whole fuzzed in-memory store (see store_container.hpp).
// Opens the root as an array (or as a group, then its first arrays) and reads
// it whole and through one random window. Arrays above 1e6 elements or with
// chunks above 16 MiB are skipped (the limits there are covered by tests).
#include "fuzz_util.hpp"
#include "store_container.hpp"

#include "zarr3/array.hpp"
#include "zarr3/sharding.hpp"

#include <cstdio>

using namespace zarr3;
using fuzzutil::Rng;

namespace {

bool small_enough(const ArrayMetadata& m) {
    uint64_t elems = 1, chunk = m.dtype.size;
    for (size_t i = 0; i < m.rank(); ++i) {
        if (m.shape[i] && elems > 1000000 / m.shape[i]) return false;
        elems *= m.shape[i];
        const uint64_t e = m.grid.axis(i).max_edge();
        if (e > (16u << 20) || chunk > (16ull << 20) / e) return false;
        chunk *= e;
    }
    return elems <= 1000000;
}

void read_array(const std::shared_ptr<Array>& arr, Rng& rng) {
    const ArrayMetadata& m = arr->metadata();
    if (!small_enough(m)) return;
    const Shape& shape = m.shape;
    uint64_t n = 1;
    for (uint64_t s : shape)
        n *= s;
    Bytes full(n * m.dtype.size);
    bool full_ok = true;
    try {
        arr->read(Selection::all(shape), full.data());
    } catch (const Error&) {
        full_ok = false;
    }
    Selection sel;
    uint64_t wn = 1;
    for (uint64_t s : shape) {
        const uint64_t start = rng.below(s + 1);
        sel.start.push_back(start);
        sel.count.push_back(rng.below(s - start + 1));
        wn *= sel.count.back();
    }
    Bytes win(wn * m.dtype.size);
    try {
        arr->read(sel, win.data());
    } catch (const Error&) {
        return;
    }
    if (!full_ok || wn == 0) return;
    // Compare the window with the full read (C order walk).
    const size_t rank = shape.size(), es = m.dtype.size;
    std::vector<uint64_t> pos(rank, 0);
    for (uint64_t k = 0; k < wn; ++k) {
        uint64_t off = 0;
        for (size_t i = 0; i < rank; ++i)
            off = off * shape[i] + sel.start[i] + pos[i];
        FUZZ_CHECK(
            std::equal(win.begin() + k * es, win.begin() + (k + 1) * es, full.begin() + off * es));
        for (size_t i = rank; i-- > 0;) {
            if (++pos[i] < sel.count[i]) break;
            pos[i] = 0;
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto store = std::make_shared<MemoryStore>();
    for (const auto& [k, v] : fuzzstore::unpack(data, size)) {
        try {
            store->put(k, ByteView(reinterpret_cast<const uint8_t*>(v.data()), v.size()));
        } catch (const Error&) {
        }
    }
    Rng rng(fuzzutil::hash_bytes(data, size));
    // The arrays' sharding codecs use the process-wide index cache: 1 MiB, or
    // none (0 bytes).
    ShardIndexCache::global().clear();
    ShardIndexCache::global().set_max_bytes((rng.next() & 1) ? 1 << 20 : 0);
    try {
        auto j = read_node_json(*store, "");
        if (!j) return 0;
        if (node_type_of(*j, "zarr.json") == NodeType::Array) {
            read_array(Array::open(store, ""), rng);
            return 0;
        }
        auto g = Group::open(store, "");
        int opened = 0;
        for (const auto& name : g->array_names()) {
            if (++opened > 4) break;
            try {
                read_array(g->open_array(name), rng);
            } catch (const Error&) {
            }
        }
    } catch (const Error&) {
    }
    return 0;
}
