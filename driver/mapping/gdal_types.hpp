// Mapping between Zarr v3 data types and the GDAL data types the running GDAL
// offers, and conversion of native element buffers to those types.
#pragma once

#include "gdal_compat.hpp"
#include "gdal_priv.h"
#include "zarr3/dtype.hpp"

#include <string>

namespace zarr3drv {

// The GDAL type a Zarr type is exposed as: bool -> Byte, int8 -> Int8 (GDAL >=
// 3.7, Int16 before), float16 -> Float16 (GDAL >= 3.11, Float32 before),
// complex64/128 -> CFloat32/64. r<N> and unknown types -> GDT_Unknown.
GDALDataType GDALTypeFor(const zarr3::DataType& dt);

// The Zarr type GDAL type `t` is stored as: the inverse of GDALTypeFor (the
// one type table), used by both creation paths. CInt16/CInt32 have no Zarr
// equivalent: with `widen_complex_int` they are stored as complex64/complex128
// and `warning` (if given) says so, else an error names them. Other types
// without an equivalent throw zarr3::Error naming the type.
zarr3::DataType ZarrTypeFor(GDALDataType t, bool widen_complex_int = false,
                            std::string* warning = nullptr);
// Same for a GDAL extended type: a string type with a maximum length of N characters is
// stored as fixed_length_utf32 of 4 N bytes, one without a maximum length as string
// (vlen-utf8); compounds are refused.
zarr3::DataType ZarrTypeFor(const GDALExtendedDataType& dt);

// Whether the stored bytes of `dt` (little-endian) are exactly the bytes of
// GDALTypeFor(dt), so no widening pass is needed.
bool SameRepresentation(const zarr3::DataType& dt);

// Converts `n` dense native elements of `dt` into `n` dense elements of
// GDALTypeFor(dt) (float16 -> float32, int8 -> int16 on old GDAL).
void WidenToGDAL(const zarr3::DataType& dt, const void* src, void* dst, size_t n);
// Converts `n` dense elements of GDALTypeFor(dt) into stored elements of `dt`
// (inverse of WidenToGDAL; float32 -> float16 rounds to nearest even).
void NarrowFromGDAL(const zarr3::DataType& dt, const void* src, void* dst, size_t n);

// Text data types (fixed_length_utf32, null_terminated_bytes, string): exposed by the
// multidimensional view as GDAL strings (GEDTC_STRING), one element as UTF-8 text
// (null_terminated_bytes: the bytes up to the first zero). ElementText and
// TextToElement are for the fixed-size ones; string elements come from
// zarr3::Array::read_strings.
bool IsTextType(const zarr3::DataType& dt);
std::string ElementText(const zarr3::DataType& dt, const uint8_t* element);
// Stores `text` as one element of a text type (zarr3::Error when it does not fit).
void TextToElement(const zarr3::DataType& dt, const char* text, uint8_t* element);

// Human-readable reason a type cannot be exposed ("" when it can).
std::string UnsupportedTypeReason(const zarr3::DataType& dt);

} // namespace zarr3drv
