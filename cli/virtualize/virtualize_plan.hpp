// `zarr3 virtualize`: the plan of a repository (or of an append to one) made
// from NetCDF-4 files before anything is written: the arrays' metadata, each
// chunk as a virtual reference or a region to copy, the coordinates' values.
// Every check that refuses the files runs here, so a refusal writes nothing.
#pragma once

#include "nc_file.hpp"

#include <map>
#include <optional>
#include <set>

namespace zarr3virt {

struct Options {
    std::string repo;
    std::vector<std::string> files;
    std::string concat_dim;
    std::set<std::string> variables; // empty: every data variable
    std::string branch = "main";
    std::string message;
    std::string container; // URL prefix the references name ("": file:// of the files' folder)
    bool append = false;
    bool no_checksum = false; // references record no modification time
    std::string relocate_from, relocate_to;
    // Reads remote files (/vsis3/, /vsicurl/): the plugin's on GDAL >= 3.12;
    // null (the zarr3 program) refuses them.
    std::shared_ptr<const NcReader> remote;
};

// One chunk of a virtualized array.
struct ChunkPlan {
    std::vector<uint64_t> coords; // Zarr chunk coordinates
    size_t file = 0;              // index into Plan::files
    // Virtual: the HDF5 chunk's bytes.
    bool copy = false;
    uint64_t address = 0, size = 0;
    // Copied: the region of the variable in the file, and where it goes in the array.
    std::vector<uint64_t> file_start, count, array_start;
    std::string reason; // why copied
};

struct ArrayPlan {
    std::string name;
    nlohmann::json metadata; // zarr.json
    std::vector<ChunkPlan> chunks;
};

// A natively stored array (coordinates, grid mapping, other static variables).
struct NativeArray {
    std::string name;
    nlohmann::json metadata;
    zarr3::Bytes values; // host order
};

// What the repository already holds (--append).
struct Existing {
    uint64_t length = 0;                                // along the concatenated dimension
    std::map<std::string, std::vector<uint64_t>> edges; // data variable -> its chunk edges along it
    std::vector<double> time;                           // the coordinate's values
    std::map<std::string, nlohmann::json> arrays;       // data variable -> zarr.json
    nlohmann::json time_metadata;                       // null: no time coordinate
};

struct Plan {
    std::vector<NcFile> files;
    std::vector<std::string> urls; // reference URL of each file
    nlohmann::json group_attributes;
    std::vector<ArrayPlan> arrays;
    std::vector<NativeArray> natives;
};

// Reads the files and plans the repository (or the append after `existing`).
// Error naming the file and the difference when the files cannot form one
// repository.
Plan make_plan(const Options& opt, const std::optional<Existing>& existing);

// Remote files (read by Options::remote): the first referenced chunk of each
// array in each file, decoded through the array's codecs, holds the values
// the reader reads there. Error naming the file and the variable otherwise
// (GDAL's raw block information names no filter it does not know).
void check_remote_chunks(const Plan& plan);

// The chunk key of `coords` ("t2m/c/0/1/2").
std::string chunk_key(const std::string& array, const std::vector<uint64_t>& coords);

} // namespace zarr3virt
