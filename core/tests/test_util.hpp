// Helpers shared by core tests.
#pragma once

#include "zarr3/common.hpp"
#include "zarr3/strided.hpp"

#include <atomic>
#include <cstdlib>
#include <exception>

#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <sys/mount.h>
#include <thread>
#include <unistd.h> // getpid
#include <vector>

namespace testutil {

#ifdef ZARR3_TESTDATA_DIR // defined for zarr3_tests (CMakeLists.txt)
// The repository's test data (testdata/, see testdata/README.md); the environment variables
// ZARR3_CONFORMANCE and ZARR3_ICECHUNK_UPSTREAM point at another copy, as in the pytest suites.
inline std::string testdata_path(const char* env, const char* relative) {
    const char* v = std::getenv(env);
    if (v != nullptr && *v != '\0') return v;
    return std::string(ZARR3_TESTDATA_DIR) + "/" + relative;
}
inline std::string conformance_dir() {
    return testdata_path("ZARR3_CONFORMANCE", "conformance");
}
inline std::string icechunk_upstream_dir() {
    return testdata_path("ZARR3_ICECHUNK_UPSTREAM", "icechunk/upstream-test-repos");
}
#endif

// The message of the zarr3::Error f throws, or "" when it throws none.
inline std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const zarr3::Error& e) {
        return e.what();
    }
    return "";
}

inline std::vector<uint8_t> read_file(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)),
                                std::istreambuf_iterator<char>());
}

inline nlohmann::json read_json(const std::string& p) {
    std::ifstream f(p);
    return nlohmann::json::parse(f);
}

// A fresh temporary folder removed at scope exit.
struct TempDir {
    std::filesystem::path path;
    TempDir() {
        static int n = 0;
        path = std::filesystem::temp_directory_path() /
               ("zarr3test-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    std::string str() const { return path.string(); }
};

// A tmpfs of `kb` KiB mounted on a fresh folder (a small disk to fill);
// unmounted at scope exit. ok is false when this process may not mount (not
// root, no CAP_SYS_ADMIN).
struct SmallTmpfs {
    TempDir dir;
    bool ok = false;
    explicit SmallTmpfs(unsigned kb) {
        const std::string opts = "size=" + std::to_string(kb) + "k";
        ok = ::mount("tmpfs", dir.str().c_str(), "tmpfs", 0, opts.c_str()) == 0;
    }
    ~SmallTmpfs() {
        if (ok) ::umount2(dir.str().c_str(), MNT_DETACH);
    }
    SmallTmpfs(const SmallTmpfs&) = delete;
    SmallTmpfs& operator=(const SmallTmpfs&) = delete;
};

// zarr.json of an [n, n] array of `dtype` in [chunk, chunk] chunks, fill
// value 0; `codecs` default to bytes (little-endian).
inline nlohmann::json regular_square_json(uint64_t n, uint64_t chunk, const std::string& dtype,
                                          nlohmann::json codecs = nullptr) {
    using nlohmann::json;
    if (codecs.is_null())
        codecs = json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}});
    return {
        {"zarr_format", 3},
        {"node_type", "array"},
        {"shape", {n, n}},
        {"data_type", dtype},
        {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", {chunk, chunk}}}}}},
        {"chunk_key_encoding", {{"name", "default"}}},
        {"fill_value", 0},
        {"codecs", codecs}};
}

// zarr.json of an [8, 8] array in one [8, 8] shard of four [4, 4] inner
// chunks (bytes codec, uncompressed), index at the end; `crc` adds crc32c to
// the index codecs.
inline nlohmann::json sharded_8x8_json(const std::string& dtype = "uint8", bool crc = false) {
    using nlohmann::json;
    const json bytes_le = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
    json index_codecs = json::array({bytes_le});
    if (crc) index_codecs.push_back({{"name", "crc32c"}});
    return {{"zarr_format", 3},
            {"node_type", "array"},
            {"shape", {8, 8}},
            {"data_type", dtype},
            {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", {8, 8}}}}}},
            {"chunk_key_encoding", {{"name", "default"}}},
            {"fill_value", 0},
            {"codecs", json::array({{{"name", "sharding_indexed"},
                                     {"configuration",
                                      {{"chunk_shape", {4, 4}},
                                       {"codecs", json::array({bytes_le})},
                                       {"index_codecs", index_codecs},
                                       {"index_location", "end"}}}}})}};
}

// A C-order view of `v` as an array of shape `shape`.
template <class T> zarr3::StridedView view_of(std::vector<T>& v, const zarr3::Shape& shape) {
    return {reinterpret_cast<uint8_t*>(v.data()), zarr3::c_strides(shape, sizeof(T))};
}

// An executor running each batch of tasks on `workers` threads that rethrows
// the first task error, as the driver's GDAL thread pool does.
inline zarr3::Executor thread_executor(int workers) {
    return [workers](size_t n, const std::function<void(size_t)>& task) {
        std::atomic<size_t> next{0};
        std::exception_ptr first;
        std::mutex mu;
        std::vector<std::thread> th;
        for (int t = 0; t < workers; ++t)
            th.emplace_back([&] {
                for (size_t i = next++; i < n; i = next++) {
                    try {
                        task(i);
                    } catch (...) {
                        std::lock_guard lk(mu);
                        if (!first) first = std::current_exception();
                    }
                }
            });
        for (auto& t : th)
            t.join();
        if (first) std::rethrow_exception(first);
    };
}

// n int32 values 1, 8, 15, ... (i * 7 + 1): distinct, so a misplaced
// element shows.
inline std::vector<int32_t> ramp_values(uint64_t n) {
    std::vector<int32_t> v(n);
    for (uint64_t i = 0; i < n; ++i)
        v[i] = static_cast<int32_t>(i * 7 + 1);
    return v;
}

} // namespace testutil
