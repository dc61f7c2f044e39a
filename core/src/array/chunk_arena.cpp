// Slabs for the decoded chunks the cache keeps (chunk_arena.hpp).
#include "array/chunk_arena.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#if defined(__linux__)
#include <pthread.h>
#include <sys/mman.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define ZARR3_ARENA_OFF 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ZARR3_ARENA_OFF 1
#endif
#endif
#if !defined(__linux__)
#define ZARR3_ARENA_OFF 1
#endif

namespace zarr3::chunk_arena {

#ifdef ZARR3_ARENA_OFF

uint8_t* allocate(size_t n) {
    return new uint8_t[n > 0 ? n : 1];
}

void release(uint8_t* p, size_t) noexcept {
    delete[] p;
}

Stats stats() {
    return Stats{};
}

#else

namespace {

constexpr size_t kHuge = size_t(2) << 20; // a slab: one huge page
constexpr size_t kStep = size_t(64) << 10;
constexpr size_t kMaxSlot = size_t(1) << 20; // larger: a mapping of its own
constexpr size_t kPage = 4096;

enum class Kind { Heap, Slab, Own };

Kind kind_of(size_t n) {
    if (n < kStep) return Kind::Heap;
    return n <= kMaxSlot ? Kind::Slab : Kind::Own;
}

std::atomic<uint64_t> g_mapped{0}, g_in_use{0};
std::atomic<size_t> g_slabs{0};

size_t round_up(size_t n, size_t to) {
    return (n + to - 1) / to * to;
}

// `bytes` (a multiple of 4 KiB) at an address aligned to 2 MiB, advised for
// huge pages (the kernel uses them for each 2 MiB it fully covers).
uint8_t* map_aligned(size_t bytes) {
    const size_t len = bytes + kHuge;
    void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    const auto raw = reinterpret_cast<uintptr_t>(p);
    const uintptr_t at = (raw + kHuge - 1) & ~(uintptr_t(kHuge) - 1);
    if (at > raw) ::munmap(p, at - raw);
    const size_t tail = len - (at - raw) - bytes;
    if (tail > 0) ::munmap(reinterpret_cast<void*>(at + bytes), tail);
    ::madvise(reinterpret_cast<void*>(at), bytes, MADV_HUGEPAGE); // advice: may be refused
    g_mapped += bytes;
    return reinterpret_cast<uint8_t*>(at);
}

void unmap(uint8_t* p, size_t bytes) {
    ::munmap(p, bytes);
    g_mapped -= bytes;
}

struct Slab {
    uint8_t* base = nullptr;
    size_t slot = 0;            // bytes per slot (its class)
    std::vector<uint32_t> free; // free slot numbers
    size_t used = 0;
};

// Slabs by base address; per class, the slabs with a free slot.
struct Arena {
    std::mutex mu;
    std::map<uintptr_t, std::unique_ptr<Slab>> slabs;
    std::map<size_t, std::vector<Slab*>> partial;

    uint8_t* take(size_t slot) {
        std::lock_guard lk(mu);
        auto& open = partial[slot];
        if (open.empty()) {
            auto s = std::make_unique<Slab>();
            s->base = map_aligned(kHuge);
            s->slot = slot;
            const auto n = static_cast<uint32_t>(kHuge / slot);
            for (uint32_t i = n; i-- > 0;)
                s->free.push_back(i);
            open.push_back(s.get());
            slabs.emplace(reinterpret_cast<uintptr_t>(s->base), std::move(s));
            ++g_slabs;
        }
        // The fullest slab first: the others empty out and are unmapped.
        auto best = std::min_element(open.begin(), open.end(), [](const Slab* a, const Slab* b) {
            return a->free.size() < b->free.size();
        });
        Slab* s = *best;
        const uint32_t i = s->free.back();
        s->free.pop_back();
        ++s->used;
        if (s->free.empty()) open.erase(best);
        return s->base + size_t(i) * slot;
    }

    void give(uint8_t* p) {
        std::lock_guard lk(mu);
        auto it = slabs.upper_bound(reinterpret_cast<uintptr_t>(p));
        if (it == slabs.begin()) return; // not ours: cannot happen
        --it;
        Slab* s = it->second.get();
        auto& open = partial[s->slot];
        if (s->free.empty()) open.push_back(s);
        s->free.push_back(static_cast<uint32_t>((p - s->base) / s->slot));
        if (--s->used > 0) return;
        open.erase(std::find(open.begin(), open.end(), s));
        unmap(s->base, kHuge);
        slabs.erase(it);
        --g_slabs;
    }
};

Arena& arena() {
    static Arena* const a = [] {
        auto* made = new Arena(); // never destroyed: buffers may outlive static objects
        // A fork while another thread holds the lock would leave it held in the child: the
        // lock is taken around the fork (the child's slabs are copies of the parent's).
        ::pthread_atfork([] { arena().mu.lock(); }, [] { arena().mu.unlock(); },
                         [] { arena().mu.unlock(); });
        return made;
    }();
    return *a;
}

} // namespace

uint8_t* allocate(size_t n) {
    switch (kind_of(n)) {
    case Kind::Heap:
        return new uint8_t[std::max<size_t>(n, 1)];
    case Kind::Slab: {
        const size_t slot = round_up(n, kStep);
        uint8_t* p = arena().take(slot);
        g_in_use += slot;
        return p;
    }
    case Kind::Own: {
        const size_t len = round_up(n, kPage);
        uint8_t* p = map_aligned(len);
        g_in_use += len;
        return p;
    }
    }
    return nullptr;
}

void release(uint8_t* p, size_t n) noexcept {
    if (p == nullptr) return;
    switch (kind_of(n)) {
    case Kind::Heap:
        delete[] p;
        return;
    case Kind::Slab:
        g_in_use -= round_up(n, kStep);
        arena().give(p);
        return;
    case Kind::Own:
        g_in_use -= round_up(n, kPage);
        unmap(p, round_up(n, kPage));
        return;
    }
}

Stats stats() {
    return Stats{g_mapped.load(), g_in_use.load(), g_slabs.load()};
}

#endif

} // namespace zarr3::chunk_arena

#undef ZARR3_ARENA_OFF
