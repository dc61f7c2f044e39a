// HttpDirect: whole-object and byte-range GETs through CPLHTTPFetch.
#include "storage/http_direct.hpp"

#include "cpl_conv.h"
#include "cpl_error.h"
#include "cpl_http.h"
#include "cpl_string.h"
#include "cpl_vsi.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

namespace zarr3drv {

namespace {

// ------------------------------------------------------------ sessions
// Named persistent curl sessions keep connections (and TLS sessions) alive
// between requests. A session is used by one request at a time.
class SessionPool {
  public:
    std::string acquire() {
        std::lock_guard lk(mu_);
        if (free_.empty()) return "ZARR3_HTTP_" + std::to_string(next_++);
        std::string s = std::move(free_.back());
        free_.pop_back();
        return s;
    }
    void release(std::string name) {
        std::lock_guard lk(mu_);
        free_.push_back(std::move(name));
    }

  private:
    std::mutex mu_;
    std::vector<std::string> free_;
    int next_ = 0;
};

SessionPool& sessions() {
    static SessionPool* pool = new SessionPool(); // lives until exit
    return *pool;
}

class SessionLease {
  public:
    SessionLease() : name_(sessions().acquire()) {}
    ~SessionLease() { sessions().release(std::move(name_)); }
    SessionLease(const SessionLease&) = delete;
    SessionLease& operator=(const SessionLease&) = delete;
    const std::string& name() const { return name_; }

