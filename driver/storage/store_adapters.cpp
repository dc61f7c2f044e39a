// ListingStore and DeferredRootStore (store_adapters.hpp).
#include "storage/store_adapters.hpp"

#include "zarr3/metadata.hpp"

#include "cpl_error.h"

#include <algorithm>
#include <new>

namespace zarr3drv {

namespace {
bool IsNodeKey(const std::string& key) {
    return key == "zarr.json" || key.ends_with("/zarr.json");
}
} // namespace

// ------------------------------------------------------------ ListingStore

std::optional<zarr3::ReadResult> ListingStore::read(const zarr3::ReadRequest& request) {
    auto r = inner_->read(request);
    if (!r || request.kind != zarr3::ReadRequest::Kind::Value || !IsNodeKey(request.key) ||
        r->data.empty())
        return r;
    if (!Parses(request.key, r->data.front())) return std::nullopt;
    return r;
}

bool ListingStore::Parses(const std::string& key, const zarr3::Bytes& value) {
    {
        std::lock_guard lk(mu_);
        if (checked_.count(key)) return true;
    }
    const std::string where = uri() + "/" + key;
    try {
        zarr3::parse_node_metadata_text(
            std::string_view(reinterpret_cast<const char*>(value.data()), value.size()), where);
    } catch (const std::bad_alloc&) {
        throw;
    } catch (const std::exception& e) {
        std::string msg = e.what();
        if (msg.find(where) == std::string::npos) msg = where + ": " + msg;
        std::lock_guard lk(mu_);
        if (std::find(skipped_.begin(), skipped_.end(), msg) == skipped_.end()) {
            CPLError(CE_Warning, CPLE_AppDefined, "%s (node skipped)", msg.c_str());
            skipped_.push_back(msg);
        }
        return false;
    }
    std::lock_guard lk(mu_);
    checked_.insert(key);
    return true;
}

void ListingStore::put(const std::string& key, zarr3::ByteView) {
    throw zarr3::Error(uri() + "/" + key + ": read-only listing view");
}

void ListingStore::erase(const std::string& key) {
    throw zarr3::Error(uri() + "/" + key + ": read-only listing view");
}

zarr3::StoreCapabilities ListingStore::capabilities() const {
    auto c = inner_->capabilities();
    c.writable = false;
    return c;
}

std::vector<std::string> ListingStore::skipped() const {
    std::lock_guard lk(mu_);
    return skipped_;
}

std::shared_ptr<ListingStore> MakeListingStore(std::shared_ptr<zarr3::Store> inner) {
    return std::make_shared<ListingStore>(std::move(inner));
}

std::vector<std::string> SkippedNodes(const ListingStore& store) {
    return store.skipped();
}

std::shared_ptr<zarr3::Store> AsStore(const std::shared_ptr<ListingStore>& store) {
    return store;
}

// ------------------------------------------------------- DeferredRootStore

std::optional<zarr3::ReadResult> DeferredRootStore::read(const zarr3::ReadRequest& request) {
    if (auto v = pending(request.key))
        return zarr3::read_from_memory(*v, request, uri() + "/" + request.key);
    return inner_->read(request);
}

void DeferredRootStore::put(const std::string& key, zarr3::ByteView value) {
    {
        std::lock_guard lk(mu_);
        if (key == kRoot && !committed_) {
            root_.emplace(value.begin(), value.end());
            return;
        }
    }
    inner_->put(key, value);
}

void DeferredRootStore::erase(const std::string& key) {
    {
        std::lock_guard lk(mu_);
        if (key == kRoot && !committed_) root_.reset();
    }
    inner_->erase(key);
}

void DeferredRootStore::commit() {
    std::optional<zarr3::Bytes> v;
    {
        std::lock_guard lk(mu_);
        committed_ = true;
        v.swap(root_);
    }
    if (v) inner_->put(kRoot, *v);
}

std::optional<zarr3::Bytes> DeferredRootStore::pending(const std::string& key) {
    std::lock_guard lk(mu_);
    if (key != kRoot || committed_) return std::nullopt;
    return root_;
}

} // namespace zarr3drv
