"""Interop with independent Zarr v3 implementations: zarr-python 3 and zarrita.js.

Skipped unless ZARR3_INTEROP=1 (set by scripts/interop.sh and scripts/compat.sh).  Tools:
  ZARR3_ZARR_PYTHON_CMD  command prefix running scripts/interop/zarr_python_io.py
                         (e.g. "chroot /tmp/zarr3-trixie-1 python3 /repo/scripts/interop/zarr_python_io.py")
  ZARR3_ZARRITA_CMD      command prefix running scripts/interop/zarrita_io.mjs (e.g. "node .../zarrita_io.mjs")
  ZARR3_INTEROP_TMP      folder for the stores, visible to the tools at the same path (optional)
A tool whose variable is unset is skipped.  Groups (run selectively with -k):
  test_tool_reads_conformance   the tools read the conformance corpus as expected (validates the tooling)
  test_tool_written_*           stores written by the tools read bit-exact through GDAL + the Zarr3 plugin
  test_plugin_written_*         stores written by the plugin (CreateCopy) read bit-exact by the tools
  test_gdal_builtin_written_*   v3 stores written by GDAL's own Zarr driver read by the plugin
Known limitations are explicit in UNSUPPORTED below: for them a tool failure is a skip; any other tool
failure is a test failure.
"""
import json
import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(os.environ.get("ZARR3_INTEROP") != "1",
                                reason="interop tests run via scripts/interop.sh (ZARR3_INTEROP=1)")

REPO = Path(__file__).resolve().parents[1]
CONFORMANCE = Path(os.environ.get("ZARR3_CONFORMANCE",
                                  os.environ.get("ZARR3_CONFORMANCE_DIR",
                                                 REPO / "testdata" / "conformance"))).resolve()
TOOLS = {"zarr-python": "ZARR3_ZARR_PYTHON_CMD", "zarrita": "ZARR3_ZARRITA_CMD"}
UNSUPPORTED_EXIT = 3


# ------------------------------------------------------------------ helpers
def tool_cmd(tool):
    cmd = os.environ.get(TOOLS[tool])
    if not cmd:
        pytest.skip(f"{tool}: {TOOLS[tool]} not set")
    return shlex.split(cmd)


def run_tool(tool, *args, timeout=300):
    return subprocess.run(tool_cmd(tool) + [str(a) for a in args], capture_output=True, text=True,
                           timeout=timeout)


def array_meta(store, path):
    return json.loads((Path(store) / path.strip("/") / "zarr.json").read_text())


def sharding_config(meta):
    for c in meta.get("codecs", []):
        if c.get("name") == "sharding_indexed":
            return c.get("configuration", {})
    return None


def unsupported_reason(tool, meta):
    """Why `tool` (the versions used here) cannot read an array with metadata `meta`, or None."""
    # zarr-python's development line (zp.sh) reads rectilinear grids: a failure there is a failure
    if tool == "zarrita" and meta.get("chunk_grid", {}).get("name") != "regular":
        return f"{tool} does not support the '{meta['chunk_grid'].get('name')}' chunk grid"
    sh = sharding_config(meta)
    if tool == "zarrita":
        if sh is not None and sh.get("index_location", "end") != "end":
            return "zarrita 0.7 reads shard indexes at the end only (index_location=start)"
        if meta.get("data_type") in ("float16", "complex64", "complex128"):
            return f"zarrita on node 20 has no {meta['data_type']} typed array"
    return None


def tool_read(tool, store, path, out):
    """Read store/path with the tool into out; returns None, or a skip reason for a known limitation."""
    r = run_tool(tool, "read", store, path, out)
    if r.returncode == 0:
        return None
    reason = unsupported_reason(tool, array_meta(store, path))
    if reason:
        return f"{reason} ({tool} exit {r.returncode})"
    raise AssertionError(f"{tool} failed to read {store} {path} (exit {r.returncode}):\n"
                         f"{r.stdout[-2000:]}\n{r.stderr[-4000:]}")


def assert_bit_exact(got_bytes, expected, what):
    exp_bytes = np.ascontiguousarray(expected).tobytes()
    if got_bytes == exp_bytes:
        return
    dt = expected.dtype
    msg = f"{what}: {len(got_bytes)} bytes vs {len(exp_bytes)} expected"
    if len(got_bytes) == len(exp_bytes):
        got = np.frombuffer(got_bytes, dtype=dt)
        bad = np.flatnonzero(got.view(f"u{dt.itemsize}" if dt.itemsize <= 8 else "u1")
                             != expected.reshape(-1).view(
                                 f"u{dt.itemsize}" if dt.itemsize <= 8 else "u1"))
        msg += f"; {bad.size} values differ, first at flat index {bad[:5].tolist()}"
    raise AssertionError(msg)


