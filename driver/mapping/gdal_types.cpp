// Zarr v3 data type <-> GDAL data type mapping.
#include "mapping/gdal_types.hpp"

#include <algorithm>
#include <cstring>

namespace zarr3drv {

GDALDataType GDALTypeFor(const zarr3::DataType& dt) {
    using K = zarr3::DTypeKind;
    switch (dt.kind) {
    case K::Bool:
        return GDT_Byte;
    case K::Int:
        switch (dt.size) {
        case 1:
#if ZARR3_HAVE_GDT_INT8
            return GDT_Int8;
#else
            return GDT_Int16;
#endif
        case 2:
            return GDT_Int16;
        case 4:
            return GDT_Int32;
        case 8:
            return GDT_Int64;
        default:
            return GDT_Unknown;
        }
    case K::UInt:
        switch (dt.size) {
        case 1:
            return GDT_Byte;
        case 2:
            return GDT_UInt16;
        case 4:
            return GDT_UInt32;
        case 8:
            return GDT_UInt64;
        default:
            return GDT_Unknown;
        }
    case K::Float:
        switch (dt.size) {
        case 2:
#if ZARR3_HAVE_GDT_FLOAT16
            return GDT_Float16;
#else
            return GDT_Float32;
#endif
        case 4:
            return GDT_Float32;
        case 8:
            return GDT_Float64;
        default:
            return GDT_Unknown;
        }
    case K::Complex:
        switch (dt.size) {
        case 8:
            return GDT_CFloat32;
        case 16:
            return GDT_CFloat64;
        default:
            return GDT_Unknown;
        }
    case K::Raw:
    case K::Utf32:
    case K::NullTerminatedBytes:
    case K::String:
        return GDT_Unknown;
    }
    return GDT_Unknown;
}

zarr3::DataType ZarrTypeFor(GDALDataType t, bool widen_complex_int, std::string* warning) {
    if (t == GDT_CInt16 || t == GDT_CInt32) {
        const char* as = t == GDT_CInt16 ? "complex64" : "complex128";
        if (!widen_complex_int)
            throw zarr3::Error(std::string("data type ") + GDALGetDataTypeName(t) +
                               " has no Zarr v3 equivalent (complex integers); convert to "
                               "CFloat32/CFloat64 first (-ot CFloat64)");
        if (warning)
            *warning = std::string(GDALGetDataTypeName(t)) + " written as " + as +
                       (t == GDT_CInt16 ? " (CFloat32)" : " (CFloat64)");
        return zarr3::data_type_from_name(as);
    }
    // The Zarr type GDALTypeFor maps to `t` with the same element size (old
    // GDAL shows int8 as Int16 and float16 as Float32: not inverted).
    static const char* const names[] = {"uint8",   "int8",      "uint16",    "int16",   "uint32",
                                        "int32",   "uint64",    "int64",     "float16", "float32",
                                        "float64", "complex64", "complex128"};
    if (t != GDT_Unknown)
        for (const char* n : names) {
            zarr3::DataType dt = zarr3::data_type_from_name(n);
            if (GDALTypeFor(dt) == t &&
                static_cast<uint32_t>(GDALGetDataTypeSizeBytes(t)) == dt.size)
                return dt;
        }
    throw zarr3::Error(std::string("data type ") + GDALGetDataTypeName(t) +
                       " cannot be stored in Zarr v3");
}

zarr3::DataType ZarrTypeFor(const GDALExtendedDataType& dt) {
    if (dt.GetClass() == GEDTC_STRING) {
        // Strings without a maximum length: string (vlen-utf8); of at most N
        // characters: fixed_length_utf32 of 4 N bytes.
        const size_t n = dt.GetMaxStringLength();
        if (n == 0) return zarr3::DataType{"string", zarr3::DTypeKind::String, 0, 1};
        if (n > (1u << 18))
            throw zarr3::Error("a string type of at most " + std::to_string(n) +
                               " characters is too long for fixed_length_utf32 (at most 262144); "
                               "give no maximum length to store a variable-length string");
        zarr3::DataType t{"fixed_length_utf32", zarr3::DTypeKind::Utf32,
                          static_cast<uint32_t>(4 * n), 4};
        return t;
    }
    if (dt.GetClass() != GEDTC_NUMERIC)
        throw zarr3::Error(std::string("the Zarr3 driver only creates numeric arrays (got a ") +
                           (dt.GetClass() == GEDTC_STRING ? "string" : "compound") + " type)");
    return ZarrTypeFor(dt.GetNumericDataType());
}

bool SameRepresentation(const zarr3::DataType& dt) {
    const GDALDataType t = GDALTypeFor(dt);
    return t != GDT_Unknown && static_cast<uint32_t>(GDALGetDataTypeSizeBytes(t)) == dt.size;
}

void NarrowFromGDAL(const zarr3::DataType& dt, const void* src, void* dst, size_t n) {
    if (SameRepresentation(dt)) {
        if (dst != src) std::memcpy(dst, src, n * dt.size);
        return;
    }
    if (dt.kind == zarr3::DTypeKind::Float && dt.size == 2) {
        const auto* s = static_cast<const float*>(src);
        auto* d = static_cast<uint8_t*>(dst);
        for (size_t i = 0; i < n; ++i) {
            const uint16_t h = zarr3::float_to_half(s[i]);
            std::memcpy(d + 2 * i, &h, 2);
        }
        return;
    }
    if (dt.kind == zarr3::DTypeKind::Int && dt.size == 1) {
        const auto* s = static_cast<const int16_t*>(src);
        auto* d = static_cast<int8_t*>(dst);
        for (size_t i = 0; i < n; ++i)
            d[i] = static_cast<int8_t>(std::clamp<int16_t>(s[i], -128, 127));
        return;
    }
    throw zarr3::Error("data type " + dt.name + " has no GDAL equivalent");
}

void WidenToGDAL(const zarr3::DataType& dt, const void* src, void* dst, size_t n) {
    if (SameRepresentation(dt)) {
        if (dst != src) std::memcpy(dst, src, n * dt.size);
        return;
    }
    if (dt.kind == zarr3::DTypeKind::Float && dt.size == 2) {
        const auto* s = static_cast<const uint8_t*>(src);
        auto* d = static_cast<float*>(dst);
        for (size_t i = 0; i < n; ++i) {
            uint16_t h;
            std::memcpy(&h, s + 2 * i, 2);
            d[i] = zarr3::half_to_float(h);
        }
        return;
    }
    if (dt.kind == zarr3::DTypeKind::Int && dt.size == 1) {
        const auto* s = static_cast<const int8_t*>(src);
        auto* d = static_cast<int16_t*>(dst);
        for (size_t i = 0; i < n; ++i)
            d[i] = s[i];
        return;
    }
    throw zarr3::Error("data type " + dt.name + " has no GDAL equivalent");
}

bool IsTextType(const zarr3::DataType& dt) {
    return dt.kind == zarr3::DTypeKind::Utf32 || dt.kind == zarr3::DTypeKind::NullTerminatedBytes ||
           dt.kind == zarr3::DTypeKind::String;
}

std::string ElementText(const zarr3::DataType& dt, const uint8_t* element) {
    if (dt.kind == zarr3::DTypeKind::Utf32) return zarr3::utf32_to_utf8(element, dt.size);
    size_t n = 0;
    while (n < dt.size && element[n] != 0)
        ++n;
    return std::string(reinterpret_cast<const char*>(element), n);
}

void TextToElement(const zarr3::DataType& dt, const char* text, uint8_t* element) {
    const std::string s = text ? text : "";
    if (dt.kind == zarr3::DTypeKind::Utf32) {
        zarr3::utf8_to_utf32(s, element, dt.size);
        return;
    }
    if (s.size() > dt.size)
        throw zarr3::Error("a text of " + std::to_string(s.size()) + " bytes does not fit in " +
                           dt.name + " of " + std::to_string(dt.size) + " bytes");
    std::memset(element, 0, dt.size);
    std::memcpy(element, s.data(), s.size());
}

std::string UnsupportedTypeReason(const zarr3::DataType& dt) {
    if (GDALTypeFor(dt) != GDT_Unknown) return {};
    if (IsTextType(dt))
        return "text data type " + dt.name +
               " has no GDAL raster type; open the store in multidimensional mode "
               "(gdalmdiminfo, gdal.OpenEx(name, gdal.OF_MULTIDIM_RASTER)) to read it as strings";
    if (dt.kind == zarr3::DTypeKind::Raw)
        return "raw bits data type " + dt.name +
               " has no GDAL equivalent; read it with the core library";
    return "data type " + dt.name + " has no GDAL equivalent";
}

} // namespace zarr3drv
