// Creation options -> zarr3::ArrayMetadata (chunk grid, sharding, compressor,
// dimension names). Every value is validated here, before anything is written.
#include "creation_options.hpp"

#include "cpl_string.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <set>

namespace zarr3drv {
namespace {

[[noreturn]] void Fail(const std::string& option, const std::string& value,
                       const std::string& expected) {
    throw zarr3::Error("creation option " + option + "=" + value + ": " + expected);
}

std::string Upper(std::string s) {
    for (auto& c : s)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

std::string Trim(const std::string& s) {
    size_t a = 0, b = s.size();
    while (a < b && std::isspace(static_cast<unsigned char>(s[a])))
        ++a;
    while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1])))
        --b;
    return s.substr(a, b - a);
}

// Strict decimal integer in [lo, hi].
int64_t ParseInt(const std::string& option, const std::string& text, int64_t lo, int64_t hi) {
    const std::string t = Trim(text);
    size_t i = 0;
    const bool neg = !t.empty() && (t[0] == '-' || t[0] == '+');
    if (neg) i = 1;
    if (i >= t.size()) Fail(option, text, "expected an integer");
    int64_t v = 0;
    for (; i < t.size(); ++i) {
        if (!std::isdigit(static_cast<unsigned char>(t[i])))
            Fail(option, text, "expected an integer");
        if (v > (INT64_MAX - 9) / 10) Fail(option, text, "integer out of range");
        v = v * 10 + (t[i] - '0');
    }
    if (t[0] == '-') v = -v;
    if (v < lo || v > hi)
        Fail(option, text,
             "expected an integer between " + std::to_string(lo) + " and " + std::to_string(hi));
    return v;
}

// "a,b,c" or "[a,b,c]" -> positive integers; fewer entries than `rank` are
// padded with leading 1s (the band/time axes of classic rasters).
std::vector<uint64_t> ParseShapeList(const std::string& option, const std::string& text,
                                     size_t rank) {
    std::string t = Trim(text);
    if (!t.empty() && t.front() == '[' && t.back() == ']') t = t.substr(1, t.size() - 2);
    std::vector<uint64_t> out;
    const CPLStringList parts(CSLTokenizeString2(t.c_str(), ",", CSLT_ALLOWEMPTYTOKENS));
    for (int i = 0; i < parts.size(); ++i)
        out.push_back(static_cast<uint64_t>(ParseInt(option, parts[i], 1, INT64_MAX)));
    if (out.empty() || out.size() > rank)
        Fail(option, text,
             "expected 1 to " + std::to_string(rank) +
                 " comma separated positive integers (slowest axis first)");
    out.insert(out.begin(), rank - out.size(), 1);
    return out;
}

uint64_t JsonPositive(const std::string& option, const std::string& text, const nlohmann::json& j,
                      const std::string& what) {
    if (j.is_number_unsigned() && j.get<uint64_t>() >= 1) return j.get<uint64_t>();
    if (j.is_number_integer() && j.get<int64_t>() >= 1)
        return static_cast<uint64_t>(j.get<int64_t>());
    Fail(option, text, what + ": expected a positive integer, got " + j.dump());
}

// CHUNK_SHAPES JSON: one entry per axis, a bare integer or a list of integers
// and [edge, count] runs.
std::vector<zarr3::AxisPartition> ParseChunkShapes(const std::string& text,
                                                   const zarr3::Shape& shape, bool& all_bare) {
    const std::string opt = "CHUNK_SHAPES";
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const std::exception&) {
        Fail(opt, text,
             "not valid JSON; expected one entry per axis, e.g. [[31,28,31,30],256,256] "
             "(bare integers, lists of edges, [edge,count] runs)");
    }
    if (!j.is_array() || j.size() != shape.size())
        Fail(opt, text,
             "expected a JSON list with one entry per array axis (" + std::to_string(shape.size()) +
                 " axes), e.g. [[31,28,31,30],256,256]");
    std::vector<zarr3::AxisPartition> axes;
    all_bare = true;
    for (size_t a = 0; a < shape.size(); ++a) {
        const std::string what = "axis " + std::to_string(a);
        const auto& e = j[a];
        if (e.is_number()) {
            const uint64_t edge = JsonPositive(opt, text, e, what);
            axes.push_back(zarr3::AxisPartition::regular(edge, shape[a], true));
            continue;
        }
        all_bare = false;
        if (!e.is_array() || e.empty())
            Fail(opt, text, what + ": expected an integer or a non-empty list of edges");
        std::vector<std::pair<uint64_t, uint64_t>> runs;
        for (const auto& r : e) {
            if (r.is_array()) {
                if (r.size() != 2)
                    Fail(opt, text, what + ": a run must be [edge, count], got " + r.dump());
                runs.emplace_back(JsonPositive(opt, text, r[0], what + " run edge"),
                                  JsonPositive(opt, text, r[1], what + " run count"));
            } else {
                runs.emplace_back(JsonPositive(opt, text, r, what + " edge"), 1);
            }
        }
        zarr3::AxisPartition p;
        try {
            p = zarr3::AxisPartition::from_runs(runs, "CHUNK_SHAPES " + what);
        } catch (const zarr3::Error& err) {
            Fail(opt, text, err.what());
        }
        if (p.extent() < shape[a])
            Fail(opt, text,
                 what + ": the edges sum to " + std::to_string(p.extent()) +
                     ", less than the axis length " + std::to_string(shape[a]));
        p.set_length(shape[a]);
        axes.push_back(std::move(p));
    }
    return axes;
}

