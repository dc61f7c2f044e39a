// `zarr3 virtualize`: the check of remote files' chunk index (virtualize_plan.hpp).
// GDAL's raw block information names a chunk's compression and filters, not
// every HDF5 filter (a plugin's may be missing): the first referenced chunk
// of each variable of each remote file is decoded through the array's codecs
// and compared with the values GDAL reads there, before anything is written.
#include "virtualize_plan.hpp"

#include "zarr3/array.hpp"

#include <algorithm>

namespace zarr3virt {

namespace {

using nlohmann::json;
using zarr3::Error;

// The values the HDF5 chunk at `address` decodes to through the codecs of
// `a`, in the region [0, count) of the chunk (the part inside the file).
zarr3::Bytes decode_chunk(const ArrayPlan& a, const NcVar& v, const zarr3::Bytes& stored,
                          const std::vector<uint64_t>& chunk, const std::vector<uint64_t>& count) {
    auto store = std::make_shared<zarr3::MemoryStore>();
    const json meta = {
        {"zarr_format", 3},
        {"node_type", "array"},
        {"shape", chunk},
        {"data_type", v.zarr_type},
        {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", chunk}}}}},
        {"chunk_key_encoding", {{"name", "default"}, {"configuration", {{"separator", "/"}}}}},
        {"fill_value", a.metadata["fill_value"]},
        {"codecs", a.metadata["codecs"]}};
    const std::string text = meta.dump();
    store->put("x/zarr.json",
               zarr3::ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
    store->put(chunk_key("x", std::vector<uint64_t>(chunk.size(), 0)),
               zarr3::ByteView(stored.data(), stored.size()));
    auto array = zarr3::Array::open(store, "x");
    uint64_t n = 1;
    for (uint64_t c : count)
        n *= c;
    zarr3::Bytes out(size_t(n) * v.element_size);
    array->read(zarr3::Selection{std::vector<uint64_t>(count.size(), 0), count, {}}, out.data());
    return out;
}

void check_first_chunk(const Plan& p, const ArrayPlan& a, size_t file) {
    const auto c = std::find_if(a.chunks.begin(), a.chunks.end(),
                                [&](const ChunkPlan& x) { return x.file == file && !x.copy; });
    if (c == a.chunks.end()) return;
    const NcFile& f = p.files[file];
    const NcVar& v = *f.find(a.name);
    const auto h = std::find_if(v.chunks.begin(), v.chunks.end(),
                                [&](const NcChunk& x) { return x.address == c->address; });
    if (h == v.chunks.end()) return;
    const auto& chunk = v.layout == NcVar::Layout::Chunked ? v.chunk_shape : v.shape;
    std::vector<uint64_t> count;
    for (size_t d = 0; d < chunk.size(); ++d)
        count.push_back(std::min(chunk[d], v.shape[d] - h->origin[d]));
    const std::string head =
        f.path + ": variable " + a.name + ": its chunk at " + json(h->origin).dump() + " ";
    const std::string codecs = a.metadata["codecs"].dump();
    const std::string tail =
        " (a filter GDAL's raw block information does not name?); nothing written";
    const zarr3::Bytes stored = f.reader->read_bytes(f.path, c->address, c->size);
    zarr3::Bytes decoded;
    try {
        decoded = decode_chunk(a, v, stored, chunk, count);
    } catch (const std::exception& e) {
        throw Error(head + "does not decode through " + codecs + " (" + e.what() + ")" + tail);
    }
    if (decoded != f.read_region(a.name, h->origin, count))
        throw Error(head + "decodes through " + codecs + " to other values than GDAL reads there" +
                    tail);
}

} // namespace

void check_remote_chunks(const Plan& p) {
    for (size_t i = 0; i < p.files.size(); ++i)
        if (p.files[i].reader)
            for (const auto& a : p.arrays)
                check_first_chunk(p, a, i);
}

} // namespace zarr3virt
