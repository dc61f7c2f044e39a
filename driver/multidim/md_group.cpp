// Zarr3Group: browsing and creating a Zarr v3 hierarchy through GDAL's
// multidimensional API.
#include "multidim/md_group.hpp"

#include "error_boundary.hpp"
#include "limits.hpp"
#include "mapping/array_mapping.hpp"
#include "mapping/gdal_types.hpp"
#include "multidim/md_array.hpp"
#include "multidim/md_attribute.hpp"
#include "multidim/md_dimension.hpp"
#include "options/creation_options.hpp"
#include "options/io_options.hpp"

#include "zarr3/hierarchy.hpp"

#include <algorithm>

namespace zarr3drv {

namespace {

// Number of axes a per-axis creation option lists (-1: not countable; the
// builder reports the value).
int AxesListed(const std::string& key, const std::string& value) {
    if (key == "CHUNK_SHAPES") {
        const auto j = nlohmann::json::parse(value, nullptr, false);
        return j.is_array() ? static_cast<int>(j.size()) : -1;
    }
    std::string v = value;
    if (v.size() >= 2 && v.front() == '[' && v.back() == ']') v = v.substr(1, v.size() - 2);
    return CPLStringList(CSLTokenizeString2(v.c_str(), ",", CSLT_ALLOWEMPTYTOKENS)).size();
}

// A copy (gdalmdimtranslate -co ARRAY:NAME=VALUE) gives every option to every
// array: a per-axis option listing more axes than this array has
// (DIMENSION_NAMES: another number) is meant for other arrays and is left
// out here, so that e.g. ARRAY:BLOCKSIZE=30,32,64 chunks the 3-D arrays and
// leaves the 1-D coordinate arrays as they were.
void DropOptionsNotFitting(CPLStringList& opts, const std::string& group, const std::string& name,
                           size_t rank) {
    for (const char* key : {"BLOCKSIZE", "SHARD_CHUNK_SHAPE", "CHUNK_SHAPES", "DIMENSION_NAMES"}) {
        const char* v = opts.FetchNameValue(key);
        if (!v) continue;
        const int n = AxesListed(key, v);
        const bool fits =
            n < 0 || (std::string(key) == "DIMENSION_NAMES" ? static_cast<size_t>(n) == rank
                                                            : static_cast<size_t>(n) <= rank);
        if (fits) continue;
        CPLDebug("Zarr3", "%s%s%s: ARRAY:%s=%s lists %d axes, the array has %d: not applied to it",
                 group.c_str(), group == "/" ? "" : "/", name.c_str(), key, v, n,
                 static_cast<int>(rank));
        opts.SetNameValue(key, nullptr);
    }
}

} // namespace

// An array's resolver (coordinates, grid_mapping): array `n` of the group or
// a parent; errors become CPLErrors (it runs inside GDAL's calls).
std::shared_ptr<GDALMDArray> Zarr3Group::ResolveUpwards(const std::weak_ptr<const Zarr3Group>& self,
                                                        const std::string& n) {
    std::shared_ptr<GDALMDArray> out;
    auto g = self.lock();
    if (g) ErrorBoundary(g->Where() + "/" + n, [&] { out = g->FindArrayUpwards(n); });
    return out;
}

Zarr3Group::Zarr3Group(const std::string& parent_full_name, const std::string& name)
    : GDALGroup(parent_full_name, name) {}

std::shared_ptr<Zarr3Group> Zarr3Group::Create(const std::string& parent_full_name,
                                               const std::string& name,
                                               std::shared_ptr<zarr3::Group> group,
                                               std::shared_ptr<MDContext> ctx,
                                               std::shared_ptr<Zarr3Group> parent) {
    auto g = std::make_shared<Zarr3Group>(parent_full_name, name);
    g->group_ = std::move(group);
    g->ctx_ = std::move(ctx);
    g->parent_ = parent;
    if (g->group_) g->folder_id_ = LocalFolderId(g->group_->store()->uri(), g->group_->path());
    g->groups_opened_ =
        parent ? parent->groups_opened_ : std::make_shared<std::atomic<uint64_t>>(0);
    if (!parent && g->group_) WarnInvalidConsolidatedKeys(*g->group_);
    return g;
}

void WarnInvalidConsolidatedKeys(const zarr3::Group& g) {
    if (!g.metadata().consolidated) return;
    for (const auto& [key, node] : *g.metadata().consolidated)
        if (!zarr3::is_valid_key(key))
            CPLError(CE_Warning, CPLE_AppDefined,
                     "%s: consolidated_metadata.metadata holds the entry \"%s\", which names no "
                     "node (an empty, '.' or '..' path segment); ignored",
                     (g.store()->uri() + "/" + zarr3::join_key(g.path(), "zarr.json")).c_str(),
                     key.substr(0, 200).c_str());
}

std::shared_ptr<Zarr3Group> Zarr3Group::CreateForRootArray(std::shared_ptr<zarr3::Array> array,
                                                           const std::string& array_name,
                                                           std::shared_ptr<MDContext> ctx) {
    auto g = std::make_shared<Zarr3Group>(std::string(), "/");
    g->root_array_ = std::move(array);
    g->root_array_name_ = array_name;
    g->ctx_ = std::move(ctx);
    return g;
}

std::string Zarr3Group::Where() const {
    const std::string uri = group_ ? group_->store()->uri() : root_array_->store().uri();
    return uri + (GetFullName() == "/" ? "" : GetFullName());
}

bool Zarr3Group::Writable(const char* what) const {
    if (group_ && ctx_ && ctx_->writable() && group_->store()->writable()) return true;
    CPLError(CE_Failure, CPLE_NotSupported, "%s: cannot %s: %s", Where().c_str(), what,
             group_ ? "the dataset is opened read-only"
                    : "the store root is an array, not a group");
    return false;
}

std::string Zarr3Group::ChildPath(const std::string& name) const {
    return zarr3::join_key(group_->path(), name);
}

// Children whose zarr.json is not JSON (or names no node type) are left out
// of the group's listing: one warning each, naming the file and the problem.
void Zarr3Group::WarnSkippedChildren() const {
    if (skipped_checked_ || !group_ || group_->metadata().consolidated) return;
    skipped_checked_ = true;
    const ChildNames& known = Children();
    auto& store = *group_->store();
    for (const auto& n : store.list_dir(group_->path())) {
        if (n.empty() || n[0] == '.' || n == "zarr.json" || !zarr3::is_valid_key(n) ||
            known.arrays.count(n) || known.groups.count(n))
            continue;
        const std::string path = zarr3::join_key(group_->path(), n);
        const std::string where = store.uri() + "/" + zarr3::join_key(path, "zarr.json");
        std::string problem;
        try {
            if (!store.size(zarr3::join_key(path, "zarr.json"))) continue; // not a node
            const auto j = zarr3::read_node_json(store, path);
            if (j && j->is_object() && j->contains("node_type")) continue;
            problem = where + ": no node_type";
        } catch (const std::bad_alloc&) {
            throw;
        } catch (const std::exception& e) {
            problem = e.what();
            if (problem.find(where) == std::string::npos) problem = where + ": " + problem;
        }
        CPLError(CE_Warning, CPLE_AppDefined, "%s (node skipped)", problem.c_str());
    }
}

const Zarr3Group::ChildNames& Zarr3Group::Children() const {
    if (children_) return *children_;
    ChildNames c;
    ErrorBoundary(Where(), [&] {
        if (!group_) {
            c.arrays.insert(root_array_name_);
            return;
        }
        const auto arrays = group_->array_names();
        const auto groups = group_->group_names();
        c.arrays.insert(arrays.begin(), arrays.end());
        c.groups.insert(groups.begin(), groups.end());
    });
    c.arrays.insert(created_arrays_.begin(), created_arrays_.end());
    c.groups.insert(created_groups_.begin(), created_groups_.end());
    children_ = std::move(c);
    return *children_;
}

std::vector<std::string> Zarr3Group::RawArrayNames() const {
    const auto& a = Children().arrays;
    return {a.begin(), a.end()};
}

// The listing (gdalmdiminfo, gdalmdimtranslate, QGIS) leaves out arrays that
// cannot be opened (unknown codec, bad metadata), with one warning each, so
// that the rest of the store opens; opening such an array by name is an
// error. Each array is checked once (not again when opened).
std::vector<std::string> Zarr3Group::GetMDArrayNames(CSLConstList) const {
    std::vector<std::string> names = RawArrayNames();
    if (!group_) return names;
    ErrorBoundary(Where(), [&] { WarnSkippedChildren(); });
    std::erase_if(names, [&](const std::string& n) {
        if (arrays_.count(n) || listed_ok_.count(n) || created_arrays_.count(n)) return false;
        if (listed_bad_.count(n)) return true;
        const std::string where = Where() + "/" + n + "/zarr.json";
        std::string problem;
        try {
            group_->open_array(n); // parsed again when opened: the metadata is not kept
            listed_ok_.insert(n);
            return false;
        } catch (const std::bad_alloc&) {
            problem = where + ": out of memory";
        } catch (const std::exception& e) {
            problem = e.what();
            if (problem.find(where) == std::string::npos) problem = where + ": " + problem;
        }
        CPLError(CE_Warning, CPLE_AppDefined, "%s (array skipped)", problem.c_str());
        listed_bad_.insert(n);
        return true;
    });
    return names;
}

std::vector<std::string> Zarr3Group::GetGroupNames(CSLConstList) const {
    const auto& g = Children().groups;
    return {g.begin(), g.end()};
}

bool Zarr3Group::HasArray(const std::string& name) const {
    return arrays_.count(name) || Children().arrays.count(name);
}

bool Zarr3Group::HasChild(const std::string& name) const {
    return HasArray(name) || Children().groups.count(name);
}

std::shared_ptr<GDALGroup> Zarr3Group::OpenGroup(const std::string& name, CSLConstList) const {
    std::shared_ptr<GDALGroup> out;
    if (!group_) return out;
    if (auto it = groups_.find(name); it != groups_.end()) return it->second;
    ErrorBoundary(Where(), [&] {
        if (!Children().groups.count(name)) return;
        CheckWalkBounds(name);
        auto self = std::const_pointer_cast<Zarr3Group>(shared_from_this());
        auto g = Create(GetFullName(), name, group_->open_group(name), ctx_, self);
        groups_[name] = g;
        out = g;
    });
    return out;
}

void Zarr3Group::CheckWalkBounds(const std::string& name) const {
    const std::string path = ChildPath(name);
    if (PathDepth(path) > kMaxWalkDepth)
        throw zarr3::Error("group /" + path + " is nested deeper than " +
                           std::to_string(kMaxWalkDepth) + " levels; not opened");
    const auto id = LocalFolderId(group_->store()->uri(), path);
    if (id != std::pair<uint64_t, uint64_t>{0, 0})
        for (auto g = shared_from_this(); g; g = g->parent_.lock())
            if (g->folder_id_ == id)
                throw zarr3::Error("group /" + path + " is the folder of its ancestor " +
                                   g->GetFullName() + " (a symbolic link cycle); not opened");
    // The node budget (much smaller on remote stores, where each group costs
    // requests): one warning naming the store and the option, then an error
    // for each group past it.
    const std::string uri = group_->store()->uri();
    const uint64_t budget = MaxWalkNodes(uri);
    const uint64_t n = ++*groups_opened_;
    if (n <= budget) return;
    const std::string msg = zarr3::walk_budget_message(uri, budget);
    if (n == budget + 1) CPLError(CE_Warning, CPLE_AppDefined, "%s", msg.c_str());
    throw zarr3::Error(msg + "; group /" + path + " not opened");
}

std::shared_ptr<GDALMDArray> Zarr3Group::OpenMDArray(const std::string& name,
                                                     CSLConstList options) const {
    // A full name (GDAL 3.13's gdalmdiminfo asks the root group for "/lat"):
    // resolved from the root like OpenMDArrayFromFullname, never a store key.
    if (!name.empty() && name[0] == '/') return OpenMDArrayFromFullname(name, options);
    std::shared_ptr<GDALMDArray> out;
    ErrorBoundary(Where() + "/" + name, [&] { out = OpenArrayImpl(name); });
    return out;
}

std::shared_ptr<Zarr3Group>
Zarr3Group::NearestAncestor(const std::function<bool(const Zarr3Group&)>& holds) const {
    using Ptr = std::shared_ptr<Zarr3Group>;
    const auto found = zarr3::nearest_ancestor(
        std::const_pointer_cast<Zarr3Group>(shared_from_this()),
        [&](const Ptr& g) { return holds(*g); },
        [](const Ptr& g) -> std::optional<Ptr> {
            if (auto p = g->parent_.lock()) return p;
            return std::nullopt;
        });
    return found ? *found : nullptr;
}

std::shared_ptr<GDALMDArray> Zarr3Group::FindArrayUpwards(const std::string& name) const {
    const auto g = NearestAncestor([&](const Zarr3Group& c) { return c.HasArray(name); });
    return g ? g->OpenArrayImpl(name) : nullptr;
}

std::shared_ptr<GDALDimension> Zarr3Group::FindDimension(const std::string& name,
                                                         GUInt64 size) const {
    auto it = dims_.find(name);
    if (it != dims_.end() && it->second->GetSize() == size) return it->second;
    // A name not indexed here refers to a parent's dimension of that name
    // (netCDF-like scoping), typically indexed by a parent's coordinate array.
    if (auto p = parent_.lock(); p && !HasArray(name)) {
        std::shared_ptr<GDALDimension> found;
        p->NearestAncestor([&](const Zarr3Group& g) {
            for (const auto& d : g.GetDimensions())
                if (d->GetName() == name && d->GetSize() == size) {
                    found = d;
                    return true;
                }
            return false;
        });
        if (found) return found;
    }
    auto d = std::make_shared<Zarr3Dimension>(GetFullName(), name, DimensionTypeFromName(name),
                                              std::string(), size);
    if (it == dims_.end()) dims_[name] = d;
    return d;
}

std::vector<std::shared_ptr<GDALDimension>>
Zarr3Group::DimensionsFor(const std::string& array_name, const zarr3::ArrayMetadata& meta) const {
    std::vector<std::shared_ptr<GDALDimension>> dims;
    for (size_t i = 0; i < meta.rank(); ++i) {
        const auto size = static_cast<GUInt64>(meta.shape[i]);
        if (!zarr3::has_dimension_name(meta, i)) { // private to the array
            const std::string n = zarr3::unnamed_dimension_name(i);
            const std::string parent =
                (GetFullName() == "/" ? "/" : GetFullName() + "/") + array_name;
            dims.push_back(
                std::make_shared<Zarr3Dimension>(parent, n, std::string(), std::string(), size));
            continue;
        }
        dims.push_back(FindDimension(*meta.dimension_names[i], size));
    }
    return dims;
}

// CRS of an array through the shared resolver (array_mapping.hpp): its own
// proj:* / _CRS attributes, else crs_wkt / spatial_ref of its CF grid_mapping
// variable (in this group or a parent); mapped onto the array's X/Y axes.
void Zarr3Group::AttachCRS(Zarr3MDArray& arr, const nlohmann::json& attrs) const {
    const NodeAttributesLookup lookup =
        [this](const std::string& gm) -> std::optional<nlohmann::json> {
        if (!group_) return std::nullopt;
        try {
            const auto g = NearestAncestor(
                [&](const Zarr3Group& c) { return c.group_ && c.Children().arrays.count(gm); });
            if (!g) return std::nullopt;
            const auto gvar = g->group_->open_array(gm); // keeps the metadata alive
            // Constructed explicitly: an implicit json -> optional<json>
            // conversion is ambiguous with newer compilers (GCC 16).
            return std::optional<nlohmann::json>(std::in_place, gvar->metadata().attributes);
        } catch (const std::exception& e) {
            CPLError(CE_Warning, CPLE_AppDefined, "%s: grid_mapping %s: %s", Where().c_str(),
                     gm.c_str(), e.what());
        }
        return std::nullopt;
    };
    ArrayMapping crs;
    ResolveCRS(crs, attrs, nullptr, lookup);
    if (crs.srs) arr.SetCRS(std::make_unique<OGRSpatialReference>(*crs.srs));
}

void Zarr3Group::LinkIndexingVariables(const std::shared_ptr<GDALMDArray>& arr,
                                       const std::string& name) const {
    // A dimension is indexed by a 1-D array of the same name and size in this
    // group (the array itself for a coordinate array).
    for (const auto& d : arr->GetDimensions()) {
        auto weak = std::dynamic_pointer_cast<GDALDimensionWeakIndexingVar>(d);
        if (!weak || weak->GetIndexingVariable()) continue;
        std::shared_ptr<GDALMDArray> var;
        if (d->GetName() == name) {
            if (arr->GetDimensionCount() == 1) var = arr;
        } else if (group_ &&
                   d->GetFullName() ==
                       (GetFullName() == "/" ? "/" : GetFullName() + "/") + d->GetName() &&
                   Children().arrays.count(d->GetName())) { // listing last: it is slow
            auto other = group_->open_array(d->GetName());
            const auto& om = other->metadata();
            if (om.rank() == 1 && om.shape[0] == d->GetSize() && om.dimension_names.size() == 1 &&
                om.dimension_names[0] == d->GetName())
                var = OpenArrayImpl(d->GetName());
        }
        if (var && var->GetDimensionCount() == 1 && var->GetDimensions()[0] == d)
            weak->SetIndexingVariable(var);
    }
}

std::shared_ptr<GDALMDArray> Zarr3Group::OpenArrayImpl(const std::string& name) const {
    auto cached = arrays_.find(name);
    if (cached != arrays_.end()) return cached->second;
    std::shared_ptr<zarr3::Array> za;
    if (group_ && group_->metadata().consolidated) {
        // Consolidated metadata is authoritative (and already parsed).
        if (!Children().arrays.count(name)) return nullptr;
        za = group_->open_array(name);
    } else if (group_) {
        // The node's zarr.json directly, read and parsed once: listing the
        // group would parse every child's zarr.json, and Group::open_array
        // would parse this one again (stores over HTTP cannot be listed anyway).
        if (name.empty()) return nullptr;
        zarr3::validate_key(name);
        const std::string path = zarr3::join_key(group_->path(), name);
        const std::string key = zarr3::join_key(path, "zarr.json");
        const std::string where = group_->store()->uri() + "/" + key;
        const auto bytes = group_->store()->get_bounded(key, zarr3::kMaxMetadataBytes);
        if (!bytes) return nullptr;
        auto node = zarr3::parse_node_metadata_text(
            std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()), where);
        if (!node.array) return nullptr; // a group
        za = zarr3::Array::open(group_->store(), path, std::move(*node.array));
    } else {
        if (name != root_array_name_) return nullptr;
        za = root_array_;
    }
    ConfigureArray(*za);
    if (ctx_) ctx_->Track(za);
    const auto& meta = za->metadata();
    for (const auto& w : meta.warnings)
        CPLError(CE_Warning, CPLE_AppDefined, "%s", w.c_str());
    auto arr = Zarr3MDArray::Create(GetFullName(), name, za, DimensionsFor(name, meta), ctx_);
    std::weak_ptr<const Zarr3Group> self = shared_from_this();
    arr->SetResolver([self](const std::string& n) { return ResolveUpwards(self, n); });
    arrays_[name] = arr;
    AttachCRS(*arr, meta.attributes);
    LinkIndexingVariables(arr, name);
    return arr;
}

