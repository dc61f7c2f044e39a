// Per-thread reusable byte buffers for the write path. Encoding a chunk or a
// shard needs a few large temporary buffers; taking fresh ones each time costs
// a page fault per 4 KiB (the kernel zeroes every new page), which on a
// virtual machine costs more than the memcpy itself. A lease hands out this
// thread's buffer for the current nesting depth (nested sharding gets its
// own), keeps its capacity for the next chunk, and gives back buffers that
// grew past kKeepBytes so that one huge chunk does not pin its memory.
#pragma once

#include "zarr3/common.hpp"

#include <memory>
#include <vector>

namespace zarr3 {

class ScratchLease {
  public:
    static constexpr size_t kKeepBytes = size_t(16) << 20;

    ScratchLease() {
        auto& p = pool();
        if (p.used == p.buffers.size()) p.buffers.push_back(std::make_unique<Bytes>());
        buf_ = p.buffers[p.used++].get();
        buf_->clear();
    }
    ~ScratchLease() {
        if (buf_->capacity() > kKeepBytes) Bytes().swap(*buf_);
        --pool().used;
    }
    ScratchLease(const ScratchLease&) = delete;
    ScratchLease& operator=(const ScratchLease&) = delete;

    Bytes& get() { return *buf_; }

  private:
    struct Pool {
        std::vector<std::unique_ptr<Bytes>> buffers;
        size_t used = 0;
    };
    static Pool& pool() {
        thread_local Pool p;
        return p;
    }
    Bytes* buf_;
};

} // namespace zarr3
