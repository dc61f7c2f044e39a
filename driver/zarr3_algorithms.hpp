// `gdal driver zarr3 VERB` (GDAL >= 3.12): the zarr3 tool's verbs offered as
// GDAL driver algorithms (zarr3_algorithms.cpp).
#pragma once

class GDALDriver;

namespace zarr3drv {

// Declares the verbs on `drv` and sets its algorithm factory; does nothing
// with a GDAL that has no driver algorithms.
void RegisterAlgorithms(GDALDriver* drv);

} // namespace zarr3drv
