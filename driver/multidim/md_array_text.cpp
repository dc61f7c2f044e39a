// Text arrays in the multidimensional view: stored elements <-> GDAL strings.
#include "multidim/md_array_text.hpp"

#include "mapping/gdal_types.hpp"

#include "cpl_conv.h"

#include <cstring>

namespace zarr3drv {

void TextToGDALStrings(const zarr3::DataType& dt, const uint8_t* raw, size_t n, GByte* ptrs) {
    std::memset(ptrs, 0, n * sizeof(char*));
    try {
        for (size_t i = 0; i < n; ++i) {
            char* s = CPLStrdup(ElementText(dt, raw + i * dt.size).c_str());
            std::memcpy(ptrs + i * sizeof(char*), &s, sizeof(char*));
        }
    } catch (...) {
        FreeGDALStrings(ptrs, n);
        throw;
    }
}

void TextFromGDALStrings(const zarr3::DataType& dt, GByte* ptrs, size_t n, uint8_t* raw) {
    try {
        for (size_t i = 0; i < n; ++i) {
            char* s = nullptr;
            std::memcpy(&s, ptrs + i * sizeof(char*), sizeof(char*));
            TextToElement(dt, s, raw + i * dt.size);
        }
    } catch (...) {
        FreeGDALStrings(ptrs, n);
        throw;
    }
    FreeGDALStrings(ptrs, n);
}

void StringsToGDALStrings(const std::vector<std::string>& values, GByte* ptrs) {
    const size_t n = values.size();
    std::memset(ptrs, 0, n * sizeof(char*));
    try {
        for (size_t i = 0; i < n; ++i) {
            char* s = CPLStrdup(values[i].c_str());
            std::memcpy(ptrs + i * sizeof(char*), &s, sizeof(char*));
        }
    } catch (...) {
        FreeGDALStrings(ptrs, n);
        throw;
    }
}

std::vector<std::string> StringsFromGDALStrings(GByte* ptrs, size_t n) {
    std::vector<std::string> out;
    try {
        out.reserve(n);
        for (size_t i = 0; i < n; ++i) {
            char* s = nullptr;
            std::memcpy(&s, ptrs + i * sizeof(char*), sizeof(char*));
            out.emplace_back(s ? s : "");
        }
    } catch (...) {
        FreeGDALStrings(ptrs, n);
        throw;
    }
    FreeGDALStrings(ptrs, n);
    return out;
}

void FreeGDALStrings(GByte* ptrs, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        char* s = nullptr;
        std::memcpy(&s, ptrs + i * sizeof(char*), sizeof(char*));
        CPLFree(s);
        std::memset(ptrs + i * sizeof(char*), 0, sizeof(char*));
    }
}

} // namespace zarr3drv
