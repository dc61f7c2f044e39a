// The zarr3 tool as a function: the `zarr3` program (zarr3_main.cpp) and the
// plugin's GDAL driver algorithms (`gdal driver zarr3 VERB`, GDAL >= 3.12,
// driver/zarr3_algorithms.cpp) both run its verbs through run(), so there is
// one implementation of each. Built on core only (no GDAL).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace zarr3cli {

// What `zarr3 ARGS...` does (ARGS without the program name): the verb's
// report on `out`, problems and the usage on `err`; returns the exit code
// (0 done, 1 failed, 2 wrong arguments). Never throws.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// An option of a verb: `--name VALUE`.
struct VerbOption {
    const char* name;
    const char* help;
    bool required;
};

// A verb of the tool, described for other front ends (GDAL's algorithms).
struct Verb {
    const char* name;
    const char* summary;
    const char* path_help; // the one positional argument
    std::vector<VerbOption> options;
    // Positional arguments after the path, in order (`zarr3 tag REPO NAME
    // [SNAPSHOT]`); an optional one may be left out only at the end.
    std::vector<VerbOption> positionals = {};
};

// Every verb run() knows, in the order of `zarr3 --help`.
const std::vector<Verb>& verbs();

} // namespace zarr3cli