@pytest.fixture
def work(tmp_path):
    """A folder the tools can see at the same path (ZARR3_INTEROP_TMP when the tool runs in a chroot)."""
    base = os.environ.get("ZARR3_INTEROP_TMP")
    if not base:
        yield tmp_path
        return
    d = Path(tempfile.mkdtemp(prefix="interop-", dir=base))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def gdal_read(store, path):
    from osgeo import gdal

    gdal.UseExceptions()
    ds = gdal.OpenEx(str(store), gdal.OF_MULTIDIM_RASTER, allowed_drivers=["Zarr3"])
    assert ds is not None, f"Zarr3 could not open {store}"
    assert ds.GetDriver().ShortName == "Zarr3"
    arr = ds.GetRootGroup().OpenMDArrayFromFullname("/" + path.strip("/"))
    assert arr is not None, f"no array /{path} in {store}"
    return arr.ReadAsArray()


# ------------------------------------------------------------------ (i) conformance corpus via the tools
def conformance_params():
    cases_txt = CONFORMANCE / "cases.txt"
    if not cases_txt.exists():
        return [pytest.param(None, None, marks=pytest.mark.skip(reason=f"no {cases_txt}"))]
    params = []
    for case in cases_txt.read_text().split():
        cj = json.loads((CONFORMANCE / case / "case.json").read_text())
        for a in cj["arrays"]:
            params.append(pytest.param(case, a["path"], id=f"{case}/{a['path']}"))
    return params


@pytest.mark.parametrize("tool", list(TOOLS))
@pytest.mark.parametrize("case,path", conformance_params())
def test_tool_reads_conformance(tool, case, path, work):
    cj = json.loads((CONFORMANCE / case / "case.json").read_text())
    a = next(x for x in cj["arrays"] if x["path"] == path)
    store = CONFORMANCE / case / cj["store"]
    out = work / "out.bin"
    skip = tool_read(tool, store, path, out)
    if skip:
        pytest.skip(skip)
    expected = np.fromfile(CONFORMANCE / case / a["expected"], dtype=np.dtype(a["numpy_dtype"]))
    assert_bit_exact(out.read_bytes(), expected, f"{tool} {case}/{path}")


