// Generates the benchmark store with the core library (FileStore + Array):
//   <out>/bench.zarr            group
//     regular_zstd               4096x4096 float32, 256x256 chunks, zstd 3
//     regular_gzip, regular_blosc  same grid, gzip 6 / blosc lz4 5 shuffle
//     rect_zstd                  rows 200,312,256,... (rectilinear), columns 256, zstd 3
//     sharded_zstd               1024x1024 shards of 256x256 inner chunks, zstd 3
//     edges_1m                   1-d array whose rectilinear axis lists 1,000,000 edges
//   <out>/raw.f32               the decoded array (little-endian float32, C order)
// Usage: zarr3_bench_gen <out-dir>
#include "bench_data.hpp"
#include "zarr3/array.hpp"

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace {

using bench::kN;

nlohmann::json base_meta(const nlohmann::json& grid, const nlohmann::json& codecs, uint64_t n0 = kN,
                         uint64_t n1 = kN) {
    return {{"zarr_format", 3},
            {"node_type", "array"},
            {"shape", {n0, n1}},
            {"data_type", "float32"},
            {"chunk_grid", grid},
            {"chunk_key_encoding", {{"name", "default"}, {"configuration", {{"separator", "/"}}}}},
            {"fill_value", 0.0},
            {"codecs", codecs},
            {"dimension_names", {"y", "x"}}};
}

nlohmann::json regular_grid(uint64_t c) {
    return {{"name", "regular"}, {"configuration", {{"chunk_shape", {c, c}}}}};
}

const nlohmann::json kBytes = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
const nlohmann::json kZstd = {{"name", "zstd"},
                              {"configuration", {{"level", 3}, {"checksum", false}}}};

void write_array(const std::shared_ptr<zarr3::Store>& store, const std::string& name,
                 const nlohmann::json& j, const std::vector<float>& data) {
    const auto t0 = std::chrono::steady_clock::now();
    auto meta = zarr3::parse_array_metadata(j, name + "/zarr.json");
    auto a = zarr3::Array::create(store, name, std::move(meta), true);
    a->set_executor(bench::thread_executor());
    a->write(zarr3::Selection::all(a->metadata().shape), data.data());
    a->flush();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("  %-14s written in %.2f s\n", name.c_str(), s);
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <out-dir>\n", argv[0]);
        return 2;
    }
    try {
        const std::filesystem::path out = argv[1];
        const std::filesystem::path root = out / "bench.zarr";
        std::filesystem::create_directories(root);
        auto store = std::make_shared<zarr3::FileStore>(root.string());
        zarr3::Group::create(store, "");
        const auto data = bench::make_field();
        {
            std::ofstream f(out / "raw.f32", std::ios::binary);
            f.write(reinterpret_cast<const char*>(data.data()),
                    std::streamsize(data.size() * sizeof(float)));
            if (!f) throw zarr3::Error((out / "raw.f32").string() + ": write failed");
        }
        write_array(store, "regular_zstd", base_meta(regular_grid(256), {kBytes, kZstd}), data);
        write_array(store, "regular_gzip",
                    base_meta(regular_grid(256),
                              {kBytes, {{"name", "gzip"}, {"configuration", {{"level", 6}}}}}),
                    data);
        write_array(store, "regular_blosc",
                    base_meta(regular_grid(256), {kBytes,
                                                  {{"name", "blosc"},
                                                   {"configuration",
                                                    {{"cname", "lz4"},
                                                     {"clevel", 5},
                                                     {"shuffle", "shuffle"},
                                                     {"typesize", 4},
                                                     {"blocksize", 0}}}}}),
                    data);
        // Rows: 200, 312, 256 repeated (mean 256) then 256 to reach 4096.
        nlohmann::json rows = nlohmann::json::array();
        uint64_t covered = 0;
        for (uint64_t i = 0; covered < kN; ++i) {
            const uint64_t e = std::min<uint64_t>(kN - covered, std::array{200, 312, 256}[i % 3]);
            rows.push_back(e);
            covered += e;
        }
        const nlohmann::json rect_grid = {
            {"name", "rectilinear"},
            {"configuration", {{"kind", "inline"}, {"chunk_shapes", {rows, 256}}}}};
        write_array(store, "rect_zstd", base_meta(rect_grid, {kBytes, kZstd}), data);
        const nlohmann::json shard_codec = {{"name", "sharding_indexed"},
                                            {"configuration",
                                             {{"chunk_shape", {256, 256}},
                                              {"codecs", {kBytes, kZstd}},
                                              {"index_codecs", {kBytes, {{"name", "crc32c"}}}},
                                              {"index_location", "end"}}}};
        write_array(store, "sharded_zstd",
                    base_meta(regular_grid(1024), nlohmann::json::array({shard_codec})), data);

        // 1,000,000 explicit edges that never repeat twice in a row (no runs).
        nlohmann::json edges = nlohmann::json::array();
        uint64_t len = 0;
        for (uint64_t i = 0; i < bench::kEdges; ++i) {
            const uint64_t e = bench::edge_at(i);
            edges.push_back(e);
            len += e;
        }
        nlohmann::json ej = {{"zarr_format", 3},
                             {"node_type", "array"},
                             {"shape", {len}},
                             {"data_type", "float32"},
                             {"chunk_grid",
                              {{"name", "rectilinear"},
                               {"configuration", {{"kind", "inline"}, {"chunk_shapes", {edges}}}}}},
                             {"chunk_key_encoding", {{"name", "default"}}},
                             {"fill_value", 0.0},
                             {"codecs", {kBytes}}};
        auto em = zarr3::parse_array_metadata(ej, "edges_1m/zarr.json");
        zarr3::Array::create(store, "edges_1m", std::move(em), true);
        std::printf("  edges_1m       zarr.json of %llu bytes\n",
                    static_cast<unsigned long long>(
                        std::filesystem::file_size(root / "edges_1m" / "zarr.json")));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "zarr3_bench_gen: %s\n", e.what());
        return 1;
    }
    return 0;
}
