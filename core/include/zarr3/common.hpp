// Basic vocabulary of the zarr3 core library: byte buffers, shapes, errors and
// overflow-checked size arithmetic. No GDAL dependency anywhere in core/.
#pragma once

#include <bit>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

static_assert(std::endian::native == std::endian::little,
              "zarr3 core assumes a little-endian host");

namespace zarr3 {

using Bytes = std::vector<uint8_t>;
using ByteView = std::span<const uint8_t>;
using Shape = std::vector<uint64_t>;

// Every error core raises is a zarr3::Error whose message a user can act on:
// which file or key, which JSON member, what was expected.
class Error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// Malformed metadata or stored data.
class FormatError : public Error {
  public:
    using Error::Error;
};

// Overflow-checked arithmetic; `what` names the quantity in the error message.
uint64_t checked_add(uint64_t a, uint64_t b, const std::string& what);
uint64_t checked_mul(uint64_t a, uint64_t b, const std::string& what);
uint64_t checked_product(const Shape& s, const std::string& what);
// A shape in messages: "[4,5,6]".
std::string shape_text(const Shape& s);

// Parallel-for hook: run task(i) for i in [0, n). The driver plugs in GDAL's
// thread pool; the default runs serially. Exceptions thrown by tasks must be
// propagated to the caller (the first one wins).
using Executor = std::function<void(size_t n, const std::function<void(size_t)>& task)>;
Executor serial_executor();

// Limits that protect against hostile inputs.
constexpr uint64_t kMaxMetadataBytes = 256ull << 20; // a zarr.json larger than this is refused
constexpr uint64_t kMaxChunkBytes = 4ull << 30; // a decoded chunk/shard larger than this is refused

} // namespace zarr3
