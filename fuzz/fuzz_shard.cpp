// libFuzzer target: one shard of a fixed sharded array (inner chunks 4x4 in a
// 16x16 shard, crc32c-protected index at the start or the end) with fuzzed
// bytes, read whole and through random partial windows. A window read must
// succeed and agree with the whole read whenever the whole read succeeded.
//
// Input: [variant u8 (see shard_setup.hpp)][seed u8] shard bytes.
#include "fuzz_util.hpp"
#include "shard_setup.hpp"

#include "zarr3/array.hpp"
#include "zarr3/sharding.hpp"

#include <cstdio>

using namespace zarr3;
using fuzzutil::Rng;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzzutil::Reader in(data, size);
    const uint8_t variant = in.u8(), seed = in.u8();
    const std::string_view body = in.rest();
    Bytes shard(body.begin(), body.end());
    if (variant & 8) fuzzshard::fix_index_crc(shard, variant & 1);

    auto store = std::make_shared<MemoryStore>();
    const std::string meta = fuzzshard::metadata(variant).dump();
    store->put("zarr.json", ByteView(reinterpret_cast<const uint8_t*>(meta.data()), meta.size()));
    store->put("c/0/0", shard);
    auto arr = Array::open(store, "");
    // The array's sharding codec uses the process-wide index cache: 1 MiB,
    // or none (0 bytes) for even seeds.
    ShardIndexCache::global().clear();
    ShardIndexCache::global().set_max_bytes((seed & 1) ? 1 << 20 : 0);

    const Shape shape = arr->metadata().shape;
    std::vector<uint16_t> full(shape[0] * shape[1]);
    bool full_ok = true;
    try {
        arr->read(Selection::all(shape), full.data());
    } catch (const Error&) {
        full_ok = false;
    }

    Rng rng(fuzzutil::hash_bytes(data, size));
    for (int w = 0; w < 8; ++w) {
        Selection sel;
        sel.step.resize(2);
        for (size_t ax = 0; ax < 2; ++ax) {
            const int64_t step =
                (rng.next() & 3) == 0 ? -1 - int64_t(rng.below(2)) : 1 + int64_t(rng.below(3));
            const uint64_t start = rng.below(shape[ax]);
            // Elements start + k*step stay in [0, shape).
            const uint64_t room =
                step > 0 ? (shape[ax] - 1 - start) / uint64_t(step) : start / uint64_t(-step);
            sel.start.push_back(start);
            sel.count.push_back(rng.below(room + 2)); // count 0 allowed
            sel.step[ax] = step;
        }
        std::vector<uint16_t> out(sel.count[0] * sel.count[1], 0xdead);
        bool ok = true;
        try {
            arr->read(sel, out.data());
        } catch (const Error& e) {
            ok = false;
            if (full_ok) {
                fprintf(stderr, "window read failed although the full read succeeded: %s\n",
                        e.what());
                __builtin_trap();
            }
        }
        if (!ok || !full_ok) continue;
        for (uint64_t i = 0; i < sel.count[0]; ++i)
            for (uint64_t j = 0; j < sel.count[1]; ++j) {
                const uint64_t r = uint64_t(int64_t(sel.start[0]) + int64_t(i) * sel.step[0]);
                const uint64_t c = uint64_t(int64_t(sel.start[1]) + int64_t(j) * sel.step[1]);
                FUZZ_CHECK(out[i * sel.count[1] + j] == full[r * shape[1] + c]);
            }
    }
    return 0;
}
