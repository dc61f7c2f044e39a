"""Interop of `string` arrays (variable-length UTF-8, the vlen-utf8 codec) with zarr-python's
development line: arrays the plugin writes through the multidimensional API are read exactly by
zarr-python, and arrays zarr-python writes (regular, rectilinear, sharded) are read exactly by
the plugin.

Runs in the interop leg (ZARR3_INTEROP=1, scripts/interop.sh) with ZARR3_ZARR_PYTHON_CMD running
scripts/interop/zarr_python_io.py under zarr-python's development line; skipped otherwise.
"""
import json

import pytest

from test_interop import array_meta, run_tool, sharding_config, tool_cmd, work  # noqa: F401

pytestmark = pytest.mark.skipif(__import__("os").environ.get("ZARR3_INTEROP") != "1",
                                reason="interop tests run via scripts/interop.sh (ZARR3_INTEROP=1)")


def values(n, seed):
    """n strings: empty ones (the fill value) in runs long enough to leave whole chunks unstored,
    non-ASCII, long and short ones."""
    words = ["a", "Zürich", "東京", "😀 emoji", "Ωmega", "x" * 700, "tab\there", "q"]
    out = []
    for i in range(n):
        out.append("" if 4 <= i < 12 else f"{words[(i * 7 + seed) % len(words)]}{i}")
    return out


def zp_read(store, name, work):
    out = work / f"{name}.json"
    r = run_tool("zarr-python", "read", store, name, out)
    assert r.returncode == 0, f"zarr-python read failed:\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}"
    assert json.loads(r.stdout)["dtype"] == "string", r.stdout
    return json.loads(out.read_text(encoding="utf-8"))


def md_root(store, update=False):
    from osgeo import gdal

    gdal.UseExceptions()
    flags = gdal.OF_MULTIDIM_RASTER | (gdal.OF_UPDATE if update else 0)
    return gdal.OpenEx(str(store), flags, allowed_drivers=["Zarr3"]).GetRootGroup()


PLUGIN_CASES = [
    ("regular_zstd", ["BLOCKSIZE=5", "COMPRESS=ZSTD"], "regular", False),
    ("regular_none", ["BLOCKSIZE=7", "COMPRESS=NONE"], "regular", False),
    ("rectilinear_gzip", ["CHUNK_SHAPES=[[3,9,2,6,10]]", "COMPRESS=GZIP"], "rectilinear", False),
    ("sharded", ["BLOCKSIZE=10", "SHARD_CHUNK_SHAPE=2"], "regular", True),
    ("rect_sharded", ["CHUNK_SHAPES=[[4,8,18]]", "SHARD_CHUNK_SHAPE=2"], "rectilinear", True),
]


@pytest.mark.parametrize("name,options,grid,sharded", PLUGIN_CASES, ids=[c[0] for c in PLUGIN_CASES])
def test_plugin_written_strings_read_by_zarr_python(name, options, grid, sharded, work):
    from osgeo import gdal

    tool_cmd("zarr-python")
    gdal.UseExceptions()
    store = work / f"{name}.zarr"
    ds = gdal.GetDriverByName("Zarr3").CreateMultiDimensional(str(store))
    rg = ds.GetRootGroup()
    dim = rg.CreateDimension("n", None, None, 30)
    arr = rg.CreateMDArray(name, [dim], gdal.ExtendedDataType.CreateString(), options)
    data = values(30, 1)
    assert arr.Write(data) == gdal.CE_None
    assert arr.Write(["partial ü"], array_start_idx=[13], count=[1]) == gdal.CE_None
    data[13] = "partial ü"
    ds = rg = arr = None
    meta = array_meta(store, name)
    assert meta["data_type"] == "string" and meta["chunk_grid"]["name"] == grid
    assert (sharding_config(meta) is not None) == sharded
    assert zp_read(store, name, work) == data


ZP_CASES = [
    ("zp_regular", [30], "5", None, "zstd"),
    ("zp_2d", [6, 5], "4,2", None, "gzip"),
    ("zp_rectilinear", [30], "[[3,9,2,6,10]]", None, "zstd"),
    ("zp_rect_2d", [6, 5], "[[1,2,3],[4,1]]", None, "none"),
    ("zp_sharded", [30], "2", "10", "zstd"),
    ("zp_rect_sharded", [30], "2", "[[4,8,18]]", "none"),
]


@pytest.mark.parametrize("name,shape,chunks,shards,codec", ZP_CASES, ids=[c[0] for c in ZP_CASES])
def test_zarr_python_written_strings_read_by_plugin(name, shape, chunks, shards, codec, work):
    tool_cmd("zarr-python")
    store = work / f"{name}.zarr"
    n = 1
    for s in shape:
        n *= s
    data = values(n, 2)
    spec = work / f"{name}.in.json"
    spec.write_text(json.dumps({"shape": shape, "values": data}, ensure_ascii=False), encoding="utf-8")
    args = ["write-strings", store, name, spec, "--chunks", chunks, "--codec", codec]
    if shards:
        args += ["--shards", shards]
    r = run_tool("zarr-python", *args)
    if r.returncode == 3:
        pytest.skip(f"zarr-python cannot write it: {r.stderr.strip()[-500:]}")
    assert r.returncode == 0, f"zarr-python write failed:\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}"
    meta = array_meta(store, name)
    assert meta["data_type"] == "string"
    assert (sharding_config(meta) is not None) == bool(shards)
    assert ("[" in (shards or chunks)) == (meta["chunk_grid"]["name"] == "rectilinear")
    arr = md_root(store).OpenMDArray(name)
    got = arr.Read()
    assert got == data
