// State shared by the groups and arrays of one multidimensional dataset: the
// store, whether it was opened for writing, the arrays to flush at close, and
// whether the dataset is being filled by a copy (gdalmdimtranslate).
#pragma once

#include "zarr3/array.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace zarr3drv {

class MDContext {
  public:
    MDContext(std::shared_ptr<zarr3::Store> store, bool writable)
        : store_(std::move(store)), writable_(writable) {}

    const std::shared_ptr<zarr3::Store>& store() const { return store_; }
    bool writable() const { return writable_; }

    // Set by the multidimensional CreateCopy while it fills the dataset: each
    // per-axis ARRAY: option then goes only to the arrays whose rank it fits,
    // and every failure is recorded (GDAL 3.6 ignores some, e.g. a coordinate
    // array that cannot be created) so that the copy fails as a whole.
    void SetCopying(bool copying) { copying_ = copying; }
    bool copying() const { return copying_; }
    // The source arrays of a copy whose layout is kept (this plugin's arrays), by full name.
    void SetCopySources(std::map<std::string, zarr3::ArrayMetadata> sources) {
        copy_sources_ = std::move(sources);
    }
    const zarr3::ArrayMetadata* CopySource(const std::string& full_name) const {
        if (!copying_) return nullptr;
        auto it = copy_sources_.find(full_name);
        return it == copy_sources_.end() ? nullptr : &it->second;
    }
    // Returns `ok`; when false during a copy, remembers `what` (the first one).
    bool Note(bool ok, const std::string& what) {
        if (!ok && copying_) {
            std::lock_guard lk(mu_);
            if (failure_.empty()) failure_ = what;
        }
        return ok;
    }
    // The first failure noted during the copy ("" = none).
    std::string failure() const {
        std::lock_guard lk(mu_);
        return failure_;
    }

    // Remembers an array so that Flush() writes its buffered partial chunks.
    void Track(const std::shared_ptr<zarr3::Array>& a) {
        std::lock_guard lk(mu_);
        arrays_.push_back(a);
    }
    // Flushes every live tracked array; throws the first error met after
    // trying them all.
    void Flush() {
        std::vector<std::shared_ptr<zarr3::Array>> live;
        {
            std::lock_guard lk(mu_);
            std::vector<std::weak_ptr<zarr3::Array>> keep;
            for (auto& w : arrays_)
                if (auto a = w.lock()) {
                    live.push_back(a);
                    keep.push_back(w);
                }
            arrays_ = std::move(keep);
        }
        std::string first;
        for (auto& a : live) {
            try {
                a->flush();
            } catch (const std::exception& e) {
                if (first.empty()) first = a->describe() + ": " + e.what();
            }
        }
        if (!first.empty()) throw zarr3::Error(first);
    }

  private:
    std::shared_ptr<zarr3::Store> store_;
    bool writable_;
    bool copying_ = false;
    std::map<std::string, zarr3::ArrayMetadata> copy_sources_;
    mutable std::mutex mu_;
    std::string failure_;
    std::vector<std::weak_ptr<zarr3::Array>> arrays_;
};

} // namespace zarr3drv
