// Appends extend the overview levels of the array (overview_append.hpp).
#include "classic/overview_append.hpp"

#include "classic/overview_build.hpp"
#include "classic/raster_dataset.hpp"
#include "mapping/gdal_types.hpp"
#include "storage/store_delete.hpp"

#include "zarr3/compact.hpp"
#include "zarr3/hierarchy.hpp"
#include "zarr3/multiscales.hpp"

#include "cpl_error.h"
#include "gdal_priv.h"

#include <algorithm>
#include <cctype>

namespace zarr3drv {
namespace {

constexpr uint64_t kBatchBytes = 64ull << 20; // computed level values held at a time

// The multiscales convention's method name -> GDAL's resampling name; ""
// when GDAL's overview resampling has no such method.
std::string GdalMethod(const std::string& recorded) {
    static const char* const kKnown[] = {"NEAREST", "AVERAGE", "BILINEAR", "CUBIC", "CUBICSPLINE",
                                         "LANCZOS", "MODE",    "RMS",      "GAUSS", "MIN",
                                         "MAX",     "MED",     "Q1",       "Q3",    "SUM"};
    std::string r = recorded == "cubic_spline" ? "cubicspline" : recorded;
    for (auto& c : r)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    for (const char* k : kKnown)
        if (r == k) return r;
    return {};
}

// The store with the zarr.json of one array read as given: the grown base
// (its new chunks stored, its zarr.json not yet switched) reads as what it
// is about to be, not as an array that changed since it was opened.
class PendingMetadataStore : public zarr3::ForwardingStore {
  public:
    PendingMetadataStore(std::shared_ptr<zarr3::Store> inner, const zarr3::Array& a)
        : ForwardingStore(std::move(inner)), key_(zarr3::join_key(a.path(), "zarr.json")),
          text_(zarr3::to_json(a.metadata()).dump()) {}
    std::optional<zarr3::ReadResult> read(const zarr3::ReadRequest& request) override {
        if (request.key != key_) return inner_->read(request);
        return zarr3::read_from_memory(
            zarr3::ByteView(reinterpret_cast<const uint8_t*>(text_.data()), text_.size()), request,
            uri() + "/" + key_);
    }