# ------------------------------------------------------------------ data
def make_data(dtype, shape, seed):
    """Deterministic data with a block equal to the fill value (0) and NaNs for floats."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        a = (rng.standard_normal(shape) * 1000).astype(dt)
        a.reshape(-1)[::97] = np.nan
    else:
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
    # an all-fill region big enough to cover whole chunks (left unwritten by most writers)
    a[tuple(slice(0, max(1, s // 2)) for s in shape)] = 0
    return np.ascontiguousarray(a.astype(dt.newbyteorder("<")))


# name, dtype, shape, chunks (inner chunks when sharded), shards, codec, extra writer options
TOOL_WRITE_CASES = [
    ("reg_zstd_i32", "int32", (100, 80), (32, 32), None, "zstd", []),
    ("reg_gzip_u16", "uint16", (70, 50), (16, 20), None, "gzip", []),
    ("reg_blosc_f32", "float32", (64, 64), (30, 30), None, "blosc", []),
    ("reg_none_f64", "float64", (33, 17), (10, 10), None, "none", []),
    ("reg_zstd_i16_3d", "int16", (5, 40, 30), (2, 16, 16), None, "zstd", []),
    ("reg_zstd_u8_nested", "uint8", (50, 60), (25, 25), None, "zstd", []),
    ("shard_zstd_i32", "int32", (120, 100), (10, 10), (60, 50), "zstd", []),
    ("shard_gzip_u8", "uint8", (64, 64), (16, 16), (32, 32), "gzip", []),
    ("shard_blosc_f32", "float32", (100, 90), (10, 10), (50, 30), "blosc", []),
    ("shard_none_i16_3d", "int16", (6, 40, 40), (3, 10, 10), (6, 20, 20), "none", []),
    ("shard_start_f64", "float64", (40, 40), (8, 8), (16, 16), "zstd", ["--index-location", "start"]),
]


def _write_with_tool(tool, store, name, dtype, shape, chunks, shards, codec, extra, seed):
    data = make_data(dtype, shape, seed)
    raw = store.parent / f"{name}.in.bin"
    data.tofile(raw)
    path = f"grp/{name}" if name.endswith("nested") else name
    args = ["write", store, path, raw, "--dtype", dtype, "--shape", ",".join(map(str, shape)),
            "--chunks", ",".join(map(str, chunks)), "--codec", codec]
    if shards:
        args += ["--shards", ",".join(map(str, shards))]
    r = run_tool(tool, *(args + extra))
    if r.returncode == UNSUPPORTED_EXIT:
        pytest.skip(f"{tool} cannot write this: {r.stderr.strip().splitlines()[0][:200]}")
    assert r.returncode == 0, f"{tool} write failed:\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}"
    return data, path


@pytest.mark.parametrize("tool", list(TOOLS))
@pytest.mark.parametrize("name,dtype,shape,chunks,shards,codec,extra",
                         [pytest.param(*c, id=c[0]) for c in TOOL_WRITE_CASES])
def test_tool_written_read_by_plugin(tool, name, dtype, shape, chunks, shards, codec, extra, work):
    tool_cmd(tool)
    if tool == "zarrita" and extra:
        pytest.skip("zarrita writer has no such option")
    store = work / "store.zarr"
    data, path = _write_with_tool(tool, store, name, dtype, shape, chunks, shards, codec, extra,
                                  seed=len(name))
    meta = array_meta(store, path)
    assert (sharding_config(meta) is not None) == bool(shards), meta
    got = gdal_read(store, path)
    assert got.shape == data.shape
    assert got.dtype == data.dtype.newbyteorder("="), (got.dtype, data.dtype)
    assert_bit_exact(np.ascontiguousarray(got).astype(data.dtype).tobytes(), data,
                     f"GDAL/Zarr3 reading {tool}-written {name}")


# ------------------------------------------------------------------ (iii) plugin-written stores
# Planned write API: gdal.GetDriverByName("Zarr3").CreateCopy(path, src, options=[...]).
# These fail until the plugin's write path lands.
PLUGIN_WRITE_CASES = [
    ("int16_zstd", "int16", ["BLOCKSIZE=64,64", "COMPRESS=ZSTD"], False),
    ("float32_zstd", "float32", ["BLOCKSIZE=64,64", "COMPRESS=ZSTD"], False),
    ("uint8_zstd", "uint8", ["BLOCKSIZE=64,64", "COMPRESS=ZSTD"], False),
    ("int32_shard_zstd", "int32", ["BLOCKSIZE=64,64", "COMPRESS=ZSTD", "SHARD_CHUNK_SHAPE=32,32"], True),
    ("float64_shard_zstd", "float64", ["BLOCKSIZE=64,64", "COMPRESS=ZSTD", "SHARD_CHUNK_SHAPE=32,32"],
     True),
    ("uint16_shard_zstd", "uint16", ["BLOCKSIZE=64,64", "COMPRESS=ZSTD", "SHARD_CHUNK_SHAPE=32,32"],
     True),
]
GDAL_TYPES = {"uint8": "Byte", "int16": "Int16", "uint16": "UInt16", "int32": "Int32",
              "float32": "Float32", "float64": "Float64"}


def _plugin_write(store, dtype, options, seed):
    from osgeo import gdal, gdal_array

    gdal.UseExceptions()
    rows, cols = 150, 130  # not multiples of the block size: partial edge chunks
    data = make_data(dtype, (rows, cols), seed)
    src = gdal.GetDriverByName("MEM").Create("", cols, rows, 1,
                                             gdal.GetDataTypeByName(GDAL_TYPES[dtype]))
    src.SetGeoTransform([10.0, 0.5, 0.0, 50.0, 0.0, -0.5])
    src.GetRasterBand(1).WriteArray(data.astype(data.dtype.newbyteorder("=")))
    assert gdal_array.BandReadAsArray(src.GetRasterBand(1)).tobytes() == data.tobytes()
    drv = gdal.GetDriverByName("Zarr3")
    assert drv is not None, "Zarr3 driver not registered"
    out = drv.CreateCopy(str(store), src, options=options)
    assert out is not None, f"CreateCopy failed with {options}"
    out = None  # flush and close
    # the written 2-D array: the one array of shape [rows, cols]
    found = []
    for zj in sorted(Path(store).rglob("zarr.json")):
        m = json.loads(zj.read_text())
        if m.get("node_type") == "array" and m.get("shape") == [rows, cols]:
            found.append((zj.parent.relative_to(store).as_posix(), m))
    assert len(found) == 1, f"expected one {rows}x{cols} array in {store}, found {found}"
    return data, found[0][0], found[0][1]


@pytest.mark.parametrize("tool", list(TOOLS))
@pytest.mark.parametrize("name,dtype,options,sharded",
                         [pytest.param(*c, id=c[0]) for c in PLUGIN_WRITE_CASES])
def test_plugin_written_read_by_tool(tool, name, dtype, options, sharded, work):
    tool_cmd(tool)
    store = work / f"{name}.zarr"
    data, path, meta = _plugin_write(store, dtype, options, seed=len(name) + 7)
    assert meta["chunk_grid"]["name"] == "regular"
    sh = sharding_config(meta)
    assert meta["chunk_grid"]["configuration"]["chunk_shape"] == [64, 64], meta
    if sharded:
        assert sh is not None and sh["chunk_shape"] == [32, 32], meta
        names = [c["name"] for c in sh["codecs"]]
    else:
        assert sh is None, meta
        names = [c["name"] for c in meta["codecs"]]
    assert "zstd" in names, meta
    out = work / "out.bin"
    skip = tool_read(tool, store, path, out)
    if skip:
        pytest.fail(f"{tool} cannot read a plugin-written regular store: {skip}")
    assert_bit_exact(out.read_bytes(), data, f"{tool} reading plugin-written {name}")


# ------------------------------------------------------------------ GDAL's own Zarr driver (v3)
def test_gdal_builtin_written_read_by_plugin(work):
    """v3 stores written by GDAL's built-in Zarr driver (3.8-3.10 write no array->bytes codec)."""
    from osgeo import gdal

    gdal.UseExceptions()
    if int(gdal.VersionInfo()) < 3080000:
        pytest.skip("GDAL < 3.8 writes the pre-release Zarr v3 draft layout (meta/root/*.array.json)")
    zdrv = gdal.GetDriverByName("Zarr")
    if zdrv is None or "ZARR_V3" not in (zdrv.GetMetadataItem("DMD_CREATIONOPTIONLIST") or ""):
        pytest.skip("GDAL's Zarr driver cannot write v3 here")
    data = make_data("int16", (70, 90), 5)
    src = gdal.GetDriverByName("MEM").Create("", 90, 70, 1, gdal.GDT_Int16)
    src.GetRasterBand(1).WriteArray(data)
    store = work / "builtin.zarr"
    zdrv.CreateCopy(str(store), src, options=["FORMAT=ZARR_V3", "BLOCKSIZE=32,32"])
    src = None
    found = [zj.parent.relative_to(store).as_posix() for zj in sorted(store.rglob("zarr.json"))
             if json.loads(zj.read_text()).get("shape") == [70, 90]]
    assert len(found) == 1, found
    got = gdal_read(store, found[0])
    assert_bit_exact(np.ascontiguousarray(got).astype("<i2").tobytes(), data, "builtin-written")


