// Creation options -> zarr3::ArrayBuilder (chunk grid, sharding, compressor,
// dimension names): the options are read and checked here, the array layout
// (CHUNK_SHAPES grammar, shard grid, codecs JSON) is core's
// (zarr3/builder.hpp). Every value is validated before anything is written.
#include "options/creation_options.hpp"

#include "cpl_error.h"
#include "cpl_string.h"
#include "text_util.hpp"
#include "zarr3/builder.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <initializer_list>
#include <set>
#include <utility>

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
// padded with leading 1s (the band/time axes of classic rasters). A single
// value N on an array of two or more axes means N x N on the last two (the
// spatial axes), as GDAL's BLOCKSIZE does for COG.
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
    if (out.size() == 1 && rank >= 2) {
        const uint64_t n = out.front();
        out = {n, n};
    }
    out.insert(out.begin(), rank - out.size(), 1);
    return out;
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

// BLOSC_SHUFFLE: this plugin's names or GDAL's Zarr driver's (NONE, BYTE, BIT).
std::string BloscShuffle(const char* value) {
    const std::string v = value ? Lower(Trim(value)) : "shuffle";
    if (v == "noshuffle" || v == "none") return "noshuffle";
    if (v == "shuffle" || v == "byte") return "shuffle";
    if (v == "bitshuffle" || v == "bit") return "bitshuffle";
    Fail("BLOSC_SHUFFLE", value ? value : "",
         "expected NONE, BYTE or BIT (or noshuffle, shuffle, bitshuffle)");
}

// A warning for each given option that the chosen compressor ignores.
void WarnIgnored(CSLConstList options, const std::string& comp) {
    static const std::pair<const char*, const char*> kOwner[] = {
        {"ZSTD_LEVEL", "ZSTD"},    {"ZSTD_CHECKSUM", "ZSTD"}, {"GZIP_LEVEL", "GZIP"},
        {"ZLEVEL", "GZIP"},        {"BLOSC_CNAME", "BLOSC"},  {"BLOSC_CLEVEL", "BLOSC"},
        {"BLOSC_SHUFFLE", "BLOSC"}};
    for (const auto& [option, owner] : kOwner)
        if (CSLFetchNameValue(options, option) && comp != owner)
            CPLError(CE_Warning, CPLE_IllegalArg,
                     "Zarr3: creation option %s is ignored: it applies to COMPRESS=%s, and "
                     "COMPRESS is %s",
                     option, owner, comp.c_str());
}

// COMPRESS as GDAL users pass it (any case; GTiff's DEFLATE and ZLIB are the
// gzip codec every Zarr reader has, LZ4 is blosc with lz4) -> the codec name.
std::string CompressorName(const std::string& value) {
    const std::string v = Upper(Trim(value));
    if (v == "DEFLATE" || v == "ZLIB") return "GZIP";
    if (v == "LZ4") return "BLOSC";
    return v;
}

// COMPRESS and its level options onto the builder. Every level option is
// validated even when another compressor is selected (and then ignored with
// a warning).
void SetCompressor(zarr3::ArrayBuilder& b, CSLConstList options) {
    const std::string comp = CompressorName(CSLFetchNameValueDef(options, "COMPRESS", "ZSTD"));
    const bool lz4 = Upper(Trim(CSLFetchNameValueDef(options, "COMPRESS", ""))) == "LZ4";
    const char* zl = CSLFetchNameValue(options, "ZSTD_LEVEL");
    const char* gl = CSLFetchNameValue(options, "GZIP_LEVEL");
    if (!gl) gl = CSLFetchNameValue(options, "ZLEVEL"); // GTiff's DEFLATE level
    const char* bc = CSLFetchNameValue(options, "BLOSC_CNAME");
    const char* bl = CSLFetchNameValue(options, "BLOSC_CLEVEL");
    const auto zstd_level = static_cast<int>(zl ? ParseInt("ZSTD_LEVEL", zl, -131072, 22) : 3);
    const auto gzip_level = static_cast<int>(gl ? ParseInt("GZIP_LEVEL", gl, 0, 9) : 6);
    const auto blosc_level = static_cast<int>(bl ? ParseInt("BLOSC_CLEVEL", bl, 0, 9) : 5);
    const std::string cname = bc && !lz4 ? Lower(Trim(bc)) : "lz4";
    static const std::set<std::string> cnames = {"lz4",  "lz4hc",  "blosclz",
                                                 "zstd", "snappy", "zlib"};
    if (!cnames.count(cname))
        Fail("BLOSC_CNAME", bc ? bc : "", "expected lz4, lz4hc, blosclz, zstd, snappy or zlib");
    const std::string shuffle = BloscShuffle(CSLFetchNameValue(options, "BLOSC_SHUFFLE"));
    if (comp != "NONE" && comp != "ZSTD" && comp != "GZIP" && comp != "BLOSC")
        Fail("COMPRESS", CSLFetchNameValueDef(options, "COMPRESS", ""),
             "expected NONE, ZSTD, GZIP (also DEFLATE, ZLIB), BLOSC or LZ4 (blosc with lz4)");
    WarnIgnored(options, comp);
    if (lz4 && bc)
        CPLError(CE_Warning, CPLE_IllegalArg,
                 "Zarr3: creation option BLOSC_CNAME is ignored: COMPRESS=LZ4 is blosc with lz4");
    const bool zstd_checksum = CPLTestBool(CSLFetchNameValueDef(options, "ZSTD_CHECKSUM", "NO"));
    if (comp == "ZSTD")
        b.zstd(zstd_level, zstd_checksum);
    else if (comp == "GZIP")
        b.gzip(gzip_level);
    else if (comp == "BLOSC")
        b.blosc(cname, blosc_level, shuffle);
}

