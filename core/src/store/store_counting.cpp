// CountingStore: counts and logs the requests that pass through it.
#include "zarr3/counting_store.hpp"

namespace zarr3 {

std::optional<ReadResult> CountingStore::read(const ReadRequest& request) {
    const std::string& key = request.key;
    if (request.kind == ReadRequest::Kind::Size) {
        {
            std::lock_guard lk(mu_);
            ++c_.sizes;
            log_.push_back("size " + key);
        }
        return inner_->read(request);
    }
    auto r = inner_->read(request);
    if (request.kind == ReadRequest::Kind::Ranges) {
        count_ranges(key, request.ranges, r);
        return r;
    }
    std::lock_guard lk(mu_);
    ++c_.gets;
    if (r && !r->data.empty()) c_.bytes += r->data.front().size();
    log_.push_back("get " + key);
    return r;
}

void CountingStore::count_ranges(const std::string& key, const std::vector<ByteRange>& ranges,
                                 const std::optional<ReadResult>& r) {
    std::lock_guard lk(mu_);
    ++c_.range_calls;
    c_.ranges += ranges.size();
    std::string line = "ranges " + key;
    for (const auto& br : ranges)
        line += " " + range_text(br);
    log_.push_back(line);
    if (r)
        for (const auto& b : r->data)
            c_.bytes += b.size();
}

void CountingStore::put(const std::string& key, ByteView value) {
    inner_->put(key, value);
    std::lock_guard lk(mu_);
    ++c_.puts;
    log_.push_back("put " + key);
}

void CountingStore::erase(const std::string& key) {
    inner_->erase(key);
    std::lock_guard lk(mu_);
    log_.push_back("erase " + key);
}

std::vector<std::string> CountingStore::list_dir(const std::string& prefix) {
    {
        std::lock_guard lk(mu_);
        ++c_.lists;
        log_.push_back("list " + prefix);
    }
    return inner_->list_dir(prefix);
}

CountingStore::Counts CountingStore::counts() const {
    std::lock_guard lk(mu_);
    return c_;
}

void CountingStore::reset() {
    std::lock_guard lk(mu_);
    c_ = {};
    log_.clear();
}

std::vector<std::string> CountingStore::log() const {
    std::lock_guard lk(mu_);
    return log_;
}

} // namespace zarr3