# ------------------------------------------------------------------ rectilinear, both ways (zarr-python dev)
RECT_CASES = [
    # name, dtype, shape, chunks (inner when sharded), shards
    ("rect_i16", "int16", (10, 8), [[2, 3, 5], [4, 4]], None),
    ("rect_f32_runs", "float32", (30, 7), [[1, 2, 3, 4, 20], [7]], None),
    ("rect_shard_u16", "uint16", (10, 8), [2, 4], [[4, 6], [8]]),
]


@pytest.mark.parametrize("name,dtype,shape,chunks,shards", [pytest.param(*c, id=c[0]) for c in RECT_CASES])
def test_zarr_python_rectilinear_read_by_plugin(name, dtype, shape, chunks, shards, work):
    tool_cmd("zarr-python")
    store = work / "rect.zarr"
    data = make_data(dtype, shape, len(name))
    raw = work / f"{name}.in.bin"
    data.tofile(raw)
    args = ["write", store, name, raw, "--dtype", dtype, "--shape", ",".join(map(str, shape)),
            "--chunks", json.dumps(chunks), "--codec", "zstd"]
    if shards:
        args += ["--shards", json.dumps(shards)]
    r = run_tool("zarr-python", *args)
    assert r.returncode == 0, f"zarr-python write failed:\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}"
    meta = array_meta(store, name)
    grid = meta["chunk_grid"]
    assert grid["name"] == "rectilinear", grid
    assert (sharding_config(meta) is not None) == bool(shards)
    got = gdal_read(store, name)
    assert_bit_exact(np.ascontiguousarray(got).astype(data.dtype).tobytes(), data,
                     f"GDAL/Zarr3 reading zarr-python-written rectilinear {name}")