  private:
    std::string name_;
};

// ------------------------------------------------------------ options
// GDAL_HTTP_* settings read in the calling thread (thread-local and
// path-specific values included) and passed explicitly, so that requests
// made from helper threads see the same configuration.
constexpr std::pair<const char*, const char*> kForwarded[] = {
    {"GDAL_HTTP_VERSION", "HTTP_VERSION"},
    {"GDAL_HTTP_CONNECTTIMEOUT", "CONNECTTIMEOUT"},
    {"GDAL_HTTP_TIMEOUT", "TIMEOUT"},
    {"GDAL_HTTP_LOW_SPEED_TIME", "LOW_SPEED_TIME"},
    {"GDAL_HTTP_LOW_SPEED_LIMIT", "LOW_SPEED_LIMIT"},
    {"GDAL_HTTP_USERPWD", "USERPWD"},
    {"GDAL_HTTP_AUTH", "HTTPAUTH"},
    {"GDAL_HTTP_PROXY", "PROXY"},
    {"GDAL_HTTPS_PROXY", "HTTPS_PROXY"},
    {"GDAL_HTTP_PROXYUSERPWD", "PROXYUSERPWD"},
    {"GDAL_PROXY_AUTH", "PROXYAUTH"},
    {"GDAL_HTTP_NETRC", "NETRC"},
    {"GDAL_HTTP_MAX_RETRY", "MAX_RETRY"},
    {"GDAL_HTTP_RETRY_DELAY", "RETRY_DELAY"},
    {"GDAL_HTTP_HEADER_FILE", "HEADER_FILE"},
    {"GDAL_HTTP_COOKIE", "COOKIE"},
    {"GDAL_HTTP_COOKIEFILE", "COOKIEFILE"},
    {"GDAL_HTTP_COOKIEJAR", "COOKIEJAR"},
    {"GDAL_HTTP_UNSAFESSL", "UNSAFESSL"},
    {"GDAL_CURL_CA_BUNDLE", "CAINFO"},
    {"GDAL_HTTP_USERAGENT", "USERAGENT"},
    {"GDAL_HTTP_TCP_KEEPALIVE", "TCP_KEEPALIVE"},
};

// The user's GDAL_HTTP_HEADERS as separate lines (GDAL accepts "\r\n"-separated
// lines or a comma-separated list of "Name: value" items).
std::vector<std::string> user_headers(const std::string& path) {
    std::vector<std::string> out;
    const char* v = VSIGetPathSpecificOption(path.c_str(), "GDAL_HTTP_HEADERS", nullptr);
    if (v == nullptr || *v == '\0') return out;
    const char* comma = std::strchr(v, ',');
    if (std::strstr(v, "\r\n") == nullptr && comma != nullptr &&
        std::strchr(comma, ':') == nullptr) {
        out.emplace_back(v); // one header whose value holds commas
        return out;
    }
    const CPLStringList tokens(std::strstr(v, "\r\n")
                                   ? CSLTokenizeString2(v, "\r\n", 0)
                                   : CSLTokenizeString2(v, ",", CSLT_HONOURSTRINGS));
    for (int i = 0; i < tokens.size(); ++i)
        out.emplace_back(tokens[i]);
    return out;
}

struct RequestSetup {
    CPLStringList base;               // forwarded options
    std::vector<std::string> headers; // user headers
};

RequestSetup setup_for(const std::string& path) {
    RequestSetup s;
    for (const auto& [config, option] : kForwarded) {
        const char* v = VSIGetPathSpecificOption(path.c_str(), config, nullptr);
        if (v != nullptr) s.base.SetNameValue(option, v);
    }
    for (auto& h : user_headers(path))
        if (!STARTS_WITH_CI(h.c_str(), "Range:")) s.headers.push_back(std::move(h));
    return s;
}

// ------------------------------------------------------------ requests
struct Response {
    int status = 0;    // HTTP status; 0 when there was no usable HTTP answer
    std::string error; // what went wrong when status is 0
    zarr3::Bytes body;
    std::string content_range; // "bytes a-b/T", "bytes */T" or empty
    std::string content_type;
    std::string etag, last_modified; // validators of the object's version
    std::string generation;          // GCS's x-goog-generation (its conditions' version)
    bool timed_out = false;          // no answer within the timeouts
};

std::string header(CPLHTTPResult* r, const char* name) {
    const char* v = CSLFetchNameValue(r->papszHeaders, name);
    std::string out = v ? v : "";
    while (!out.empty() && (out.back() == '\r' || out.back() == '\n' || out.back() == ' '))
        out.pop_back();
    while (!out.empty() && out.front() == ' ')
        out.erase(0, 1);
    return out;
}

Response fetch(const std::string& url, const RequestSetup& setup, const std::string& range,
               uint64_t max_bytes) {
    // Ranges apply to the stored bytes: never ask for a compressed transfer.
    const CPLConfigOptionSetter no_gzip("CPL_CURL_GZIP", "NO", false);
    const SessionLease session;
    CPLStringList opts(setup.base);
    std::string headers = range.empty() ? std::string() : "Range: bytes=" + range;
    for (const auto& h : setup.headers)
        headers += (headers.empty() ? "" : "\r\n") + h;
    if (!headers.empty()) opts.SetNameValue("HEADERS", headers.c_str());
    const uint64_t cap = std::min<uint64_t>(max_bytes, INT_MAX - 1);
    opts.SetNameValue("MAX_FILE_SIZE", std::to_string(std::max<uint64_t>(cap, 1)).c_str());
    opts.SetNameValue("PERSISTENT", session.name().c_str());

    CPLHTTPResult* r = nullptr;
    {
        CPLErrorStateBackuper keep_state;
        CPLErrorHandlerPusher quiet(CPLQuietErrorHandler);
        r = CPLHTTPFetch(url.c_str(), opts.List());
    }
    Response out;
    if (r == nullptr) {
        out.error = "no HTTP support in this GDAL";
        return out;
    }
    const std::string err = r->pszErrBuf ? r->pszErrBuf : "";
    constexpr const char* kCode = "HTTP error code : ";
    if (err.rfind(kCode, 0) == 0) {
        out.status = std::atoi(err.c_str() + std::strlen(kCode));
    } else if (r->nStatus != 0 || !err.empty()) {
        out.error = err.empty() ? "curl error " + std::to_string(r->nStatus) : err;
        constexpr int kCurlTimedOut = 28; // CURLE_OPERATION_TIMEDOUT
        out.timed_out = r->nStatus == kCurlTimedOut || err.find("timed out") != std::string::npos ||
                        err.find("Timeout was reached") != std::string::npos;
    } else {
        out.status = 200;
    }
    if (const char* cr = CSLFetchNameValue(r->papszHeaders, "Content-Range"))
        out.content_range = cr;
    // GDAL does not expose the status of a successful request: an answer
    // with a Content-Range or multipart ranges is partial (206), else it is
    // the whole object.
    if (r->pszContentType) out.content_type = r->pszContentType;
    out.etag = header(r, "ETag");
    out.last_modified = header(r, "Last-Modified");
    out.generation = header(r, "x-goog-generation");
    if (out.status == 200 && (!out.content_range.empty() ||
                              out.content_type.find("multipart/byteranges") != std::string::npos))
        out.status = 206;
    if (out.status >= 200 && out.status < 300 && r->nDataLen > 0)
        out.body.assign(r->pabyData, r->pabyData + r->nDataLen);
    CPLHTTPDestroyResult(r);
    return out;
}

[[noreturn]] void unusable(const std::string& path, const Response& r) {
    // A stalled server: reading through VSI would wait the timeout again.
    if (r.timed_out)
        throw zarr3::Error(path + ": no answer from the server within the HTTP timeout " +
                           "(GDAL_HTTP_TIMEOUT / GDAL_HTTP_CONNECTTIMEOUT): " + r.error);
    throw HttpDirect::Unusable(path + ": " +
                               (r.status ? "HTTP " + std::to_string(r.status) : r.error));
}

// The object's version as the answer `r` tells it: GCS's generation, else
// the ETag, else Last-Modified, plus the object size; empty when both are
// missing. The validator named first is the one conditional writes take
// (ConditionDialect::version_field).
zarr3::ObjectVersion version_of(const Response& r, std::optional<uint64_t> total) {
    if (!total) return {};
    std::string validator;
    if (!r.generation.empty())
        validator = "gen:" + r.generation;
    else if (!r.etag.empty())
        validator = "etag:" + r.etag;
    else if (!r.last_modified.empty())
        validator = "lm:" + r.last_modified;
    else
        return {};
    return zarr3::ObjectVersion{"http:" + validator + "|" + std::to_string(*total)};
}

bool absent(const Response& r) {
    return r.status == 404 || r.status == 410;
}

// "bytes a-b/T" (T may be "*") or "bytes */T".
struct ContentRange {
    std::optional<uint64_t> first, last, total;
};

std::optional<uint64_t> parse_u64(const std::string& s) {
    if (s.empty() || s.size() > 19 ||
        !std::all_of(s.begin(), s.end(), [](unsigned char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    return std::stoull(s);
}

std::optional<ContentRange> parse_content_range(std::string v) {
    while (!v.empty() && v.front() == ' ')
        v.erase(0, 1);
    if (v.rfind("bytes", 0) != 0) return std::nullopt;
    v.erase(0, 5);
    while (!v.empty() && (v.front() == ' ' || v.front() == '='))
        v.erase(0, 1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\r'))
        v.pop_back();
    const auto slash = v.find('/');
    if (slash == std::string::npos) return std::nullopt;
    ContentRange c;
    const std::string span = v.substr(0, slash), tot = v.substr(slash + 1);
    if (tot != "*") {
        c.total = parse_u64(tot);
        if (!c.total) return std::nullopt;
    }
    if (span != "*") {
        const auto dash = span.find('-');
        if (dash == std::string::npos) return std::nullopt;
        c.first = parse_u64(span.substr(0, dash));
        c.last = parse_u64(span.substr(dash + 1));
        if (!c.first || !c.last || *c.last < *c.first) return std::nullopt;
    }
    return c;
}

// A piece of the object the server sent: bytes [first, first + data.size()).
struct Piece {
    uint64_t first = 0;
    zarr3::ByteView data;
};

std::string describe(const zarr3::ByteRange& r) {
    return zarr3::is_suffix(r) ? "last " + std::to_string(zarr3::range_length(r)) + " bytes"
                               : "byte range " + zarr3::range_text(r);
}

// Cuts `want` out of the pieces; FormatError when the object is too short.
zarr3::Bytes cut(const std::vector<Piece>& pieces, const zarr3::ByteRange& want,
                 std::optional<uint64_t> total, const std::string& path) {
    const auto* from_start = std::get_if<zarr3::RangeFromStart>(&want);
    if (!from_start && !total)
        throw HttpDirect::Unusable(path + ": no object size for a suffix range");
    const uint64_t off = total ? zarr3::range_start(want, *total, path) : from_start->offset;
    const uint64_t length = zarr3::range_length(want);
    const uint64_t end = zarr3::checked_add(off, length, path + " byte range");
    for (const auto& p : pieces)
        if (p.first <= off && end <= p.first + p.data.size()) {
            const auto s =
                p.data.subspan(static_cast<size_t>(off - p.first), static_cast<size_t>(length));
            return zarr3::Bytes(s.begin(), s.end());
        }
    throw HttpDirect::Unusable(path + ": the server did not send the " + describe(want));
}

// The pieces of a 200/206 answer; `total` learnt from it when possible.
std::vector<Piece> pieces_of(const Response& r, const std::string& path,
                             std::optional<uint64_t>& total) {
    std::vector<Piece> out;
    const zarr3::ByteView body(r.body);
    if (r.status != 206) { // the whole object
        total = body.size();
        out.push_back({0, body});
        return out;
    }
    if (r.content_type.find("multipart/byteranges") == std::string::npos) {
        const auto cr = parse_content_range(r.content_range);
        if (!cr || !cr->first || *cr->last - *cr->first + 1 != body.size())
            throw HttpDirect::Unusable(path + ": unexpected Content-Range '" + r.content_range +
                                       "'");
        if (cr->total) total = cr->total;
        out.push_back({*cr->first, body});
        return out;
    }
    // multipart/byteranges: each part has its own Content-Range; its length
    // tells where the part ends, so the binary data is never searched.
    auto b = r.content_type.find("boundary=");
    if (b == std::string::npos)
        throw HttpDirect::Unusable(path + ": multipart answer without boundary");
    std::string boundary = r.content_type.substr(b + 9);
    boundary = boundary.substr(0, boundary.find(';'));
    if (boundary.size() >= 2 && boundary.front() == '"' && boundary.back() == '"')
        boundary = boundary.substr(1, boundary.size() - 2);
    const std::string delim = "--" + boundary;
    const std::string_view text(reinterpret_cast<const char*>(body.data()), body.size());
    size_t pos = 0;
    while (true) {
        const size_t d = text.find(delim, pos);
        if (d == std::string_view::npos) break;
        size_t p = d + delim.size();
        if (text.substr(p, 2) == "--") break; // closing delimiter
        const size_t hdr_end = text.find("\r\n\r\n", p);
        if (hdr_end == std::string_view::npos)
            throw HttpDirect::Unusable(path + ": truncated multipart answer");
        std::optional<ContentRange> cr;
        for (size_t line = p; line < hdr_end;) {
            size_t eol = text.find("\r\n", line);
            if (eol == std::string_view::npos || eol > hdr_end) eol = hdr_end;
            const std::string_view l = text.substr(line, eol - line);
            const std::string_view name = "Content-Range:";
            if (l.size() > name.size() && EQUALN(l.data(), name.data(), name.size()))
                cr = parse_content_range(std::string(l.substr(name.size())));
            line = eol + 2;
        }
        if (!cr || !cr->first) throw HttpDirect::Unusable(path + ": multipart part without range");
        const uint64_t n = *cr->last - *cr->first + 1;
        const size_t start = hdr_end + 4;
        if (n > text.size() - start)
            throw HttpDirect::Unusable(path + ": truncated multipart part");
        if (cr->total) total = cr->total;
        out.push_back({*cr->first, body.subspan(start, static_cast<size_t>(n))});
        pos = start + static_cast<size_t>(n);
    }
    if (out.empty()) throw HttpDirect::Unusable(path + ": empty multipart answer");
    return out;
}

// A server that ignores Range answers 200 with the whole object: taken (and
// cut) up to this size, beyond that the request is dropped for VSI.
constexpr uint64_t kWholeObjectCap = 64ull << 20;

std::string range_spec(const zarr3::ByteRange& r) {
    if (const auto* sfx = std::get_if<zarr3::RangeSuffix>(&r))
        return "-" + std::to_string(sfx->length);
    const auto& fs = std::get<zarr3::RangeFromStart>(r);
    return std::to_string(fs.offset) + "-" + std::to_string(fs.offset + fs.length - 1);
}

// One request for one range; nullopt when the object is absent.
std::optional<zarr3::Bytes> fetch_range(const std::string& url, const RequestSetup& setup,
                                        const std::string& path, const zarr3::ByteRange& want,
                                        std::optional<uint64_t>& total,
                                        zarr3::ObjectVersion& version) {
    const Response r = fetch(url, setup, range_spec(want),
                             std::max<uint64_t>(zarr3::range_length(want), kWholeObjectCap));
    if (absent(r)) return std::nullopt;
    if (r.status == 416) { // nothing of the range exists
        const auto cr = parse_content_range(r.content_range);
        if (cr && cr->total) {
            total = cr->total;
            return cut({}, want, total, path); // throws FormatError
        }
        throw zarr3::FormatError(path + ": " + describe(want) + " lies past the end of the file");
    }
    if (r.status != 200 && r.status != 206) unusable(path, r);
    std::optional<uint64_t> t;
    const auto pieces = pieces_of(r, path, t);
    if (t) total = t;
    version = version_of(r, t);
    return cut(pieces, want, t, path);
}

} // namespace

// ------------------------------------------------------------ HttpDirect
std::unique_ptr<HttpDirect> HttpDirect::ForRoot(const std::string& root) {
    if (!CPLTestBool(CPLGetConfigOption("ZARR3_HTTP_DIRECT", "YES"))) return nullptr;
    if (root.find('?') != std::string::npos) return nullptr;
    if (STARTS_WITH_CI(root.c_str(), "/vsicurl/http://") ||
        STARTS_WITH_CI(root.c_str(), "/vsicurl/https://"))
        return std::unique_ptr<HttpDirect>(new HttpDirect(Kind::Curl, ""));
    for (const auto& [prefix, no_sign] :
         {std::pair{"/vsis3/", "AWS_NO_SIGN_REQUEST"}, std::pair{"/vsigs/", "GS_NO_SIGN_REQUEST"},
          std::pair{"/vsiaz/", "AZURE_NO_SIGN_REQUEST"}, std::pair{"/vsioss/", ""}})
        if (STARTS_WITH(root.c_str(), prefix))
            return std::unique_ptr<HttpDirect>(new HttpDirect(Kind::ObjectStore, no_sign));
    return nullptr;
}

std::string HttpDirect::url_of(const std::string& path) const {
    if (kind_ == Kind::Curl) return path.substr(std::strlen("/vsicurl/"));
    CPLErrorStateBackuper keep_state;
    CPLErrorHandlerPusher quiet(CPLQuietErrorHandler);
    if (!no_sign_option_.empty() &&
        CPLTestBool(VSIGetPathSpecificOption(path.c_str(), no_sign_option_.c_str(), "NO"))) {
        const char* url = VSIGetActualURL(path.c_str());
        // (GDAL 3.6 gives no URL for /vsiaz/ without a key: it returns the path.)
        if (url == nullptr || !STARTS_WITH_CI(url, "http")) throw Unusable(path + ": no URL");
        return url;
    }
    char* signed_url = VSIGetSignedURL(path.c_str(), nullptr);
    if (signed_url == nullptr) throw Unusable(path + ": cannot sign a URL");
    std::string out = signed_url;
    CPLFree(signed_url);
    if (!STARTS_WITH_CI(out.c_str(), "http")) throw Unusable(path + ": no URL");
    return out;
}

std::optional<zarr3::Bytes> HttpDirect::get(const std::string& path, uint64_t limit,
                                            zarr3::ObjectVersion* version) {
    if (version) *version = {};
    const Response r = fetch(url_of(path), setup_for(path), "", limit);
    if (absent(r)) return std::nullopt;
    if (r.status != 200) unusable(path, r);
    if (r.body.size() > limit) zarr3::throw_too_large(path, r.body.size(), limit);
    if (version) *version = version_of(r, r.body.size());
    return r.body;
}

std::optional<uint64_t> HttpDirect::size(const std::string& path, zarr3::ObjectVersion* version) {
    if (version) *version = {};
    const Response r = fetch(url_of(path), setup_for(path), "0-0", 1);
    if (absent(r)) return std::nullopt;
    std::optional<uint64_t> total;
    if (r.status == 416 || r.status == 206) {
        const auto cr = parse_content_range(r.content_range);
        if (cr && cr->total) total = cr->total;
    }
    if (!total && r.status == 200) total = r.body.size();
    if (!total) unusable(path, r);
    if (version) *version = version_of(r, total);
    return total;
}

std::optional<std::vector<zarr3::Bytes>>
HttpDirect::get_ranges(const std::string& path, const std::vector<zarr3::ByteRange>& ranges,
                       std::optional<uint64_t>& total, zarr3::ObjectVersion* version) {
    total.reset();
    if (version) *version = {};
    std::vector<size_t> todo; // non-empty ranges
    for (size_t i = 0; i < ranges.size(); ++i)
        if (zarr3::range_length(ranges[i]) > 0) todo.push_back(i);
    std::vector<zarr3::Bytes> out(ranges.size());
    if (todo.empty()) { // nothing to read: the answer is whether it exists
        total = size(path, version);
        if (!total) return std::nullopt;
        return out;
    }
    const std::string url = url_of(path);
    const RequestSetup setup = setup_for(path);
    const std::string mode = CPLGetConfigOption("GDAL_HTTP_MULTIRANGE", "PARALLEL");
    const bool any_suffix = std::any_of(todo.begin(), todo.end(),
                                        [&](size_t i) { return zarr3::is_suffix(ranges[i]); });

    if (todo.size() > 1 && EQUAL(mode.c_str(), "SINGLE_GET") && !any_suffix) {
        std::string spec;
        uint64_t sum = 0;
        for (size_t i : todo) {
            spec += (spec.empty() ? "" : ",") + range_spec(ranges[i]);
            sum = zarr3::checked_add(sum, zarr3::range_length(ranges[i]), path + " byte ranges");
        }
        // Room for the part headers of a multipart answer.
        const uint64_t cap =
            std::max(zarr3::checked_add(sum, 512 * todo.size() + 4096, path), kWholeObjectCap);
        const Response r = fetch(url, setup, spec, cap);
        if (absent(r)) return std::nullopt;
        if (r.status != 200 && r.status != 206) unusable(path, r);
        const auto pieces = pieces_of(r, path, total);
        for (size_t i : todo)
            out[i] = cut(pieces, ranges[i], total, path);
        if (version) *version = version_of(r, total);
        return out;
    }

    std::vector<std::optional<zarr3::Bytes>> got(ranges.size());
    std::vector<std::optional<uint64_t>> totals(ranges.size());
    std::vector<zarr3::ObjectVersion> versions(ranges.size());
    std::vector<std::exception_ptr> errors(ranges.size());
    auto one = [&](size_t i) {
        try {
            got[i] = fetch_range(url, setup, path, ranges[i], totals[i], versions[i]);
        } catch (...) {
            errors[i] = std::current_exception();
        }
    };
    if (todo.size() == 1 || EQUAL(mode.c_str(), "SERIAL")) {
        for (size_t i : todo)
            one(i);
    } else {
        constexpr size_t kMaxParallel = 8;
        for (size_t b = 0; b < todo.size(); b += kMaxParallel) {
            const size_t e = std::min(todo.size(), b + kMaxParallel);
            std::vector<std::thread> threads;
            for (size_t k = b + 1; k < e; ++k)
                threads.emplace_back(one, todo[k]);
            one(todo[b]);
            for (auto& t : threads)
                t.join();
        }
    }
    for (size_t i : todo)
        if (errors[i]) std::rethrow_exception(errors[i]);
    for (size_t i : todo) {
        if (!got[i]) return std::nullopt;
        if (totals[i]) total = totals[i];
        out[i] = std::move(*got[i]);
    }
    // One version for the whole answer: known only when every request told it.
    zarr3::ObjectVersion common;
    bool all_known = true;
    for (size_t i : todo) {
        if (zarr3::versions_differ(common, versions[i]))
            throw zarr3::ObjectChanged(path + ": the object changed between the requests of " +
                                       "one read (" + common.token + ", then " + versions[i].token +
                                       ")");
        if (versions[i].known())
            common = versions[i];
        else
            all_known = false;
    }
    if (version && all_known) *version = common;
    return out;
}

} // namespace zarr3drv
