// `zarr3 virtualize` (zarr3_virtualize.cpp): a verb of the zarr3 program only,
// as it links libhdf5 (the plugin and zarr3cli do not).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace zarr3virt {

// `zarr3 virtualize ARGS...` (ARGS after the verb); exit code as zarr3cli::run.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

} // namespace zarr3virt
