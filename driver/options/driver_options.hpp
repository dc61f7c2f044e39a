// Option lists the driver advertises (XML, GDAL's option-list syntax).
// plugin.json repeats the option names; autotest/test_driver.py checks both agree.
#pragma once

namespace zarr3drv {

inline constexpr const char* kOpenOptionList =
    "<OpenOptionList>"
    "  <Option name='ARRAY' type='string' description='Array to open in classic raster mode, as a "
    "path inside "
    "the store (e.g. /group/t2m); same as ZARR3:\"path\":/group/t2m'/>"
    "  <Option name='BRANCH' type='string' description='Icechunk repositories: the branch to read "
    "(default main)'/>"
    "  <Option name='TAG' type='string' description='Icechunk repositories: the tag to read'/>"
    "  <Option name='SNAPSHOT' type='string' description='Icechunk repositories: the snapshot id "
    "to read'/>"
    "  <Option name='AS_OF' type='string' description='Icechunk repositories: the latest snapshot "
    "of the branch at or before this ISO 8601 time'/>"
    "  <Option name='COMMIT_MESSAGE' type='string' description='Icechunk repositories opened "
    "for update: the message of the commit made when the dataset closes (default gdal-zarr3: "
    "update)'/>"
    "  <Option name='VIRTUAL_ALLOWED_PREFIXES' type='string' description='Icechunk repositories: "
    "comma-separated URL prefixes virtual chunk references may be read from (within the "
    "containers the repository declares)'/>"
    "</OpenOptionList>";

// clang-format off
#define ZARR3_COMMON_CREATION_OPTIONS \
    "  <Option name='CHUNK_SHAPES' type='string' description='Chunk edges per array axis as " \
    "JSON, slowest axis first: a bare integer (regular axis) or a list of edges and " \
    "[edge,count] runs per axis, e.g. [[31,28,31,30],256,256] or [[[10,3],5],512,512]; " \
    "fewer entries than axes: the leading axes get edge 1'/>" \
    "  <Option name='BLOCKSIZE' type='string' description='Regular chunk shape, comma " \
    "separated, slowest axis first; fewer entries than axes: the leading axes get 1; one " \
    "value N on two or more axes: N x N spatial chunks'/>" \
    "  <Option name='BLOCKXSIZE' type='int' min='1' description='Chunk width (GTiff name; " \
    "the other axes keep the default chunking)'/>" \
    "  <Option name='BLOCKYSIZE' type='int' min='1' description='Chunk height (GTiff name)'/>" \
    "  <Option name='SHARD_CHUNK_SHAPE' type='string' description='Inner chunk shape: when " \
    "set, chunks become shards (sharding_indexed codec) holding inner chunks of this shape " \
    "(one value N: N x N spatial inner chunks)'/>" \
    "  <Option name='COMPRESS' type='string-select' default='ZSTD' description='Compressor " \
    "of each chunk (inner chunk when sharded)'>" \
    "    <Value>NONE</Value><Value>ZSTD</Value><Value>GZIP</Value><Value>BLOSC</Value>" \
    "<Value>DEFLATE</Value><Value>ZLIB</Value><Value>LZ4</Value>" \
    "  </Option>" \
    "  <Option name='ZSTD_LEVEL' type='int' min='-131072' max='22' default='3' " \
    "description='zstd compression level (COMPRESS=ZSTD)'/>" \
    "  <Option name='ZSTD_CHECKSUM' type='boolean' default='NO' " \
    "description='Write a zstd content checksum, verified on read (COMPRESS=ZSTD)'/>" \
    "  <Option name='GZIP_LEVEL' type='int' min='0' max='9' default='6' " \
    "description='gzip compression level (COMPRESS=GZIP)'/>" \
    "  <Option name='ZLEVEL' type='int' min='0' max='9' description='GTiff name of " \
    "GZIP_LEVEL (COMPRESS=DEFLATE)'/>" \
    "  <Option name='BLOSC_CNAME' type='string-select' default='lz4' " \
    "description='Compressor inside blosc (COMPRESS=BLOSC)'>" \
    "    <Value>lz4</Value><Value>lz4hc</Value><Value>blosclz</Value><Value>zstd</Value>" \
    "<Value>snappy</Value><Value>zlib</Value>" \
    "  </Option>" \
    "  <Option name='BLOSC_CLEVEL' type='int' min='0' max='9' default='5' " \
    "description='blosc compression level (COMPRESS=BLOSC)'/>" \
    "  <Option name='BLOSC_SHUFFLE' type='string-select' default='BYTE' " \
    "description='blosc shuffle (COMPRESS=BLOSC): NONE, BYTE or BIT as in the GDAL Zarr " \
    "driver, or noshuffle, shuffle, bitshuffle as in zarr.json'>" \
    "    <Value>NONE</Value><Value>BYTE</Value><Value>BIT</Value>" \
    "<Value>noshuffle</Value><Value>shuffle</Value><Value>bitshuffle</Value>" \
    "  </Option>" \
    "  <Option name='DISCARD_LSB' type='int' min='0' description='Floating-point data: " \
    "number of low mantissa bits rounded away (half to even) to help compression, written " \
    "as the numcodecs.bitround filter (lossy)'/>" \
    "  <Option name='DIMENSION_NAMES' type='string' description='Comma separated dimension " \
    "names, one per axis, slowest axis first'/>" \
    "  <Option name='TILED' type='string' description='GeoTIFF option, ignored (warning)'/>" \
    "  <Option name='PREDICTOR' type='string' description='GeoTIFF option, ignored'/>" \
    "  <Option name='INTERLEAVE' type='string' description='GeoTIFF option, ignored'/>" \
    "  <Option name='PHOTOMETRIC' type='string' description='GeoTIFF option, ignored'/>" \
    "  <Option name='BIGTIFF' type='string' description='GeoTIFF option, ignored'/>" \
    "  <Option name='COPY_SRC_OVERVIEWS' type='string' description='GeoTIFF option, ignored'/>" \
    "  <Option name='SPARSE_OK' type='string' description='GeoTIFF option, ignored'/>" \
    "  <Option name='JPEG_QUALITY' type='string' description='GeoTIFF option, ignored'/>" \
    "  <Option name='PROFILE' type='string' description='GeoTIFF option, ignored'/>"
// clang-format on

// The Icechunk options of both creation option lists.
// clang-format off
#define ZARR3_ICECHUNK_CREATION_OPTIONS \
    "  <Option name='ICECHUNK' type='boolean' default='NO' description='Write an Icechunk " \
    "repository (spec 2): the whole copy is one commit on branch main; an existing repository " \
    "of that name gets it as a new commit (same as an ICECHUNK: output name)'/>" \
    "  <Option name='COMMIT_MESSAGE' type='string' description='Icechunk: the commit " \
    "message'/>" \
    "  <Option name='BRANCH' type='string' default='main' description='Icechunk: the branch " \
    "the commit goes to (it must exist, except main in a new repository)'/>"
// clang-format on

inline constexpr const char* kCreationOptionList =
    "<CreationOptionList>" ZARR3_COMMON_CREATION_OPTIONS ZARR3_ICECHUNK_CREATION_OPTIONS
    "  <Option name='ARRAY_NAME' type='string' description='Name of the array written in the store "
    "(default: "
    "the store name without extension)'/>"
    "  <Option name='APPEND_DIM' type='string' description='CreateCopy into an existing store: "
    "append the source bands as new indices along this dimension of the array [dim, y, x] "
    "(one new chunk); a new store gets that layout'/>"
    "  <Option name='APPEND_COORD' type='string' description='With APPEND_DIM: the coordinate "
    "value(s) of the new indices (a date YYYY-MM-DD[THH:MM:SS] or a number; comma separated, "
    "one per band); default: a date in the source metadata (DATE, TIFFTAG_DATETIME)'/>"
    "  <Option name='APPEND_ORDER' type='string-select' default='STRICT' description='With "
    "APPEND_DIM: STRICT refuses a coordinate value that does not continue the coordinate "
    "strictly in its direction (a duplicate or out-of-order step); ANY accepts any order "
    "(concurrent writers of one series) but still refuses a value already stored'>"
    "    <Value>STRICT</Value><Value>ANY</Value>"
    "  </Option>"
    "  <Option name='APPEND_REPACK' type='string-select' default='EXACT' description='With "
    "APPEND_DIM, when the source band scale/offset or nodata differ from the array: EXACT "
    "converts the values into the array packing only when every value maps exactly; NEAREST "
    "rounds to the nearest step of the array packing'>"
    "    <Value>EXACT</Value><Value>NEAREST</Value>"
    "  </Option>"
    "  <Option name='APPEND_SUBDATASET' type='boolean' description='With APPEND_DIM on GDAL "
    "versions whose gdal_translate deletes an existing folder target first: YES keeps it'/>"
    "  <Option name='CREATE_CONSOLIDATED_METADATA' type='boolean' default='YES' "
    "description='Write consolidated metadata in the root zarr.json (kept up to date by later "
    "metadata writes), so that readers which cannot list the store (HTTP) find its arrays; "
    "NO: none. Not given: given up with a warning on a store that refuses listings'/>"
    "  <Option name='NUM_THREADS' type='string' description='Threads encoding the chunks: a "
    "number or ALL_CPUS (default: the GDAL_NUM_THREADS config option)'/>"
    "  <Option name='OVERVIEWS' type='string-select' default='NONE' description='Overviews "
    "built during the copy as multiscales levels beside the array (CreateCopy only): NONE, or "
    "AUTO / IGNORE_EXISTING to compute them from the full resolution'>"
    "    <Value>NONE</Value><Value>AUTO</Value><Value>IGNORE_EXISTING</Value>"
    "  </Option>"
    "  <Option name='OVERVIEW_COUNT' type='int' min='0' max='30' description='Number of "
    "overview levels (factors 2, 4, 8, ...); default: halve until a level fits in one block'/>"
    "  <Option name='OVERVIEW_RESAMPLING' type='string-select' default='AVERAGE' "
    "description='Resampling of the overviews'>"
    "    <Value>NEAREST</Value><Value>AVERAGE</Value><Value>BILINEAR</Value><Value>CUBIC</Value>"
    "<Value>CUBICSPLINE</Value><Value>LANCZOS</Value><Value>MODE</Value><Value>RMS</Value>"
    "<Value>GAUSS</Value><Value>MIN</Value><Value>MAX</Value><Value>MED</Value><Value>Q1</Value>"
    "<Value>Q3</Value><Value>SUM</Value>"
    "  </Option>"
    "</CreationOptionList>";

inline constexpr const char* kMultidimDatasetCreationOptionList =
    "<MultiDimDatasetCreationOptionList>" ZARR3_ICECHUNK_CREATION_OPTIONS
    "  <Option name='CREATE_CONSOLIDATED_METADATA' type='boolean' default='YES' "
    "description='Write consolidated metadata in the root zarr.json (kept up to date by later "
    "metadata writes), so that readers which cannot list the store (HTTP) find its arrays; "
    "NO: none. Not given: given up with a warning on a store that refuses listings'/>"
    "</MultiDimDatasetCreationOptionList>";

inline constexpr const char* kArrayCreationOptionList =
    "<MultiDimArrayCreationOptionList>" ZARR3_COMMON_CREATION_OPTIONS
    "</MultiDimArrayCreationOptionList>";

#undef ZARR3_COMMON_CREATION_OPTIONS

} // namespace zarr3drv
