// Zarr3MDArray: multidimensional reads of a Zarr v3 array through GDAL.
#include "multidim/md_array.hpp"
#include "multidim/md_array_text.hpp"

#include "mapping/array_mapping.hpp"
#include "error_boundary.hpp"
#include "mapping/gdal_types.hpp"
#include "mapping/georef.hpp"
#include "multidim/md_attribute.hpp"

#include "zarr3/hierarchy.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace zarr3drv {

std::vector<std::shared_ptr<GDALDimension>>
Zarr3MDArray::DefaultDimensions(const std::string& parent_full_name,
                                const zarr3::ArrayMetadata& meta) {
    std::vector<std::shared_ptr<GDALDimension>> dims;
    for (size_t i = 0; i < meta.rank(); ++i) {
        const std::string name = zarr3::dimension_name(meta, i);
        dims.push_back(std::make_shared<GDALDimension>(parent_full_name, name,
                                                       DimensionTypeFromName(name), std::string(),
                                                       static_cast<GUInt64>(meta.shape[i])));
    }
    return dims;
}

Zarr3MDArray::Zarr3MDArray(const std::string& parent_full_name, const std::string& name,
                           std::shared_ptr<zarr3::Array> array,
                           std::vector<std::shared_ptr<GDALDimension>> dims,
                           std::shared_ptr<MDContext> ctx)
    : GDALAbstractMDArray(parent_full_name, name), GDALMDArray(parent_full_name, name),
      array_(std::move(array)), ctx_(std::move(ctx)), filename_(array_->store().uri()),
      dims_(std::move(dims)) {
    const auto& meta = array_->metadata();
    mapping_ = MapArray(meta, array_->describe(), /*allow_text=*/true);
    dt_ = mapping_.text ? GDALExtendedDataType::CreateString()
                        : GDALExtendedDataType::Create(mapping_.type);
    if (dims_.empty() && meta.rank() > 0) dims_ = DefaultDimensions(parent_full_name, meta);
    structural_.SetNameValue("DATA_TYPE", meta.dtype.name.c_str());
    structural_.SetNameValue(
        "CHUNK_GRID", meta.grid.kind() == zarr3::GridKind::Regular ? "regular" : "rectilinear");
    std::string codecs;
    for (const auto& c : meta.codec_names())
        codecs += (codecs.empty() ? "" : ",") + c;
    if (!codecs.empty()) structural_.SetNameValue("CODECS", codecs.c_str());
}

void Zarr3MDArray::RefreshFromMetadata() {
    RefreshValues(mapping_, array_->metadata());
}

bool Zarr3MDArray::IsWritable() const {
    return ctx_ && ctx_->writable() && array_->store().writable();
}

std::shared_ptr<Zarr3MDArray> Zarr3MDArray::Create(const std::string& parent_full_name,
                                                   const std::string& name,
                                                   std::shared_ptr<zarr3::Array> array,
                                                   std::vector<std::shared_ptr<GDALDimension>> dims,
                                                   std::shared_ptr<MDContext> ctx) {
    auto a = std::make_shared<Zarr3MDArray>(parent_full_name, name, std::move(array),
                                            std::move(dims), std::move(ctx));
    a->SetSelf(a);
    return a;
}

bool Zarr3MDArray::SetCRS(const std::string& definition) {
    if (dims_.size() < 2) return false;
    auto srs = std::make_unique<OGRSpatialReference>();
    CPLErrorStateBackuper keep_state;
    CPLErrorHandlerPusher quiet(CPLQuietErrorHandler);
    if (srs->SetFromUserInput(definition.c_str()) != OGRERR_NONE) return false;
    return SetCRS(std::move(srs));
}

bool Zarr3MDArray::SetCRS(std::unique_ptr<OGRSpatialReference> srs) {
    if (dims_.size() < 2 || !srs) return false;
    std::vector<std::string> types;
    for (const auto& d : dims_)
        types.push_back(d->GetType());
    const AxisRoles roles = AxisRolesFromTypes(types);
    const int ix = static_cast<int>(roles.x), iy = static_cast<int>(roles.y);
    srs->SetAxisMappingStrategy(OAMS_TRADITIONAL_GIS_ORDER);
    // nth value: the 1-based array dimension of the nth CRS axis.
    if (srs->EPSGTreatsAsLatLong() || srs->EPSGTreatsAsNorthingEasting())
        srs->SetDataAxisToSRSAxisMapping({iy + 1, ix + 1});
    else
        srs->SetDataAxisToSRSAxisMapping({ix + 1, iy + 1});
    srs_ = std::shared_ptr<OGRSpatialReference>(std::move(srs));
    return true;
}

std::vector<GUInt64> Zarr3MDArray::GetBlockSize() const {
    const auto& grid = array_->metadata().grid;
    std::vector<GUInt64> out;
    for (size_t i = 0; i < grid.rank(); ++i) {
        const auto& ax = grid.axis(i);
        out.push_back(ax.num_chunks() == 0 ? 0 : static_cast<GUInt64>(ax.most_common_edge()));
    }
    return out;
}