// DISCARD_LSB (as GDAL's GTiff driver names it): the number of low mantissa bits of floating-point
// values rounded away, written as the numcodecs.bitround filter.
void SetFilters(zarr3::ArrayBuilder& b, const zarr3::DataType& dtype, CSLConstList options) {
    const char* d = CSLFetchNameValue(options, "DISCARD_LSB");
    if (!d) return;
    if (dtype.kind != zarr3::DTypeKind::Float)
        Fail("DISCARD_LSB", d, "applies to floating-point data types, not " + dtype.name);
    const auto mantissa = static_cast<int>(zarr3::mantissa_bits(dtype));
    const auto n = static_cast<int>(ParseInt("DISCARD_LSB", d, 0, mantissa));
    if (n > 0) b.filter("numcodecs.bitround", {{"keepbits", mantissa - n}});
}

// DIMENSION_NAMES (comma separated, one per axis, non-empty and distinct)
// overrides the names of the request.
std::vector<std::string> DimensionNames(const ArrayCreateRequest& req, const char* dn) {
    if (!dn) return req.dimension_names;
    const size_t rank = req.shape.size();
    const CPLStringList parts(CSLTokenizeString2(dn, ",", CSLT_ALLOWEMPTYTOKENS));
    std::vector<std::string> names;
    for (int i = 0; i < parts.size(); ++i)
        names.push_back(Trim(parts[i]));
    if (names.size() != rank)
        Fail("DIMENSION_NAMES", dn,
             "expected " + std::to_string(rank) + " comma separated names, one per axis");
    std::set<std::string> seen;
    for (const auto& n : names)
        if (n.empty() || !seen.insert(n).second)
            Fail("DIMENSION_NAMES", dn, "names must be non-empty and distinct");
    return names;
}

// The layout options as given (null when absent).
struct LayoutOptions {
    const char* chunk_shapes = nullptr;      // CHUNK_SHAPES
    const char* block_size = nullptr;        // BLOCKSIZE
    const char* block_x = nullptr;           // BLOCKXSIZE (GTiff's name)
    const char* block_y = nullptr;           // BLOCKYSIZE (GTiff's name)
    const char* shard_chunk_shape = nullptr; // SHARD_CHUNK_SHAPE
};

// BLOCKXSIZE / BLOCKYSIZE: the default chunking with the given spatial edges
// (the last axis is x, the one before it y).
zarr3::Shape BlockXY(const zarr3::Shape& shape, const LayoutOptions& o) {
    zarr3::Shape c = DefaultChunks(shape);
    const size_t r = shape.size();
    if (o.block_x && r >= 1)
        c[r - 1] = static_cast<uint64_t>(ParseInt("BLOCKXSIZE", o.block_x, 1, INT64_MAX));
    if (o.block_y && r >= 2)
        c[r - 2] = static_cast<uint64_t>(ParseInt("BLOCKYSIZE", o.block_y, 1, INT64_MAX));
    return c;
}

// CHUNK_SHAPES (core's grammar), BLOCKSIZE or the default chunking, and
// SHARD_CHUNK_SHAPE, onto the builder.
void SetLayout(zarr3::ArrayBuilder& b, const zarr3::Shape& shape, const LayoutOptions& o) {
    const bool xy = o.block_x || o.block_y;
    if ((o.chunk_shapes != nullptr) + (o.block_size != nullptr) + xy > 1)
        throw zarr3::Error("creation options CHUNK_SHAPES, BLOCKSIZE and BLOCKXSIZE/BLOCKYSIZE "
                           "are mutually exclusive");
    const size_t rank = shape.size();
    if (o.chunk_shapes)
        b.chunk_shapes_text(o.chunk_shapes, /*pad_leading=*/true);
    else if (o.block_size && rank > 0)
        b.regular_chunk_shape(ParseShapeList("BLOCKSIZE", o.block_size, rank));
    else if (xy && rank > 0)
        b.regular_chunk_shape(BlockXY(shape, o));
    else
        b.regular_chunk_shape(DefaultChunks(shape));
    if (o.shard_chunk_shape)
        b.sharding(zarr3::ShardingCodecBuilder(
            rank == 0 ? zarr3::Shape{}
                      : ParseShapeList("SHARD_CHUNK_SHAPE", o.shard_chunk_shape, rank)));
}

