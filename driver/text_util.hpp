// Small text helpers of the driver, over CPL's (one definition for every
// file: the unity build puts several files into one translation unit).
#pragma once

#include "cpl_string.h"

#include <string>

namespace zarr3drv {

// ASCII lower case.
inline std::string Lower(const std::string& s) {
    return CPLString(s).tolower();
}

inline bool StartsWith(const std::string& s, const char* prefix) {
    return STARTS_WITH(s.c_str(), prefix);
}

} // namespace zarr3drv
