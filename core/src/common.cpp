// Overflow-checked size arithmetic and the serial executor.
#include "zarr3/common.hpp"
#include "zarr3/random_hex.hpp"
#include "zarr3/spare_bytes.hpp"

#include <algorithm>
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

namespace {
// At most this many bytes in at most kMaxSpares buffers per thread.
constexpr size_t kMaxSpareBytes = size_t(8) << 20;
constexpr size_t kMaxSpares = 4;
thread_local std::vector<Bytes> t_spares;
} // namespace

Bytes take_spare_bytes(size_t n) {
    // The smallest spare that holds n.
    auto best = t_spares.end();
    for (auto it = t_spares.begin(); it != t_spares.end(); ++it)
        if (it->capacity() >= n && (best == t_spares.end() || it->capacity() < best->capacity()))
            best = it;
    if (best == t_spares.end()) {
        // Room for a quarter more: the next ranges of a shard differ a little in size.
        Bytes out;
        out.reserve(n + n / 4);
        out.resize(n);
        return out;
    }
    Bytes out = std::move(*best);
    t_spares.erase(best);
    out.resize(n); // no fill where it held bytes before
    return out;
}

void keep_spare_bytes(Bytes&& b) {
    size_t held = 0;
    for (const auto& s : t_spares)
        held += s.capacity();
    if (b.capacity() == 0 || b.capacity() > kMaxSpareBytes) return;
    // Room is made by dropping smaller spares; a full pool of larger ones keeps them.
    while (!t_spares.empty() &&
           (t_spares.size() >= kMaxSpares || held + b.capacity() > kMaxSpareBytes)) {
        auto smallest =
            std::min_element(t_spares.begin(), t_spares.end(), [](const Bytes& x, const Bytes& y) {
                return x.capacity() < y.capacity();
            });
        if (smallest->capacity() >= b.capacity()) return;
        held -= smallest->capacity();
        t_spares.erase(smallest);
    }
    t_spares.push_back(std::move(b));
}

} // namespace zarr3
