// Overflow-checked size arithmetic and the serial executor.
#include "zarr3/common.hpp"
#include "zarr3/random_hex.hpp"

#include <cstdio>
#include <random>

namespace zarr3 {

uint64_t checked_add(uint64_t a, uint64_t b, const std::string& what) {
    uint64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) throw Error(what + " overflows 64 bits");
    return r;
}

uint64_t checked_mul(uint64_t a, uint64_t b, const std::string& what) {
    uint64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) throw Error(what + " overflows 64 bits");
    return r;
}

std::string shape_text(const Shape& s) {
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i)
        out += (i ? "," : "") + std::to_string(s[i]);
    return out + "]";
}

std::string random_hex() {
    std::random_device rd;
    std::string out;
    for (int i = 0; i < 4; ++i) {
        char buf[9];
        std::snprintf(buf, sizeof buf, "%08x", rd());
        out += buf;
    }
    return out;
}

uint64_t checked_product(const Shape& s, const std::string& what) {
    uint64_t r = 1;
    for (uint64_t v : s) {
        if (v == 0) return 0; // an empty extent makes the product 0 whatever the other factors
    }
    for (uint64_t v : s)
        r = checked_mul(r, v, what);
    return r;
}

Executor serial_executor() {
    return [](size_t n, const std::function<void(size_t)>& task) {
        for (size_t i = 0; i < n; ++i)
            task(i);
    };
}

} // namespace zarr3
