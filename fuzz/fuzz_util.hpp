// Helpers shared by the libFuzzer targets: a deterministic PRNG and a reader
// that consumes the fuzzer's input bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace fuzzutil {

// Aborts (a finding) when a harness consistency check fails.
#define FUZZ_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FUZZ_CHECK failed: %s at %s:%d\n", #cond, __FILE__, __LINE__);        \
            __builtin_trap();                                                                      \
        }                                                                                          \
    } while (0)

// splitmix64: small, deterministic, good enough to pick lookups.
struct Rng {
    uint64_t s;
    explicit Rng(uint64_t seed) : s(seed) {}
    uint64_t next() {
        uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    // Uniform in [0, n) (n > 0).
    uint64_t below(uint64_t n) { return n ? next() % n : 0; }
};

// FNV-1a of the input: seeds the PRNG so each input replays identically.
inline uint64_t hash_bytes(const uint8_t* d, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; ++i)
        h = (h ^ d[i]) * 0x100000001b3ull;
    return h;
}

class Reader {
  public:
    Reader(const uint8_t* d, size_t n) : d_(d), n_(n) {}
    size_t remaining() const { return n_ - pos_; }
    uint8_t u8() { return pos_ < n_ ? d_[pos_++] : 0; }
    uint16_t u16() { return uint16_t(u8() | (u8() << 8)); }
    uint32_t u32() { return uint32_t(u16()) | (uint32_t(u16()) << 16); }
    // Up to n bytes (fewer at the end of the input).
    std::string_view bytes(size_t n) {
        n = n < remaining() ? n : remaining();
        std::string_view v(reinterpret_cast<const char*>(d_ + pos_), n);
        pos_ += n;
        return v;
    }
    std::string_view rest() { return bytes(remaining()); }

  private:
    const uint8_t* d_;
    size_t n_;
    size_t pos_ = 0;
};

} // namespace fuzzutil
