// The format rules of `zarr3 virtualize` (NetCDF-4 / HDF5 files referenced in
// place by an Icechunk repository), without any HDF5 or GDAL code: which HDF5
// filter pipelines have a Zarr codec chain, how a file's HDF5 chunks along the
// concatenated dimension become rectilinear chunk edges (and which of them
// cannot be referenced), and the concatenated time coordinate in one CF unit,
// strictly increasing across files.
#pragma once

#include "zarr3/common.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace zarr3::virtualize {

// HDF5's filter ids (H5Zpublic.h).
constexpr unsigned kFilterDeflate = 1, kFilterShuffle = 2, kFilterFletcher32 = 3, kFilterSzip = 4,
                   kFilterNbit = 5, kFilterScaleOffset = 6;

// One filter of a dataset's HDF5 pipeline, in pipeline (encoding) order.
struct Hdf5Filter {
    unsigned id = 0;
    std::vector<unsigned> values; // client data (cd_values)
    std::string name;             // as the file names it (for messages)
    bool operator==(const Hdf5Filter&) const = default;
};

// The Zarr codec chain that decodes an HDF5 chunk stored through `filters`
// with elements of `element_size` bytes (`big_endian` byte order): bytes
// (endian), then numcodecs.shuffle for shuffle, numcodecs.zlib for deflate,
// in the reverse order of the pipeline. nullopt when a filter has no codec
// (szip, nbit, scale-offset, fletcher32, plugins), `why` then names it.
std::optional<nlohmann::json> codecs_for_filters(const std::vector<Hdf5Filter>& filters,
                                                 size_t element_size, bool big_endian,
                                                 std::string* why = nullptr);

// The fill value netCDF-4 gives a variable of Zarr type `zarr_type` that has
// no _FillValue attribute (netcdf.h's NC_FILL_*; libnetcdf writes it as the
// HDF5 dataset's fill value): 9.969209968386869e36 for float32 and float64,
// -2147483647 for int32, ... (null for other types).
nlohmann::json netcdf_default_fill(const std::string& zarr_type);

// One file's chunks along the concatenated dimension: the file holds
// `length` elements in HDF5 chunks of `chunk` elements (a contiguous
// dataset: chunk == length). Zarr chunk edges are chunk, chunk, ..., and the
// remainder; a remainder chunk is stored by HDF5 at full size (padded), so
// it cannot be referenced: `padded_last` says the last edge must be copied.
struct FileEdges {
    std::vector<uint64_t> edges;
    bool padded_last = false;
};
FileEdges file_edges(uint64_t length, uint64_t chunk);

// One file's time coordinate.
struct TimePiece {
    std::string file;
    std::vector<double> values;
    std::string units;    // CF "<unit> since <date>"
    std::string calendar; // empty: standard
};

// The concatenated time values of `pieces` (in file order) in the units of
// the first piece. Values of other units are converted through the calendar
// date (proleptic Gregorian; another calendar only when every piece has the
// same units). Error naming the file for bad units, and naming both files
// when a value is not strictly after the one before it (duplicates and
// overlaps), with the two dates.
std::vector<double> concatenate_time(const std::vector<TimePiece>& pieces);

// `prefix` + `name` ("file:///data/era5/" + "t2m_2023-01.nc"): the URL of a
// virtual reference. Error naming the file when the name holds a character
// the reader refuses in a reference (control characters, '\\', '%'), '?' or
// '#' (a query or fragment to URL parsers) or a dot segment; error naming the
// container when `prefix` is no "scheme://..." ending in '/' or the URL breaks
// the reader's rule (icechunk::check_virtual_url: dot and empty segments,
// /vsi paths, relative file URLs).
std::string reference_url(const std::string& prefix, const std::string& name);

// The URL a virtual reference names for a remote source file given as a GDAL
// path: "/vsis3/bucket/key" -> "s3://bucket/key", "/vsicurl/http(s)://..."
// -> that URL. nullopt for a local path (no /vsi prefix, no "scheme://").
// Error naming the path for other GDAL file systems and URLs (no reader of a
// repository could follow them) and for a bucket with no key.
std::optional<std::string> remote_source_url(const std::string& path);

// The longest prefix ending in '/' that every URL of `urls` starts with, at
// least "scheme://host/" (a bucket or server): the container the references
// of files in several folders share. Error naming two of the URLs when they
// share no server or bucket.
std::string common_url_prefix(const std::vector<std::string>& urls);

} // namespace zarr3::virtualize