std::vector<std::shared_ptr<GDALDimension>> Zarr3Group::GetDimensions(CSLConstList) const {
    // Dimensions are known once the arrays are opened; arrays that fail to
    // open report their errors when opened directly.
    {
        CPLErrorStateBackuper keep_state;
        CPLErrorHandlerPusher quiet(CPLQuietErrorHandler);
        for (const auto& n : RawArrayNames())
            ErrorBoundary(Where(), [&] { OpenArrayImpl(n); });
    }
    std::vector<std::shared_ptr<GDALDimension>> out;
    for (const auto& [n, d] : dims_)
        out.push_back(d);
    return out;
}

std::vector<std::shared_ptr<GDALAttribute>> Zarr3Group::GetAttributes(CSLConstList) const {
    if (!group_) return {};
    return MakeAttributes(GetFullName(), group_->metadata().attributes);
}

// ------------------------------------------------------------------ writing

void Zarr3Group::InvalidateConsolidated() {
    auto root = shared_from_this();
    while (auto p = root->parent_.lock())
        root = p;
    if (root->group_ && root->group_->metadata().consolidated)
        root->group_->set_attributes(root->group_->metadata().attributes);
}

void Zarr3Group::CheckNewChildName(const std::string& name, const char* kind) const {
    if (name.empty() || name.find('/') != std::string::npos)
        throw zarr3::Error(std::string("invalid ") + kind + " name '" + name +
                           "': expected a non-empty name without '/'");
    zarr3::validate_key(name);
    if (HasChild(name)) throw zarr3::Error("a node of that name already exists");
}

