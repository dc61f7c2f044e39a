// A GDAL dimension whose size can follow the arrays that resize it.
#pragma once

#include "gdal_priv.h"

#include <memory>
#include <string>

namespace zarr3drv {

class Zarr3Dimension final : public GDALDimensionWeakIndexingVar {
  public:
    Zarr3Dimension(const std::string& parent, const std::string& name, const std::string& type,
                   const std::string& direction, GUInt64 size)
        : GDALDimensionWeakIndexingVar(parent, name, type, direction, size) {}
    // Called after an array using this dimension was resized.
    void SetSizeInternal(GUInt64 size) { m_nSize = size; }
};

} // namespace zarr3drv
