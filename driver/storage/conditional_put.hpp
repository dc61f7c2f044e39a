// Conditional writes on object storage through GDAL (VSIStore::put_if):
// which storages take a condition with a PUT, how a condition becomes the
// storage's header, and the probe that refuses a storage that ignores them.
// One code path for every storage: what differs (the header names, the
// validator of a read that carries the version, headers a PUT needs) is
// data, a ConditionDialect per file system. The PUT goes to the URL GDAL
// signs for the path (VSIGetSignedURL, VERB=PUT) with the condition header:
// GDAL's own write handles are not used, as /vsiaz/ answers a 409 to its PUT
// by deleting the blob and sending it again (GDAL 3.6 to 3.13), which turns
// Azure's refusal of If-None-Match: * (409 BlobAlreadyExists) into an
// overwrite.
#pragma once

#include "zarr3/store.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace zarr3drv {

// What one object storage calls its conditions.
struct ConditionDialect {
    const char* prefix;          // file system ("/vsis3/")
    const char* absent_header;   // the header line of "only if there is no object"
    const char* match_header;    // the header name of "only if it is the version read"
    const char* version_field;   // the validator of a read that carries that version
                                 // (HttpDirect's token "http:<field>:<value>|<size>")
    const char* made_up_version; // a version no object has (the probe)
    const char* extra_header;    // a header line every PUT sends ("" for none)
    uint64_t max_single_put;     // the largest value one PUT may carry
    // GDAL's signed URL for a PUT lets the condition header through. Not for
    // GCS: GDAL signs it in the V2 form, whose signature covers every x-goog-*
    // header and the Content-Type (it signs none), so GCS would refuse the
    // request; committing there would need the plugin to sign GCS requests
    // itself, a second code path. /vsigs/ stays refused until then.
    bool signed_url_takes_condition;
};

// The dialect of the object storage under `root` (S3 and S3-compatible
// endpoints, Azure Blob, Google Cloud Storage), not chained in another file
// system; nullptr elsewhere.
const ConditionDialect* DialectOf(const std::string& root);

// The storage under `root` takes conditions with its PUT (DialectOf, and its
// signed URLs let the condition through).
bool TakesConditionalPut(const std::string& root);

// The header line that carries `condition` for the storage of `root`
// ("If-Match: \"etag\"", "x-goog-if-generation-match: 0", ...); nullopt when
// the version read holds no value of the dialect's validator (the caller
// refuses) or the storage takes no condition.
std::optional<std::string> ConditionHeader(const std::string& root,
                                           const zarr3::Precondition& condition);

// Every header line a conditional PUT under `root` sends: `condition_line`
// and the dialect's extra header.
std::vector<std::string> PutHeaders(const std::string& root, const std::string& condition_line);

// The largest value one PUT sends to the storage of `root`.
uint64_t SinglePutLimit(const std::string& root);

// PUT of `value` at `path` (under `root`) with `condition_line`, to the URL
// GDAL signs for it; "" when the storage answered success, else what went
// wrong ("HTTP 412 (ConditionNotMet)", a transport error). A 5xx or a
// transport error is sent again up to GDAL_HTTP_MAX_RETRY times
// (GDAL_HTTP_RETRY_DELAY apart); GDAL's cached state of the path is dropped.
std::string PutWithCondition(const std::string& root, const std::string& path,
                             zarr3::ByteView value, const std::string& condition_line);

// Once per root and process: a probe object under `root` written if absent,
// then written again if absent and if it matches a made-up version; both must
// be refused. Error naming the storage when it ignores either (a commit there
// could silently overwrite another), or cannot be probed; the probe object is
// removed.
void CheckConditionsHonoured(const std::string& root);

} // namespace zarr3drv
