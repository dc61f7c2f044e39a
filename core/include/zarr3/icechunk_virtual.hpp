// Which virtual chunk references of an Icechunk repository a read may follow.
//
// A virtual reference names a byte range of an object outside the repository
// by URL (s3://, gs://, az://, http(s)://, file://). A hostile repository could
// point such a reference at any file the reader can open, so a reference is
// followed only when BOTH hold:
//   - the repository's own configuration declares a virtual chunk container
//     whose URL prefix holds the URL, and
//   - the user allows it: a prefix the user listed holds the URL, or (the one
//     default) the repository is local and the container is a file:// one.
// URLs with dot segments, percent escapes, backslashes or control characters
// are refused outright: prefix matching is then plain string matching, with
// no way to climb out of an allowed folder by the URL's text. A folder can
// still be left through a symbolic link inside it: `check` returns the prefix
// (the container, or the narrower prefix the user allowed) that the reader
// must keep the object inside once links are resolved.
#pragma once

#include <string>
#include <vector>

namespace zarr3::icechunk {

// Throws zarr3::Error naming `where` unless `url` is "scheme://rest" with a
// scheme of s3, gs, az, http, https or file and a rest free of "." / ".."
// segments, "%", "\\", and characters below 0x20; a file:// URL must name an
// absolute path ("file:///path") with no empty segment, and no path starting
// "/vsi" in any case (GDAL, which reads the objects, would take it for one of
// its virtual file systems: /vsicurl/, /vsimem/, /vsis3/, ...).
void check_virtual_url(const std::string& url, const std::string& where);

// Whether `prefix` holds `url`: `url` starts with `prefix`, and either the
// prefix ends with "/" or the URL ends there or continues with "/" (so
// "file:///data" holds "file:///data/x" but not "file:///data2/x"). A prefix
// without "://" is a bare scheme ("file", as Icechunk 1.x configurations
// declare containers) and holds every URL of that scheme.
bool url_in_prefix(const std::string& url, const std::string& prefix);

class VirtualAccess {
  public:
    // `declared`: the container URL prefixes the repository's configuration
    // declares; `allowed`: the prefixes the user allows (option `option_name`,
    // named in errors); `local_repository`: the repository is a local folder,
    // whose declared file:// containers are allowed without listing them.
    VirtualAccess(std::vector<std::string> declared, std::vector<std::string> allowed,
                  bool local_repository, std::string option_name);
    VirtualAccess() = default; // refuses every reference

    // Throws zarr3::Error naming `where` (the chunk), the URL and, when the
    // user did not allow it, the container prefix and the option to set.
    // Returns the guard of the reference: the narrowest prefix granting the
    // access (its container, or the allowed prefix holding it when that one
    // is narrower; a bare scheme is the widest). The object read must lie
    // inside it after symbolic links are resolved.
    std::string check(const std::string& url, const std::string& where) const;
    bool allows(const std::string& url) const;

  private:
    const std::string* container_of(const std::string& url) const;
    std::vector<std::string> declared_;
    std::vector<std::string> allowed_;
    bool local_ = false;
    std::string option_ = "VIRTUAL_ALLOWED_PREFIXES";
};

// Splits a comma- or space-separated list of prefixes ("" items dropped).
std::vector<std::string> split_prefix_list(const std::string& text);

} // namespace zarr3::icechunk
