// Google Benchmark kernels over the data written by zarr3_bench_gen.
// The data folder comes from the environment: ZARR3_BENCH_DATA=<out-dir>.
//   BM_BareZstdDecode     the codec limit: every chunk file of regular_zstd,
//                         loaded into memory first, decoded into one reused buffer
//   BM_BareZstdDecodeFresh/<t>  the limit of any reader that fills a new array:
//                         the same chunks decoded (t threads) into a freshly mapped
//                         2 MiB-aligned MADV_HUGEPAGE output, rows scattered to their place
//   BM_BareZstdCompress   the codec limit for writes: level-3 compression of
//                         every 256x256 chunk into one reused buffer
//   BM_CoreRead/<a>/<t>   Array::read of a whole array (t threads, core executor)
//   BM_CoreWriteSharded   Array::write of the whole array as 1024x1024 shards
//   BM_WindowReads        100 random 512x512 windows of sharded_zstd through a
//                         CountingStore (counters: bytes read and bytes needed)
//   BM_OpenEdges1M / BM_ParseEdges1M   Array::open vs nlohmann::json::parse
//   BM_OpenEdges1MOnePass  the same open through parse_node_metadata_text (edge
//                         lists straight into runs), as the GDAL multidim path does
#include "bench_data.hpp"
#include "zarr3/array.hpp"
#include "zarr3/counting_store.hpp"
#include "zarr3/sharding.hpp"

#include <benchmark/benchmark.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sys/mman.h>
#include <thread>
#include <zstd.h>

namespace {

namespace fs = std::filesystem;
using bench::kArrays;
using bench::kN;
using bench::thread_executor;

fs::path data_dir() {
    const char* d = std::getenv("ZARR3_BENCH_DATA");
    return d ? fs::path(d) : fs::path();
}

zarr3::Bytes slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    zarr3::Bytes b(fs::file_size(p));
    f.read(reinterpret_cast<char*>(b.data()), std::streamsize(b.size()));
    if (!f) throw zarr3::Error(p.string() + ": read failed");
    return b;
}

std::shared_ptr<zarr3::Store> bench_store() {
    return std::make_shared<zarr3::FileStore>((data_dir() / "bench.zarr").string(), false);
}

std::vector<zarr3::Bytes> regular_zstd_chunks() {
    const fs::path dir = data_dir() / "bench.zarr" / "regular_zstd" / "c";
    std::vector<zarr3::Bytes> chunks;
    for (uint64_t i = 0; i < kN / 256; ++i)
        for (uint64_t j = 0; j < kN / 256; ++j)
            chunks.push_back(slurp(dir / std::to_string(i) / std::to_string(j)));
    return chunks;
}

void BM_BareZstdDecode(benchmark::State& state) {
    const auto chunks = regular_zstd_chunks();
    uint64_t compressed = 0;
    for (const auto& c : chunks)
        compressed += c.size();
    std::vector<uint8_t> out(256 * 256 * 4);
    ZSTD_DCtx* d = ZSTD_createDCtx();
    for (auto _ : state) {
        for (const auto& c : chunks) {
            const size_t n = ZSTD_decompressDCtx(d, out.data(), out.size(), c.data(), c.size());
            if (ZSTD_isError(n) || n != out.size()) state.SkipWithError("zstd decode failed");
        }
        benchmark::DoNotOptimize(out.data());
    }
    ZSTD_freeDCtx(d);
    state.counters["ratio"] = double(kN * kN * 4) / double(compressed);
    state.SetBytesProcessed(int64_t(state.iterations() * kN * kN * 4));
}
BENCHMARK(BM_BareZstdDecode)->Unit(benchmark::kMillisecond)->UseRealTime();

// Decodes chunks [first, last) of the 16x16 grid and scatters their rows into `out`.
bool decode_scatter(const std::vector<zarr3::Bytes>& chunks, size_t first, size_t last,
                    float* out) {
    ZSTD_DCtx* d = ZSTD_createDCtx();
    std::vector<float> tile(256 * 256);
    bool ok = true;
    for (size_t c = first; c < last; ++c) {
        const size_t n = ZSTD_decompressDCtx(d, tile.data(), tile.size() * 4, chunks[c].data(),
                                             chunks[c].size());
        ok = ok && !ZSTD_isError(n) && n == tile.size() * 4;
        const uint64_t ci = c / (kN / 256), cj = c % (kN / 256);
        for (uint64_t y = 0; y < 256; ++y)
            std::memcpy(out + (ci * 256 + y) * kN + cj * 256, &tile[y * 256], 256 * 4);
    }
    ZSTD_freeDCtx(d);
    return ok;
}

