// Authorization of Icechunk virtual chunk references (icechunk_virtual.hpp).
#include "zarr3/icechunk_virtual.hpp"

#include "zarr3/common.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace zarr3::icechunk {

namespace {

constexpr std::array<const char*, 6> kSchemes = {"s3", "gs", "az", "http", "https", "file"};

std::string scheme_of(const std::string& url) {
    const size_t at = url.find("://");
    return at == std::string::npos ? std::string() : url.substr(0, at);
}

// The first "." or ".." segment of `rest` ("a/../b"), or npos.
size_t dot_segment_at(const std::string& rest) {
    size_t start = 0;
    while (start <= rest.size()) {
        size_t end = rest.find('/', start);
        if (end == std::string::npos) end = rest.size();
        const std::string seg = rest.substr(start, end - start);
        if (seg == "." || seg == "..") return start;
        start = end + 1;
    }
    return std::string::npos;
}

bool starts_with_vsi(const std::string& path) {
    if (path.size() < 4) return false;
    std::string head = path.substr(0, 4);
    for (auto& c : head)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return head == "/vsi";
}

// A file:// URL names a local file by its absolute path: "file://x/y" would be
// the path "x/y" relative to the working folder, "/vsi..." a path of one of
// GDAL's virtual file systems (/vsicurl/, /vsimem/, /vsis3/: the network, or
// another dataset's memory, with the user's credentials), and an empty
// segment is no folder a container holds.
void check_file_path(const std::string& url, const std::string& path, const std::string& where) {
    if (path.empty() || path.front() != '/')
        throw Error(where + ": virtual chunk URL '" + url +
                    "' names no absolute path (a file URL is file:///path); refused");
    if (starts_with_vsi(path))
        throw Error(where + ": virtual chunk URL '" + url +
                    "' names a path of one of GDAL's virtual file systems (/vsi...), not a "
                    "local file; refused");
    if (path.back() == '/' || path.find("//") != std::string::npos)
        throw Error(where + ": virtual chunk URL '" + url +
                    "' holds an empty path segment; refused");
}

// The longer of two prefixes holding the same URL (the narrower folder).
const std::string& narrower(const std::string& a, const std::string& b) {
    const bool a_bare = a.find("://") == std::string::npos;
    const bool b_bare = b.find("://") == std::string::npos;
    if (a_bare != b_bare) return a_bare ? b : a;
    return b.size() > a.size() ? b : a;
}

} // namespace

void check_virtual_url(const std::string& url, const std::string& where) {
    const std::string scheme = scheme_of(url);
    if (std::find(kSchemes.begin(), kSchemes.end(), scheme) == kSchemes.end())
        throw Error(where + ": virtual chunk URL '" + url +
                    "' has no supported scheme (s3, gs, az, http, https, file)");
    const std::string rest = url.substr(scheme.size() + 3);
    for (const char c : rest) {
        if (static_cast<unsigned char>(c) < 0x20 || c == '\\' || c == '%')
            throw Error(where + ": virtual chunk URL '" + url +
                        "' holds a control character, a backslash or a percent escape; refused");
    }
    if (dot_segment_at(rest) != std::string::npos)
        throw Error(where + ": virtual chunk URL '" + url +
                    "' holds a '.' or '..' segment; refused");
    if (scheme == "file") check_file_path(url, rest, where);
}

bool url_in_prefix(const std::string& url, const std::string& prefix) {
    if (prefix.empty()) return false;
    // A bare scheme ("file", "s3": Icechunk 1.x configurations) holds every URL of it.
    if (prefix.find("://") == std::string::npos) return scheme_of(url) == prefix;
    if (url.compare(0, prefix.size(), prefix) != 0) return false;
    if (prefix.back() == '/' || url.size() == prefix.size()) return true;
    return url[prefix.size()] == '/';
}

std::vector<std::string> split_prefix_list(const std::string& text) {
    std::vector<std::string> out;
    std::string cur;
    for (const char c : text + ",") {
        if (c == ',' || c == ' ' || c == '\t' || c == '\n') {
            if (!cur.empty()) out.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    return out;
}

VirtualAccess::VirtualAccess(std::vector<std::string> declared, std::vector<std::string> allowed,
                             bool local_repository, std::string option_name)
    : declared_(std::move(declared)), allowed_(std::move(allowed)), local_(local_repository),
      option_(std::move(option_name)) {}

const std::string* VirtualAccess::container_of(const std::string& url) const {
    const std::string* best = nullptr;
    for (const auto& d : declared_)
        if (url_in_prefix(url, d) && (!best || d.size() > best->size())) best = &d;
    return best;
}

bool VirtualAccess::allows(const std::string& url) const {
    try {
        check(url, "");
        return true;
    } catch (const Error&) {
        return false;
    }
}

std::string VirtualAccess::check(const std::string& url, const std::string& where) const {
    check_virtual_url(url, where);
    const std::string* container = container_of(url);
    if (!container)
        throw Error(where + ": virtual chunk URL '" + url +
                    "' lies in no virtual chunk container the repository declares; refused");
    const std::string* allowed = nullptr;
    for (const auto& a : allowed_)
        if (url_in_prefix(url, a)) allowed = allowed ? &narrower(*allowed, a) : &a;
    if (allowed) return narrower(*container, *allowed);
    if (local_ && scheme_of(*container) == "file") return *container;
    throw Error(where + ": virtual chunk URL '" + url + "' lies in the container '" + *container +
                "', which is not allowed; to read it, list the prefix in the open option " +
                option_ + " (or the configuration option ZARR3_" + option_ + ")");
}

} // namespace zarr3::icechunk
