// The `zarr3` program: the tool's verbs (zarr3_run.cpp) on stdout/stderr, and
// `zarr3 virtualize` (cli/virtualize/, the one verb that needs libhdf5).
#include "virtualize/zarr3_virtualize.hpp"
#include "zarr3_cli.hpp"

#include <iostream>

int main(int argc, char** argv) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (!args.empty() && args[0] == "virtualize")
        return zarr3virt::run(std::vector<std::string>(args.begin() + 1, args.end()), std::cout,
                              std::cerr);
    return zarr3cli::run(args, std::cout, std::cerr);
}
