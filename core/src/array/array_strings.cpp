// Array::read_strings / write_strings: `string` arrays (variable-length UTF-8,
// the vlen-utf8 codec) through the same selection planner and chunk grid as
// numeric arrays, one std::string per element.
#include "array/array_detail.hpp"

#include "store/chunk_bounds.hpp"
#include "array/string_region.hpp"
#include "zarr3/limits.hpp"
#include "zarr3/sharding.hpp"

#include <algorithm>
#include <atomic>

namespace zarr3 {

using array_detail::rethrow_for_chunk;
using array_detail::run_tasks;
using array_detail::valid_extent;

namespace {

// The sharding codec of a chain that is sharding_indexed alone (no transpose
// before it, no bytes->bytes codec after it): its shards are read by region.
const StringShardingCodec* partial_string_shards(const CodecChain& codecs) {
    if (!codecs.supports_partial_read()) return nullptr;
    return dynamic_cast<const StringShardingCodec*>(&codecs.array_to_bytes());
}

} // namespace

void Array::require_kind(bool strings, const char* what) const {
    if (meta_.dtype.is_variable() == strings) return;
    if (strings)
        throw Error(describe() + ": cannot " + what + " strings: the data type is " +
                    meta_.dtype.name + ", not string");
    throw Error(describe() + ": data type " + meta_.dtype.name +
                " has variable-length elements: " + what + " it as strings (" + what + "_strings)");
}

void Array::store_string_chunk(const std::string& key, const StringChunk& values,
                               const ChunkSpec& spec) const {
    const std::string fill(spec.fill_value.begin(), spec.fill_value.end());
    if (std::all_of(values.begin(), values.end(), [&](const std::string& v) { return v == fill; }))
        return store_encoded(key, nullptr);
    const Bytes enc = meta_.codecs.encode_strings(values, spec);
    store_encoded(key, &enc);
}

std::vector<std::string> Array::read_strings(const Selection& sel) const {
    require_kind(true, "read");
    check_not_stale(sel); // a chunk whose last write was not stored
    // Element strides (elem = 1): view offsets index the output vector.
    const PlannedSelection ps = plan_selection(sel, meta_.shape, {}, 1, describe());
    const std::vector<ChunkTask> tasks = plan_chunk_tasks(meta_.grid, ps);
    const std::string fill(meta_.fill_value.begin(), meta_.fill_value.end());
    std::vector<std::string> out(
        ps.empty ? 0 : static_cast<size_t>(checked_product(sel.count, "selection size")));
    std::atomic<bool> missing{false};
    auto read_chunk = [&](size_t i) {
        const ChunkTask& t = tasks[i];
        const std::string key = chunk_key(t.idx);
        try {
            const ChunkSpec spec = meta_.chunk_spec(t.idx);
            StoreByteSource src(*store_, key);
            // A shard: its index, then only the inner chunks the region needs.
            if (const StringShardingCodec* sh = partial_string_shards(meta_.codecs)) {
                if (!sh->read_strings_region(src, spec, t.region, out, t.view_offset, ps.strides)) {
                    missing = true;
                    for_each_region_element(
                        spec.shape, t.region, t.view_offset, ps.strides,
                        [&](uint64_t, int64_t dst) { out[size_t(dst)] = fill; });
                }
                return;
            }
            ObjectVersion ignored;
            const auto data =
                read_stored_chunk(src, max_stored_chunk_bytes(meta_.codecs, spec), spec, ignored);
            if (!data) {
                missing = true;
                for_each_region_element(spec.shape, t.region, t.view_offset, ps.strides,
                                        [&](uint64_t, int64_t dst) { out[size_t(dst)] = fill; });
                return;
            }
            StringChunk chunk = meta_.codecs.decode_strings(*data, spec);
            for_each_region_element(
                spec.shape, t.region, t.view_offset, ps.strides,
                [&](uint64_t at, int64_t dst) { out[size_t(dst)] = std::move(chunk[size_t(at)]); });
        } catch (...) {
            rethrow_for_chunk(store_->uri() + "/" + key);
        }
    };
    // As Array::read: a read that fails, finds a chunk absent, or (local
    // stores) any read, checks that the array was not compacted or shrunk
    // since it was opened.
    try {
        run_tasks(opt_.executor, tasks.size(), read_chunk);
    } catch (...) {
        check_unchanged();
        throw;
    }
    if (missing)
        check_unchanged(true);
    else if (store_->max_in_flight() <= 1)
        check_unchanged(false);
    return out;
}

void Array::write_strings(const Selection& sel, const std::vector<std::string>& values) {
    if (!store_->writable()) throw Error(describe() + ": store is opened read-only");
    require_kind(true, "write");
    const PlannedSelection ps = plan_selection(sel, meta_.shape, {}, 1, describe());
    const uint64_t n = ps.empty ? 0 : checked_product(sel.count, "selection size");
    if (values.size() != n)
        throw Error(describe() + ": " + std::to_string(values.size()) +
                    " strings given for a selection of " + std::to_string(n) + " elements");
    const std::vector<ChunkTask> tasks = plan_chunk_tasks(meta_.grid, ps);
    const std::string fill(meta_.fill_value.begin(), meta_.fill_value.end());
    run_tasks(opt_.executor, tasks.size(), [&](size_t i) {
        const ChunkTask& t = tasks[i];
        const std::string key = chunk_key(t.idx);
        try {
            const ChunkSpec spec = meta_.chunk_spec(t.idx);
            const Shape valid = valid_extent(meta_, t.idx, spec.shape);
            // A whole chunk of strings is built: refuse one above the cap first.
            check_decoded_chunk_size(
                checked_mul(spec.num_elements(), sizeof(std::string), "string chunk"), spec.shape,
                store_->uri() + "/" + key);
            StringChunk chunk;
            std::unique_ptr<StoreLock> held;
            if (!array_detail::covers_chunk(t.region, valid)) {
                // Other writers of this store keep their elements of the chunk.
                held = store_->lock(key);
                StoreByteSource src(*store_, key);
                ObjectVersion ignored;
                if (const auto existing = read_stored_chunk(
                        src, max_stored_chunk_bytes(meta_.codecs, spec), spec, ignored))
                    chunk = meta_.codecs.decode_strings(*existing, spec);
            }
            if (chunk.empty()) chunk.assign(static_cast<size_t>(spec.num_elements()), fill);
            for_each_region_element(
                spec.shape, t.region, t.view_offset, ps.strides,
                [&](uint64_t dst, int64_t src) { chunk[size_t(dst)] = values[size_t(src)]; });
            store_string_chunk(key, chunk, spec);
        } catch (...) {
            rethrow_for_chunk(store_->uri() + "/" + key);
        }
    });
}

} // namespace zarr3