// Default chunking: up to 512x512 on the last two axes, 1 elsewhere.
zarr3::Shape DefaultChunks(const zarr3::Shape& shape) {
    zarr3::Shape c(shape.size(), 1);
    const size_t r = shape.size();
    if (r == 1) c[0] = std::clamp<uint64_t>(shape[0], 1, 262144);
    if (r >= 2) {
        c[r - 1] = std::clamp<uint64_t>(shape[r - 1], 1, 512);
        c[r - 2] = std::clamp<uint64_t>(shape[r - 2], 1, 512);
    }
    return c;
}

uint64_t ChunkBytes(const zarr3::Shape& edges, uint32_t elem, const std::string& opt) {
    uint64_t n = elem;
    for (auto e : edges) {
        if (e != 0 && n > zarr3::kMaxChunkBytes / e)
            throw zarr3::Error("creation option " + opt + ": chunk of more than " +
                               std::to_string(zarr3::kMaxChunkBytes) + " bytes");
        n *= e;
    }
    return n;
}

nlohmann::json Compressor(CSLConstList options, const zarr3::DataType& dtype) {
    const std::string comp = Upper(Trim(CSLFetchNameValueDef(options, "COMPRESS", "ZSTD")));
    const char* zl = CSLFetchNameValue(options, "ZSTD_LEVEL");
    const char* gl = CSLFetchNameValue(options, "GZIP_LEVEL");
    const char* bc = CSLFetchNameValue(options, "BLOSC_CNAME");
    const char* bl = CSLFetchNameValue(options, "BLOSC_CLEVEL");
    const char* bs = CSLFetchNameValue(options, "BLOSC_SHUFFLE");
    // Validate every level option even when another compressor is selected.
    const int64_t zstd_level = zl ? ParseInt("ZSTD_LEVEL", zl, -131072, 22) : 3;
    const int64_t gzip_level = gl ? ParseInt("GZIP_LEVEL", gl, 0, 9) : 6;
    const int64_t blosc_level = bl ? ParseInt("BLOSC_CLEVEL", bl, 0, 9) : 5;
    std::string cname = bc ? Trim(bc) : "lz4";
    for (auto& c : cname)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    static const std::set<std::string> cnames = {"lz4",  "lz4hc",  "blosclz",
                                                 "zstd", "snappy", "zlib"};
    if (!cnames.count(cname))
        Fail("BLOSC_CNAME", bc ? bc : "", "expected lz4, lz4hc, blosclz, zstd, snappy or zlib");
    std::string shuffle = bs ? Trim(bs) : "shuffle";
    for (auto& c : shuffle)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (shuffle != "noshuffle" && shuffle != "shuffle" && shuffle != "bitshuffle")
        Fail("BLOSC_SHUFFLE", bs ? bs : "", "expected noshuffle, shuffle or bitshuffle");
    if (comp == "NONE") return nullptr;
    if (comp == "ZSTD")
        return {{"name", "zstd"}, {"configuration", {{"level", zstd_level}, {"checksum", false}}}};
    if (comp == "GZIP") return {{"name", "gzip"}, {"configuration", {{"level", gzip_level}}}};
    if (comp == "BLOSC")
        return {{"name", "blosc"},
                {"configuration",
                 {{"cname", cname},
                  {"clevel", blosc_level},
                  {"shuffle", shuffle},
                  {"typesize", dtype.swap_unit},
                  {"blocksize", 0}}}};
    Fail("COMPRESS", CSLFetchNameValueDef(options, "COMPRESS", ""),
         "expected NONE, ZSTD, GZIP or BLOSC");
}

nlohmann::json BytesCodec() {
    return {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
}

} // namespace

