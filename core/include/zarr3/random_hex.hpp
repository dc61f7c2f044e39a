// Names no other process or host picks (probe objects, owners of reservations).
#pragma once

#include <string>

namespace zarr3 {

// 16 bytes of std::random_device as 32 lowercase hex digits.
std::string random_hex();

} // namespace zarr3
