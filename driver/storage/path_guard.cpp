// RemoveTree: deletes that never follow links (path_guard.hpp).
#include "storage/path_guard.hpp"

#include "cpl_vsi.h"

#include <filesystem>

namespace zarr3drv {

bool RemoveTree(const std::string& path, std::string& error) {
    if (IsPosixPath(path)) {
        // std::filesystem::remove_all removes symbolic links themselves and
        // never descends into linked folders.
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
        if (ec) error = ec.message();
        return !ec;
    }
    VSIStatBufL st;
    if (VSIStatL(path.c_str(), &st) != 0) return true;
    const int rc =
        VSI_ISDIR(st.st_mode) ? VSIRmdirRecursive(path.c_str()) : VSIUnlink(path.c_str());
    if (rc != 0) error = "cannot delete";
    return rc == 0;
}

} // namespace zarr3drv
