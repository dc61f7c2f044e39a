// What `zarr3 virtualize` reads of a NetCDF-4 file: the root group's
// variables (type, dimensions, attributes, fill value, layout, HDF5 filters
// and the address of every stored chunk), and the values of a region (for
// coordinates and chunks that cannot be referenced). Local files through
// libhdf5 (linked by zarr3virt only, CMakeLists.txt); remote ones through an
// NcReader the caller hands over (the plugin's, over GDAL's multidimensional
// API, driver/virtualize_gdal_reader.cpp, GDAL >= 3.12).
#pragma once

#include "zarr3/common.hpp"
#include "zarr3/virtualize.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace zarr3virt {

struct NcChunk {
    std::vector<uint64_t> origin; // element offset of the chunk
    uint64_t address = 0;         // byte offset in the file
    uint64_t size = 0;            // stored bytes
    unsigned filter_mask = 0;     // filters skipped for this chunk (not referenceable)
};

struct NcVar {
    enum class Layout { Chunked, Contiguous, Compact };
    std::string name;
    std::vector<std::string> dims;
    std::vector<uint64_t> shape;
    std::string zarr_type; // "float32", "int16", ... ("" for types with no Zarr equivalent)
    size_t element_size = 0;
    bool big_endian = false;
    nlohmann::json attributes = nlohmann::json::object();
    nlohmann::json fill_value; // the dataset's HDF5 fill value (netCDF's _FillValue or default)
    Layout layout = Layout::Contiguous;
    std::vector<uint64_t> chunk_shape; // chunked layout only
    std::vector<zarr3::virtualize::Hdf5Filter> filters;
    std::vector<NcChunk> chunks; // stored chunks (contiguous: the one block, when allocated)
    bool dimension_scale = false;
};

class NcReader;

struct NcFile {
    std::string path;
    uint64_t size = 0;
    int64_t mtime = 0; // seconds since 1970
    std::string etag;  // the server's ETag of a remote file ("" when none)
    nlohmann::json attributes = nlohmann::json::object();
    std::vector<NcVar> vars;
    std::shared_ptr<const NcReader> reader; // the one that read it (null: libhdf5)
    const NcVar* find(const std::string& name) const;
    // The values of `var` in [start, start + count) as `var.zarr_type` in the
    // host's byte order (little-endian), row-major, through its reader.
    zarr3::Bytes read_region(const std::string& var, const std::vector<uint64_t>& start,
                             const std::vector<uint64_t>& count) const;
};

// Another source of files than libhdf5 on a local path: the same NcFile
// (chunk index, coordinates, attributes) from elsewhere.
class NcReader {
  public:
    virtual ~NcReader() = default;
    // Error naming `path` when it cannot be read as a NetCDF-4 / HDF5 file.
    virtual NcFile read(const std::string& path) const = 0;
    virtual zarr3::Bytes read_region(const std::string& path, const std::string& var,
                                     const std::vector<uint64_t>& start,
                                     const std::vector<uint64_t>& count) const = 0;
    // `size` bytes of the file at `offset` (a stored chunk).
    virtual zarr3::Bytes read_bytes(const std::string& path, uint64_t offset,
                                    uint64_t size) const = 0;
};

// Through libhdf5. Error naming `path` when it is no HDF5 file or cannot be read.
NcFile read_nc(const std::string& path);

// Through libhdf5: the values as NcFile::read_region gives them.
zarr3::Bytes read_region(const std::string& path, const std::string& var,
                         const std::vector<uint64_t>& start, const std::vector<uint64_t>& count);

// A number of Zarr type `zarr_type` ("float32", "int16", ...) at `p` (host
// order) as Zarr fill value JSON ("NaN", "Infinity" for those floats).
nlohmann::json number_json(const std::string& zarr_type, const void* p);

} // namespace zarr3virt
