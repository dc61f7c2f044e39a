// Conditional writes on object storage through GDAL: see conditional_put.hpp.
#include "storage/conditional_put.hpp"

#include "storage/vsi_store.hpp"
#include "zarr3/random_hex.hpp"

#include "cpl_conv.h"
#include "cpl_error.h"
#include "cpl_http.h"
#include "cpl_multiproc.h"
#include "cpl_string.h"
#include "cpl_vsi.h"

#include <curl/curl.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

namespace zarr3drv {

namespace {
// S3 (and S3-compatible endpoints) and Azure Blob take the HTTP conditions on
// the ETag (Azure needs its blob type with a Put Blob); Google Cloud Storage's
// XML API takes the generation, 0 meaning "no live object".
constexpr uint64_t kGiB = 1ull << 30;
constexpr ConditionDialect kDialects[] = {
    {"/vsis3/", "If-None-Match: *", "If-Match", "etag", "\"0123456789abcdef0123456789abcdef\"", "",
     5 * kGiB, true},
    {"/vsiaz/", "If-None-Match: *", "If-Match", "etag", "\"0x8D0123456789ABC\"",
     "x-ms-blob-type: BlockBlob", 5000ull << 20, true},
    {"/vsigs/", "x-goog-if-generation-match: 0", "x-goog-if-generation-match", "gen",
     "1234567890123456", "", 5 * kGiB, false},
};

bool StartsWithText(const std::string& s, const char* prefix) {
    return s.rfind(prefix, 0) == 0;
}

// "http:<field>:<value>|<size>" (HttpDirect's version of an answer) -> <value>.
std::optional<std::string> ValidatorOf(const zarr3::ObjectVersion& v, const char* field) {
    const std::string prefix = std::string("http:") + field + ":";
    if (v.token.rfind(prefix, 0) != 0) return std::nullopt;
    const size_t bar = v.token.rfind('|');
    if (bar == std::string::npos || bar <= prefix.size()) return std::nullopt;
    return v.token.substr(prefix.size(), bar - prefix.size());
}

zarr3::ByteView Text(const std::string& s) {
    return zarr3::ByteView(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

// ------------------------------------------------------------ one PUT
struct PutAnswer {
    long status = 0;   // HTTP status; 0: no answer
    std::string error; // the storage's error code, or the transport error
};

size_t KeepStart(char* data, size_t size, size_t n, void* out) {
    auto* s = static_cast<std::string*>(out);
    if (s->size() < 4096) s->append(data, std::min<size_t>(size * n, 4096 - s->size()));
    return size * n;
}

// "<Code>X</Code>" of an S3, Azure or GCS error document.
std::string ErrorCode(const std::string& body) {
    const size_t b = body.find("<Code>"), e = body.find("</Code>");
    if (b == std::string::npos || e == std::string::npos || e < b) return "";
    return body.substr(b + 6, e - b - 6);
}

// GDAL's HTTP settings for `path` that a PUT honours: timeouts, proxy,
// certificates.
void ApplyHttpSettings(CURL* h, const std::string& path) {
    auto opt = [&](const char* key) {
        return VSIGetPathSpecificOption(path.c_str(), key, nullptr);
    };
    if (const char* v = opt("GDAL_HTTP_TIMEOUT")) curl_easy_setopt(h, CURLOPT_TIMEOUT, atol(v));
    if (const char* v = opt("GDAL_HTTP_CONNECTTIMEOUT"))
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, atol(v));
    if (const char* v = opt("GDAL_HTTP_PROXY")) curl_easy_setopt(h, CURLOPT_PROXY, v);
    if (const char* v = opt("GDAL_HTTP_PROXYUSERPWD")) curl_easy_setopt(h, CURLOPT_PROXYUSERPWD, v);
    const char* ca = opt("GDAL_CURL_CA_BUNDLE");
    if (ca == nullptr) ca = opt("CURL_CA_BUNDLE");
    if (ca != nullptr) curl_easy_setopt(h, CURLOPT_CAINFO, ca);
    if (CPLTestBool(VSIGetPathSpecificOption(path.c_str(), "GDAL_HTTP_UNSAFESSL", "NO"))) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
}

PutAnswer SendPut(const std::string& url, const std::string& path, zarr3::ByteView value,
                  const std::vector<std::string>& headers) {
    std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> h(curl_easy_init(), curl_easy_cleanup);
    if (!h) return {0, "cannot start an HTTP request"};
    curl_slist* list = nullptr;
    for (const auto& line : headers)
        list = curl_slist_append(list, line.c_str());
    list = curl_slist_append(list, "Content-Type: application/octet-stream");
    list = curl_slist_append(list, "Expect:");
    std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> keep_list(list,
                                                                          curl_slist_free_all);
    static const char kNothing[] = "";
    std::string body;
    char err[CURL_ERROR_SIZE] = {};
    curl_easy_setopt(h.get(), CURLOPT_URL, url.c_str());
    curl_easy_setopt(h.get(), CURLOPT_CUSTOMREQUEST, "PUT");
    curl_easy_setopt(h.get(), CURLOPT_POSTFIELDS,
                     value.empty() ? kNothing : reinterpret_cast<const char*>(value.data()));
    curl_easy_setopt(h.get(), CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(value.size()));
    curl_easy_setopt(h.get(), CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(h.get(), CURLOPT_WRITEFUNCTION, KeepStart);
    curl_easy_setopt(h.get(), CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(h.get(), CURLOPT_ERRORBUFFER, err);
    curl_easy_setopt(h.get(), CURLOPT_NOSIGNAL, 1L);
    ApplyHttpSettings(h.get(), path);
    const CURLcode rc = curl_easy_perform(h.get());
    if (rc != CURLE_OK) return {0, err[0] ? std::string(err) : curl_easy_strerror(rc)};
    long status = 0;
    curl_easy_getinfo(h.get(), CURLINFO_RESPONSE_CODE, &status);
    return {status, ErrorCode(body)};
}

// "" when the storage refuses both conditions on `key` (stored value kept),
// else what it ignored.
std::string ProbeConditions(const std::string& root, const std::string& key,
                            const ConditionDialect& d) {
    VSIStore store(root, true);
    const std::string path = root + "/" + key, first = "zarr3 probe 1";
    if (const std::string err = PutWithCondition(root, path, Text(first), d.absent_header);
        !err.empty())
        throw zarr3::Error(root +
                           ": cannot check that the storage honours conditional writes: "
                           "the probe object " +
                           key + " could not be written (" + err +
                           "); nothing was written to the repository");
    auto kept = [&] {
        zarr3::ObjectVersion v;
        const auto now = store.get_fresh(key, 1024, v);
        return now && *now == zarr3::Bytes(first.begin(), first.end());
    };
    PutWithCondition(root, path, Text("zarr3 probe 2"), d.absent_header);
    if (!kept()) return std::string(d.absent_header) + " (it replaced an existing object)";
    PutWithCondition(root, path, Text("zarr3 probe 3"),
                     std::string(d.match_header) + ": " + d.made_up_version);
    if (!kept())
        return std::string(d.match_header) + " (it replaced an object whose version did not match)";
    return "";
}

// A DELETE signed for `path` (GDAL's VSIUnlink first stats the object, which
// a listing of its folder remembered before may answer as absent).
void RemoveProbe(const std::string& path) {
    CPLErrorStateBackuper keep_state;
    CPLErrorHandlerPusher quiet(CPLQuietErrorHandler);
    const char* const verb[] = {"VERB=DELETE", nullptr};
    if (char* url = VSIGetSignedURL(path.c_str(), verb)) {
        const char* const options[] = {"CUSTOMREQUEST=DELETE", nullptr};
        CPLHTTPDestroyResult(CPLHTTPFetch(url, options));
        CPLFree(url);
    } else {
        VSIUnlink(path.c_str());
    }
    VSICurlPartialClearCache(CPLGetPath(path.c_str()));
}
} // namespace

const ConditionDialect* DialectOf(const std::string& root) {
    for (const auto& d : kDialects)
        if (StartsWithText(root, d.prefix)) return &d; // not chained: /vsizip//vsis3/...
    return nullptr;
}

bool TakesConditionalPut(const std::string& root) {
    const ConditionDialect* d = DialectOf(root);
    return d != nullptr && d->signed_url_takes_condition;
}

std::optional<std::string> ConditionHeader(const std::string& root,
                                           const zarr3::Precondition& condition) {
    const ConditionDialect* d = DialectOf(root);
    if (d == nullptr) return std::nullopt;
    if (condition.kind == zarr3::Precondition::Kind::Absent) return d->absent_header;
    const auto value = ValidatorOf(condition.version, d->version_field);
    if (!value) return std::nullopt;
    return std::string(d->match_header) + ": " + *value;
}

std::vector<std::string> PutHeaders(const std::string& root, const std::string& condition_line) {
    std::vector<std::string> out{condition_line};
    if (const ConditionDialect* d = DialectOf(root); d && *d->extra_header)
        out.emplace_back(d->extra_header);
    return out;
}

uint64_t SinglePutLimit(const std::string& root) {
    const ConditionDialect* d = DialectOf(root);
    return d ? d->max_single_put : 0;
}

std::string PutWithCondition(const std::string& root, const std::string& path,
                             zarr3::ByteView value, const std::string& condition_line) {
    std::string url;
    {
        CPLErrorStateBackuper keep_state;
        CPLErrorHandlerPusher quiet(CPLQuietErrorHandler);
        const char* const verb[] = {"VERB=PUT", nullptr};
        if (char* signed_url = VSIGetSignedURL(path.c_str(), verb)) {
            url = signed_url;
            CPLFree(signed_url);
        }
    }
    if (!STARTS_WITH_CI(url.c_str(), "http"))
        return "GDAL gives no signed URL for it (credentials that sign URLs are needed)";
    const int retries =
        std::max(0, atoi(VSIGetPathSpecificOption(path.c_str(), "GDAL_HTTP_MAX_RETRY", "0")));
    const double delay =
        CPLAtof(VSIGetPathSpecificOption(path.c_str(), "GDAL_HTTP_RETRY_DELAY", "30"));
    const auto headers = PutHeaders(root, condition_line);
    PutAnswer a;
    for (int attempt = 0;; ++attempt) {
        a = SendPut(url, path, value, headers);
        const bool transient = a.status == 0 || a.status == 429 || a.status >= 500;
        if (!transient || attempt >= retries) break;
        CPLSleep(delay);
    }
    VSICurlPartialClearCache(CPLGetPath(path.c_str())); // GDAL's view of the object and folder
    if (a.status == 200 || a.status == 201) return "";
    if (a.status == 0) return a.error;
    return "HTTP " + std::to_string(a.status) + (a.error.empty() ? "" : " (" + a.error + ")");
}

void CheckConditionsHonoured(const std::string& root) {
    static std::mutex mu;
    static std::map<std::string, std::string> probed; // root -> what it ignored
    std::lock_guard lk(mu);
    auto it = probed.find(root);
    if (it == probed.end()) {
        const ConditionDialect* d = DialectOf(root);
        if (d == nullptr || !TakesConditionalPut(root))
            throw zarr3::Error(root + ": this storage takes no conditional write");
        const std::string key = ".zarr3-condition-probe." + zarr3::random_hex();
        std::string ignored;
        try {
            ignored = ProbeConditions(root, key, *d);
        } catch (...) {
            RemoveProbe(root + "/" + key);
            throw;
        }
        RemoveProbe(root + "/" + key);
        it = probed.emplace(root, ignored).first;
    }
    if (!it->second.empty())
        throw zarr3::ConditionsIgnored(
            root + ": this storage ignores the condition " + it->second +
            " that a safe commit needs (a concurrent writer's update could be "
            "silently lost); refusing to write; nothing was written to the "
            "repository");
}

} // namespace zarr3drv
