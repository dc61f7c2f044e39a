// Conditional writes on object storage through GDAL: see conditional_put.hpp.
#include "storage/conditional_put.hpp"

#include "storage/vsi_store.hpp"

#include "cpl_conv.h"
#include "cpl_error.h"
#include "cpl_http.h"
#include "cpl_string.h"
#include "cpl_vsi.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <random>

namespace zarr3drv {

namespace {
// Not chained: /vsizip//vsis3/... has no PUT of its own.
bool StartsWithText(const std::string& s, const char* prefix) {
    return s.rfind(prefix, 0) == 0;
}

// "http:etag:<etag>|<size>" (HttpDirect's version of an answer) -> <etag>.
std::optional<std::string> EtagOf(const zarr3::ObjectVersion& v) {
    constexpr std::string_view kPrefix = "http:etag:";
    if (v.token.rfind(kPrefix, 0) != 0) return std::nullopt;
    const size_t bar = v.token.rfind('|');
    if (bar == std::string::npos || bar <= kPrefix.size()) return std::nullopt;
    return v.token.substr(kPrefix.size(), bar - kPrefix.size());
}

std::string RandomHex() {
    std::random_device rd;
    std::string out;
    for (int i = 0; i < 4; ++i) {
        char buf[9];
        std::snprintf(buf, sizeof buf, "%08x", rd());
        out += buf;
    }
    return out;
}

zarr3::ByteView Text(const std::string& s) {
    return zarr3::ByteView(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

// "" when the storage refuses both conditions on `key` (stored value kept),
// else what it ignored.
std::string ProbeConditions(const std::string& root, const std::string& key) {
    VSIStore store(root, true);
    const std::string path = root + "/" + key, first = "zarr3 probe 1";
    if (const std::string err = PutWithCondition(path, Text(first), "If-None-Match=*");
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
    PutWithCondition(path, Text("zarr3 probe 2"), "If-None-Match=*");
    if (!kept()) return "If-None-Match: * (it replaced an existing object)";
    PutWithCondition(path, Text("zarr3 probe 3"), "If-Match=\"0123456789abcdef0123456789abcdef\"");
    if (!kept()) return "If-Match (it replaced an object whose ETag did not match)";
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

bool TakesConditionalPut(const std::string& root) {
    return StartsWithText(root, "/vsis3/") || StartsWithText(root, "/vsiaz/");
}

std::optional<std::string> ConditionHeader(const std::string& root,
                                           const zarr3::Precondition& condition) {
    (void)root; // S3 and Azure Blob take the same HTTP conditions
    if (condition.kind == zarr3::Precondition::Kind::Absent) return "If-None-Match=*";
    const auto etag = EtagOf(condition.version);
    if (!etag) return std::nullopt;
    return "If-Match=" + *etag;
}

uint64_t SinglePutLimit(const std::string& root) {
    const bool az = StartsWithText(root, "/vsiaz/");
    const char* mb = VSIGetPathSpecificOption(
        root.c_str(), az ? "VSIAZ_CHUNK_SIZE" : "VSIS3_CHUNK_SIZE", az ? "4" : "50");
    const long long n = std::atoll(mb);
    return n > 0 ? static_cast<uint64_t>(n) << 20 : 0;
}

std::string PutWithCondition(const std::string& path, zarr3::ByteView value,
                             const std::string& header) {
    CPLErrorStateBackuper keep_state;
    CPLErrorHandlerPusher quiet(CPLQuietErrorHandler);
    CPLErrorReset();
    const char* const options[] = {header.c_str(), nullptr};
    VSILFILE* fp = VSIFOpenEx2L(path.c_str(), "wb", TRUE, options);
    auto error = [] {
        const char* m = CPLGetLastErrorMsg();
        return std::string(m && *m ? m : "unknown error");
    };
    if (fp == nullptr) return error();
    bool ok = value.empty() || VSIFWriteL(value.data(), 1, value.size(), fp) == value.size();
    ok = VSIFCloseL(fp) == 0 && ok;
    return ok ? std::string() : error();
}

void CheckConditionsHonoured(const std::string& root) {
    static std::mutex mu;
    static std::map<std::string, std::string> probed; // root -> what it ignored
    std::lock_guard lk(mu);
    auto it = probed.find(root);
    if (it == probed.end()) {
        const std::string key = ".zarr3-condition-probe." + RandomHex();
        std::string ignored;
        try {
            ignored = ProbeConditions(root, key);
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
