// Format rules of `zarr3 virtualize` (virtualize.hpp).
#include "zarr3/virtualize.hpp"

#include "zarr3/cf_time.hpp"
#include "zarr3/icechunk_virtual.hpp"

#include <cmath>

namespace zarr3::virtualize {

namespace {

std::string filter_label(const Hdf5Filter& f) {
    static const char* names[] = {"",     "deflate", "shuffle",     "fletcher32",
                                  "szip", "nbit",    "scale-offset"};
    if (!f.name.empty()) return f.name + " (HDF5 filter " + std::to_string(f.id) + ")";
    if (f.id >= 1 && f.id <= 6)
        return std::string(names[f.id]) + " (HDF5 filter " + std::to_string(f.id) + ")";
    return "HDF5 filter " + std::to_string(f.id) + " (a plugin)";
}

} // namespace

std::optional<nlohmann::json> codecs_for_filters(const std::vector<Hdf5Filter>& filters,
                                                 size_t element_size, bool big_endian,
                                                 std::string* why) {
    nlohmann::json bytes_to_bytes = nlohmann::json::array();
    for (const Hdf5Filter& f : filters) {
        nlohmann::json codec;
        if (f.id == kFilterDeflate) {
            const unsigned level = f.values.empty() ? 6u : f.values[0];
            if (level > 9) {
                if (why) *why = filter_label(f) + " with level " + std::to_string(level);
                return std::nullopt;
            }
            codec = {{"name", "numcodecs.zlib"}, {"configuration", {{"level", level}}}};
        } else if (f.id == kFilterShuffle) {
            // cd_values[0] is the element size HDF5 recorded (the type's size).
            const size_t size = f.values.empty() ? element_size : f.values[0];
            if (size != element_size || size == 0) {
                if (why)
                    *why = filter_label(f) + " of " + std::to_string(size) +
                           "-byte elements on a type of " + std::to_string(element_size);
                return std::nullopt;
            }
            codec = {{"name", "numcodecs.shuffle"}, {"configuration", {{"elementsize", size}}}};
        } else {
            if (why) *why = filter_label(f) + " has no Zarr codec";
            return std::nullopt;
        }
        bytes_to_bytes.push_back(codec);
    }
    nlohmann::json bytes = {{"name", "bytes"}};
    if (element_size > 1) bytes["configuration"] = {{"endian", big_endian ? "big" : "little"}};
    // Zarr's chain is in encoding order: array->bytes, then the bytes->bytes
    // codecs in the order HDF5's pipeline applied them on write.
    nlohmann::json out = nlohmann::json::array({bytes});
    for (auto& c : bytes_to_bytes)
        out.push_back(std::move(c));
    return out;
}

nlohmann::json netcdf_default_fill(const std::string& zarr_type) {
    // NC_FILL_FLOAT is 9.9692099683868690e+36f: as a float32, widened.
    if (zarr_type == "float32") return double(9.9692099683868690e+36f);
    if (zarr_type == "float64") return 9.9692099683868690e+36;
    if (zarr_type == "int8") return -127;
    if (zarr_type == "uint8") return 255;
    if (zarr_type == "int16") return -32767;
    if (zarr_type == "uint16") return 65535;
    if (zarr_type == "int32") return -2147483647;
    if (zarr_type == "uint32") return 4294967295u;
    if (zarr_type == "int64") return int64_t(-9223372036854775806LL);
    if (zarr_type == "uint64") return uint64_t(18446744073709551614ULL);
    return nullptr;
}

FileEdges file_edges(uint64_t length, uint64_t chunk) {
    if (chunk == 0) throw Error("an HDF5 chunk of 0 elements along the concatenated dimension");
    FileEdges out;
    for (uint64_t i = 0; i + chunk <= length; i += chunk)
        out.edges.push_back(chunk);
    if (const uint64_t rest = length % chunk) {
        out.edges.push_back(rest);
        out.padded_last = true;
    }
    return out;
}

namespace {

std::string date_text(const CfTimeUnits& u, double v) {
    try {
        return format_civil(cf_civil_of(u, v));
    } catch (const Error&) {
        return "value " + std::to_string(v);
    }
}

struct ParsedPiece {
    CfTimeUnits units;
    bool same_units = true;
};

ParsedPiece parse_piece(const TimePiece& p, const TimePiece& first) {
    const auto u = parse_cf_time_units(p.units);
    if (!u)
        throw Error(p.file + ": time units '" + p.units +
                    "' are no CF \"<unit> since <date>\" units");
    const bool same = p.units == first.units && p.calendar == first.calendar;
    if (!same && !(cf_calendar_is_gregorian_at(p.calendar, CivilTime{2000, 1, 1, 0}) &&
                   cf_calendar_is_gregorian_at(first.calendar, CivilTime{2000, 1, 1, 0})))
        throw Error(p.file + ": time units '" + p.units + "' (calendar '" + p.calendar +
                    "') differ from " + first.file + "'s '" + first.units + "' (calendar '" +
                    first.calendar +
                    "'): values of a calendar other than the standard one are not converted");
    return {*u, same};
}

} // namespace

std::vector<double> concatenate_time(const std::vector<TimePiece>& pieces) {
    std::vector<double> out;
    if (pieces.empty()) return out;
    const auto target = parse_piece(pieces[0], pieces[0]).units;
    std::string last_file;
    for (const TimePiece& p : pieces) {
        const ParsedPiece pp = parse_piece(p, pieces[0]);
        for (size_t i = 0; i < p.values.size(); ++i) {
            const double raw = p.values[i];
            if (!std::isfinite(raw))
                throw Error(p.file + ": time value " + std::to_string(i) + " is not finite");
            const double v = pp.same_units ? raw : cf_value_of(target, cf_civil_of(pp.units, raw));
            if (!out.empty() && !(v > out.back())) {
                const bool across = i == 0;
                throw Error(
                    p.file + ": time " + date_text(target, v) +
                    (v == out.back() ? " duplicates " : " is before ") +
                    (across ? "the last time of " + last_file + ", " : "the time before it, ") +
                    date_text(target, out.back()) +
                    (across ? " (files overlap or are out of order)"
                            : " (times must increase strictly)"));
            }
            out.push_back(v);
        }
        if (!p.values.empty()) last_file = p.file;
    }
    return out;
}

std::string reference_url(const std::string& prefix, const std::string& name) {
    if (prefix.find("://") == std::string::npos || prefix.back() != '/')
        throw Error("container '" + prefix +
                    "': expected a URL prefix such as file:///data/era5/ or s3://bucket/era5/ "
                    "(ending in '/')");
    for (char c : name)
        if (static_cast<unsigned char>(c) < 0x20 || c == '\\' || c == '%')
            throw Error(name + ": the file name holds a control character, a backslash or a "
                               "percent sign, which virtual references cannot name");
    if (name.find_first_of("?#") != std::string::npos)
        throw Error(name + ": the file name holds '?' or '#', which URL readers (Icechunk's "
                           "among them) take as the start of a query or fragment: rename the file");
    if (name.empty() || name == "." || name == ".." || name.starts_with("./") ||
        name.starts_with("../") || name.find("/./") != std::string::npos ||
        name.find("/../") != std::string::npos || name.starts_with("/"))
        throw Error(name + ": not a plain file name under the container");
    if (prefix.find_first_of("?#") != std::string::npos)
        throw Error("container '" + prefix +
                    "': holds '?' or '#' (a query or fragment, not a folder)");
    // The reader's own rule (dot and empty segments, /vsi paths, relative file
    // URLs, escapes): a reference written here is one it follows, inside the
    // container the user named.
    const std::string url = prefix + name;
    icechunk::check_virtual_url(url, "container '" + prefix + "'");
    return url;
}

std::optional<std::string> remote_source_url(const std::string& path) {
    const bool vsi = path.starts_with("/vsi");
    if (!vsi && path.find("://") == std::string::npos) return std::nullopt;
    if (path.starts_with("/vsis3/")) {
        const std::string rest = path.substr(7);
        const size_t slash = rest.find('/');
        if (slash == 0 || slash == std::string::npos || slash + 1 == rest.size())
            throw Error(path + ": expected /vsis3/BUCKET/KEY");
        return "s3://" + rest;
    }
    for (const char* scheme : {"http://", "https://"}) {
        const std::string vsicurl = std::string("/vsicurl/") + scheme;
        if (path.starts_with(vsicurl) && path.size() > vsicurl.size()) return path.substr(9);
    }
    throw Error(path +
                ": remote sources are read through /vsis3/BUCKET/KEY or /vsicurl/http(s)://... "
                "only (the URLs virtual references can name, s3:// and http(s)://)");
}

std::string common_url_prefix(const std::vector<std::string>& urls) {
    if (urls.empty()) throw Error("no URL");
    // "scheme://host/": the part every reference of one container shares.
    auto root_of = [](const std::string& u) {
        const size_t scheme = u.find("://");
        const size_t slash = scheme == std::string::npos ? scheme : u.find('/', scheme + 3);
        if (slash == std::string::npos) throw Error(u + ": no path after the server or bucket");
        return slash + 1;
    };
    std::string common = urls[0].substr(0, urls[0].rfind('/') + 1);
    for (const auto& u : urls) {
        size_t n = 0;
        while (n < common.size() && n < u.size() && common[n] == u[n])
            ++n;
        common = common.substr(0, common.rfind('/', n == 0 ? 0 : n - 1) + 1);
        if (n == 0 || common.size() < root_of(urls[0]) || common.size() < root_of(u))
            throw Error(urls[0] + " and " + u +
                        ": not on one server or bucket (virtualize them separately)");
    }
    return common;
}

} // namespace zarr3::virtualize
