// The error boundary of every GDAL entry point of the driver (open, raster
// and multidimensional I/O, group listing, attributes, create and copy).
#pragma once

#include "cpl_error.h"

#include <cstring>
#include <new>
#include <string>

namespace zarr3drv {

// Runs `f` and converts any exception into CPLError(CE_Failure) naming
// `where`; std::bad_alloc becomes CPLE_OutOfMemory. Nothing here allocates, so
// a failure under memory pressure still reaches the host as an error, never as
// std::terminate. Returns false when an exception was caught.
template <class F> bool ErrorBoundary(const std::string& where, F&& f) noexcept {
    try {
        f();
        return true;
    } catch (const std::bad_alloc&) {
        CPLError(CE_Failure, CPLE_OutOfMemory,
                 "%s: out of memory (the store needs more memory than is available; see the "
                 "limits in the README)",
                 where.c_str());
    } catch (const std::exception& e) {
        const char* msg = e.what();
        if (where.empty() || std::strstr(msg, where.c_str()) != nullptr)
            CPLError(CE_Failure, CPLE_AppDefined, "%s", msg);
        else
            CPLError(CE_Failure, CPLE_AppDefined, "%s: %s", where.c_str(), msg);
    } catch (...) {
        CPLError(CE_Failure, CPLE_AppDefined, "%s: unknown error", where.c_str());
    }
    return false;
}

} // namespace zarr3drv
