// JSON attributes exposed through GDAL's multidimensional attribute API.
#include "multidim/md_attribute.hpp"
#include "error_boundary.hpp"
#include "zarr3/common.hpp"

namespace zarr3drv {

namespace {

enum class Kind { String, Int, Double };

// Kind of a scalar JSON value, or nullopt when it must be shown as JSON text.
std::optional<Kind> scalar_kind(const nlohmann::json& v) {
    if (v.is_string()) return Kind::String;
    if (v.is_number_integer() && (v.is_number_unsigned() ? v.get<uint64_t>() <= INT64_MAX : true))
        return Kind::Int;
    if (v.is_number()) return Kind::Double;
    return std::nullopt;
}

bool IsIntegerType(GDALDataType t) {
    return !GDALDataTypeIsFloating(t) && !GDALDataTypeIsComplex(t) && t != GDT_Unknown;
}

// Walks the selection of a scalar (`scalar`) or 1-D attribute: calls
// fn(value index, element in the caller's buffer) for each selected element,
// stopping at the first false. `Byte` is GByte or const GByte.
template <class Byte, class Fn>
bool ForEachElement(bool scalar, const GUInt64* start, const size_t* count, const GInt64* step,
                    const GPtrDiff_t* stride, const GDALExtendedDataType& buf_type, Byte* buf,
                    Fn&& fn) {
    const size_t n = scalar ? 1 : count[0];
    const size_t esize = buf_type.GetSize();
    for (size_t i = 0; i < n; ++i) {
        const size_t idx = scalar ? 0
                                  : static_cast<size_t>(static_cast<GInt64>(start[0]) +
                                                        static_cast<GInt64>(i) * step[0]);
        Byte* p =
            buf +
            (scalar ? 0 : static_cast<GPtrDiff_t>(i) * stride[0] * static_cast<GPtrDiff_t>(esize));
        if (!fn(idx, p)) return false;
    }
    return true;
}

// Copies one value of GDAL numeric type `t` into a caller's element.
template <class T>
bool CopyNumber(const T& x, GDALDataType t, GByte* dst, const GDALExtendedDataType& buf_type) {
    return GDALExtendedDataType::CopyValue(&x, GDALExtendedDataType::Create(t), dst, buf_type);
}

// Reads one caller element as GDAL numeric type `t` (C++ type T) into `out`.
template <class T>
bool LoadNumber(const GByte* src, const GDALExtendedDataType& buf_type, GDALDataType t,
                nlohmann::json& out) {
    T x = 0;
    if (!GDALExtendedDataType::CopyValue(src, buf_type, &x, GDALExtendedDataType::Create(t)))
        return false;
    out = x;
    return true;
}

} // namespace

JsonAttribute::JsonAttribute(const std::string& parent, const std::string& name,
                             const nlohmann::json& value)
    : GDALAbstractMDArray(parent, name), GDALAttribute(parent, name) {
    std::optional<Kind> kind;
    std::vector<const nlohmann::json*> items;
    if (value.is_array() && !value.empty()) {
        kind = scalar_kind(value.front());
        for (const auto& v : value) {
            auto k = scalar_kind(v);
            if (!k || !kind) {
                kind.reset();
                break;
            }
            if (*k != *kind) {
                if ((*k == Kind::Int && *kind == Kind::Double) ||
                    (*k == Kind::Double && *kind == Kind::Int))
                    kind = Kind::Double;
                else {
                    kind.reset();
                    break;
                }
            }
            items.push_back(&v);
        }
        if (kind)
            dims_.push_back(std::make_shared<GDALDimension>(std::string(), "dim0", std::string(),
                                                            std::string(),
                                                            static_cast<GUInt64>(items.size())));
    } else {
        kind = scalar_kind(value);
        items.push_back(&value);
    }
    if (!kind) { // object, null, bool, nested or mixed list: JSON text
        dims_.clear();
        // Objects and lists are JSON-typed strings, as in GDAL's own driver
        // (Python reads them back as dicts and lists).
        if (value.is_object() || value.is_array())
            dt_ = GDALExtendedDataType::CreateString(0, GEDTST_JSON);
        strings_.push_back(value.is_boolean() ? (value.get<bool>() ? "true" : "false")
                                              : value.dump());
        return;
    }
    for (const auto* v : items) {
        switch (*kind) {
        case Kind::String:
            strings_.push_back(v->get<std::string>());
            break;
        case Kind::Int:
            ints_.push_back(v->get<int64_t>());
            break;
        case Kind::Double:
            doubles_.push_back(v->get<double>());
            break;
        }
    }
    if (*kind == Kind::Int)
        dt_ = GDALExtendedDataType::Create(GDT_Int64);
    else if (*kind == Kind::Double)
        dt_ = GDALExtendedDataType::Create(GDT_Float64);
}

std::shared_ptr<GDALAttribute> JsonAttribute::Create(const std::string& parent,
                                                     const std::string& name,
                                                     const nlohmann::json& value) {
    auto a = std::make_shared<JsonAttribute>(parent, name, value);
    a->SetSelf(a);
    return a;
}

bool JsonAttribute::IRead(const GUInt64* start, const size_t* count, const GInt64* step,
                          const GPtrDiff_t* stride, const GDALExtendedDataType& buf_type,
                          void* dst) const {
    return ForEachElement(
        dims_.empty(), start, count, step, stride, buf_type, static_cast<GByte*>(dst),
        [&](size_t idx, GByte* d) {
            if (!strings_.empty()) {
                const char* s = strings_[idx].c_str();
                return GDALExtendedDataType::CopyValue(&s, dt_, d, buf_type);
            }
            if (!ints_.empty())
                return GDALExtendedDataType::CopyValue(&ints_[idx], dt_, d, buf_type);
            return GDALExtendedDataType::CopyValue(&doubles_[idx], dt_, d, buf_type);
        });
}

std::vector<std::shared_ptr<GDALAttribute>> MakeAttributes(const std::string& parent,
                                                           const nlohmann::json& attrs) {
    std::vector<std::shared_ptr<GDALAttribute>> out;
    if (!attrs.is_object()) return out;
    const bool ok = ErrorBoundary(parent, [&] {
        for (auto it = attrs.begin(); it != attrs.end(); ++it)
            out.push_back(JsonAttribute::Create(parent, it.key(), it.value()));
    });
    if (!ok) out.clear();
    return out;
}

WritableAttribute::WritableAttribute(const std::string& parent, const std::string& name,
                                     const std::vector<GUInt64>& dims,
                                     const GDALExtendedDataType& dt, AttributeSink sink)
    : GDALAbstractMDArray(parent, name), GDALAttribute(parent, name), dt_(dt),
      sink_(std::move(sink)) {
    const std::string where = parent + "/" + name;
    if (dims.size() > 1)
        throw zarr3::Error(where + ": attributes with more than one dimension are not supported");
    if (dt.GetClass() == GEDTC_COMPOUND || GDALDataTypeIsComplex(dt.GetNumericDataType()))
        throw zarr3::Error(where +
                           ": only numeric (non-complex) and string attributes are supported");
    if (dims.size() == 1) {
        if (dims[0] > (1u << 24))
            throw zarr3::Error(where + ": attribute with more than 16M values");
        dims_.push_back(std::make_shared<GDALDimension>(std::string(), "dim0", std::string(),
                                                        std::string(), dims[0]));
    }
    const size_t n = dims.empty() ? 1 : static_cast<size_t>(dims[0]);
    values_.assign(n, dt.GetClass() == GEDTC_STRING ? nlohmann::json() : nlohmann::json(0));
}

std::shared_ptr<GDALAttribute> WritableAttribute::Create(const std::string& parent,
                                                         const std::string& name,
                                                         const std::vector<GUInt64>& dims,
                                                         const GDALExtendedDataType& dt,
                                                         AttributeSink sink) {
    auto a = std::make_shared<WritableAttribute>(parent, name, dims, dt, std::move(sink));
    a->SetSelf(a);
    return a;
}

nlohmann::json WritableAttribute::Value() const {
    if (!dims_.empty()) return nlohmann::json(values_);
    const auto& v = values_.front();
    if (v.is_string()) { // JSON object text -> object
        const auto& s = v.get_ref<const std::string&>();
        if (!s.empty() && s.front() == '{') {
            auto j = nlohmann::json::parse(s, nullptr, false);
            if (j.is_object()) return j;
        }
    }
    return v;
}

bool WritableAttribute::IWrite(const GUInt64* start, const size_t* count, const GInt64* step,
                               const GPtrDiff_t* stride, const GDALExtendedDataType& buf_type,
                               const void* src) {
    const GDALDataType t = dt_.GetNumericDataType();
    auto store = [&](size_t idx, const GByte* s) {
        if (dt_.GetClass() == GEDTC_STRING) {
            char* str = nullptr;
            if (!GDALExtendedDataType::CopyValue(s, buf_type, &str, dt_)) return false;
            values_[idx] = str ? nlohmann::json(std::string(str)) : nlohmann::json();
            CPLFree(str);
            return true;
        }
        if (t == GDT_UInt64) return LoadNumber<uint64_t>(s, buf_type, GDT_UInt64, values_[idx]);
        if (IsIntegerType(t)) return LoadNumber<int64_t>(s, buf_type, GDT_Int64, values_[idx]);
        return LoadNumber<double>(s, buf_type, GDT_Float64, values_[idx]);
    };
    bool ok = false;
    nlohmann::json value;
    ErrorBoundary(GetFullName(), [&] {
        ok = ForEachElement(dims_.empty(), start, count, step, stride, buf_type,
                            static_cast<const GByte*>(src), store);
        if (ok) value = Value();
    });
    return ok && sink_(GetName(), value);
}

bool WritableAttribute::IRead(const GUInt64* start, const size_t* count, const GInt64* step,
                              const GPtrDiff_t* stride, const GDALExtendedDataType& buf_type,
                              void* dst) const {
    return ForEachElement(
        dims_.empty(), start, count, step, stride, buf_type, static_cast<GByte*>(dst),
        [&](size_t idx, GByte* d) {
            const auto& v = values_[idx];
            if (dt_.GetClass() == GEDTC_STRING) {
                const char* p = v.is_string() ? v.get_ref<const std::string&>().c_str() : nullptr;
                return GDALExtendedDataType::CopyValue(&p, dt_, d, buf_type);
            }
            if (v.is_number_unsigned())
                return CopyNumber(v.get<uint64_t>(), GDT_UInt64, d, buf_type);
            if (v.is_number_integer()) return CopyNumber(v.get<int64_t>(), GDT_Int64, d, buf_type);
            return CopyNumber(v.is_number() ? v.get<double>() : 0.0, GDT_Float64, d, buf_type);
        });
}

} // namespace zarr3drv
