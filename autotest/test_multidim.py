"""Multidimensional API of the Zarr3 driver: browsing (groups, dimensions,
indexing variables, attributes, CRS), strided reads, creation through the
Python API and gdalmdimtranslate (round trips and re-chunking), append."""
import json
import os
from pathlib import Path

import numpy as np
import pytest
from osgeo import gdal, osr

from conftest import CONFORMANCE

gdal.UseExceptions()

GDAL_NUM = int(gdal.VersionInfo("VERSION_NUM"))


def open_md(path, update=False):
    flags = gdal.OF_MULTIDIM_RASTER | (gdal.OF_UPDATE if update else 0)
    return gdal.OpenEx(str(path), flags, allowed_drivers=["Zarr3"])


def load_case(name):
    return json.loads((CONFORMANCE / name / "case.json").read_text())


def expected_array(case_name, entry):
    raw = (CONFORMANCE / case_name / entry["expected"]).read_bytes()
    return np.frombuffer(raw, dtype=np.dtype(entry["numpy_dtype"])).reshape(entry["shape"])


def open_array(ds, path):
    rg = ds.GetRootGroup()
    parts = [p for p in path.split("/") if p]
    for g in parts[:-1]:
        rg = rg.OpenGroup(g)
    return rg.OpenMDArray(parts[-1])


def indexing_name(dim):
    """gdalmdiminfo writes a dimension's indexing variable as its full name, or
    (GDAL >= 3.8) as an inline {name: description} object."""
    v = dim.get("indexing_variable")
    if isinstance(v, dict):
        assert len(v) == 1
        name = next(iter(v))
        return name if name.startswith("/") else "/" + name
    return v