std::shared_ptr<GDALGroup> Zarr3Group::CreateGroup(const std::string& name, CSLConstList) {
    if (!Writable("create a group")) return nullptr;
    std::shared_ptr<GDALGroup> out;
    ErrorBoundary(Where() + "/" + name, [&] {
        CheckNewChildName(name, "group");
        InvalidateConsolidated();
        auto zg = zarr3::Group::create(group_->store(), ChildPath(name));
        auto g = Create(GetFullName(), name, zg, ctx_, shared_from_this());
        g->children_.emplace(); // new: no child to list
        g->skipped_checked_ = true;
        groups_[name] = g;
        created_groups_.insert(name);
        if (children_) children_->groups.insert(name);
        out = g;
    });
    ctx_->Note(out != nullptr, "group " + name);
    return out;
}

std::shared_ptr<GDALDimension> Zarr3Group::CreateDimension(const std::string& name,
                                                           const std::string& type,
                                                           const std::string& direction,
                                                           GUInt64 size, CSLConstList) {
    if (!Writable("create a dimension")) return nullptr;
    if (name.empty()) {
        CPLError(CE_Failure, CPLE_IllegalArg, "%s: empty dimension name", Where().c_str());
        return nullptr;
    }
    // Zarr has no dimension objects: the name reaches the store through the
    // dimension_names of the arrays using it.
    auto d = std::make_shared<Zarr3Dimension>(
        GetFullName(), name, type.empty() ? DimensionTypeFromName(name) : type, direction, size);
    dims_[name] = d;
    return d;
}

