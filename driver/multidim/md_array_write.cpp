// Zarr3MDArray writers: IWrite, attributes, nodata/unit/scale/offset/CRS and
// resize/append.
#include "error_boundary.hpp"
#include "mapping/gdal_types.hpp"
#include "options/io_options.hpp"
#include "multidim/md_array.hpp"
#include "multidim/md_array_text.hpp"
#include "multidim/md_attribute.hpp"
#include "multidim/md_dimension.hpp"

#include <algorithm>
#include <cstring>

namespace zarr3drv {

bool Zarr3MDArray::Noted(bool ok, const std::string& what) const {
    return ctx_ ? ctx_->Note(ok, GetFullName() + ": " + what) : ok;
}

bool Zarr3MDArray::CheckWritable(const char* what) const {
    if (IsWritable()) return true;
    CPLError(CE_Failure, CPLE_NotSupported, "%s: cannot %s: the dataset is opened read-only",
             array_->describe().c_str(), what);
    return false;
}

bool Zarr3MDArray::IWrite(const GUInt64* start, const size_t* count, const GInt64* step,
                          const GPtrDiff_t* stride, const GDALExtendedDataType& buf_type,
                          const void* src) {
    if (!CheckWritable("write")) return false;
    return Noted(ErrorBoundary(array_->describe(),
                               [&] { WriteImpl(start, count, step, stride, buf_type, src); }),
                 "write");
}

void Zarr3MDArray::WriteImpl(const GUInt64* start, const size_t* count, const GInt64* step,
                             const GPtrDiff_t* stride, const GDALExtendedDataType& buf_type,
                             const void* src) {
    const size_t rank = dims_.size();
    const auto& dtype = array_->metadata().dtype;
    zarr3::Selection sel;
    uint64_t n = 1;
    for (size_t i = 0; i < rank; ++i) {
        if (step[i] == 0 && count[i] > 1)
            throw zarr3::Error("a write with step 0 on dimension " + dims_[i]->GetName() +
                               " would write one element several times");
        sel.start.push_back(start[i]);
        sel.count.push_back(count[i]);
        sel.step.push_back(count[i] == 1 ? 1 : step[i]);
        n = zarr3::checked_mul(n, count[i], "request size");
    }
    if (n == 0) return;
    written_ = true;
    const GDALDataType exposed = dt_.GetNumericDataType();
    const size_t esize = dt_.GetSize();
    if (SameRepresentation(dtype) && buf_type == dt_) {
        std::vector<int64_t> bstrides(rank);
        for (size_t i = 0; i < rank; ++i)
            bstrides[i] = static_cast<int64_t>(stride[i]) * static_cast<int64_t>(esize);
        array_->write(sel, src, bstrides);
        return;
    }
    // Gather the caller's buffer into dense values of the exposed type, one
    // innermost row at a time, then narrow to the stored type if needed.
    zarr3::Bytes wide(static_cast<size_t>(zarr3::checked_mul(n, esize, "request size")));
    const size_t bsize = buf_type.GetSize();
    const size_t inner = rank ? count[rank - 1] : 1;
    const GPtrDiff_t inner_stride = rank ? stride[rank - 1] : 0;
    const bool numeric = buf_type.GetClass() == GEDTC_NUMERIC && !mapping_.text;
    const auto sz = [](auto v) { return static_cast<GPtrDiff_t>(v); };
    std::vector<size_t> idx(rank, 0);
    const auto* in = static_cast<const GByte*>(src);
    for (uint64_t row = 0; row < n / inner; ++row) {
        GPtrDiff_t soff = 0;
        for (size_t i = 0; i + 1 < rank; ++i)
            soff += sz(idx[i]) * stride[i];
        const GByte* s = in + soff * sz(bsize);
        GByte* d = wide.data() + row * inner * esize;
        if (numeric) {
            GDALCopyWords64(s, buf_type.GetNumericDataType(),
                            static_cast<int>(inner_stride * sz(bsize)), d, exposed,
                            static_cast<int>(esize), sz(inner));
        } else {
            for (size_t k = 0; k < inner; ++k)
                if (!GDALExtendedDataType::CopyValue(s + sz(k) * inner_stride * sz(bsize), buf_type,
                                                     d + k * esize, dt_)) {
                    if (mapping_.text) FreeGDALStrings(wide.data(), static_cast<size_t>(n));
                    throw zarr3::Error(
                        "cannot convert the buffer type to " +
                        (mapping_.text ? std::string("a string") : GDALGetDataTypeName(exposed)));
                }
        }
        for (size_t i = rank >= 2 ? rank - 1 : 0; i-- > 0;) {
            if (++idx[i] < count[i]) break;
            idx[i] = 0;
        }
    }
    if (SameRepresentation(dtype)) {
        array_->write(sel, wide.data());
        return;
    }
    if (dtype.is_variable()) { // char* values -> string elements (frees the strings)
        array_->write_strings(sel, StringsFromGDALStrings(wide.data(), static_cast<size_t>(n)));
        return;
    }
    zarr3::Bytes raw(static_cast<size_t>(n) * dtype.size);
    if (mapping_.text) { // char* values -> stored text (frees the strings)
        TextFromGDALStrings(dtype, wide.data(), static_cast<size_t>(n), raw.data());
        array_->write(sel, raw.data());
        return;
    }
    NarrowFromGDAL(dtype, wide.data(), raw.data(), static_cast<size_t>(n));
    array_->write(sel, raw.data());
}

bool Zarr3MDArray::SetAttr(const std::string& name, const nlohmann::json& value) {
    if (!CheckWritable("set attributes")) return false;
    return Noted(ErrorBoundary(array_->describe() + "/zarr.json",
                               [&] {
                                   nlohmann::json attrs = array_->metadata().attributes;
                                   if (!attrs.is_object()) attrs = nlohmann::json::object();
                                   if (value.is_null())
                                       attrs.erase(name);
                                   else
                                       attrs[name] = value;
                                   array_->set_attributes(attrs);
                                   RefreshFromMetadata();
                               }),
                 "attribute " + name);
}

std::shared_ptr<GDALAttribute> Zarr3MDArray::CreateAttribute(const std::string& name,
                                                             const std::vector<GUInt64>& dims,
                                                             const GDALExtendedDataType& dt,
                                                             CSLConstList) {
    if (!CheckWritable("create attributes")) return nullptr;
    std::weak_ptr<GDALAbstractMDArray> weak = m_pSelf;
    std::shared_ptr<GDALAttribute> out;
    ErrorBoundary(GetFullName(), [&] {
        out = WritableAttribute::Create(
            GetFullName(), name, dims, dt, [weak](const std::string& n, const nlohmann::json& v) {
                auto self = std::dynamic_pointer_cast<Zarr3MDArray>(weak.lock());
                if (!self) {
                    CPLError(CE_Failure, CPLE_AppDefined,
                             "attribute %s: its array is no longer open", n.c_str());
                    return false;
                }
                return self->SetAttr(n, v);
            });
    });
    return out;
}

bool Zarr3MDArray::SetUnit(const std::string& unit) {
    return SetAttr("units", unit.empty() ? nlohmann::json() : nlohmann::json(unit));
}

bool Zarr3MDArray::SetScale(double scale, GDALDataType) {
    return SetAttr("scale_factor", scale);
}

bool Zarr3MDArray::SetOffset(double offset, GDALDataType) {
    return SetAttr("add_offset", offset);
}

bool Zarr3MDArray::SetSpatialRef(const OGRSpatialReference* srs) {
    if (!srs) {
        srs_.reset();
        return SetAttr("proj:wkt2", nlohmann::json());
    }
    char* wkt = nullptr;
    const char* const opts[] = {"FORMAT=WKT2_2019", nullptr};
    if (srs->exportToWkt(&wkt, opts) != OGRERR_NONE || !wkt) {
        CPLFree(wkt);
        CPLError(CE_Failure, CPLE_AppDefined, "%s: cannot export the CRS as WKT2",
                 GetFullName().c_str());
        return false;
    }
    const std::string text = wkt;
    CPLFree(wkt);
    if (!SetAttr("proj:wkt2", text)) return false;
    if (!SetCRS(text)) { // fewer than two dimensions: keep the CRS as given
        srs_ = std::make_shared<OGRSpatialReference>(*srs);
    }
    return true;
}

bool Zarr3MDArray::SetRawNoDataValue(const void* raw) {
    if (!CheckWritable("set the nodata value")) return false;
    if (!raw) {
        CPLError(CE_Failure, CPLE_NotSupported,
                 "%s: a Zarr array always has a fill value; it cannot be unset",
                 array_->describe().c_str());
        return false;
    }
    if (written_ || !created_) {
        CPLError(CE_Failure, CPLE_NotSupported,
                 "%s: the nodata (fill) value can only be set on a new array before data is "
                 "written",
                 array_->describe().c_str());
        return false;
    }
    const bool ok = ErrorBoundary(array_->describe() + "/zarr.json", [&] {
        zarr3::ArrayMetadata meta = array_->metadata();
        zarr3::Bytes fill(meta.dtype.size);
        NarrowFromGDAL(meta.dtype, raw, fill.data(), 1);
        meta.fill_value = fill;
        auto store = ctx_->store();
        auto a = zarr3::Array::create(store, array_->path(), std::move(meta), true);
        ConfigureArray(*a);
        ctx_->Track(a);
        array_ = std::move(a);
        RefreshFromMetadata();
    });
    return Noted(ok, "nodata value");
}

void Zarr3MDArray::ResizeImpl(const std::vector<GUInt64>& new_sizes) {
    const auto& meta = array_->metadata();
    if (new_sizes.size() != meta.rank())
        throw zarr3::Error("Resize: expected " + std::to_string(meta.rank()) + " sizes, got " +
                           std::to_string(new_sizes.size()));
    const zarr3::Shape old = meta.shape;
    // Daily-append pattern: a grown rectilinear axis whose edges end exactly
    // at the array end gets one new edge; the JSON run-length merges them.
    for (size_t i = 0; i < new_sizes.size(); ++i) {
        const auto& grid = array_->metadata().grid;
        const auto& ax = grid.axis(i);
        if (new_sizes[i] > old[i] && grid.kind() == zarr3::GridKind::Rectilinear &&
            !ax.is_regular() && ax.extent() == old[i])
            array_->append_edge(i, new_sizes[i] - old[i]);
    }
    zarr3::Shape target(new_sizes.begin(), new_sizes.end());
    if (array_->metadata().shape != target) array_->resize(target);
    for (size_t i = 0; i < dims_.size(); ++i)
        if (auto d = std::dynamic_pointer_cast<Zarr3Dimension>(dims_[i]))
            d->SetSizeInternal(new_sizes[i]);
        else if (dims_[i]->GetSize() != new_sizes[i])
            dims_[i] = std::make_shared<Zarr3Dimension>(std::string(), dims_[i]->GetName(),
                                                        dims_[i]->GetType(),
                                                        dims_[i]->GetDirection(), new_sizes[i]);
}

bool Zarr3MDArray::ResizeArray(const std::vector<GUInt64>& new_sizes) {
    if (!CheckWritable("resize")) return false;
    return ErrorBoundary(array_->describe(), [&] { ResizeImpl(new_sizes); });
}

#if ZARR3_HAVE_MDARRAY_RESIZE
bool Zarr3MDArray::Resize(const std::vector<GUInt64>& new_sizes, CSLConstList) {
    return ResizeArray(new_sizes);
}
#endif

} // namespace zarr3drv
