// Conditional writes on object storage through GDAL (VSIStore::put_if):
// which storages take a condition with a PUT, how a condition becomes the
// storage's headers, and the probe that refuses a storage that ignores them.
// GDAL has no documented conditional write; its single-part PUT (/vsis3/,
// /vsiaz/) sends the KEY=VALUE options of VSIFOpenEx2L as headers, which
// is what carries If-Match / If-None-Match: * here. Adding a storage (GCS's
// x-goog-if-generation-match) is one more case of ConditionHeaders.
#pragma once

#include "zarr3/store.hpp"

#include <optional>
#include <string>

namespace zarr3drv {

// The object storage under `root` takes conditions with its PUT (S3 and
// S3-compatible endpoints, Azure Blob), not chained in another file system.
bool TakesConditionalPut(const std::string& root);

// The KEY=VALUE options of VSIFOpenEx2L that carry `condition` ("" when the
// version holds no ETag: the caller refuses), for the storage of `root`.
std::optional<std::string> ConditionHeader(const std::string& root,
                                           const zarr3::Precondition& condition);

// The largest value one PUT sends (above, GDAL uploads in parts, without
// the headers): its chunk size for the storage of `root`.
uint64_t SinglePutLimit(const std::string& root);

// PUT of `value` at `path` with the condition `header`; "" when the storage
// answered success, else GDAL's error text (a failed condition among them).
std::string PutWithCondition(const std::string& path, zarr3::ByteView value,
                             const std::string& header);

// Once per root and process: a probe object under `root` written if absent,
// then written again if absent and if it matches a made-up ETag; both must be
// refused. Error naming the storage when it ignores either (a commit there
// could silently overwrite another), or cannot be probed; the probe object is
// removed.
void CheckConditionsHonoured(const std::string& root);

} // namespace zarr3drv