  private:
    std::string key_, text_;
};

} // namespace

AppendedOverviews::AppendedOverviews(std::shared_ptr<zarr3::Store> store, const zarr3::Array& base,
                                     uint64_t n)
    : store_(std::move(store)), base_path_(base.path()), start_(base.metadata().shape[0]), n_(n) {
    Plan(base);
}

// Each level of the base's own pyramid, checked against the base: same
// rank, type and spatial axes no larger, at least as many steps as the base
// (more: a killed append's, overwritten), a resampling GDAL computes.
void AppendedOverviews::Plan(const zarr3::Array& base) {
    pyr_ = FindPyramid(*store_, base_path_); // malformed: throws naming the group, nothing written
    if (!pyr_ || pyr_->level != zarr3::base_level(pyr_->ms)) {
        pyr_.reset();
        return;
    }
    const auto& bm = base.metadata();
    for (size_t k : zarr3::overview_order(pyr_->ms)) {
        if (k == pyr_->level) continue;
        const auto& l = pyr_->ms.layout[k];
        std::string path = pyr_->ArrayPath(k);
        auto j = zarr3::read_node_json(*store_, path);
        if (j && pyr_->suffix.empty() && zarr3::node_type_of(*j, path) == zarr3::NodeType::Group) {
            path = zarr3::join_key(path, zarr3::base_name(base_path_));
            j = zarr3::read_node_json(*store_, path);
        }
        const std::string what = "overview level \"" + l.asset + "\" (/" + path + ")";
        if (!j || zarr3::node_type_of(*j, path) != zarr3::NodeType::Array) {
            drop_ = what + " is no array";
            continue;
        }
        auto lm = zarr3::parse_array_metadata(*j, store_->uri() + "/" + path + "/zarr.json");
        if (lm.rank() != bm.rank() || !(lm.dtype.name == bm.dtype.name) ||
            lm.shape[1] > bm.shape[1] || lm.shape[2] > bm.shape[2]) {
            drop_ = what + " does not match the array (rank, data type or size)";
            continue;
        }
        accepted_.push_back(path);
        const std::string recorded =
            l.resampling_method.empty() ? pyr_->ms.resampling_method : l.resampling_method;
        const std::string method = GdalMethod(recorded);
        if (lm.shape[0] < start_)
            drop_ = what + " is stale (" + std::to_string(lm.shape[0]) + " steps, the array " +
                    std::to_string(start_) + ")";
        else if (method.empty())
            drop_ = what + " has the resampling method \"" + recorded +
                    "\", which gdal-zarr3 cannot compute";
        if (!drop_.empty()) continue;
        zarr3::Shape at_start = lm.shape;
        at_start[0] = start_; // steps past it: a killed append's, overwritten
        lm.grid.resize(at_start);
        lm.shape = at_start;
        auto nm = zarr3::appended_metadata(lm, 0, n_, what);
        levels_.push_back({zarr3::Array::open(store_, path, nm), method});
    }
    if (!drop_.empty()) {
        levels_.clear();
        if (!pyr_->suffix.empty())
            throw zarr3::Error(drop_ + "; the pyramid (in /" + pyr_->group +
                               ") holds every array of a level, which an append does not remove: "
                               "run gdaladdo -clean or rebuild it; nothing written");
    }
}

// One GDALRegenerateOverviewsMultiBand per resampling method over the new
// steps' bands (the levels sharing it together, finest first, as gdaladdo
// computes them), into memory, then stored past each level's end; in
// batches of whole chunks along the steps' axis (about kBatchBytes of
// computed levels each: each band is resampled on its own, so batches give
// the values one call over every step gives).
void AppendedOverviews::Write(const std::shared_ptr<zarr3::Array>& grown) {
    if (levels_.empty()) return;
    auto pending = std::make_shared<PendingMetadataStore>(store_, *grown);
    auto view = Zarr3RasterDataset::Open(
        pending, zarr3::Array::open(pending, grown->path(), grown->metadata()), false, true);
    const uint64_t gsize =
        static_cast<uint64_t>(GDALGetDataTypeSizeBytes(GDALTypeFor(grown->metadata().dtype)));
    std::vector<bool> done(levels_.size(), false);
    for (size_t i = 0; i < levels_.size(); ++i) {
        if (done[i]) continue;
        std::vector<size_t> group;
        uint64_t per_step = 0;
        for (size_t k = i; k < levels_.size(); ++k)
            if (!done[k] && levels_[k].method == levels_[i].method) {
                group.push_back(k);
                done[k] = true;
                const auto& s = levels_[k].grown->metadata().shape;
                per_step += s[1] * s[2] * gsize;
            }
        const auto& ax = levels_[i].grown->metadata().grid.axis(0);
        for (uint64_t b0 = 0; b0 < n_;) {
            uint64_t b1 = b0;
            while (b1 < n_) {
                const uint64_t c = ax.chunk_index(start_ + b1);
                const uint64_t end = std::min(n_, ax.chunk_start(c) + ax.chunk_edge(c) - start_);
                if (b1 > b0 && (end - b0) * per_step > kBatchBytes) break;
                b1 = end;
            }
            WriteSteps(*view, group, b0, b1 - b0);
            b0 = b1;
        }
        for (size_t k : group)
            levels_[k].grown->flush();
    }
}

// Steps [b0, b0 + nb) of the new ones, of the levels `group` (one method).
void AppendedOverviews::WriteSteps(GDALDataset& view, const std::vector<size_t>& group, uint64_t b0,
                                   uint64_t nb) {
    const int n = static_cast<int>(nb);
    const auto& dt = levels_[group[0]].grown->metadata().dtype;
    const GDALDataType gt = GDALTypeFor(dt);
    std::vector<GDALRasterBand*> src;
    for (int b = 0; b < n; ++b)
        src.push_back(view.GetRasterBand(static_cast<int>(start_ + b0) + b + 1));
    GDALDriver* mem = GetGDALDriverManager()->GetDriverByName("MEM");
    std::vector<GDALDatasetUniquePtr> outs;
    std::vector<std::vector<GDALRasterBand*>> dst(static_cast<size_t>(n));
    for (size_t k : group) {
        const auto& s = levels_[k].grown->metadata().shape;
        outs.emplace_back(
            mem->Create("", static_cast<int>(s[2]), static_cast<int>(s[1]), n, gt, nullptr));
        if (!outs.back()) throw zarr3::Error(base_path_ + ": no memory for an overview level");
        for (int b = 0; b < n; ++b) {
            int has = 0;
            const double nd = src[static_cast<size_t>(b)]->GetNoDataValue(&has);
            if (has) outs.back()->GetRasterBand(b + 1)->SetNoDataValue(nd);
            dst[static_cast<size_t>(b)].push_back(outs.back()->GetRasterBand(b + 1));
        }
    }
    std::vector<GDALRasterBand**> ptrs;
    for (auto& d : dst)
        ptrs.push_back(d.data());
    if (GDALRegenerateOverviewsMultiBand(n, src.data(), static_cast<int>(group.size()), ptrs.data(),
                                         levels_[group[0]].method.c_str(), nullptr, nullptr,
                                         nullptr) != CE_None)
        throw zarr3::Error(base_path_ + ": computing the new steps of its overview levels failed");
    for (size_t g = 0; g < group.size(); ++g) {
        auto& lv = *levels_[group[g]].grown;
        const auto& s = lv.metadata().shape;
        const size_t count = static_cast<size_t>(nb * s[1] * s[2]);
        std::vector<GByte> buf(count * static_cast<size_t>(GDALGetDataTypeSizeBytes(gt)));
        if (outs[g]->RasterIO(GF_Read, 0, 0, static_cast<int>(s[2]), static_cast<int>(s[1]),
                              buf.data(), static_cast<int>(s[2]), static_cast<int>(s[1]), gt, n,
                              nullptr, 0, 0, 0, nullptr) != CE_None)
            throw zarr3::Error(lv.describe() + ": reading the computed steps failed");
        std::vector<GByte> stored;
        const void* data = buf.data();
        if (!SameRepresentation(dt)) {
            stored.resize(count * dt.size);
            NarrowFromGDAL(dt, buf.data(), stored.data(), count);
            data = stored.data();
        }
        lv.write(zarr3::Selection{{start_ + b0, 0, 0}, {nb, s[1], s[2]}, {}}, data);
    }
}

std::vector<std::string> AppendedOverviews::WrittenKeys() const {
    std::vector<std::string> out;
    for (const auto& l : levels_) {
        const auto keys = zarr3::chunk_keys_from(*l.grown, start_);
        out.insert(out.end(), keys.begin(), keys.end());
    }
    return out;
}

void AppendedOverviews::Switch() {
    if (!drop_.empty()) {
        Remove();
        return;
    }
    for (const auto& l : levels_)
        l.grown->write_metadata();
}

// The pyramid leaves the multiscales attribute (other pyramids of the group
// stay), then the level arrays that matched the base go, and the level groups
// left empty (as gdaladdo -clean: zarr3::clean_set decides which).
void AppendedOverviews::Remove() {
    const auto& full = pyr_->full;
    const size_t root = zarr3::root_of(full, pyr_->full_level);
    std::vector<std::string> paths;
    for (size_t k = 0; k < full.layout.size(); ++k) {
        std::string p = zarr3::join_key(pyr_->group, full.layout[k].asset);
        if (k != root && zarr3::root_of(full, k) == root) {
            const auto j = zarr3::read_node_json(*store_, p);
            if (j && zarr3::node_type_of(*j, p) == zarr3::NodeType::Group)
                p = zarr3::join_key(p, zarr3::base_name(base_path_));
        }
        paths.push_back(p);
    }
    const auto doomed = zarr3::clean_set(full, root, paths, accepted_);
    for (const auto& p : doomed)
        CheckNodeRemovable(*store_, p);
    auto group = zarr3::Group::open(store_, pyr_->group);
    nlohmann::json attrs = group->metadata().attributes;
    if (auto rest = zarr3::without_pyramid_of(full, pyr_->full_level))
        zarr3::write_multiscales(attrs, *rest);
    else
        EraseMultiscales(attrs);
    group->set_attributes(attrs);
    for (const auto& p : doomed) {
        RemoveNode(*store_, p);
        const std::string parent = zarr3::parent_path(p);
        const bool level_group =
            std::any_of(full.layout.begin(), full.layout.end(), [&](const auto& l) {
                return zarr3::join_key(pyr_->group, l.asset) == parent;
            });
        if (level_group && parent != pyr_->group) RemoveGroupIfEmpty(*store_, parent);
    }
    CPLError(CE_Warning, CPLE_AppDefined,
             "%s/%s: %s: the append cannot extend it, so its overview pyramid was removed (run "
             "gdaladdo again to rebuild it)",
             store_->uri().c_str(), base_path_.c_str(), drop_.c_str());
}

} // namespace zarr3drv