namespace {
std::vector<zarr3::AxisRange> WholeRanges(const zarr3::Shape& shape) {
    std::vector<zarr3::AxisRange> r;
    for (uint64_t n : shape)
        r.push_back({0, n});
    return r;
}

// gdalmdimtranslate (GDAL 3.13) passes the source's block size as BLOCKSIZE: not the user's choice,
// so it does not replace the layout a copy keeps. The source's block size is what Zarr3MDArray::
// GetBlockSize reports (each axis' most common chunk edge), or the read block (inner chunks).
void DropSourceBlockSize(CPLStringList& opts, const zarr3::ArrayMetadata& src) {
    const char* bs = opts.FetchNameValue("BLOCKSIZE");
    if (!bs) return;
    auto text = [](const zarr3::Shape& s) {
        std::string out;
        for (uint64_t e : s)
            out += (out.empty() ? "" : ",") + std::to_string(e);
        return out;
    };
    zarr3::Shape grid_block;
    for (size_t i = 0; i < src.grid.rank(); ++i)
        grid_block.push_back(
            src.grid.axis(i).num_chunks() == 0 ? 0 : src.grid.axis(i).most_common_edge());
    if (text(src.read_block_shape()) == bs || text(grid_block) == bs)
        opts.SetNameValue("BLOCKSIZE", nullptr);
}
} // namespace

