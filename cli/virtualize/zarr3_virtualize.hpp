// `zarr3 virtualize` (zarr3_virtualize.cpp): library zarr3virt, which links
// libhdf5: the zarr3 program, and the plugin on GDAL >= 3.12 (`gdal driver
// zarr3 virtualize`); zarr3cli and the core do not.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace zarr3virt {

class NcReader;

// `zarr3 virtualize ARGS...` (ARGS after the verb); exit code as zarr3cli::run.
// `remote` reads the /vsis3/ and /vsicurl/ files among ARGS (the plugin's
// GDAL reader); without one they are refused naming the file.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
        std::shared_ptr<const NcReader> remote = nullptr);

} // namespace zarr3virt
