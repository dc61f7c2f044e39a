"""Interop of the numcodecs codecs (numcodecs.delta, .fixedscaleoffset, .bitround, .quantize,
.shuffle, .zlib, .gzip, .zstd, .blosc, .lz4, .crc32, .adler32, .crc32c) with zarr-python's
development line, which writes them under these names: arrays zarr-python writes are read by the
plugin exactly as zarr-python reads them, and a window the plugin writes into such an array (partly
covering chunks) reads in zarr-python exactly as the same window written by zarr-python itself into
a twin array (same quantisation, same rounding, the same decode-merge-encode of the chunks the
window covers in part).

Runs in the interop leg (ZARR3_INTEROP=1, scripts/interop.sh); skipped otherwise.
"""
import json

import numpy as np
import pytest

from test_interop import array_meta, gdal_read, run_tool, tool_cmd, work  # noqa: F401

pytestmark = pytest.mark.skipif(__import__("os").environ.get("ZARR3_INTEROP") != "1",
                                reason="interop tests run via scripts/interop.sh (ZARR3_INTEROP=1)")


def c(name, **config):
    return {"name": name, "configuration": config}


SHUFFLE_ZLIB = [c("numcodecs.shuffle", elementsize=4), c("numcodecs.zlib", level=1)]
# name, dtype, shards, filters, compressors
CASES = [
    ("delta_i32", "int32", None, [c("numcodecs.delta", dtype="<i4")], SHUFFLE_ZLIB),
    ("delta_u16_blosc", "uint16", None, [c("numcodecs.delta", dtype="<u2", astype="<u2")],
     [c("numcodecs.blosc", cname="zstd", clevel=3, shuffle=-1, blocksize=0)]),
    ("delta_f64", "float64", None, [c("numcodecs.delta", dtype="<f8")],
     [c("numcodecs.gzip", level=5)]),
    ("fso_f64_u2", "float64", None,
     [c("numcodecs.fixedscaleoffset", offset=-50, scale=10, dtype="<f8", astype="<u2")],
     [c("numcodecs.zstd", level=3)]),
    ("fso_f32_i2_sharded", "float32", "40,30",
     [c("numcodecs.fixedscaleoffset", offset=-3.5, scale=100, dtype="<f4", astype="<i2")],
     [c("numcodecs.zlib", level=6)]),
    ("quantize_f64", "float64", None, [c("numcodecs.quantize", digits=3, dtype="<f8")],
     [c("numcodecs.zstd", level=3), c("numcodecs.crc32")]),
    ("checksums_i16", "int16", None, [],
     [c("numcodecs.zlib", level=1), c("numcodecs.adler32"),
      c("numcodecs.crc32c", location="start")]),
    ("bitround_f32", "float32", None, [c("numcodecs.bitround", keepbits=9)], SHUFFLE_ZLIB),
    ("lz4_u8_sharded", "uint8", "20,30", [], [c("numcodecs.lz4", acceleration=1)]),
    ("bitround_f64_sharded", "float64", "20,60", [c("numcodecs.bitround", keepbits=20)],
     [c("numcodecs.zstd", level=1)]),
]
SHAPE, CHUNKS = (40, 60), "20,15"


def data_for(name, dtype, seed):
    rng = np.random.default_rng(seed)
    if name.startswith("fso"):  # inside the packed range (and so is the fill value 0)
        a = rng.uniform(0, 300, SHAPE) if dtype == "float64" else rng.uniform(-300, 300, SHAPE)
    elif dtype.startswith("int"):
        a = rng.integers(-(2 ** 30), 2 ** 30, SHAPE)
    else:
        a = rng.standard_normal(SHAPE) * 1000
    a = a.astype(dtype)
    a[:10, :20] = 0  # whole chunks of fill value
    return np.ascontiguousarray(a)


def zp_write(store, name, dtype, shards, filters, compressors, data, at=None):
    raw = store.parent / f"{name}.{store.name}.bin"
    data.tofile(raw)
    args = ["write", store, name, raw, "--dtype", dtype, "--shape", ",".join(map(str, data.shape)),
            "--chunks", CHUNKS, "--filters", json.dumps(filters),
            "--compressors", json.dumps(compressors)]
    if shards:
        args += ["--shards", shards]
    if at:
        args += ["--at", ",".join(map(str, at))]
    r = run_tool("zarr-python", *args)
    assert r.returncode == 0, f"zarr-python write failed:\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}"


