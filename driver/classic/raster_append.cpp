// gdal_translate -co APPEND_DIM=<dim>: append a raster as new time step(s)
// of an existing store (raster_append.hpp). Format work (new edges, run
// merging) is core's zarr3::appended_metadata.
#include "classic/raster_append.hpp"
#include "classic/append_steps.hpp"

#include "classic/append_reserve.hpp"
#include "classic/append_values.hpp"
#include "classic/append_verify.hpp"
#include "classic/overview_append.hpp"
#include "classic/raster_dataset.hpp"
#include "error_boundary.hpp"
#include "mapping/gdal_types.hpp"
#include "options/io_options.hpp"
#include "storage/consolidation.hpp"
#include "storage/unfinished_copy.hpp"
#include "storage/vsi_store.hpp"
#include "zarr3/array_lock.hpp"
#include "zarr3/builder.hpp"
#include "zarr3/cf_time.hpp"
#include "zarr3/compact.hpp"
#include "zarr3/consolidated.hpp"

#include "cpl_string.h"
#include "cpl_vsi.h"
#include "text_util.hpp"

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

namespace zarr3drv {

namespace {

constexpr uint64_t kRowBudget = 64ull << 20; // bytes read from the source at a time
// Source metadata items read as the date of a single-band step.
constexpr const char* kDateItems[] = {"TIME", "DATE", "DATETIME", "ACQUISITION_DATE",
                                      "TIFFTAG_DATETIME"};

std::string DimOf(CSLConstList options) {
    const char* d = CSLFetchNameValue(options, "APPEND_DIM");
    if (!d || !*d) throw zarr3::Error("creation option APPEND_DIM: expected a dimension name");
    return d;
}

// The coordinate values for `n` new indices: APPEND_COORD (one value, or
// comma-separated, one per band), else the source's own step values
// (append_steps.hpp), else a date in the source's metadata.
std::vector<std::string> CoordinateTexts(GDALDataset* src, CSLConstList options, int n) {
    if (const char* c = CSLFetchNameValue(options, "APPEND_COORD")) {
        const CPLStringList parts(
            CSLTokenizeString2(c, ",", CSLT_STRIPLEADSPACES | CSLT_STRIPENDSPACES));
        if (parts.size() != n)
            throw zarr3::Error("creation option APPEND_COORD=" + std::string(c) + ": expected " +
                               std::to_string(n) + " value(s), one per source band");
        std::vector<std::string> out;
        for (int i = 0; i < n; ++i)
            out.emplace_back(parts[i]);
        return out;
    }
    if (auto steps = SourceStepValues(src, DimOf(options)))
        if (static_cast<int>(steps->texts.size()) == n) return steps->texts;
    for (const char* key : kDateItems)
        if (const char* v = src->GetMetadataItem(key))
            if (zarr3::parse_date_time(v) && n == 1) return {v};
    return {};
}

std::optional<zarr3::CfTimeUnits> TimeUnits(const nlohmann::json& attrs) {
    const auto it = attrs.find("units");
    if (it == attrs.end() || !it->is_string()) return std::nullopt;
    return zarr3::parse_cf_time_units(it->get<std::string>());
}

// The value of `text` in a coordinate with these attributes: a date in CF
// units, or a number.
double CoordinateValue(const std::string& text, const nlohmann::json& attrs,
                       const std::string& where) {
    const auto units = TimeUnits(attrs);
    if (units)
        if (auto t = zarr3::parse_date_time(text)) return zarr3::cf_value_of(*units, *t);
    char* end = nullptr;
    const double v = CPLStrtod(text.c_str(), &end);
    if (!text.empty() && end && *end == 0 && std::isfinite(v)) return v;
    throw zarr3::Error(where + ": coordinate value \"" + text + "\" is " +
                       (units ? "neither a date (YYYY-MM-DD[THH:MM:SS]) nor a number"
                              : "not a number (the coordinate has no CF time units)"));
}

// A coordinate value for messages: its date in CF time units, else the number.
std::string ValueText(double v, const std::optional<zarr3::CfTimeUnits>& units) {
    if (units) try {
            return zarr3::format_civil(zarr3::cf_civil_of(*units, v));
        } catch (const zarr3::Error&) {
        }
    return CPLSPrintf("%.17g", v);
}

// Refuses a step that does not continue the coordinate strictly in its
// direction: `last` (the stored value before the new ones, if any) then
// `values`. The direction is `dir` (+1, -1), or, when 0, that of the first
// two values. Error naming both values (dates in CF time units).
void RequireStrictlyOrdered(const std::string& where, const std::string& dim,
                            std::optional<double> last, const std::vector<double>& values,
                            const std::vector<std::string>& texts,
                            const std::optional<zarr3::CfTimeUnits>& units, int dir) {
    for (size_t i = 0; i < values.size(); ++i) {
        const bool stored = i == 0;
        const std::optional<double> prev = stored ? last : std::optional<double>(values[i - 1]);
        if (!prev || std::isnan(*prev)) continue;
        const double d = values[i] - *prev;
        if (dir == 0 && d != 0) dir = d > 0 ? 1 : -1;
        if (d != 0 && (d > 0) == (dir > 0)) continue;
        const char* order = dir < 0 ? "before" : "after";
        const std::string was = stored ? "the coordinate's last value " + ValueText(*prev, units)
                                       : "the previous new value " + ValueText(*prev, units);
        const std::string shown = ValueText(values[i], units);
        throw zarr3::Error(where + ": the new " + dim + " value " + shown +
                           (texts[i] == shown ? "" : " (\"" + texts[i] + "\")") + " is " +
                           (d == 0 ? "equal to " : "not " + std::string(order) + " ") + was +
                           "; appended steps must be strictly " +
                           (dir < 0 ? "decreasing" : "increasing") + " along " + dim +
                           " (a duplicate or out-of-order step is refused" +
                           (stored && d != 0 ? "; a missing earlier step goes in with "
                                               "-co APPEND_ORDER=ANY)"
                                             : ")"));
    }
}

// APPEND_ORDER=ANY: no new value among `stored` nor repeated. Error naming it.
void RequireDistinct(const std::string& where, const std::string& dim, std::vector<double> stored,
                     const std::vector<double>& values, const std::vector<std::string>& texts,
                     const std::optional<zarr3::CfTimeUnits>& units) {
    for (size_t i = 0; i < values.size(); ++i) {
        if (std::find(stored.begin(), stored.end(), values[i]) != stored.end())
            throw zarr3::Error(where + ": the new " + dim + " value " +
                               ValueText(values[i], units) + " (\"" + texts[i] +
                               "\") is already in the coordinate (a duplicate step is refused, "
                               "also with APPEND_ORDER=ANY)");
        stored.push_back(values[i]);
    }
}

// -co APPEND_ORDER=ANY (else STRICT).
bool AnyOrder(CSLConstList options) {
    const char* v = CSLFetchNameValue(options, "APPEND_ORDER");
    if (!v || EQUAL(v, "STRICT")) return false;
    if (EQUAL(v, "ANY")) return true;
    throw zarr3::Error(std::string("creation option APPEND_ORDER=") + v +
                       ": expected STRICT or ANY");
}

// The numeric values of `texts` in a coordinate with attributes `attrs`.
std::vector<double> CoordinateValues(const std::vector<std::string>& texts,
                                     const nlohmann::json& attrs, const std::string& where) {
    std::vector<double> out;
    for (const auto& t : texts)
        out.push_back(CoordinateValue(t, attrs, where));
    return out;
}

} // namespace

bool IsSourcePositionItem(const std::string& key, const std::string& dim, const char* value) {
    if (key == dim || StartsWith(key, (dim + "#").c_str()) || StartsWith(key, "NETCDF_DIM_"))
        return true;
    if (StartsWith(key, "DIM_") && key.size() > 10 && key.ends_with("_INDEX")) return true;
    if (!value) return false; // band items: no date items
    for (const char* k : kDateItems)
        if (key == k && zarr3::parse_date_time(value)) return true;
    return false;
}

bool IsAppendRequest(CSLConstList options) {
    return CSLFetchNameValue(options, "APPEND_DIM") != nullptr;
}

bool AppendsToExistingStore(const char* name, CSLConstList options) {
    if (!IsAppendRequest(options)) return false;
    VSIStatBufL st;
    return VSIStatL((StoreRoot(name) + "/zarr.json").c_str(), &st) == 0;
}

namespace {

// The first append's coordinate: values and attributes (CF days since 1970
// when the values are dates); empty values when the source gives none.
// Checked like an append's: each value parses, and they are strictly
// increasing (dates) or strictly monotonic (numbers).
std::vector<double> FirstCoordinate(GDALDataset* src, CSLConstList options, nlohmann::json& attrs) {
    const std::string dim = DimOf(options);
    const auto texts = CoordinateTexts(src, options, src->GetRasterCount());
    attrs = nlohmann::json::object();
    if (texts.empty()) return {};
    // The source's own time coordinate keeps its units and values (exact); a date given or read
    // from other metadata is stored in days since 1970.
    const auto steps =
        CSLFetchNameValue(options, "APPEND_COORD") ? std::nullopt : SourceStepValues(src, dim);
    std::vector<double> values;
    if (steps && zarr3::parse_cf_time_units(steps->units)) {
        attrs = {{"units", steps->units},
                 {"calendar", steps->calendar.empty() ? "standard" : steps->calendar}};
        values = steps->values;
    } else {
        if (zarr3::parse_date_time(texts[0]))
            attrs = {{"units", "days since 1970-01-01"}, {"calendar", "proleptic_gregorian"}};
        values = CoordinateValues(texts, attrs, dim);
    }
    const auto units = TimeUnits(attrs);
    if (AnyOrder(options))
        RequireDistinct(dim, dim, {}, values, texts, units);
    else
        RequireStrictlyOrdered(dim, dim, std::nullopt, values, texts, units, units ? 1 : 0);
    return values;
}

} // namespace

std::string AppendedStepsText(GDALDataset* src, CSLConstList options) {
    std::vector<std::string> texts;
    try {
        texts = CoordinateTexts(src, options, src->GetRasterCount());
    } catch (const zarr3::Error&) {
        return ""; // the append itself refuses the values, naming them
    }
    if (texts.empty()) return "";
    if (texts.size() == 1) return ": " + texts[0];
    return ": " + texts.front() + " to " + texts.back() + " (" + std::to_string(texts.size()) +
           " steps)";
}

void CheckFirstAppend(GDALDataset* src, CSLConstList options) {
    nlohmann::json attrs;
    FirstCoordinate(src, options, attrs);
}

void WriteFirstCoordinate(const std::shared_ptr<zarr3::Store>& store, GDALDataset* src,
                          CSLConstList options) {
    const std::string dim = DimOf(options);
    nlohmann::json attrs;
    const auto nums = FirstCoordinate(src, options, attrs);
    if (nums.empty()) return;
    const zarr3::DataType f64 = zarr3::data_type_from_name("float64");
    const double nan = std::numeric_limits<double>::quiet_NaN();
    zarr3::Bytes values;
    for (double v : nums) {
        const auto b = EncodeCoordinate(v, f64, dim);
        values.insert(values.end(), b.begin(), b.end());
    }
    auto meta = zarr3::ArrayBuilder({static_cast<uint64_t>(nums.size())}, f64)
                    .regular_chunk_shape({4096})
                    .zstd(3)
                    .fill_value(EncodeCoordinate(nan, f64, dim))
                    .dimension_names(std::vector<std::string>{dim})
                    .attributes(attrs)
                    .build(dim);
    auto a = zarr3::Array::create(store, dim, meta, false);
    a->write(zarr3::Selection::all(meta.shape), values.data());
    a->flush();
}

namespace {

struct Target {
    std::shared_ptr<zarr3::Store> store;
    std::shared_ptr<zarr3::Array> array; // as its zarr.json read under the lock
    zarr3::NodeSnapshot seen;            // that read, checked again before the switch
    std::string dim;
};

// A store with nothing cached: every metadata read goes to the storage (on
// remote file systems, GDAL's cached object properties are dropped too).
std::shared_ptr<zarr3::Store> FreshStore(const std::string& root) {
    if (IsRemoteVSIPath(root)) VSICurlPartialClearCache(root.c_str());
    return std::make_shared<VSIStore>(root, true);
}

// The path of the array to append to: ARRAY_NAME, or the one array of the
// root group with dimension `dim` (names only: the listing may come from
// consolidated metadata; nothing read here decides where to write).
std::string TargetPath(const std::string& root, const std::shared_ptr<zarr3::Store>& fresh,
                       const std::string& dim, CSLConstList options) {
    if (const char* given = CSLFetchNameValue(options, "ARRAY_NAME")) return given;
    auto g = zarr3::Group::open(fresh, "");
    std::vector<std::string> names;
    const auto all = g->array_names();
    for (const auto& n : all) {
        const auto a = g->open_array(n);
        const auto& dn = a->metadata().dimension_names;
        if (dn.size() >= 2 &&
            std::any_of(dn.begin(), dn.end(), [&](const auto& d) { return d && *d == dim; }))
            names.push_back(n);
    }
    if (names.size() != 1)
        throw zarr3::Error(root + ": APPEND_DIM=" + dim + ": " +
                           (!names.empty() ? std::string("several arrays have that dimension")
                            : all.empty()
                                ? std::string("the store lists no array (a store refusing "
                                              "listings, such as an S3 bucket without list "
                                              "permission, lists none)")
                                : std::string("no array has that dimension")) +
                           "; name the array with -co ARRAY_NAME=<name>");
    return names[0];
}

// The array at `path` from its own zarr.json, read now (the caller holds its
// lock): its length is where the append writes.
Target OpenAppendTarget(const std::shared_ptr<zarr3::Store>& store, const std::string& path,
                        const std::string& dim) {
    Target t;
    t.dim = dim;
    t.store = store;
    t.array = zarr3::open_array_fresh(store, path, t.seen);
    ConfigureArray(*t.array);
    const auto& m = t.array->metadata();
    if (m.rank() != 3 || m.dimension_names.empty() || !m.dimension_names[0] ||
        *m.dimension_names[0] != t.dim)
        throw zarr3::Error(
            t.array->describe() + ": APPEND_DIM=" + t.dim + " needs an array of dimensions [" +
            t.dim + ", y, x] (classic layout); this one has rank " + std::to_string(m.rank()));
    if (path == dim)
        throw zarr3::Error(t.array->describe() + ": the array has the name of its dimension " +
                           dim + ", which names the coordinate array");
    return t;
}

bool SameGeoTransform(const double a[6], const double b[6]) {
    const double tol = 1e-9 * (std::fabs(a[1]) + std::fabs(a[5]) + 1e-12);
    for (int i = 0; i < 6; ++i)
        if (std::fabs(a[i] - b[i]) > tol * (i == 0 || i == 3 ? 1e3 : 1)) return false;
    return true;
}

std::string GtText(const double gt[6]) {
    return CPLSPrintf("(%.17g, %.17g, %.17g, %.17g, %.17g, %.17g)", gt[0], gt[1], gt[2], gt[3],
                      gt[4], gt[5]);
}

// Size, data type, geotransform and CRS of `src` against the store's array.
void CheckCompatible(const Target& t, GDALDataset* src) {
    const auto& m = t.array->metadata();
    const std::string w = t.array->describe();
    if (static_cast<uint64_t>(src->GetRasterXSize()) != m.shape[2] ||
        static_cast<uint64_t>(src->GetRasterYSize()) != m.shape[1])
        throw zarr3::Error(w + ": the source is " + std::to_string(src->GetRasterXSize()) + "x" +
                           std::to_string(src->GetRasterYSize()) + " pixels, the array " +
                           std::to_string(m.shape[2]) + "x" + std::to_string(m.shape[1]));
    const GDALDataType want = GDALTypeFor(m.dtype);
    for (int b = 1; b <= src->GetRasterCount(); ++b)
        if (src->GetRasterBand(b)->GetRasterDataType() != want)
            throw zarr3::Error(
                w + ": source band " + std::to_string(b) + " is " +
                GDALGetDataTypeName(src->GetRasterBand(b)->GetRasterDataType()) +
                ", the array holds " + m.dtype.name + " (" + GDALGetDataTypeName(want) +
                "); convert it first (gdal_translate -ot " + GDALGetDataTypeName(want) + ")");
    auto view = Zarr3RasterDataset::Open(t.store, t.array, false, false, false);
    double sgt[6], dgt[6];
    const bool shas = DatasetGeoTransform(src, sgt) == CE_None;
    const bool dhas = DatasetGeoTransform(view.get(), dgt) == CE_None;
    if (shas != dhas || (shas && !SameGeoTransform(sgt, dgt)))
        throw zarr3::Error(w + ": the source's geotransform " +
                           (shas ? GtText(sgt) : std::string("(none)")) +
                           " differs from the store's " + (dhas ? GtText(dgt) : "(none)"));
    const OGRSpatialReference* ss = src->GetSpatialRef();
    const OGRSpatialReference* ds = view->GetSpatialRef();
    if ((ss == nullptr) != (ds == nullptr) || (ss && !ss->IsSame(ds)))
        throw zarr3::Error(
            w + ": the source's CRS (" + (ss && ss->GetName() ? ss->GetName() : "none") +
            ") differs from the store's (" + (ds && ds->GetName() ? ds->GetName() : "none") + ")");
}

// Reads the source in row strips of whole chunk rows and writes them at
// index `start` along axis 0 of `out` (metadata not written).
// `before_strip` runs before each strip is written (a reservation renewed).
void WritePixels(GDALDataset* src, zarr3::Array& out, uint64_t start, const AppendValues& values,
                 GDALProgressFunc progress, void* progress_data,
                 const std::function<void()>& before_strip) {
    const auto& m = out.metadata();
    const GDALDataType gt = GDALTypeFor(m.dtype);
    const size_t gsize = static_cast<size_t>(GDALGetDataTypeSizeBytes(gt));
    const int n = src->GetRasterCount();
    const uint64_t W = m.shape[2], H = m.shape[1];
    const auto& yax = m.grid.axis(1);
    const uint64_t row_bytes = W * gsize * static_cast<uint64_t>(n);
    const uint64_t rows = std::max<uint64_t>(1, kRowBudget / std::max<uint64_t>(1, row_bytes));
    std::vector<GByte> buf, stored;
    for (uint64_t y0 = 0; y0 < H;) {
        uint64_t y1 =
            std::min(H, yax.chunk_start(yax.chunk_index(y0)) + yax.chunk_edge(yax.chunk_index(y0)));
        while (y1 < H && y1 - y0 + yax.chunk_edge(yax.chunk_index(y1)) <= rows)
            y1 = std::min(H, y1 + yax.chunk_edge(yax.chunk_index(y1)));
        const int h = static_cast<int>(y1 - y0), w = static_cast<int>(W);
        buf.resize(static_cast<size_t>(n) * static_cast<size_t>(h) * W * gsize);
        ReadSourceRows(src, static_cast<int>(y0), w, h, gt, values, buf);
        const void* data = buf.data();
        if (!SameRepresentation(m.dtype)) {
            stored.resize(buf.size() / gsize * m.dtype.size);
            NarrowFromGDAL(m.dtype, buf.data(), stored.data(), buf.size() / gsize);
            data = stored.data();
        }
        zarr3::Selection sel{{start, y0, 0}, {static_cast<uint64_t>(n), y1 - y0, W}, {}};
        before_strip();
        out.write(sel, data);
        y0 = y1;
        if (!progress(static_cast<double>(y0) / static_cast<double>(H) * 0.9, "", progress_data))
            throw zarr3::Error("append cancelled by the user");
    }
    out.flush();
}

// The coordinate's part of an append, checked before anything is written:
// the new values encoded, the array with the new length (`out`, null when
// there is no coordinate array); Write stores the values, the switch writes
// its zarr.json.
struct CoordinateStep {
    std::unique_ptr<zarr3::ArrayLock> lock;
    std::shared_ptr<zarr3::Array> out;
    zarr3::NodeSnapshot seen;
    zarr3::Bytes values;
    uint64_t start = 0, count = 0;
    void Write() {
        if (!out) return;
        out->write(zarr3::Selection{{start}, {count}, {}}, values.data());
        out->flush();
    }
};

// The longest length along <dim> of the other arrays of the root group whose
// first dimension is <dim> (arrays sharing the coordinate), from their own
// zarr.json; 0 when there are none. Their appends wait for the coordinate's
// lock, which the caller holds, before switching.
uint64_t SharedLength(const Target& t) {
    uint64_t longest = 0;
    const auto g = zarr3::Group::open(t.store, "");
    for (const auto& name : g->array_names()) {
        if (name == t.array->path() || name == t.dim) continue;
        zarr3::NodeSnapshot seen;
        std::shared_ptr<zarr3::Array> a;
        try {
            a = zarr3::open_array_fresh(t.store, name, seen);
        } catch (const zarr3::Error&) {
            continue; // unreadable: it does not open as a variable either
        }
        const auto& m = a->metadata();
        if (m.rank() >= 1 && !m.dimension_names.empty() && m.dimension_names[0] &&
            *m.dimension_names[0] == t.dim)
            longest = std::max(longest, m.shape[0]);
    }
    return longest;
}

// The coordinate values [start, start + n) must equal those already stored
// where other arrays sharing the coordinate reach (`shared` long): they
// date those arrays' steps. Error naming the coordinate and the index.
void RequireSameAsShared(zarr3::Array& c, uint64_t start, uint64_t shared,
                         const zarr3::Bytes& values, const std::vector<std::string>& texts) {
    if (shared <= start) return;
    const uint64_t n = texts.size(), k = std::min(shared, start + n) - start;
    const size_t es = c.metadata().dtype.size;
    zarr3::Bytes old(static_cast<size_t>(k) * es);
    c.read(zarr3::Selection{{start}, {k}, {}}, old.data());
    for (uint64_t i = 0; i < k; ++i)
        if (std::memcmp(old.data() + i * es, values.data() + i * es, es) != 0)
            throw zarr3::Error(c.describe() + ": index " + std::to_string(start + i) +
                               " already holds another value, used by an array sharing the "
                               "coordinate; this append gives \"" +
                               texts[i] +
                               "\" (the appended coordinate would disagree with that array)");
}

// The stored values at index 0 and `start` - 1 of the 1-D coordinate `c`.
std::pair<double, double> FirstAndLast(zarr3::Array& c, uint64_t start) {
    const auto& dt = c.metadata().dtype;
    zarr3::Bytes b(dt.size);
    c.read(zarr3::Selection{{0}, {1}, {}}, b.data());
    const double first = DecodeCoordinate(b.data(), dt);
    c.read(zarr3::Selection{{start - 1}, {1}, {}}, b.data());
    return {first, DecodeCoordinate(b.data(), dt)};
}

// The new values must continue the stored ones strictly in the coordinate's
// direction: that of its first and last values when they differ, else
// increasing for CF time, else that of the new values.
void RequireAfterStored(zarr3::Array& c, uint64_t start, const std::vector<double>& nums,
                        const std::vector<std::string>& texts, const std::string& dim) {
    const auto units = TimeUnits(c.metadata().attributes);
    std::optional<double> last;
    int dir = units ? 1 : 0;
    if (start > 0) {
        const auto [first, l] = FirstAndLast(c, start);
        last = l;
        if (start > 1 && first != l && !std::isnan(first) && !std::isnan(l))
            dir = l > first ? 1 : -1;
    }
    RequireStrictlyOrdered(c.describe(), dim, last, nums, texts, units, dir);
}

// APPEND_ORDER=ANY: a new value may come in any order but must not be one of
// the stored values [0, start) nor repeat another new one.
void RequireNotStored(zarr3::Array& c, uint64_t start, const std::vector<double>& nums,
                      const std::vector<std::string>& texts, const std::string& dim) {
    const auto& dt = c.metadata().dtype;
    zarr3::Bytes b(zarr3::checked_mul(start, dt.size, c.describe()));
    if (start > 0) c.read(zarr3::Selection{{0}, {start}, {}}, b.data());
    std::vector<double> stored;
    for (uint64_t i = 0; i < start; ++i)
        stored.push_back(DecodeCoordinate(b.data() + i * dt.size, dt));
    RequireDistinct(c.describe(), dim, std::move(stored), nums, texts,
                    TimeUnits(c.metadata().attributes));
}

// Locks the coordinate array <dim>, reads its zarr.json now and checks the
// values of the new indices [start, start + n): they parse, are storable,
// continue the coordinate strictly in its direction and, where another array
// sharing it already reaches, equal the stored ones. Its length must be at
// least `start` (the data array's); values past `start` that no array uses
// are what a killed append left (overwritten). Nothing is written.
CoordinateStep PrepareCoordinate(const Target& t, GDALDataset* src, CSLConstList options,
                                 uint64_t start) {
    const int n = src->GetRasterCount();
    const auto texts = CoordinateTexts(src, options, n);
    CoordinateStep step;
    step.lock = zarr3::lock_array(*t.store, t.dim);
    std::shared_ptr<zarr3::Array> c;
    try {
        c = zarr3::open_array_fresh(t.store, t.dim, step.seen);
    } catch (const zarr3::NotFound&) {
        if (!texts.empty())
            CPLError(CE_Warning, CPLE_AppDefined,
                     "%s: no coordinate array %s; the coordinate value is not recorded",
                     t.store->uri().c_str(), t.dim.c_str());
        return step;
    }
    const auto& cm = c->metadata();
    if (cm.rank() != 1 || cm.shape[0] < start)
        throw zarr3::Error(c->describe() + ": expected a 1-D coordinate with at least " +
                           std::to_string(start) + " values (the array's length along " + t.dim +
                           ")");
    if (texts.empty())
        throw zarr3::Error(c->describe() +
                           ": no coordinate value for the new step: give "
                           "-co APPEND_COORD=<value> (e.g. a date YYYY-MM-DD) or a source with "
                           "a DATE/TIFFTAG_DATETIME metadata item");
    auto nums = CoordinateValues(texts, cm.attributes, c->describe());
    for (double& v : nums) {
        const auto b = EncodeCoordinate(v, cm.dtype, c->describe());
        step.values.insert(step.values.end(), b.begin(), b.end());
        v = DecodeCoordinate(b.data(), cm.dtype); // compared as stored (float32 rounds)
    }
    if (AnyOrder(options))
        RequireNotStored(*c, start, nums, texts, t.dim);
    else
        RequireAfterStored(*c, start, nums, texts, t.dim);
    const uint64_t shared = std::min(SharedLength(t), cm.shape[0]);
    RequireSameAsShared(*c, start, shared, step.values, texts);
    zarr3::ArrayMetadata nm = cm;
    step.start = start;
    step.count = static_cast<uint64_t>(n);
    const zarr3::Shape shape{std::max(shared, start + step.count)};
    nm.grid.resize(shape);
    nm.shape = shape;
    step.out = zarr3::Array::open(t.store, t.dim, nm);
    return step;
}

// Error naming the node unless its zarr.json still reads as `seen`, read
// through a store with nothing cached (stores without locks: another writer
// appended meanwhile).
// `fresh` gives such a store (FreshStore; an Icechunk session: itself, its
// commit detects the other writers).
using FreshStoreFn = std::function<std::shared_ptr<zarr3::Store>()>;
void RequireUnchanged(const FreshStoreFn& fresh, const std::string& path,
                      const zarr3::NodeSnapshot& seen) {
    zarr3::require_node_unchanged(*fresh(), path, seen, "append");
}

// The per-band attribute lists (band_descriptions, band_metadata;
// raster_band_metadata.cpp) grow with the new bands; lists of another
// length than the old band count are dropped (they no longer describe it).
// A new band gets no description (its date labels it; the source's names
// the variable, not the step) and none of the source's items about its own
// position (IsSourcePositionItem): the coordinate dates the step.
void ExtendBandAttributes(nlohmann::json& attrs, GDALDataset* src, uint64_t old_count,
                          const std::string& dim) {
    // Per-band packing lists: the new bands hold the last band's packing
    // (the values were converted into it, append_values.hpp).
    for (const char* key : {"band_scale_factor", "band_add_offset", "band_units"}) {
        auto it = attrs.find(key);
        if (it == attrs.end() || !it->is_array() || it->size() != old_count || old_count == 0)
            continue;
        const nlohmann::json last = it->back(); // a copy: push_back may move the list
        for (int b = 1; b <= src->GetRasterCount(); ++b)
            it->push_back(last);
    }
    for (const char* key : {"band_descriptions", "band_metadata"}) {
        auto it = attrs.find(key);
        if (it == attrs.end()) continue;
        if (!it->is_array() || it->size() != old_count) {
            attrs.erase(it);
            continue;
        }
        for (int b = 1; b <= src->GetRasterCount(); ++b) {
            if (std::strcmp(key, "band_descriptions") == 0) {
                it->push_back("");
                continue;
            }
            nlohmann::json md = nlohmann::json::object();
            for (CSLConstList i = src->GetRasterBand(b)->GetMetadata(); i && *i; ++i)
                if (const char* eq = std::strchr(*i, '='); eq && eq != *i) {
                    const std::string k(*i, static_cast<size_t>(eq - *i));
                    if (!IsSourcePositionItem(k, dim)) md[k] = eq + 1;
                }
            it->push_back(md);
        }
        const bool empty = std::all_of(it->begin(), it->end(), [](const nlohmann::json& v) {
            return v.is_string() ? v.get<std::string>().empty() : v.empty();
        });
        if (empty) attrs.erase(it);
    }
}

// The switches, data array last: the coordinate's zarr.json, then the
// array's (its new length), each after checking that no other writer changed
// either node since it was read; then the root's consolidated metadata,
// rewritten from the nodes as stored (RefreshConsolidated).
// `conditional`: each zarr.json replaced only while it is the one read
// (put_if on its version: a storage's If-Match).
void Switch(const FreshStoreFn& fresh, const Target& t, CoordinateStep& coord, zarr3::Array& out,
            bool& switched, bool conditional) {
    zarr3::test_pause_point("append-switch");
    RequireUnchanged(fresh, t.array->path(), t.seen);
    if (coord.out) {
        RequireUnchanged(fresh, t.dim, coord.seen);
        zarr3::test_kill_point("append-coord-chunks");
        if (conditional)
            zarr3::switch_metadata_if(*coord.out, coord.seen, "append");
        else
            coord.out->write_metadata();
    }
    zarr3::test_kill_point("append-coord");
    RequireUnchanged(fresh, t.array->path(), t.seen);
    if (conditional) // last: the array's new length
        zarr3::switch_metadata_if(out, t.seen, "append");
    else
        out.write_metadata();
    switched = true;
    RefreshConsolidated(*t.store, t.array->path());
    zarr3::test_kill_point("append-meta");
}

// An append that failed after writing chunks (a cancel, an unreadable source,
// a full disk) and before its switch: the chunks it wrote past the array's
// end are removed, so the store is as it was. Only its own keys, each on
// its own (one the store refuses, such as a symbolic link it does not
// follow, keeps no other); only where the array lock excludes other
// processes (elsewhere another writer may own them); a removal that fails
// leaves them, as a killed append does (the next append overwrites them).
void RemoveUnswitchedChunks(const Target& t, zarr3::Array& out, uint64_t start,
                            std::vector<std::string> keys) {
    try {
        out.flush(); // nothing still being written
    } catch (const std::exception&) {
    }
    std::string left;
    const auto own = zarr3::chunk_keys_from(out, start);
    keys.insert(keys.end(), own.begin(), own.end()); // the overview levels' too
    for (const auto& key : keys) {
        try {
            t.store->erase(key);
        } catch (const std::exception& e) {
            if (left.empty()) left = e.what();
        }
    }
    if (!left.empty())
        CPLError(CE_Warning, CPLE_AppDefined,
                 "%s: chunks of the failed append are left past the array's end: %s",
                 t.array->describe().c_str(), left.c_str());
}

} // namespace

namespace {

// One attempt of the append into the store `fresh` gives (the root's, or an
// Icechunk session); `root` names the store in errors. `verify_stored`:
// where no lock excludes other processes (plain stores; a session's commit
// detects the other writers), the steps are reserved (object storage that
// checks conditions) or re-read after the switch.
std::unique_ptr<Zarr3RasterDataset> AppendOnce(const std::string& root, const FreshStoreFn& fresh,
                                               GDALDataset* src, CSLConstList options,
                                               bool verify_stored, GDALProgressFunc progress,
                                               void* progress_data) {
    const std::string dim = DimOf(options);
    const std::string path = TargetPath(root, fresh(), dim, options);
    auto store = fresh();
    // Held across reading the length, writing and the switch: appends to
    // this array (other processes on local stores, other threads of this
    // process everywhere) wait for each other.
    const auto lock = zarr3::lock_array(*store, path);
    const Target t = OpenAppendTarget(store, path, dim);
    CheckCompatible(t, src);
    const auto values =
        PlanAppendValues(Zarr3RasterDataset::Open(t.store, t.array, false, false, false).get(), src,
                         t.array->metadata().dtype, options, t.array->describe());
    const auto& m = t.array->metadata();
    const uint64_t start = m.shape[0], n = static_cast<uint64_t>(src->GetRasterCount());
    // Every check before anything is written: a refused append leaves the
    // store as it was, without chunks past the array's end.
    auto coord = PrepareCoordinate(t, src, options, start);
    CheckAppendValues(src, values); // reads the source once when it converts
    auto nm = zarr3::appended_metadata(m, 0, n, t.array->describe());
    ExtendBandAttributes(nm.attributes, src, start, dim);
    auto out = zarr3::Array::open(t.store, t.array->path(), nm);
    ConfigureArray(*out);
    AppendedOverviews ovr(t.store, *t.array, n);
    const bool unlocked = verify_stored && !lock->across_processes();
    Reservations held;
    if (unlocked)
        held = Reserve(fresh, t.store, {t.array->path(), t.seen},
                       {coord.out ? t.dim : "", coord.seen}, start, n);
    const bool reserved = held.active();
    // No lock across processes nor reservation (an object store without
    // conditional writes): another append may write the same step; checked
    // before each write, and after the switch success only when ours is
    // what is stored.
    const bool shared = unlocked && !reserved;
    const AppendedStep step{t.array->path(), coord.out ? t.dim : std::string(), start, n,
                            &coord.values};
    bool switched = false;
    WriteClock written;
    try {
        if (shared) RequireUnchanged(fresh, t.array->path(), t.seen);
        written.start();
        WritePixels(src, *out, start, values, progress, progress_data, [&] { held.keep(); });
        ovr.Write(out); // the levels' new steps, past their ends
        zarr3::test_kill_point("append-chunks");
        if (shared) RequireUnchanged(fresh, t.array->path(), t.seen);
        coord.Write();
        written.stop();
        held.keep(true); // still this append's: no other writer wrote these steps
        ovr.Switch();    // before the base's: a kill between leaves longer levels (tolerated)
        Switch(fresh, t, coord, *out, switched, reserved);
    } catch (const std::exception& e) {
        if (!switched && (lock->across_processes() || (reserved && !held.lost())))
            RemoveUnswitchedChunks(t, *out, start, ovr.WrittenKeys());
        // Written, then another append switched: its step may be ours.
        if (!shared || !written.started() ||
            !StoredStep(fresh, step, src, values, written.settle()).empty())
            throw;
        CPLError(CE_Warning, CPLE_AppDefined, "%s; yet this append's step is stored at index %llu",
                 e.what(), static_cast<unsigned long long>(start));
    }
    held.release();
    if (shared && switched) // else checked above
        if (const auto not_ours = StoredStep(fresh, step, src, values, written.settle());
            !not_ours.empty())
            throw zarr3::Error(not_ours);
    auto ds = Zarr3RasterDataset::Open(t.store, out, false, false, false);
    ds->SetDescription(root.c_str());
    return ds;
}

// The append, run again (at most kMaxAppendAttempts times) while other appends
// switch the steps it read before it could reserve them.
GDALDataset* AppendWith(const std::string& root, const FreshStoreFn& fresh, GDALDataset* src,
                        CSLConstList options, bool verify_stored, GDALProgressFunc progress,
                        void* progress_data) {
    if (!progress) progress = GDALDummyProgress;
    std::unique_ptr<Zarr3RasterDataset> ds;
    const bool ok = ErrorBoundary(root, [&] {
        if (src->GetRasterCount() == 0) throw zarr3::Error("the source has no raster bands");
        for (int attempt = 1;; ++attempt) {
            try {
                ds = AppendOnce(root, fresh, src, options, verify_stored, progress, progress_data);
                break;
            } catch (const StepMoved& e) {
                if (attempt >= kMaxAppendAttempts)
                    throw zarr3::Error(std::string(e.what()) + "; gave up after " +
                                       std::to_string(kMaxAppendAttempts) + " attempts");
                CPLDebug("Zarr3", "%s; appending again at the new end", e.what());
            }
        }
        progress(1.0, "", progress_data);
    });
    return ok ? ds.release() : nullptr;
}

} // namespace

GDALDataset* Zarr3AppendCopy(const char* name, GDALDataset* src, CSLConstList options,
                             GDALProgressFunc progress, void* progress_data) {
    const std::string root = StoreRoot(name);
    return AppendWith(
        root, [&] { return FreshStore(root); }, src, options, true, progress, progress_data);
}

GDALDataset* Zarr3AppendInto(const std::string& root, std::shared_ptr<zarr3::Store> store,
                             GDALDataset* src, CSLConstList options, GDALProgressFunc progress,
                             void* progress_data) {
    return AppendWith(
        root, [&] { return store; }, src, options, false, progress, progress_data);
}

} // namespace zarr3drv