// A builder error as a creation option error naming the option behind it.
[[noreturn]] void FailBuild(const zarr3::BuildError& e, const LayoutOptions& o, const char* dn) {
    switch (e.part()) {
    case zarr3::BuildPart::ChunkGrid:
        if (o.chunk_shapes) Fail("CHUNK_SHAPES", o.chunk_shapes, e.what());
        if (o.block_size) Fail("BLOCKSIZE", o.block_size, e.what());
        if (o.block_x) Fail("BLOCKXSIZE", o.block_x, e.what());
        if (o.block_y) Fail("BLOCKYSIZE", o.block_y, e.what());
        break;
    case zarr3::BuildPart::Sharding:
        if (o.shard_chunk_shape) Fail("SHARD_CHUNK_SHAPE", o.shard_chunk_shape, e.what());
        break;
    case zarr3::BuildPart::DimensionNames:
        if (dn) Fail("DIMENSION_NAMES", dn, e.what());
        break;
    default:
        break;
    }
    throw zarr3::Error(std::string("creation options: ") + e.what());
}

// GTiff's creation options that mean nothing for Zarr (rioxarray and scripts
// written for GeoTIFF pass them on): one warning naming those given.
void WarnGTiffOnly(CSLConstList options) {
    static const char* const kGTiffOnly[] = {"TILED",       "PREDICTOR",    "INTERLEAVE",
                                             "PHOTOMETRIC", "BIGTIFF",      "COPY_SRC_OVERVIEWS",
                                             "SPARSE_OK",   "JPEG_QUALITY", "PROFILE"};
    std::string given;
    for (const char* name : kGTiffOnly)
        if (CSLFetchNameValue(options, name))
            given += (given.empty() ? "" : ", ") + std::string(name);
    if (!given.empty())
        CPLError(CE_Warning, CPLE_NotSupported,
                 "Zarr3: GeoTIFF creation options ignored (they have no meaning for Zarr): %s",
                 given.c_str());
}

} // namespace

zarr3::CopyOverrides CopyOverridesFrom(CSLConstList options) {
    const auto any = [&](std::initializer_list<const char*> names) {
        return std::any_of(names.begin(), names.end(),
                           [&](const char* n) { return CSLFetchNameValue(options, n) != nullptr; });
    };
    zarr3::CopyOverrides o;
    o.grid = any({"CHUNK_SHAPES", "BLOCKSIZE", "BLOCKXSIZE", "BLOCKYSIZE"});
    o.sharding = any({"SHARD_CHUNK_SHAPE"});
    o.codecs = any({"COMPRESS", "ZSTD_LEVEL", "ZSTD_CHECKSUM", "GZIP_LEVEL", "ZLEVEL",
                    "BLOSC_CNAME", "BLOSC_CLEVEL", "BLOSC_SHUFFLE", "DISCARD_LSB"});
    return o;
}

zarr3::ArrayMetadata BuildArrayMetadata(const ArrayCreateRequest& req, CSLConstList options) {
    LayoutOptions layout;
    layout.chunk_shapes = CSLFetchNameValue(options, "CHUNK_SHAPES");
    layout.block_size = CSLFetchNameValue(options, "BLOCKSIZE");
    layout.block_x = CSLFetchNameValue(options, "BLOCKXSIZE");
    layout.block_y = CSLFetchNameValue(options, "BLOCKYSIZE");
    layout.shard_chunk_shape = CSLFetchNameValue(options, "SHARD_CHUNK_SHAPE");
    const char* dn = CSLFetchNameValue(options, "DIMENSION_NAMES");

    WarnGTiffOnly(options);
    zarr3::ArrayBuilder b(req.shape, req.dtype);
    SetLayout(b, req.shape, layout);
    SetCompressor(b, options);
    SetFilters(b, req.dtype, options);
    b.dimension_names(DimensionNames(req, dn));
    if (req.fill) b.fill_value(*req.fill);
    try {
        return b.build();
    } catch (const zarr3::BuildError& e) {
        FailBuild(e, layout, dn);
    }
}

} // namespace zarr3drv
