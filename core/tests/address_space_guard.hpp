// Bounds the process's address space for one test (RLIMIT_AS, soft limit),
// so that an allocation of a claimed size fails with std::bad_alloc instead
// of succeeding on a large machine: tests of "refused before allocating".
// Inactive under sanitizers (they reserve far more address space than they use).
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <sys/resource.h>

namespace testutil {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

// Bytes of address space the process uses now (VmSize), 0 when unknown.
inline uint64_t address_space_in_use() {
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("VmSize:", 0) == 0) return std::stoull(line.substr(7)) * 1024;
    return 0;
}

// While alive: at most `headroom` bytes more address space than in use now.
class AddressSpaceGuard {
  public:
    explicit AddressSpaceGuard(uint64_t headroom) {
        if (kSanitized || getrlimit(RLIMIT_AS, &saved_) != 0) return;
        const uint64_t used = address_space_in_use();
        if (used == 0) return;
        rlimit r = saved_;
        r.rlim_cur = used + headroom;
        if (saved_.rlim_max != RLIM_INFINITY && r.rlim_cur > saved_.rlim_max) return;
        active_ = setrlimit(RLIMIT_AS, &r) == 0;
    }
    ~AddressSpaceGuard() {
        if (active_) setrlimit(RLIMIT_AS, &saved_);
    }
    AddressSpaceGuard(const AddressSpaceGuard&) = delete;
    AddressSpaceGuard& operator=(const AddressSpaceGuard&) = delete;
    bool active() const { return active_; }

  private:
    rlimit saved_{};
    bool active_ = false;
};

} // namespace testutil
