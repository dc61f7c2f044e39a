// `zarr3 virtualize` (zarr3_virtualize.cpp): library zarr3virt, which links
// libhdf5: the zarr3 program, and the plugin on GDAL >= 3.12 (`gdal driver
// zarr3 virtualize`); zarr3cli and the core do not.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace zarr3virt {

// `zarr3 virtualize ARGS...` (ARGS after the verb); exit code as zarr3cli::run.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

} // namespace zarr3virt