const void* Zarr3MDArray::GetRawNoDataValue() const {
    return mapping_.nodata.empty() ? nullptr : mapping_.nodata.data();
}

std::vector<std::shared_ptr<GDALAttribute>> Zarr3MDArray::GetAttributes(CSLConstList) const {
    // Attributes the array's own API already answers (GetSpatialRef, GetUnit)
    // are not listed again, as in GDAL's own driver.
    nlohmann::json shown = array_->metadata().attributes;
    if (shown.is_object()) {
        for (auto it = shown.begin(); it != shown.end();)
            if (IsInterpretedGeorefAttribute(it.key()) ||
                (it.key() == "units" && !mapping_.unit.empty()))
                it = shown.erase(it);
            else
                ++it;
    }
    return MakeAttributes(GetFullName(), shown);
}

double Zarr3MDArray::GetOffset(bool* has, GDALDataType* storage) const {
    const auto& v = mapping_.offset;
    if (has) *has = v.has_value();
    if (storage) *storage = GDT_Unknown;
    return v.value_or(0.0);
}

double Zarr3MDArray::GetScale(bool* has, GDALDataType* storage) const {
    const auto& v = mapping_.scale;
    if (has) *has = v.has_value();
    if (storage) *storage = GDT_Unknown;
    return v.value_or(1.0);
}

// CF "coordinates" attribute (names separated by spaces) resolved in this
// group or a parent; without it, the indexing variables of the dimensions.
std::vector<std::shared_ptr<GDALMDArray>> Zarr3MDArray::GetCoordinateVariables() const {
    std::vector<std::shared_ptr<GDALMDArray>> out;
    const auto& attrs = array_->metadata().attributes;
    const auto it = attrs.find("coordinates");
    if (it != attrs.end() && it->is_string()) {
        const CPLStringList names(CSLTokenizeString2(it->get<std::string>().c_str(), " ", 0));
        for (int i = 0; i < names.size(); ++i) {
            auto a = resolver_ ? resolver_(names[i]) : nullptr;
            if (a)
                out.push_back(a);
            else
                CPLDebug("Zarr3", "%s: coordinate variable %s not found", GetFullName().c_str(),
                         names[i]);
        }
        return out;
    }
    for (const auto& d : dims_) {
        auto var = d->GetIndexingVariable();
        if (var && var->GetFullName() != GetFullName()) out.push_back(var);
    }
    return out;
}

bool Zarr3MDArray::IRead(const GUInt64* start, const size_t* count, const GInt64* step,
                         const GPtrDiff_t* stride, const GDALExtendedDataType& buf_type,
                         void* dst) const {
    bool ok = false;
    ErrorBoundary(array_->describe(),
                  [&] { ok = ReadImpl(start, count, step, stride, buf_type, dst); });
    return ok;
}

namespace {

// A read request as a core selection: a step of 0 (or a count of 1) reads one
// element, repeated into the caller's buffer (`broadcast`).
struct ReadPlan {
    zarr3::Selection sel;
    std::vector<size_t> src_count; // elements read per axis
    bool broadcast = false;
    uint64_t n = 1, n_src = 1; // elements delivered / read
};

ReadPlan PlanRead(size_t rank, const GUInt64* start, const size_t* count, const GInt64* step) {
    ReadPlan p;
    p.src_count.resize(rank);
    for (size_t i = 0; i < rank; ++i) {
        const bool repeat = step[i] == 0 || count[i] == 1;
        p.src_count[i] = repeat ? 1 : count[i];
        p.broadcast = p.broadcast || (step[i] == 0 && count[i] > 1);
        p.sel.start.push_back(start[i]);
        p.sel.count.push_back(p.src_count[i]);
        p.sel.step.push_back(repeat ? 1 : step[i]);
        p.n = zarr3::checked_mul(p.n, count[i], "request size");
        p.n_src = zarr3::checked_mul(p.n_src, p.src_count[i], "request size");
    }
    return p;
}

// Copies dense values of type `exposed` (`src`, laid out by plan.src_count)
// into the caller's buffer, one innermost row at a time, converting to
// buf_type and broadcasting repeated axes.
bool CopyRowsOut(const ReadPlan& plan, const GByte* src, const GDALExtendedDataType& exposed_dt,
                 const size_t* count, const GPtrDiff_t* stride,
                 const GDALExtendedDataType& buf_type, void* dst) {
    const size_t rank = plan.src_count.size();
    const GDALDataType exposed = exposed_dt.GetNumericDataType();
    const size_t esize = exposed_dt.GetSize();
    // Element strides of the dense source; 0 on broadcast axes.
    std::vector<GPtrDiff_t> sstride(rank);
    GPtrDiff_t acc = 1;
    for (size_t i = rank; i-- > 0;) {
        sstride[i] = plan.src_count[i] == count[i] ? acc : 0;
        acc *= static_cast<GPtrDiff_t>(plan.src_count[i]);
    }
    const size_t bsize = buf_type.GetSize();
    const size_t inner = rank ? count[rank - 1] : 1;
    const GPtrDiff_t inner_dstride = rank ? stride[rank - 1] : 0;
    const GPtrDiff_t inner_sstride = rank ? sstride[rank - 1] : 0;
    const bool numeric =
        buf_type.GetClass() == GEDTC_NUMERIC && exposed_dt.GetClass() == GEDTC_NUMERIC;
    const auto sz = [](auto v) { return static_cast<GPtrDiff_t>(v); };
    std::vector<size_t> idx(rank, 0);
    auto* out = static_cast<GByte*>(dst);
    for (uint64_t row = 0; row < plan.n / inner; ++row) {
        GPtrDiff_t doff = 0, soff = 0;
        for (size_t i = 0; i + 1 < rank; ++i) {
            doff += sz(idx[i]) * stride[i];
            soff += sz(idx[i]) * sstride[i];
        }
        GByte* d = out + doff * sz(bsize);
        const GByte* s = src + soff * sz(esize);
        if (numeric) {
            GDALCopyWords64(s, exposed, static_cast<int>(inner_sstride * sz(esize)), d,
                            buf_type.GetNumericDataType(),
                            static_cast<int>(inner_dstride * sz(bsize)), sz(inner));
        } else {
            for (size_t k = 0; k < inner; ++k)
                if (!GDALExtendedDataType::CopyValue(
                        s + sz(k) * inner_sstride * sz(esize), exposed_dt,
                        d + sz(k) * inner_dstride * sz(bsize), buf_type))
                    return false;
        }
        if (rank >= 2) { // odometer over the outer axes
            for (size_t i = rank - 1; i-- > 0;) {
                if (++idx[i] < count[i]) break;
                idx[i] = 0;
            }
        }
    }
    return true;
}

} // namespace