std::shared_ptr<GDALMDArray>
Zarr3Group::CreateMDArray(const std::string& name,
                          const std::vector<std::shared_ptr<GDALDimension>>& dims,
                          const GDALExtendedDataType& dt, CSLConstList options) {
    if (!Writable("create an array")) return nullptr;
    std::shared_ptr<GDALMDArray> out;
    ErrorBoundary(Where() + "/" + name, [&] {
        CheckNewChildName(name, "array");
        ArrayCreateRequest req;
        req.dtype = ZarrTypeFor(dt);
        for (const auto& d : dims) {
            req.shape.push_back(d->GetSize());
            req.dimension_names.push_back(d->GetName());
        }
        // gdalmdimtranslate (GDAL 3.13) adds BLOCKSIZE from the source's block
        // size to the user's ARRAY: options; an explicit CHUNK_SHAPES wins.
        CPLStringList opts(CSLDuplicate(const_cast<char**>(options)), TRUE);
        if (ctx_->copying()) DropOptionsNotFitting(opts, GetFullName(), name, dims.size());
        if (opts.FetchNameValue("CHUNK_SHAPES") && opts.FetchNameValue("BLOCKSIZE")) {
            CPLDebug("Zarr3", "%s: CHUNK_SHAPES given, BLOCKSIZE=%s ignored", name.c_str(),
                     opts.FetchNameValue("BLOCKSIZE"));
            opts.SetNameValue("BLOCKSIZE", nullptr);
        }
        const std::string full = (GetFullName() == "/" ? "" : GetFullName()) + "/" + name;
        const zarr3::ArrayMetadata* kept = ctx_->CopySource(full);
        if (kept && kept->shape != req.shape) kept = nullptr;
        if (kept) DropSourceBlockSize(opts, *kept);
        zarr3::ArrayMetadata meta = BuildArrayMetadata(req, opts.List());
        if (kept) // a copy of this plugin's array keeps its layout but for the parts options name
            meta = zarr3::copy_layout(*kept, WholeRanges(kept->shape), meta,
                                      CopyOverridesFrom(opts.List()));
        InvalidateConsolidated();
        auto za = zarr3::Array::create(group_->store(), ChildPath(name), std::move(meta));
        ConfigureArray(*za);
        ctx_->Track(za);
        // Dimensions of this dataset are used as given; others are matched by
        // name (and size) with this group's or a parent's.
        std::vector<std::shared_ptr<GDALDimension>> own;
        for (const auto& d : dims) {
            if (std::dynamic_pointer_cast<Zarr3Dimension>(d))
                own.push_back(d);
            else
                own.push_back(FindDimension(d->GetName(), d->GetSize()));
        }
        auto arr = Zarr3MDArray::Create(GetFullName(), name, za, own, ctx_);
        arr->MarkCreated();
        std::weak_ptr<const Zarr3Group> self = shared_from_this();
        arr->SetResolver([self](const std::string& n) { return ResolveUpwards(self, n); });
        arrays_[name] = arr;
        created_arrays_.insert(name);
        if (children_) children_->arrays.insert(name);
        out = arr;
    });
    ctx_->Note(out != nullptr, "array " + name);
    return out;
}

