// The Store helpers over read(), byte-range checks, key rules, and the in-memory store.
#include "zarr3/store.hpp"
#include "zarr3/chunk_cache.hpp"

#include <atomic>

namespace zarr3 {

uint64_t range_start(const ByteRange& r, uint64_t size, const std::string& where) {
    if (const auto* sfx = std::get_if<RangeSuffix>(&r)) {
        if (sfx->length > size)
            throw FormatError(where + ": byte range of " + std::to_string(sfx->length) +
                              " bytes is larger than the file (" + std::to_string(size) +
                              " bytes)");
        return size - sfx->length;
    }
    const auto& fs = std::get<RangeFromStart>(r);
    if (fs.length > size || fs.offset > size - fs.length)
        throw FormatError(where + ": byte range " + std::to_string(fs.offset) + "+" +
                          std::to_string(fs.length) + " reaches past the end of the file (" +
                          std::to_string(size) + " bytes)");
    return fs.offset;
}

std::string range_text(const ByteRange& r) {
    if (const auto* sfx = std::get_if<RangeSuffix>(&r)) return "-" + std::to_string(sfx->length);
    const auto& fs = std::get<RangeFromStart>(r);
    return std::to_string(fs.offset) + "+" + std::to_string(fs.length);
}

void throw_too_large(const std::string& where, uint64_t n, uint64_t limit) {
    throw FormatError(where + ": " + std::to_string(n) + " bytes exceeds the limit of " +
                      std::to_string(limit) + " bytes; refused before reading");
}

// ---------------------------------------------------- helpers over read()
namespace {
std::optional<Bytes> first_value(std::optional<ReadResult> r, ObjectVersion* version) {
    if (version) *version = r ? r->version : ObjectVersion{};
    if (!r || r->data.empty()) return std::nullopt;
    return std::move(r->data.front());
}
} // namespace

std::optional<Bytes> Store::get(const std::string& key) {
    return first_value(read(ReadRequest::value(key)), nullptr);
}

std::optional<Bytes> Store::get_versioned(const std::string& key, ObjectVersion& version) {
    return first_value(read(ReadRequest::value(key)), &version);
}

std::optional<Bytes> Store::get_bounded(const std::string& key, uint64_t limit) {
    return first_value(read(ReadRequest::value(key, limit)), nullptr);
}

std::optional<Bytes> Store::get_fresh(const std::string& key, uint64_t limit,
                                      ObjectVersion& version) {
    ReadRequest request = ReadRequest::value(key, limit);
    request.fresh = true;
    return first_value(read(request), &version);
}

std::optional<Bytes> Store::get_bounded_versioned(const std::string& key, uint64_t limit,
                                                  ObjectVersion& version) {
    return first_value(read(ReadRequest::value(key, limit)), &version);
}

std::optional<std::vector<Bytes>> Store::get_ranges(const std::string& key,
                                                    const std::vector<ByteRange>& ranges) {
    auto r = read(ReadRequest::byte_ranges(key, ranges));
    if (!r) return std::nullopt;
    return std::move(r->data);
}

std::optional<std::vector<Bytes>> Store::get_ranges_sized(const std::string& key,
                                                          const std::vector<ByteRange>& ranges,
                                                          std::optional<uint64_t>& total) {
    ObjectVersion ignored;
    return get_ranges_versioned(key, ranges, total, ignored);
}

std::optional<std::vector<Bytes>> Store::get_ranges_versioned(const std::string& key,
                                                              const std::vector<ByteRange>& ranges,
                                                              std::optional<uint64_t>& total,
                                                              ObjectVersion& version) {
    total.reset();
    version = {};
    auto r = read(ReadRequest::byte_ranges(key, ranges));
    if (!r) return std::nullopt;
    total = r->total_size;
    version = r->version;
    return std::move(r->data);
}

std::optional<uint64_t> Store::size(const std::string& key) {
    const auto r = read(ReadRequest::size_of(key));
    if (!r) return std::nullopt;
    return r->total_size;
}

ReadResult read_from_memory(ByteView value, const ReadRequest& request, const std::string& where,
                            ObjectVersion version) {
    ReadResult out;
    out.total_size = value.size();
    out.version = std::move(version);
    switch (request.kind) {
    case ReadRequest::Kind::Value:
        if (request.limit && value.size() > *request.limit)
            throw_too_large(where, value.size(), *request.limit);
        out.data.emplace_back(value.begin(), value.end());
        break;
    case ReadRequest::Kind::Ranges:
        out.data.reserve(request.ranges.size());
        for (const auto& r : request.ranges) {
            const uint64_t off = range_start(r, value.size(), where);
            out.data.emplace_back(value.begin() + static_cast<ptrdiff_t>(off),
                                  value.begin() + static_cast<ptrdiff_t>(off + range_length(r)));
        }
        break;
    case ReadRequest::Kind::Size:
        break;
    }
    return out;
}

bool is_valid_key(const std::string& key) {
    try {
        validate_key(key);
        return true;
    } catch (const Error&) {
        return false;
    }
}

void validate_key(const std::string& key) {
    if (key.empty()) throw Error("empty store key");
    if (key.front() == '/') throw Error("store key '" + key + "' must be relative");
    size_t start = 0;
    while (start <= key.size()) {
        size_t end = key.find('/', start);
        if (end == std::string::npos) end = key.size();
        const std::string seg = key.substr(start, end - start);
        if (seg.empty() || seg == "." || seg == "..")
            throw Error("store key '" + key + "' has an empty, '.' or '..' segment");
        start = end + 1;
    }
    for (char c : key)
        if (c == '\\' || c == '\0')
            throw Error("store key '" + key + "' holds a forbidden character");
}

std::string join_key(const std::string& a, const std::string& b) {
    if (a.empty()) return b;
    if (b.empty()) return a;
    return a + "/" + b;
}

// ------------------------------------------------------------ MemoryStore
namespace {
std::atomic<uint64_t> memory_puts{0};
ObjectVersion memory_version(uint64_t n) {
    return ObjectVersion{"mem:" + std::to_string(n)};
}
} // namespace

MemoryStore::MemoryStore() {
    static std::atomic<uint64_t> serial{0};
    uri_ = "memory://" + std::to_string(++serial);
}

std::optional<ReadResult> MemoryStore::read(const ReadRequest& request) {
    std::lock_guard lk(mu_);
    auto it = data_.find(request.key);
    if (it == data_.end()) return std::nullopt;
    return read_from_memory(it->second, request, uri_ + "/" + request.key,
                            memory_version(versions_[request.key]));
}

void MemoryStore::put(const std::string& key, ByteView value) {
    validate_key(key);
    const ChunkCache::WriteNote note{key};
    std::lock_guard lk(mu_);
    data_[key] = Bytes(value.begin(), value.end());
    versions_[key] = ++memory_puts;
}

void MemoryStore::erase(const std::string& key) {
    const ChunkCache::WriteNote note{key};
    std::lock_guard lk(mu_);
    data_.erase(key);
    versions_.erase(key);
}

std::vector<std::string> MemoryStore::list_dir(const std::string& prefix) {
    std::lock_guard lk(mu_);
    const std::string p = prefix.empty() ? "" : prefix + "/";
    std::vector<std::string> out;
    for (auto it = data_.lower_bound(p); it != data_.end(); ++it) {
        if (it->first.compare(0, p.size(), p) != 0) break;
        std::string rest = it->first.substr(p.size());
        std::string name = rest.substr(0, rest.find('/'));
        if (out.empty() || out.back() != name) out.push_back(name);
    }
    return out;
}

std::map<std::string, Bytes> MemoryStore::snapshot() const {
    std::lock_guard lk(mu_);
    return data_;
}

} // namespace zarr3
