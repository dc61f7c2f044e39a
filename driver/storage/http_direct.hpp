// Direct HTTP(S) reads for remote stores. GDAL's /vsicurl/ learns each
// object's size with a HEAD (or a first-block GET on /vsis3/) before it reads;
// a Zarr reader needs none of that: a chunk is one GET, a shard index one
// suffix-range GET (whose Content-Range gives the shard size), and inner chunks
// one ranged GET each. Requests go through CPLHTTPFetch, so the GDAL_HTTP_*
// configuration (proxy, headers, auth, timeouts, retries, TLS) applies as for
// /vsicurl/. Object stores are reached through the URL GDAL signs for the path.
#pragma once

#include "zarr3/store.hpp"

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace zarr3drv {

class HttpDirect {
  public:
    // The server's answer cannot be used directly (redirect, 403, 5xx after
    // retries, network error, unsigned path): the caller reads through VSI,
    // which reports the problem in GDAL's words.
    struct Unusable : std::runtime_error {
        using std::runtime_error::runtime_error;
    };

    // For a store root on /vsicurl/http(s)://, /vsis3/, /vsigs/, /vsiaz/ or
    // /vsioss/ (not chained in another file system), unless the configuration
    // option ZARR3_HTTP_DIRECT is NO; null otherwise.
    static std::unique_ptr<HttpDirect> ForRoot(const std::string& root);

    // A request that got no answer within GDAL_HTTP_TIMEOUT (or could not
    // connect within GDAL_HTTP_CONNECTTIMEOUT) throws zarr3::Error, not
    // Unusable: reading through VSI would wait for the same server again.
    //
    // `version` (when given) receives the object's version from the answer:
    // ETag (else Last-Modified) plus the object size; empty when the server
    // sends neither. ObjectChanged when the answers to the requests of one
    // get_ranges call carry different versions.

    // `path` is the object's VSI path (root + "/" + key). nullopt = absent
    // (HTTP 404/410). FormatError when the object is larger than `limit`.
    std::optional<zarr3::Bytes> get(const std::string& path, uint64_t limit,
                                    zarr3::ObjectVersion* version = nullptr);
    // One 1-byte range request; nullopt when absent.
    std::optional<uint64_t> size(const std::string& path, zarr3::ObjectVersion* version = nullptr);
    // Suffix and explicit ranges; `total` is the object size when a response
    // reported it. Several ranges are fetched in parallel (or as one
    // multi-range GET with GDAL_HTTP_MULTIRANGE=SINGLE_GET, serially with
    // SERIAL), as GDAL's /vsicurl/ does. The caller bounds each range's length.
    std::optional<std::vector<zarr3::Bytes>> get_ranges(const std::string& path,
                                                        const std::vector<zarr3::ByteRange>& ranges,
                                                        std::optional<uint64_t>& total,
                                                        zarr3::ObjectVersion* version = nullptr);

  private:
    enum class Kind { Curl, ObjectStore };
    HttpDirect(Kind kind, std::string no_sign_option)
        : kind_(kind), no_sign_option_(std::move(no_sign_option)) {}
    std::string url_of(const std::string& path) const;
    Kind kind_;
    std::string no_sign_option_; // e.g. AWS_NO_SIGN_REQUEST for /vsis3/
};

} // namespace zarr3drv