def zp_read(store, name, dtype):
    out = store.parent / f"{name}.{store.name}.out"
    r = run_tool("zarr-python", "read", store, name, out)
    assert r.returncode == 0, f"zarr-python read failed:\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}"
    return np.fromfile(out, dtype=dtype).reshape(SHAPE)


def codec_names(meta):
    names = [x["name"] for x in meta["codecs"]]
    for x in meta["codecs"]:
        if x["name"] == "sharding_indexed":
            names += [y["name"] for y in x["configuration"]["codecs"]]
    return names


def assert_same_bits(got, want, what):
    g, w = np.ascontiguousarray(got).view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}")
    bad = np.argwhere(g != w)
    assert bad.size == 0, f"{what}: {len(bad)} values differ, first at {bad[:3].tolist()}"


@pytest.mark.parametrize("name,dtype,shards,filters,compressors", CASES, ids=[x[0] for x in CASES])
def test_zarr_python_written_read_by_plugin(name, dtype, shards, filters, compressors, work):
    tool_cmd("zarr-python")
    store = work / "zp.zarr"
    zp_write(store, name, dtype, shards, filters, compressors, data_for(name, dtype, 1))
    names = codec_names(array_meta(store, name))
    for x in filters + compressors:
        assert x["name"] in names, names
    want = zp_read(store, name, dtype)
    assert_same_bits(gdal_read(store, name).astype(dtype), want, f"plugin reading {name}")


@pytest.mark.parametrize("name,dtype,shards,filters,compressors", CASES, ids=[x[0] for x in CASES])
def test_plugin_written_window_reads_as_zarr_python_writes_it(name, dtype, shards, filters,
                                                              compressors, work):
    from osgeo import gdal

    tool_cmd("zarr-python")
    gdal.UseExceptions()
    before, window = data_for(name, dtype, 2), data_for(name, dtype, 3)[5:33, 7:52].copy()
    mine, theirs = work / "plugin.zarr", work / "zp.zarr"
    for store in (mine, theirs):
        zp_write(store, name, dtype, shards, filters, compressors, before)
    zp_write(theirs, name, dtype, shards, filters, compressors, window, at=(5, 7))
    ds = gdal.OpenEx(str(mine), gdal.OF_MULTIDIM_RASTER | gdal.OF_UPDATE,
                     allowed_drivers=["Zarr3"])
    arr = ds.GetRootGroup().OpenMDArray(name)
    assert arr.Write(window, array_start_idx=[5, 7], count=list(window.shape)) == gdal.CE_None
    gdal.ErrorReset()
    arr = ds = None  # buffered chunks are encoded and stored here
    assert gdal.GetLastErrorMsg() == "", gdal.GetLastErrorMsg()
    assert codec_names(array_meta(mine, name)) == codec_names(array_meta(theirs, name))
    want = zp_read(theirs, name, dtype)
    assert_same_bits(zp_read(mine, name, dtype), want, f"zarr-python reading the plugin's {name}")
    assert_same_bits(gdal_read(mine, name).astype(dtype), want, f"plugin reading its {name}")


@pytest.mark.parametrize("options", [["BLOCKSIZE=20,15", "DISCARD_LSB=13"],
                                     ["BLOCKSIZE=20,30", "SHARD_CHUNK_SHAPE=10,15",
                                      "DISCARD_LSB=40", "COMPRESS=GZIP"]],
                         ids=["chunks_f32", "shards_f64"])
def test_discard_lsb_copy_read_by_zarr_python(options, work):
    from osgeo import gdal

    tool_cmd("zarr-python")
    gdal.UseExceptions()
    dtype = "float32" if "DISCARD_LSB=13" in options else "float64"
    values = data_for("bitround", dtype, 4)
    src = gdal.GetDriverByName("MEM").Create("", SHAPE[1], SHAPE[0], 1,
                                             gdal.GDT_Float32 if dtype == "float32"
                                             else gdal.GDT_Float64)
    src.GetRasterBand(1).WriteArray(values)
    store = work / "lossy.zarr"
    gdal.Translate(str(store), src, format="Zarr3", creationOptions=options)
    assert "numcodecs.bitround" in codec_names(array_meta(store, "lossy"))
    mine = gdal_read(store, "lossy").astype(dtype)
    assert np.count_nonzero(mine != values) > 100  # rounded
    assert_same_bits(zp_read(store, "lossy", dtype), mine, "zarr-python reading DISCARD_LSB")