@pytest.mark.parametrize("sharded", [False, True], ids=["plain", "sharded"])
def test_plugin_rectilinear_read_by_zarr_python(sharded, work):
    tool_cmd("zarr-python")
    store = work / f"prect_{sharded}.zarr"
    opts = ["CHUNK_SHAPES=[[40,60,50],[[30,4],10]]", "COMPRESS=ZSTD"]
    if sharded:
        opts.append("SHARD_CHUNK_SHAPE=10,10")
    data, path, meta = _plugin_write(store, "int16", opts, seed=3 + sharded)
    assert meta["chunk_grid"]["name"] == "rectilinear", meta["chunk_grid"]
    assert (sharding_config(meta) is not None) == sharded
    out = work / "out.bin"
    skip = tool_read("zarr-python", store, path, out)
    assert skip is None, skip
    assert_bit_exact(out.read_bytes(), data, f"zarr-python reading plugin-written rectilinear ({sharded=})")


# ------------------------------------------------------------------ newer types and codecs, plugin-written
ZP_DEV = REPO / "data" / "zp-dev"


def test_plugin_written_new_types_read_by_zarr_python(work):
    """The plugin writes into zarr-python-dev arrays of the newer types and codecs (datetime64,
    fixed_length_utf32, scale_offset, zstd with checksum) and a CREATE_CONSOLIDATED_METADATA store;
    zarr-python reads them back bit-exact."""
    from osgeo import gdal

    tool_cmd("zarr-python")
    gdal.UseExceptions()
    store = work / "zp_dev.zarr"
    shutil.copytree(ZP_DEV / "zp_dev.zarr", store)
    rg = gdal.OpenEx(str(store), gdal.OF_MULTIDIM_RASTER | gdal.OF_UPDATE,
                     allowed_drivers=["Zarr3"]).GetRootGroup()
    t = np.array([1700000000, -1, np.iinfo(np.int64).min], dtype="<i8")
    rg.OpenMDArray("time").Write(t)
    rg.OpenMDArray("names").Write(["Bâle", "Ωmega", "", "日本", "z"])
    scaled = np.array([250.5, 251.0, 249.75, 250.0, 260.0, 300.25], dtype="<f4")
    rg.OpenMDArray("scaled").Write(scaled)
    checked = np.arange(100, 116, dtype="<i4").reshape(4, 4)
    rg.OpenMDArray("checked").Write(checked)
    rg = None
    expect = {"time": t, "names": np.array(["Bâle", "Ωmega", "", "日本", "z"], dtype="<U5"),
              "scaled": scaled, "checked": checked}
    for name, data in expect.items():
        out = work / f"{name}.bin"
        skip = tool_read("zarr-python", store, name, out)
        assert skip is None, skip
        assert_bit_exact(out.read_bytes(), data, f"zarr-python reading plugin-written {name}")

    cons = work / "cons.zarr"
    src = gdal.GetDriverByName("MEM").Create("", 9, 7, 1, gdal.GDT_UInt16)
    src.GetRasterBand(1).WriteArray(np.arange(63, dtype="uint16").reshape(7, 9))
    gdal.GetDriverByName("Zarr3").CreateCopy(str(cons), src, options=[
        "CREATE_CONSOLIDATED_METADATA=YES", "ZSTD_CHECKSUM=YES", "ARRAY_NAME=a"])
    src = None
    root = json.loads((cons / "zarr.json").read_text())
    assert "a" in root["consolidated_metadata"]["metadata"]
    out = work / "a.bin"
    assert tool_read("zarr-python", cons, "a", out) is None
    assert_bit_exact(out.read_bytes(), np.arange(63, dtype="<u2").reshape(7, 9), "consolidated+checksum")

    # a string array created by the plugin (fixed_length_utf32)
    sstore = work / "strings.zarr"
    ds = gdal.GetDriverByName("Zarr3").CreateMultiDimensional(str(sstore))
    rg = ds.GetRootGroup()
    arr = rg.CreateMDArray("label", [rg.CreateDimension("n", None, None, 3)],
                           gdal.ExtendedDataType.CreateString(4))
    arr.Write(["abcd", "Øl", ""])
    ds = rg = arr = None
    out = work / "label.bin"
    assert tool_read("zarr-python", sstore, "label", out) is None
    assert_bit_exact(out.read_bytes(), np.array(["abcd", "Øl", ""], dtype="<U4"), "plugin-created strings")