bool Zarr3MDArray::ReadImpl(const GUInt64* start, const size_t* count, const GInt64* step,
                            const GPtrDiff_t* stride, const GDALExtendedDataType& buf_type,
                            void* dst) const {
    const size_t rank = dims_.size();
    const auto& dtype = array_->metadata().dtype;
    const ReadPlan plan = PlanRead(rank, start, count, step);
    if (plan.n == 0) return true;
    if (dtype.is_variable()) { // string: one char* per element -> the caller's buffer
        const auto n = static_cast<size_t>(plan.n_src);
        std::vector<GByte> ptrs(
            static_cast<size_t>(zarr3::checked_mul(n, sizeof(char*), "request size")));
        StringsToGDALStrings(array_->read_strings(plan.sel), ptrs.data());
        const bool ok = CopyRowsOut(plan, ptrs.data(), dt_, count, stride, buf_type, dst);
        FreeGDALStrings(ptrs.data(), n);
        return ok;
    }
    if (mapping_.text) { // stored text -> one char* per element -> the caller's buffer
        zarr3::Bytes raw(
            static_cast<size_t>(zarr3::checked_mul(plan.n_src, dtype.size, "request size")));
        array_->read(plan.sel, raw.data());
        const auto n = static_cast<size_t>(plan.n_src);
        std::vector<GByte> ptrs(
            static_cast<size_t>(zarr3::checked_mul(n, sizeof(char*), "request size")));
        TextToGDALStrings(dtype, raw.data(), n, ptrs.data());
        const bool ok = CopyRowsOut(plan, ptrs.data(), dt_, count, stride, buf_type, dst);
        FreeGDALStrings(ptrs.data(), n);
        return ok;
    }
    const size_t esize = static_cast<size_t>(GDALGetDataTypeSizeBytes(dt_.GetNumericDataType()));

    // Fast path: the caller wants exactly the stored representation.
    if (SameRepresentation(dtype) && buf_type == dt_ && !plan.broadcast) {
        std::vector<int64_t> bstrides(rank);
        for (size_t i = 0; i < rank; ++i)
            bstrides[i] = static_cast<int64_t>(stride[i]) * static_cast<int64_t>(esize);
        array_->read(plan.sel, dst, bstrides);
        return true;
    }

    // Read dense native values, widen to the exposed type, then convert into
    // the caller's buffer.
    zarr3::Bytes raw(
        static_cast<size_t>(zarr3::checked_mul(plan.n_src, dtype.size, "request size")));
    array_->read(plan.sel, raw.data());
    zarr3::Bytes wide;
    const GByte* src = raw.data();
    if (!SameRepresentation(dtype)) {
        wide.resize(static_cast<size_t>(zarr3::checked_mul(plan.n_src, esize, "request size")));
        WidenToGDAL(dtype, raw.data(), wide.data(), static_cast<size_t>(plan.n_src));
        src = wide.data();
    }
    return CopyRowsOut(plan, src, dt_, count, stride, buf_type, dst);
}

} // namespace zarr3drv