zarr3::ArrayMetadata BuildArrayMetadata(const ArrayCreateRequest& req, CSLConstList options) {
    const size_t rank = req.shape.size();
    const auto& dtype = req.dtype;
    const char* cs = CSLFetchNameValue(options, "CHUNK_SHAPES");
    const char* bs = CSLFetchNameValue(options, "BLOCKSIZE");
    const char* ss = CSLFetchNameValue(options, "SHARD_CHUNK_SHAPE");
    if (cs && bs)
        throw zarr3::Error("creation options CHUNK_SHAPES and BLOCKSIZE are mutually exclusive");

    // Chunk (or shard) grid.
    std::vector<zarr3::AxisPartition> axes;
    bool regular = true;
    if (cs && rank > 0) {
        bool all_bare = false;
        axes = ParseChunkShapes(cs, req.shape, all_bare);
        regular = all_bare;
    } else {
        if (cs && rank == 0 && Trim(cs) != "[]")
            Fail("CHUNK_SHAPES", cs, "expected [] for a 0-d array");
        const zarr3::Shape edges =
            bs && rank > 0 ? ParseShapeList("BLOCKSIZE", bs, rank) : DefaultChunks(req.shape);
        for (size_t a = 0; a < rank; ++a)
            axes.push_back(zarr3::AxisPartition::regular(edges[a], req.shape[a]));
    }
    zarr3::Shape max_edges;
    for (const auto& ax : axes)
        max_edges.push_back(ax.max_edge());

    // Sharding: the grid above is the shard grid.
    std::optional<zarr3::Shape> inner;
    if (ss) {
        if (rank == 0) Fail("SHARD_CHUNK_SHAPE", ss, "a 0-d array cannot be sharded");
        inner = ParseShapeList("SHARD_CHUNK_SHAPE", ss, rank);
        for (size_t a = 0; a < rank; ++a)
            for (const auto& run : axes[a].runs())
                if (run.edge % (*inner)[a] != 0)
                    Fail("SHARD_CHUNK_SHAPE", ss,
                         "the inner chunk edge " + std::to_string((*inner)[a]) + " of axis " +
                             std::to_string(a) + " does not divide the shard edge " +
                             std::to_string(run.edge) +
                             " (CHUNK_SHAPES/BLOCKSIZE give the shard grid)");
        ChunkBytes(*inner, dtype.size, "SHARD_CHUNK_SHAPE");
    }
    ChunkBytes(max_edges, dtype.size, cs ? "CHUNK_SHAPES" : "BLOCKSIZE");

    const nlohmann::json compressor = Compressor(options, dtype);
    nlohmann::json inner_codecs = nlohmann::json::array({BytesCodec()});
    if (!compressor.is_null()) inner_codecs.push_back(compressor);
    nlohmann::json codecs;
    if (inner) {
        codecs = nlohmann::json::array(
            {{{"name", "sharding_indexed"},
              {"configuration",
               {{"chunk_shape", *inner},
                {"codecs", inner_codecs},
                {"index_codecs", nlohmann::json::array({BytesCodec(), {{"name", "crc32c"}}})},
                {"index_location", "end"}}}}});
    } else {
        codecs = inner_codecs;
    }

    nlohmann::json grid;
    if (regular) {
        nlohmann::json edges = nlohmann::json::array();
        for (auto e : max_edges)
            edges.push_back(e);
        grid = {{"name", "regular"}, {"configuration", {{"chunk_shape", edges}}}};
    } else {
        nlohmann::json shapes = nlohmann::json::array();
        for (const auto& ax : axes)
            shapes.push_back(ax.to_json());
        grid = {{"name", "rectilinear"},
                {"configuration", {{"kind", "inline"}, {"chunk_shapes", shapes}}}};
    }

    // Dimension names.
    std::vector<std::string> names = req.dimension_names;
    if (const char* dn = CSLFetchNameValue(options, "DIMENSION_NAMES")) {
        const CPLStringList parts(CSLTokenizeString2(dn, ",", CSLT_ALLOWEMPTYTOKENS));
        names.clear();
        for (int i = 0; i < parts.size(); ++i)
            names.push_back(Trim(parts[i]));
        if (names.size() != rank)
            Fail("DIMENSION_NAMES", dn,
                 "expected " + std::to_string(rank) + " comma separated names, one per axis");
        std::set<std::string> seen;
        for (const auto& n : names)
            if (n.empty() || !seen.insert(n).second)
                Fail("DIMENSION_NAMES", dn, "names must be non-empty and distinct");
    }
    if (!names.empty() && names.size() != rank)
        throw zarr3::Error("dimension names: expected " + std::to_string(rank) + ", got " +
                           std::to_string(names.size()));

    zarr3::Bytes fill = req.fill ? *req.fill : zarr3::Bytes(dtype.size, 0);
    if (fill.size() != dtype.size)
        throw zarr3::Error("fill value: expected " + std::to_string(dtype.size) + " bytes for " +
                           dtype.name);

    nlohmann::json j = {
        {"zarr_format", 3},
        {"node_type", "array"},
        {"shape", req.shape},
        {"data_type", zarr3::data_type_to_json(dtype)},
        {"chunk_grid", grid},
        {"chunk_key_encoding", {{"name", "default"}, {"configuration", {{"separator", "/"}}}}},
        {"fill_value", zarr3::fill_value_to_json(fill, dtype)},
        {"codecs", codecs},
        {"attributes", nlohmann::json::object()}};
    if (!names.empty()) j["dimension_names"] = names;
    return zarr3::parse_array_metadata(j, "creation options");
}

} // namespace zarr3drv
