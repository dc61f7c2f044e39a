// Atomic replacement of file-like values (temporary file + rename), the one
// implementation behind FileStore::put and the driver's VSIStore::put.
#include "zarr3/store.hpp"

#include <atomic>
#include <cctype>
#include <unistd.h>

namespace zarr3 {

namespace {

// This host's name as it appears in temporary file names ([A-Za-z0-9-]).
const std::string& host_tag() {
    static const std::string tag = [] {
        char buf[256] = {};
        std::string t;
        if (gethostname(buf, sizeof(buf) - 1) == 0)
            for (const char* c = buf; *c && t.size() < 32; ++c)
                if (std::isalnum(static_cast<unsigned char>(*c)) || *c == '-') t += *c;
        return t.empty() ? std::string("host") : t;
    }();
    return tag;
}

} // namespace

std::string temp_path_for(const std::string& path) {
    static std::atomic<uint64_t> counter{0};
    return path + ".tmp." + host_tag() + "." + std::to_string(static_cast<long>(::getpid())) + "." +
           std::to_string(counter.fetch_add(1));
}

long temp_file_pid(const std::string& name) {
    const std::string marker = ".tmp." + host_tag() + ".";
    const size_t at = name.rfind(marker);
    if (at == std::string::npos) return 0;
    const std::string rest = name.substr(at + marker.size());
    const size_t dot = rest.find('.');
    if (dot == 0 || dot == std::string::npos || dot > 10 || dot + 1 == rest.size()) return 0;
    for (size_t i = 0; i < rest.size(); ++i)
        if (i != dot && !std::isdigit(static_cast<unsigned char>(rest[i]))) return 0;
    return std::stol(rest.substr(0, dot));
}

void write_atomically(const std::string& path, ByteView value, const AtomicWriteOps& ops) {
    const std::string tmp = temp_path_for(path);
    const std::string tmp_name = tmp.substr(tmp.find_last_of('/') + 1);
    // Never written in place: a failure removes the temporary file and
    // leaves the old value as it was.
    std::string failure;
    if (std::string err = ops.write_file(tmp, value); !err.empty())
        failure = "writing the temporary file " + tmp_name + " failed (" + err + ")";
    else if (err = ops.rename(tmp, path); !err.empty())
        failure = "cannot rename " + tmp_name + " into place (" + err + ")";
    if (failure.empty()) return;
    ops.remove(tmp);
    throw Error(path + ": " + failure + "; the old value is kept");
}

} // namespace zarr3
