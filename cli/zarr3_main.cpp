// The `zarr3` program: the tool's verbs (zarr3_run.cpp) on stdout/stderr.
#include "zarr3_cli.hpp"

#include <iostream>

int main(int argc, char** argv) {
    return zarr3cli::run(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
}
