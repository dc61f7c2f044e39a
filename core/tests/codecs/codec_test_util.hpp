// Helpers shared by the codec unit tests.
#pragma once

#include "zarr3/codec.hpp"

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace codectest {

using namespace zarr3;

inline DataType dt(const std::string& name, DTypeKind kind, uint32_t size, uint32_t swap) {
    DataType d;
    d.name = name;
    d.kind = kind;
    d.size = size;
    d.swap_unit = swap;
    return d;
}
inline DataType int16_t_() {
    return dt("int16", DTypeKind::Int, 2, 2);
}
inline DataType int32_t_() {
    return dt("int32", DTypeKind::Int, 4, 4);
}
inline DataType uint8_t_() {
    return dt("uint8", DTypeKind::UInt, 1, 1);
}

inline ChunkSpec spec_of(Shape shape, DataType d) {
    ChunkSpec s;
    s.shape = std::move(shape);
    s.fill_value = Bytes(d.size, 0);
    s.dtype = std::move(d);
    return s;
}

inline Bytes random_bytes(size_t n, uint32_t seed, int alphabet = 256) {
    std::mt19937 rng(seed);
    Bytes b(n);
    for (auto& x : b)
        x = uint8_t(rng() % alphabet);
    return b;
}

// Message of the FormatError `f` throws (or a marker saying it threw none / another type).
template <typename F> std::string error_of(F&& f) {
    try {
        f();
    } catch (const FormatError& e) {
        return e.what();
    } catch (const std::exception& e) {
        return std::string("NOT A FormatError: ") + e.what();
    }
    return "NO ERROR";
}

// Values as little-endian bytes (the host's order), and back.
template <typename T> Bytes bytes_of(const std::vector<T>& v) {
    Bytes b(v.size() * sizeof(T));
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}
template <typename T> std::vector<T> values_of(const Bytes& b) {
    std::vector<T> v(b.size() / sizeof(T));
    std::memcpy(v.data(), b.data(), b.size());
    return v;
}

// The little-endian `bytes` codec.
inline const nlohmann::json kBytes = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};

} // namespace codectest
