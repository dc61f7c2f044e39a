// Text arrays (fixed_length_utf32, null_terminated_bytes, string) in the multidimensional
// view: stored elements <-> GDAL string buffers (one char* per element, owned by
// whoever holds the buffer, freed with CPLFree as GDAL's string type does).
#pragma once

#include "cpl_port.h"
#include "zarr3/dtype.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace zarr3drv {

// `n` stored elements of `dt` -> `n` newly allocated UTF-8 strings in `ptrs`.
void TextToGDALStrings(const zarr3::DataType& dt, const uint8_t* raw, size_t n, GByte* ptrs);
// `n` strings in `ptrs` -> stored elements; the strings are freed (even on error).
void TextFromGDALStrings(const zarr3::DataType& dt, GByte* ptrs, size_t n, uint8_t* raw);
// Variable-length strings (data type string): `values` -> newly allocated strings in
// `ptrs`; and back (a null pointer is ""), freeing the strings (even on error).
void StringsToGDALStrings(const std::vector<std::string>& values, GByte* ptrs);
std::vector<std::string> StringsFromGDALStrings(GByte* ptrs, size_t n);
// Frees `n` strings in `ptrs` (null entries allowed).
void FreeGDALStrings(GByte* ptrs, size_t n);

} // namespace zarr3drv
