// Helpers of the Icechunk tests: the upstream repositories, loading a
// repository folder into a MemoryStore, reading arrays.
#pragma once

#include "zarr3/array.hpp"
#include "zarr3/icechunk.hpp"
#include "zarr3/metadata.hpp"

#include "test_util.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <map>

namespace icetest {

inline std::string upstream(const std::string& name) {
    return testutil::icechunk_upstream_dir() + "/" + name;
}

#define ICE_NEED_UPSTREAM(name)                                                                    \
    if (!std::filesystem::exists(icetest::upstream(name)))                                         \
    GTEST_SKIP() << "no " << icetest::upstream(name)

// Every file of folder `dir` in a new MemoryStore (the originals stay untouched).
inline std::shared_ptr<zarr3::MemoryStore> load(const std::string& dir) {
    auto m = std::make_shared<zarr3::MemoryStore>();
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
        if (!e.is_regular_file()) continue;
        const auto rel = std::filesystem::relative(e.path(), dir).generic_string();
        auto bytes = testutil::read_file(e.path().string());
        m->put(rel, bytes);
    }
    return m;
}

template <class T>
std::vector<T> read_all(std::shared_ptr<zarr3::Store> store, const std::string& path) {
    auto a = zarr3::Array::open(std::move(store), path);
    const auto& shape = a->metadata().shape;
    std::vector<T> v(zarr3::checked_product(shape, "n"));
    a->read(zarr3::Selection::all(shape), v.data());
    return v;
}

inline std::vector<std::string> messages(const std::vector<zarr3::icechunk::HistoryEntry>& h) {
    std::vector<std::string> out;
    for (const auto& e : h)
        out.push_back(e.message);
    return out;
}

inline std::vector<std::string> names(const std::vector<zarr3::icechunk::Ref>& refs) {
    std::vector<std::string> out;
    for (const auto& r : refs)
        out.push_back(r.name);
    return out;
}

// A 1-D array of `n` elements of `dtype` in chunks of `chunk`, fill value -1,
// little-endian bytes.
inline zarr3::ArrayMetadata vector_meta(uint64_t n, const std::string& dtype, uint64_t chunk) {
    const std::string text =
        R"({"zarr_format":3,"node_type":"array","shape":[)" + std::to_string(n) +
        R"(],"data_type":")" + dtype +
        R"(","chunk_grid":{"name":"regular","configuration":{"chunk_shape":[)" +
        std::to_string(chunk) +
        R"(]}},"chunk_key_encoding":{"name":"default"},"fill_value":-1,
        "codecs":[{"name":"bytes","configuration":{"endian":"little"}}]})";
    return zarr3::parse_array_metadata(zarr3::parse_json_text(text, "test"), "test");
}

// name -> snapshot id of `refs` (branches or tags).
inline std::map<std::string, std::string> refs_of(const std::vector<zarr3::icechunk::Ref>& refs) {
    std::map<std::string, std::string> out;
    for (const auto& r : refs)
        out[r.name] = r.snapshot;
    return out;
}

// The interop legs' reports ({"snapshots": {id: {key: hex bytes}}}, what the
// real Icechunk read): every key of every snapshot holds the same bytes here.
// The number of keys compared.
inline size_t expect_snapshot_keys(const std::shared_ptr<zarr3::Store>& repo,
                                   const nlohmann::json& snapshots) {
    static const char* digits = "0123456789abcdef";
    size_t keys = 0;
    for (const auto& [id, values] : snapshots.items()) {
        auto store = zarr3::icechunk::IcechunkStore::open(repo, {.snapshot = id});
        for (const auto& [key, hexed] : values.items()) {
            auto v = store->get(key);
            EXPECT_TRUE(v) << id << " " << key;
            if (!v) continue;
            std::string hex;
            for (uint8_t b : *v) {
                hex += digits[b >> 4];
                hex += digits[b & 15];
            }
            EXPECT_EQ(hex, hexed.get<std::string>()) << id << " " << key;
            ++keys;
        }
    }
    return keys;
}

// Expects `f` to throw a zarr3::Error whose message holds every one of `parts`.
template <class F> void expect_error(F&& f, std::initializer_list<std::string> parts) {
    try {
        f();
        ADD_FAILURE() << "no error (expected one mentioning " << *parts.begin() << ")";
    } catch (const zarr3::Error& e) {
        for (const auto& p : parts)
            EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
                << "'" << p << "' missing from: " << e.what();
    }
}

} // namespace icetest