std::shared_ptr<GDALAttribute> Zarr3Group::CreateAttribute(const std::string& name,
                                                           const std::vector<GUInt64>& dims,
                                                           const GDALExtendedDataType& dt,
                                                           CSLConstList) {
    if (!Writable("create an attribute")) return nullptr;
    std::shared_ptr<GDALAttribute> out;
    std::weak_ptr<Zarr3Group> weak = shared_from_this();
    const std::string where = Where() + "/zarr.json";
    ErrorBoundary(Where(), [&] {
        out = WritableAttribute::Create(
            GetFullName(), name, dims, dt,
            [weak, where](const std::string& n, const nlohmann::json& v) {
                auto self = weak.lock();
                if (!self) {
                    CPLError(CE_Failure, CPLE_AppDefined,
                             "attribute %s: its group is no longer open", n.c_str());
                    return false;
                }
                return self->ctx_->Note(ErrorBoundary(where,
                                                      [&] {
                                                          nlohmann::json attrs =
                                                              self->group_->metadata().attributes;
                                                          if (!attrs.is_object())
                                                              attrs = nlohmann::json::object();
                                                          attrs[n] = v;
                                                          self->group_->set_attributes(attrs);
                                                      }),
                                        "attribute " + n);
            });
    });
    ctx_->Note(out != nullptr, "attribute " + name);
    return out;
}

} // namespace zarr3drv