// A fresh output as a reader that fills a new array gets it: mapped anew, 2 MiB
// aligned and advised for huge pages (4 KiB page faults cost ~27 us each on this VM).
class FreshOutput {
  public:
    explicit FreshOutput(size_t bytes) : len_(bytes + kHuge) {
        map_ = mmap(nullptr, len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (map_ == MAP_FAILED) throw zarr3::Error("mmap failed");
        const auto a = (reinterpret_cast<uintptr_t>(map_) + kHuge - 1) & ~uintptr_t(kHuge - 1);
        data_ = reinterpret_cast<float*>(a);
        madvise(data_, bytes, MADV_HUGEPAGE);
    }
    FreshOutput(const FreshOutput&) = delete;
    FreshOutput& operator=(const FreshOutput&) = delete;
    ~FreshOutput() { munmap(map_, len_); }
    float* data() const { return data_; }

  private:
    static constexpr size_t kHuge = size_t(2) << 20;
    size_t len_;
    void* map_ = nullptr;
    float* data_ = nullptr;
};

void BM_BareZstdDecodeFresh(benchmark::State& state) {
    const auto chunks = regular_zstd_chunks();
    const size_t threads = size_t(state.range(0)), bytes = kN * kN * 4;
    for (auto _ : state) {
        FreshOutput out(bytes);
        std::atomic<bool> ok{true};
        std::vector<std::thread> pool;
        for (size_t t = 1; t < threads; ++t) // the calling thread takes part 0
            pool.emplace_back([&, t] {
                if (!decode_scatter(chunks, t * chunks.size() / threads,
                                    (t + 1) * chunks.size() / threads, out.data()))
                    ok = false;
            });
        if (!decode_scatter(chunks, 0, chunks.size() / threads, out.data())) ok = false;
        for (auto& th : pool)
            th.join();
        if (!ok) state.SkipWithError("zstd decode failed");
        benchmark::DoNotOptimize(out.data());
    }
    state.SetBytesProcessed(int64_t(state.iterations() * bytes));
}
BENCHMARK(BM_BareZstdDecodeFresh)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

std::vector<float> load_raw() {
    const zarr3::Bytes b = slurp(data_dir() / "raw.f32");
    std::vector<float> v(b.size() / 4);
    std::memcpy(v.data(), b.data(), v.size() * 4);
    return v;
}

void BM_BareZstdCompress(benchmark::State& state) {
    const auto raw = load_raw();
    // Chunks as dense 256x256 buffers, cut out beforehand.
    std::vector<std::vector<float>> chunks;
    for (uint64_t ci = 0; ci < kN / 256; ++ci)
        for (uint64_t cj = 0; cj < kN / 256; ++cj) {
            std::vector<float> c(256 * 256);
            for (uint64_t y = 0; y < 256; ++y)
                std::memcpy(&c[y * 256], &raw[(ci * 256 + y) * kN + cj * 256], 256 * 4);
            chunks.push_back(std::move(c));
        }
    std::vector<uint8_t> out(ZSTD_compressBound(256 * 256 * 4));
    ZSTD_CCtx* c = ZSTD_createCCtx();
    for (auto _ : state) {
        for (const auto& ch : chunks) {
            const size_t n =
                ZSTD_compressCCtx(c, out.data(), out.size(), ch.data(), ch.size() * 4, 3);
            if (ZSTD_isError(n)) state.SkipWithError("zstd compress failed");
        }
        benchmark::DoNotOptimize(out.data());
    }
    ZSTD_freeCCtx(c);
    state.SetBytesProcessed(int64_t(state.iterations() * kN * kN * 4));
}
BENCHMARK(BM_BareZstdCompress)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_CoreRead(benchmark::State& state) {
    const std::string name = kArrays[state.range(0)];
    state.SetLabel(name);
    auto a = zarr3::Array::open(bench_store(), name);
    a->set_executor(thread_executor(size_t(state.range(1))));
    std::vector<float> out(kN * kN);
    const auto sel = zarr3::Selection::all(a->metadata().shape);
    for (auto _ : state) {
        a->read(sel, out.data());
        benchmark::DoNotOptimize(out.data());
    }
    state.SetBytesProcessed(int64_t(state.iterations() * kN * kN * 4));
}
BENCHMARK(BM_CoreRead)
    ->ArgsProduct({{0, 1, 2, 3, 4}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_CoreWriteSharded(benchmark::State& state) {
    const auto raw = load_raw();
    const fs::path dir = data_dir() / "write_tmp.zarr";
    auto store = std::make_shared<zarr3::FileStore>(dir.string());
    const auto src = zarr3::Array::open(bench_store(), "sharded_zstd");
    for (auto _ : state) {
        state.PauseTiming();
        fs::remove_all(dir);
        fs::create_directories(dir);
        state.ResumeTiming();
        auto a = zarr3::Array::create(store, "", src->metadata(), true);
        a->set_executor(thread_executor(size_t(state.range(0))));
        a->write(zarr3::Selection::all(a->metadata().shape), raw.data());
        a->flush();
    }
    fs::remove_all(dir);
    state.SetBytesProcessed(int64_t(state.iterations() * kN * kN * 4));
}
BENCHMARK(BM_CoreWriteSharded)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// Little-endian (offset, nbytes) pairs of a shard's index (at the end, + crc32c).
std::vector<uint64_t> shard_index(const fs::path& shard) {
    const zarr3::Bytes b = slurp(shard);
    const size_t isz = 16 * 16 + 4;
    std::vector<uint64_t> e(32);
    std::memcpy(e.data(), b.data() + b.size() - isz, 256);
    return e;
}

void BM_WindowReads(benchmark::State& state) {
    const bool warm = state.range(0) != 0; // keep the shard index cache between windows
    state.SetLabel(warm ? "index cache warm" : "index cache cleared per window");
    auto counting = std::make_shared<zarr3::CountingStore>(bench_store());
    auto a = zarr3::Array::open(counting, "sharded_zstd");
    const fs::path dir = data_dir() / "bench.zarr" / "sharded_zstd" / "c";
    std::map<std::pair<uint64_t, uint64_t>, std::vector<uint64_t>> idx;
    for (uint64_t i = 0; i < 4; ++i)
        for (uint64_t j = 0; j < 4; ++j)
            idx[{i, j}] = shard_index(dir / std::to_string(i) / std::to_string(j));
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<uint64_t> pos(0, kN - 512);
    std::vector<std::pair<uint64_t, uint64_t>> windows(100);
    for (auto& w : windows)
        w = {pos(rng), pos(rng)};
    // Bytes needed: every intersecting inner chunk plus, per touched shard, its index.
    uint64_t needed = 0;
    for (const auto& [y, x] : windows) {
        std::set<std::pair<uint64_t, uint64_t>> shards;
        for (uint64_t cy = y / 256; cy <= (y + 511) / 256; ++cy)
            for (uint64_t cx = x / 256; cx <= (x + 511) / 256; ++cx) {
                const auto& e = idx[{cy / 4, cx / 4}];
                needed += e[2 * ((cy % 4) * 4 + cx % 4) + 1];
                shards.insert({cy / 4, cx / 4});
            }
        needed += shards.size() * (16 * 16 + 4);
    }
    std::vector<float> out(512 * 512);
    uint64_t read_bytes = 0, requests = 0;
    for (auto _ : state) {
        zarr3::ShardIndexCache::global().clear();
        counting->reset();
        for (const auto& [y, x] : windows) {
            if (!warm) zarr3::ShardIndexCache::global().clear();
            zarr3::Selection s;
            s.start = {y, x};
            s.count = {512, 512};
            a->read(s, out.data());
        }
        const auto c = counting->counts();
        read_bytes = c.bytes;
        requests = c.gets + c.range_calls;
    }
    state.counters["bytes_read"] = double(read_bytes);
    state.counters["bytes_needed"] = double(needed);
    state.counters["read_over_needed"] = double(read_bytes) / double(needed);
    state.counters["requests"] = double(requests);
}
BENCHMARK(BM_WindowReads)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_OpenEdges1M(benchmark::State& state) {
    auto store = bench_store();
    for (auto _ : state) {
        auto a = zarr3::Array::open(store, "edges_1m");
        benchmark::DoNotOptimize(a.get());
    }
}
BENCHMARK(BM_OpenEdges1M)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_OpenEdges1MOnePass(benchmark::State& state) {
    auto store = bench_store();
    for (auto _ : state) {
        const auto bytes = store->get_bounded("edges_1m/zarr.json", zarr3::kMaxMetadataBytes);
        if (!bytes) state.SkipWithError("edges_1m/zarr.json missing");
        auto node = zarr3::parse_node_metadata_text(
            std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()),
            "edges_1m/zarr.json");
        auto a = zarr3::Array::open(store, "edges_1m", std::move(*node.array));
        benchmark::DoNotOptimize(a.get());
    }
}
BENCHMARK(BM_OpenEdges1MOnePass)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ParseEdges1M(benchmark::State& state) {
    const zarr3::Bytes b = slurp(data_dir() / "bench.zarr" / "edges_1m" / "zarr.json");
    const std::string_view text(reinterpret_cast<const char*>(b.data()), b.size());
    for (auto _ : state) {
        auto j = nlohmann::json::parse(text);
        benchmark::DoNotOptimize(j);
    }
}
BENCHMARK(BM_ParseEdges1M)->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (data_dir().empty() || !fs::exists(data_dir() / "bench.zarr")) {
        std::fprintf(stderr, "set ZARR3_BENCH_DATA to a folder written by zarr3_bench_gen\n");
        return 2;
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