def same(a, b):
    """Bit-exact comparison (NaN payloads included)."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


# ---------------------------------------------------------------- reading


def test_gdalmdiminfo_geo_group(run_tool):
    store = CONFORMANCE / "geo_group" / "store.zarr"
    p = run_tool("gdalmdiminfo", store, check=True)
    info = json.loads(p.stdout)
    dims = {d["name"]: d for d in info["dimensions"]}
    assert set(dims) == {"time", "lat", "lon"}
    for n, size in (("time", 12), ("lat", 18), ("lon", 36)):
        assert dims[n]["size"] == size
        assert indexing_name(dims[n]) == "/" + n
    assert dims["lat"]["type"] == "HORIZONTAL_Y"
    assert dims["lon"]["type"] == "HORIZONTAL_X"
    assert dims["time"]["type"] == "TEMPORAL"
    air = info["arrays"]["air"]
    assert air["dimensions"] == ["/time", "/lat", "/lon"]
    assert air["unit"] == "K"
    assert air["datatype"] == "Float32"
    assert "4326" in air["srs"]["wkt"] or "WGS 84" in air["srs"]["wkt"]
    assert air["srs"]["data_axis_to_srs_axis_mapping"] == [2, 3]
    assert air["attributes"]["grid_mapping"] == "spatial_ref"
    assert info["attributes"]["title"] == "conformance geo group"


def test_geo_group_python_api():
    ds = open_md(CONFORMANCE / "geo_group" / "store.zarr")
    rg = ds.GetRootGroup()
    assert rg.GetMDArrayNames() == ["air", "lat", "lon", "spatial_ref", "time"]
    air = rg.OpenMDArray("air")
    dims = air.GetDimensions()
    assert [d.GetName() for d in dims] == ["time", "lat", "lon"]
    case = load_case("geo_group")
    for d in dims:
        var = d.GetIndexingVariable()
        assert var is not None and var.GetName() == d.GetName()
        entry = next(a for a in case["arrays"] if a["path"] == d.GetName())
        assert same(var.ReadAsArray(), expected_array("geo_group", entry))
    assert [c.GetName() for c in air.GetCoordinateVariables()] == ["time", "lat", "lon"]
    assert air.GetBlockSize() == [3, 12, 12]  # most common edge per axis
    assert air.GetNoDataValueAsDouble() == 0.0
    srs = air.GetSpatialRef()
    assert srs is not None and srs.GetAuthorityCode(None) == "4326"
    assert air.GetScale() is None and air.GetOffset() is None


def test_scale_offset_and_coordinates_attribute(tmp_path):
    root = tmp_path / "s.zarr"
    ds = gdal.GetDriverByName("Zarr3").CreateMultiDimensional(str(root))
    rg = ds.GetRootGroup()
    sub = rg.CreateGroup("sub")
    y = rg.CreateDimension("y", "", "", 3)
    x = rg.CreateDimension("x", "", "", 4)
    i16 = gdal.ExtendedDataType.Create(gdal.GDT_Int16)
    f64 = gdal.ExtendedDataType.Create(gdal.GDT_Float64)
    lat2d = rg.CreateMDArray("lat2d", [y, x], f64)
    lat2d.Write(np.arange(12, dtype=np.float64).reshape(3, 4))
    a = sub.CreateMDArray("packed", [y, x], i16)
    a.SetScale(0.5)
    a.SetOffset(10.0)
    attr = a.CreateAttribute("coordinates", [], gdal.ExtendedDataType.CreateString())
    attr.Write("lat2d")
    a.Write(np.arange(1, 13, dtype=np.int16).reshape(3, 4))  # 0 is the fill (nodata)
    ds = None
    ds = open_md(root)
    a = open_array(ds, "/sub/packed")
    assert a.GetScale() == 0.5 and a.GetOffset() == 10.0
    assert [c.GetFullName() for c in a.GetCoordinateVariables()] == ["/lat2d"]
    # Dimensions named like a parent's dimension share it.
    assert [d.GetFullName() for d in a.GetDimensions()] == ["/y", "/x"]
    unscaled = a.GetUnscaled().ReadAsArray()
    assert np.allclose(unscaled, np.arange(1, 13).reshape(3, 4) * 0.5 + 10.0)


def test_indexing_variable_in_parent_group(tmp_path):
    root = tmp_path / "p.zarr"
    ds = gdal.GetDriverByName("Zarr3").CreateMultiDimensional(str(root))
    rg = ds.GetRootGroup()
    t = rg.CreateDimension("time", "TEMPORAL", "", 5)
    f64 = gdal.ExtendedDataType.Create(gdal.GDT_Float64)
    tv = rg.CreateMDArray("time", [t], f64)
    tv.Write(np.arange(5, dtype=np.float64) * 24)
    assert t.SetIndexingVariable(tv)
    g = rg.CreateGroup("g")
    v = g.CreateMDArray("v", [t], gdal.ExtendedDataType.Create(gdal.GDT_Float32))
    v.Write(np.ones(5, dtype=np.float32))
    ds = None
    ds = open_md(root)
    v = open_array(ds, "/g/v")
    d = v.GetDimensions()[0]
    assert d.GetFullName() == "/time"
    assert d.GetIndexingVariable().GetFullName() == "/time"
    assert list(d.GetIndexingVariable().ReadAsArray()) == [0, 24, 48, 72, 96]


STRIDED_CASES = [
    ("rect_3d_monthly_f32", "t2m"),
    ("rect_rle_int16", None),
    ("rect_overhang_uint16", None),
    ("shard_rect_outer", None),
    ("shard_regular_zstd", None),
]


def case_arrays(case):
    c = load_case(case)
    return [e for e in c["arrays"] if len(e["shape"]) >= 1 and 0 not in e["shape"]]


@pytest.mark.parametrize("case,only", STRIDED_CASES)
def test_strided_and_reversed_reads_match_numpy(case, only):
    ds = open_md(CONFORMANCE / case / "store.zarr")
    for entry in case_arrays(case):
        if only and entry["path"] != only:
            continue
        ar = open_array(ds, entry["path"]) if entry["path"] else ds.GetRootGroup().OpenMDArray(
            ds.GetRootGroup().GetMDArrayNames()[0])
        full = ar.ReadAsArray()
        assert same(full, expected_array(case, entry))
        shape = full.shape
        rng = np.random.default_rng(len(shape) * 7 + shape[0])
        windows = []
        # whole array reversed on every axis
        windows.append(([s - 1 for s in shape], list(shape), [-1] * len(shape)))
        # step 2 / step 3 forward
        windows.append(([0] * len(shape), [(s + 1) // 2 for s in shape], [2] * len(shape)))
        windows.append(([1 % s for s in shape], [max(1, (s - 1) // 3) for s in shape],
                        [3] * len(shape)))
        for _ in range(6):
            start, count, step = [], [], []
            for s in shape:
                st = int(rng.integers(1, 4)) * (1 if rng.random() < 0.5 else -1)
                b = int(rng.integers(0, s))
                avail = b // -st + 1 if st < 0 else (s - 1 - b) // st + 1
                start.append(b)
                step.append(st)
                count.append(int(rng.integers(1, avail + 1)))
            windows.append((start, count, step))
        for start, count, step in windows:
            got = ar.ReadAsArray(array_start_idx=start, count=count, array_step=step)
            idx = [[b + k * st for k in range(c)] for b, c, st in zip(start, count, step)]
            want = full[np.ix_(*idx)]
            assert same(got, want), (case, entry["path"], start, count, step)


def test_read_with_buffer_strides_and_conversion():
    ds = open_md(CONFORMANCE / "shard_rect_outer" / "store.zarr")
    rg = ds.GetRootGroup()
    ar = rg.OpenMDArray(rg.GetMDArrayNames()[0])
    full = ar.ReadAsArray()
    assert full.ndim == 2
    h, w = full.shape
    dt = ar.GetDataType()
    # Column-major (transposed) buffer strides, reversed rows.
    raw = ar.Read(array_start_idx=[h - 1, 0], count=[h, w], array_step=[-1, 1],
                  buffer_stride=[1, h])
    got = np.frombuffer(raw, dtype=full.dtype).reshape(w, h).T
    assert same(got, full[::-1, :])
    # Conversion to Float64 with steps.
    raw = ar.Read(array_start_idx=[0, w - 1], count=[(h + 1) // 2, (w + 2) // 3],
                  array_step=[2, -3], buffer_datatype=gdal.ExtendedDataType.Create(gdal.GDT_Float64))
    got = np.frombuffer(raw, dtype=np.float64).reshape((h + 1) // 2, (w + 2) // 3)
    assert np.array_equal(got, full[::2, ::-3].astype(np.float64))
    assert dt.GetNumericDataType() != gdal.GDT_Float64


# ---------------------------------------------------------------- creation


def test_create_groups_dims_arrays_attributes(tmp_path):
    root = tmp_path / "new.zarr"
    drv = gdal.GetDriverByName("Zarr3")
    ds = drv.CreateMultiDimensional(str(root))
    rg = ds.GetRootGroup()
    for name, value in (("title", "created by test"), ("version", 3), ("ratio", 0.25)):
        if isinstance(value, str):
            a = rg.CreateAttribute(name, [], gdal.ExtendedDataType.CreateString())
        elif isinstance(value, int):
            a = rg.CreateAttribute(name, [], gdal.ExtendedDataType.Create(gdal.GDT_Int32))
        else:
            a = rg.CreateAttribute(name, [], gdal.ExtendedDataType.Create(gdal.GDT_Float64))
        a.Write(value)
    grp = rg.CreateGroup("forecast")
    t = grp.CreateDimension("time", "TEMPORAL", "", 10)
    y = grp.CreateDimension("lat", "HORIZONTAL_Y", "", 6)
    x = grp.CreateDimension("lon", "HORIZONTAL_X", "", 8)
    f64 = gdal.ExtendedDataType.Create(gdal.GDT_Float64)
    for d, vals in ((t, np.arange(10) * 1.0), (y, 45 - np.arange(6) * 10.0), (x, -175 + np.arange(8) * 10.0)):
        v = grp.CreateMDArray(d.GetName(), [d], f64)
        v.Write(vals)
        assert d.SetIndexingVariable(v)
    u16 = gdal.ExtendedDataType.Create(gdal.GDT_UInt16)
    data = grp.CreateMDArray("temp", [t, y, x], u16,
                             ["CHUNK_SHAPES=[[3,3,4],[4,2],8]", "COMPRESS=ZSTD"])
    assert data is not None
    assert data.SetNoDataValue(65535) == gdal.CE_None
    assert data.SetUnit("K") == gdal.CE_None
    assert data.SetScale(0.01) == gdal.CE_None and data.SetOffset(200.0) == gdal.CE_None
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(4326)
    assert data.SetSpatialRef(srs) == gdal.CE_None
    a = data.CreateAttribute("long_name", [], gdal.ExtendedDataType.CreateString())
    a.Write("air temperature")
    a = data.CreateAttribute("valid_range", [2], u16)
    a.Write([0, 40000])
    a = data.CreateAttribute("flags", [3], gdal.ExtendedDataType.CreateString())
    a.Write(["a", "b", "c"])
    vals = (np.arange(480, dtype=np.uint16) * 7).reshape(10, 6, 8)
    vals[2, 3, 4] = 65535
    assert data.Write(vals) == gdal.CE_None
    # partial, reversed and strided writes
    assert data.WriteArray(np.full((1, 2, 3), 9, dtype=np.uint16), array_start_idx=[9, 5, 7],
                           array_step=[1, -2, -3]) == gdal.CE_None
    vals[9, 5:2:-2, 7:0:-3] = 9
    ds = None

    j = json.loads((root / "forecast" / "temp" / "zarr.json").read_text())
    assert j["dimension_names"] == ["time", "lat", "lon"]
    assert j["fill_value"] == 65535
    assert j["data_type"] == "uint16"
    assert j["chunk_grid"]["name"] == "rectilinear"
    assert j["chunk_grid"]["configuration"]["chunk_shapes"] == [[[3, 2], 4], [4, 2], [8]]
    assert j["attributes"]["units"] == "K"
    assert j["attributes"]["scale_factor"] == 0.01
    assert j["attributes"]["add_offset"] == 200.0
    assert "proj:wkt2" in j["attributes"]
    assert j["attributes"]["valid_range"] == [0, 40000]
    assert j["attributes"]["flags"] == ["a", "b", "c"]
    rj = json.loads((root / "zarr.json").read_text())
    assert rj["attributes"] == {"title": "created by test", "version": 3, "ratio": 0.25}

    ds = open_md(root)
    rg = ds.GetRootGroup()
    assert rg.GetGroupNames() == ["forecast"]
    assert rg.GetAttribute("title").Read() == "created by test"
    assert rg.GetAttribute("version").Read() == 3
    grp = rg.OpenGroup("forecast")
    assert grp.GetMDArrayNames() == ["lat", "lon", "temp", "time"]
    temp = grp.OpenMDArray("temp")
    assert same(temp.ReadAsArray(), vals)
    assert temp.GetNoDataValueAsDouble() == 65535
    assert temp.GetUnit() == "K"
    assert temp.GetScale() == 0.01 and temp.GetOffset() == 200.0
    assert temp.GetSpatialRef().GetAuthorityCode(None) == "4326"
    assert list(temp.GetAttribute("valid_range").Read()) == [0, 40000]
    assert temp.GetAttribute("flags").Read() == ["a", "b", "c"]
    assert temp.GetAttribute("long_name").Read() == "air temperature"
    for d in temp.GetDimensions():
        assert d.GetIndexingVariable().GetName() == d.GetName()
    assert list(grp.OpenMDArray("lat").ReadAsArray()) == list(45 - np.arange(6) * 10.0)


def test_create_refuses_existing_store_and_bad_options(tmp_path):
    root = tmp_path / "x.zarr"
    drv = gdal.GetDriverByName("Zarr3")
    ds = drv.CreateMultiDimensional(str(root))
    rg = ds.GetRootGroup()
    d = rg.CreateDimension("d", "", "", 10)
    with pytest.raises(RuntimeError, match="CHUNK_SHAPES"):
        rg.CreateMDArray("bad", [d], gdal.ExtendedDataType.Create(gdal.GDT_Byte),
                         ["CHUNK_SHAPES=[[3,3]]"])
    assert not (root / "bad").exists()
    compound = gdal.ExtendedDataType.CreateCompound(
        "c", 4, [gdal.EDTComponent.Create("x", 0, gdal.ExtendedDataType.Create(gdal.GDT_Int32))])
    with pytest.raises(RuntimeError, match="compound"):
        rg.CreateMDArray("s", [d], compound)
    rg.CreateMDArray("ok", [d], gdal.ExtendedDataType.Create(gdal.GDT_Byte))
    with pytest.raises(RuntimeError, match="already exists"):
        rg.CreateGroup("ok")
    ds = None
    with pytest.raises(RuntimeError, match="already exists"):
        drv.CreateMultiDimensional(str(root))


def test_read_only_dataset_refuses_writes():
    ds = open_md(CONFORMANCE / "geo_group" / "store.zarr")
    rg = ds.GetRootGroup()
    with pytest.raises(RuntimeError, match="read-only"):
        rg.CreateGroup("nope")
    air = rg.OpenMDArray("air")
    with pytest.raises(RuntimeError, match="read-only"):
        air.Write(np.zeros((12, 18, 36), dtype=np.float32))


def test_update_mode_writes_and_attributes(tmp_path, copy_store):
    root = copy_store(CONFORMANCE / "geo_group" / "store.zarr", "geo.zarr")
    before = {p: p.read_bytes() for p in (root / "air" / "c").rglob("*") if p.is_file()}
    ds = open_md(root, update=True)
    rg = ds.GetRootGroup()
    air = rg.OpenMDArray("air")
    full = air.ReadAsArray()
    patch = np.full((1, 2, 2), 123.5, dtype=np.float32)
    assert air.WriteArray(patch, array_start_idx=[11, 0, 0]) == gdal.CE_None
    a = air.CreateAttribute("history", [], gdal.ExtendedDataType.CreateString())
    a.Write("patched")
    with pytest.raises(RuntimeError, match="fill"):
        air.SetNoDataValue(-1.0)
    ds = None
    full[11, 0:2, 0:2] = 123.5
    ds = open_md(root)
    air = ds.GetRootGroup().OpenMDArray("air")
    assert same(air.ReadAsArray(), full)
    assert air.GetAttribute("history").Read() == "patched"
    assert air.GetUnit() == "K"
    after = {p: p.read_bytes() for p in (root / "air" / "c").rglob("*") if p.is_file()}
    changed = [p.relative_to(root).as_posix() for p in before if before[p] != after[p]]
    assert changed == ["air/c/2/0/0"]  # only the chunk holding time 11, lat/lon 0..1


# ---------------------------------------------------------------- gdalmdimtranslate


def read_all(path):
    """{array full name: (numpy array, unit, nodata, dims, attrs)} of a store."""
    ds = open_md(path)
    out = {}

    def walk(g):
        for n in g.GetMDArrayNames() or []:
            a = g.OpenMDArray(n)
            attrs = {x.GetName(): x.Read() for x in (a.GetAttributes() or [])}
            out[a.GetFullName()] = (a.ReadAsArray(), a.GetUnit(), a.GetNoDataValueAsDouble(),
                                    [d.GetName() for d in (a.GetDimensions() or [])], attrs)
        for n in g.GetGroupNames() or []:
            walk(g.OpenGroup(n))

    walk(ds.GetRootGroup())
    return out


ROUND_TRIP_CASES = ["geo_group", "rect_3d_monthly_f32", "rect_rle_int16", "shard_rect_outer",
                    "rect_missing_chunks", "shard_sparse_fill", "transpose_bigendian"]


@pytest.mark.parametrize("case", ROUND_TRIP_CASES)
def test_gdalmdimtranslate_round_trip(case, tmp_path, run_tool):
    src = CONFORMANCE / case / "store.zarr"
    dst = tmp_path / "out.zarr"
    run_tool("gdalmdimtranslate", "-of", "Zarr3", src, dst, check=True)
    assert json.loads((dst / "zarr.json").read_text())["zarr_format"] == 3
    a, b = read_all(src), read_all(dst)
    assert set(a) == set(b)
    for name in a:
        va, vb = a[name], b[name]
        assert same(va[0], vb[0]), name
        assert va[1] == vb[1], name
        assert va[3] == vb[3], name
        for k, v in va[4].items():
            assert vb[4].get(k) == v, (name, k)


def test_gdalmdimtranslate_geo_group_keeps_crs_and_indexing(tmp_path, run_tool):
    dst = tmp_path / "geo.zarr"
    run_tool("gdalmdimtranslate", "-of", "Zarr3", CONFORMANCE / "geo_group" / "store.zarr", dst,
             check=True)
    info = json.loads(run_tool("gdalmdiminfo", dst, check=True).stdout)
    dims = {d["name"]: d for d in info["dimensions"]}
    assert {n: indexing_name(d) for n, d in dims.items()} == {
        "time": "/time", "lat": "/lat", "lon": "/lon"}
    assert info["arrays"]["air"]["unit"] == "K"
    assert info["arrays"]["air"]["srs"]["data_axis_to_srs_axis_mapping"] == [2, 3]


def time_edges(path):
    j = json.loads((path / "t2m" / "zarr.json").read_text())
    return j["chunk_grid"]


@pytest.mark.parametrize("options,grid,axis0", [
    (["BLOCKSIZE=100,9,12"], "regular", None),
    (["CHUNK_SHAPES=[[90,90,92,93],18,36]"], "rectilinear", [[90, 2], 92, 93]),
    (["CHUNK_SHAPES=[[[73,5]],[[9,2]],36]", "SHARD_CHUNK_SHAPE=73,9,12"], "rectilinear", [[73, 5]]),
])
def test_gdalmdimtranslate_rechunk_bit_exact(options, grid, axis0, tmp_path, run_tool):
    """A ragged monthly time axis rewritten with a regular or another rectilinear grid."""
    src = CONFORMANCE / "rect_3d_monthly_f32" / "store.zarr"
    assert time_edges(src)["name"] == "rectilinear"
    dst = tmp_path / "re.zarr"
    args = ["gdalmdimtranslate", "-of", "Zarr3"]
    for o in options:  # -co ARRAY:... reaches CreateMDArray on every GDAL version
        args += ["-co", "ARRAY:" + o]
    run_tool(*args, src, dst, check=True)
    g = time_edges(dst)
    assert g["name"] == grid
    if axis0 is not None:
        assert g["configuration"]["chunk_shapes"][0] == axis0
    else:
        assert g["configuration"]["chunk_shape"] == [100, 9, 12]
    a = open_md(src).GetRootGroup().OpenMDArray("t2m").ReadAsArray()
    b = open_md(dst).GetRootGroup().OpenMDArray("t2m").ReadAsArray()
    assert same(a, b)
    entry = load_case("rect_3d_monthly_f32")["arrays"][0]
    assert same(b, expected_array("rect_3d_monthly_f32", entry))
    if any(o.startswith("SHARD") for o in options):
        j = json.loads((dst / "t2m" / "zarr.json").read_text())
        assert j["codecs"][0]["name"] == "sharding_indexed"
        assert len([p for p in (dst / "t2m").rglob("*") if p.is_file()]) - 1 == 5 * 2


# ---------------------------------------------------------------- append


@pytest.mark.skipif(GDAL_NUM < 3070000,
                    reason=f"GDALMDArray::Resize needs GDAL >= 3.7 (running {gdal.__version__}); "
                           "core/tests/test_append.cpp covers appends on every version")
def test_resize_daily_append(tmp_path):
    root = tmp_path / "daily.zarr"
    ds = gdal.GetDriverByName("Zarr3").CreateMultiDimensional(str(root))
    rg = ds.GetRootGroup()
    t = rg.CreateDimension("time", "TEMPORAL", "", 59)
    y = rg.CreateDimension("y", "", "", 2)
    x = rg.CreateDimension("x", "", "", 3)
    ar = rg.CreateMDArray("v", [t, y, x], gdal.ExtendedDataType.Create(gdal.GDT_Float32),
                          ["CHUNK_SHAPES=[[31,28],2,3]"])
    ar.Write(np.arange(59 * 6, dtype=np.float32).reshape(59, 2, 3))
    ds = None
    chunk_files = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in (root / "v" / "c").rglob("*")
                   if p.is_file()}
    assert len(chunk_files) == 2

    ds = open_md(root, update=True)
    ar = ds.GetRootGroup().OpenMDArray("v")
    for day in range(59, 59 + 100):
        ar.Resize([day + 1, 2, 3])  # raises on failure (UseExceptions)
        assert ar.WriteArray(np.full((1, 2, 3), day, dtype=np.float32),
                             array_start_idx=[day, 0, 0]) == gdal.CE_None
    assert ar.GetDimensions()[0].GetSize() == 159
    ds = None
    j = json.loads((root / "v" / "zarr.json").read_text())
    assert j["shape"] == [159, 2, 3]
    assert j["chunk_grid"]["configuration"]["chunk_shapes"][0] == [31, 28, [1, 100]]
    for p, (data, mtime) in chunk_files.items():
        assert p.read_bytes() == data and p.stat().st_mtime_ns == mtime, p
    ar = open_md(root).GetRootGroup().OpenMDArray("v")
    got = ar.ReadAsArray()
    assert same(got[:59], np.arange(59 * 6, dtype=np.float32).reshape(59, 2, 3))
    assert np.all(got[59:] == np.arange(59, 159, dtype=np.float32)[:, None, None])

    # Shrinking keeps the edges.
    ds = open_md(root, update=True)
    ar = ds.GetRootGroup().OpenMDArray("v")
    ar.Resize([100, 2, 3])
    ds = None
    j = json.loads((root / "v" / "zarr.json").read_text())
    assert j["shape"] == [100, 2, 3]
    assert j["chunk_grid"]["configuration"]["chunk_shapes"][0] == [31, 28, [1, 100]]


def test_open_mdarray_with_a_full_name_resolves_from_the_root():
    """GDAL 3.13's gdalmdiminfo asks the root group for "/lat": a full name, resolved from
    the root (as OpenMDArrayFromFullname), never refused as a store key."""
    from pathlib import Path
    sample = Path(__file__).resolve().parent.parent / "data" / "daily_t2m_2023.zarr"
    gdal.UseExceptions()
    ds = gdal.OpenEx(str(sample), gdal.OF_MULTIDIM_RASTER, allowed_drivers=["Zarr3"])
    rg = ds.GetRootGroup()
    lat = rg.OpenMDArray("/lat")
    assert lat is not None and lat.GetFullName() == "/lat"
    assert lat.GetDimensions()[0].GetSize() == 32
    assert rg.OpenMDArray("/t2m").GetFullName() == "/t2m"
    with pytest.raises(RuntimeError, match="does not exist"):
        rg.OpenMDArray("/missing")
