// Revalidation of local files without a system call per file: the kernel's
// change notification (Linux inotify) on the folder holding a file and on
// every folder of the path leading to it. A version read once (a stat) is
// reused while no event arrived for its folder or for a name on its path;
// each check reads the pending events first (one poll of two descriptors
// for the whole process when nothing happened), so a change another process
// finished before the check began is always seen.
//
// Where notification cannot be trusted the watch refuses (arm() gives no
// token) and the caller keeps its stat per use: not Linux, a relative or
// non-canonical path, a symbolic link anywhere on the path, a file system
// other than ext2/3/4, XFS, Btrfs, F2FS or tmpfs (network and FUSE file
// systems do not report other machines' changes), a watch or folder limit
// reached. The caller also keeps the stat per use for a file with more than
// one hard link or that is a symbolic link (a change through another name
// is reported in another folder). A queue overflow, a folder removed or
// moved, and a fork (the child gets its own notification instance) make
// every token stale; so does any mount or unmount (a file system mounted
// over a folder of the path sends no event). Not reported by the kernel,
// hence not seen: writes through a shared memory mapping.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace zarr3 {

class ChangeWatch {
  public:
    struct Token {
        const void* folder = nullptr;
        uint64_t epoch = 0;
        uint64_t generation = 0;
    };
    // The process's one watch (one notification instance, shared by every
    // store of the process).
    static ChangeWatch& process();

    // To be called BEFORE the stat whose result is to be reused: watches the
    // folder of `file` and the folders leading to it, and returns a token
    // valid until a change is reported there; nullopt where the watch cannot
    // be trusted (see above).
    std::optional<Token> arm(const std::string& file);
    // True while nothing was reported for the token's folder or path since
    // arm() gave it (the pending events are read first: once per Pass).
    bool unchanged(const Token& token);

    // One read of many files (a window over many chunks), on this thread:
    // while alive, the pending events are read at the first check only.
    // The read then sees every change finished before it began; a change
    // made while it runs is concurrent with it (each file is still read
    // whole from one version). A check that must see changes made during
    // the read (a layout check after the chunks) runs after the pass.
    class Pass {
      public:
        Pass();
        ~Pass();
        Pass(const Pass&) = delete;
        Pass& operator=(const Pass&) = delete;
    };

    // Tests: as if the kernel's queue had overflowed (every token stale).
    void simulate_overflow();

    ChangeWatch(const ChangeWatch&) = delete;
    ChangeWatch& operator=(const ChangeWatch&) = delete;
    ~ChangeWatch();

  private:
    ChangeWatch();
    struct State;
    std::unique_ptr<State> s_;
};

} // namespace zarr3
