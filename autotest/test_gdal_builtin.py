"""Living beside GDAL's own Zarr driver, and interop with it both ways.

- The plugin serves every Zarr v3 store by default; `ZARR:` and Zarr v2 stay
  GDAL's (every GDAL version).
- `"fill_value": null` (written by GDAL's driver for arrays without nodata)
  reads as "no nodata" (every GDAL version, hand-written store).
- GDAL 3.13's driver writes Zarr v3 (ZSTD, BLOSC, shards, SPATIAL_PROJ,
  3-band stores, multidim with consolidated metadata): the plugin reads them
  with the values, georeferencing, nodata, dimensions and attributes GDAL
  itself reports; and GDAL 3.13 reads what the plugin writes.

The GDAL 3.13 cases skip on older GDAL, except where ZARR3_EXPECT_BUILTIN_V3=1
(the sid leg sets it) turns the skip into a failure, so that leg cannot pass
without running them.
"""
import json
import os

import numpy as np
import pytest
from osgeo import gdal, osr

def require_builtin_v3():
    if int(gdal.VersionInfo("VERSION_NUM")) >= 3130000 and gdal.GetDriverByName("Zarr"):
        return
    msg = f"GDAL {gdal.__version__}: GDAL's own Zarr v3 writer (3.13+) is not available"
    if os.environ.get("ZARR3_EXPECT_BUILTIN_V3") == "1":
        pytest.fail(msg + " but ZARR3_EXPECT_BUILTIN_V3=1")
    pytest.skip(msg)


def source_raster(bands=1, dtype=gdal.GDT_Float32, nodata=None, w=67, h=45):
    """An in-memory georeferenced raster with distinct values per pixel and band."""
    ds = gdal.GetDriverByName("MEM").Create("", w, h, bands, dtype)
    ds.SetGeoTransform([440720.0, 30.0, 0.0, 3751320.0, 0.0, -30.0])
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(32611)
    ds.SetSpatialRef(srs)
    for b in range(1, bands + 1):
        v = (np.arange(w * h, dtype=np.float64).reshape(h, w) * (b + 1) + b) % 250
        ds.GetRasterBand(b).WriteArray(v)
        if nodata is not None:
            ds.GetRasterBand(b).SetNoDataValue(nodata)
    return ds


def classic_view(ds):
    """What a GDAL user sees of a classic dataset."""
    srs = ds.GetSpatialRef()
    bands = [ds.GetRasterBand(i + 1) for i in range(ds.RasterCount)]
    return {
        "size": (ds.RasterXSize, ds.RasterYSize, ds.RasterCount),
        "gt": ds.GetGeoTransform(can_return_null=True),
        "srs": srs,
        "nodata": [b.GetNoDataValue() for b in bands],
        "types": [b.DataType for b in bands],
        "values": [b.ReadAsArray() for b in bands],
    }


def same_nodata(a, b):
    """Nodata values equal, None equal to None and NaN to NaN."""
    return (a is None and b is None) or (
        a is not None and b is not None and (a == b or (np.isnan(a) and np.isnan(b))))


def assert_same_classic(got, ref):
    assert got["size"] == ref["size"]
    assert got["types"] == ref["types"]
    assert len(got["nodata"]) == len(ref["nodata"])
    assert all(same_nodata(g, r) for g, r in zip(got["nodata"], ref["nodata"])), (got["nodata"], ref["nodata"])
    if ref["gt"] is None:
        assert got["gt"] is None
    else:
        assert got["gt"] == pytest.approx(ref["gt"], rel=0, abs=1e-9)
    if ref["srs"] is None:
        assert got["srs"] is None
    else:
        assert got["srs"] is not None and got["srs"].IsSame(ref["srs"]), got["srs"].ExportToWkt()
    for g, r in zip(got["values"], ref["values"]):
        np.testing.assert_array_equal(g, r)


def open_with(path, driver, flags=gdal.OF_RASTER):
    ds = gdal.OpenEx(str(path), flags, allowed_drivers=[driver])
    assert ds is not None, f"{driver} cannot open {path}"
    return ds


def array_paths(ds):
    """Subdataset array paths ("/b1", ...) of a classic dataset, or [""] when it is one raster."""
    sub = ds.GetMetadata("SUBDATASETS")
    names = [v for k, v in sub.items() if k.endswith("_NAME")]
    if not names:
        return [""]
    return sorted(n.rsplit(":", 1)[1] for n in names)


def compare_classic_stores(path):
    """Plugin vs GDAL's driver on every raster of a store."""
    ref_root = open_with(f'ZARR:"{path}"', "Zarr")
    got_root = gdal.Open(str(path))
    assert got_root.GetDriver().ShortName == "Zarr3"
    ref_paths, got_paths = array_paths(ref_root), array_paths(got_root)
    # GDAL lists a lone raster of a group as one subdataset (SPATIAL_PROJ stores);
    # the plugin opens it directly: the same raster either way.
    if len(ref_paths) == 1 and got_paths == [""]:
        got_paths = ref_paths
        got_root = open_with(f'ZARR3:"{path}":{ref_paths[0]}', "Zarr3")
    assert got_paths == ref_paths
    for p in ref_paths:
        ref = ref_root if p == "" else open_with(f'ZARR:"{path}":{p}', "Zarr")
        got = got_root if p in ("", ref_paths[0]) and len(ref_paths) == 1 else \
            open_with(f'ZARR3:"{path}":{p}', "Zarr3")
        assert_same_classic(classic_view(got), classic_view(ref))


def attr_values(obj):
    out = {}
    for a in obj.GetAttributes():
        v = a.Read()
        out[a.GetName()] = list(v) if isinstance(v, tuple) else v
    return out


def multidim_tree(path, driver):
    ds = open_with(path, driver, gdal.OF_MULTIDIM_RASTER)
    out = {}

    def walk(g, prefix):
        out[prefix + "/"] = {"attrs": attr_values(g)}
        for name in g.GetMDArrayNames() or []:
            a = g.OpenMDArray(name)
            srs = a.GetSpatialRef()
            out[prefix + "/" + name] = {
                "dims": [(d.GetName(), d.GetSize()) for d in a.GetDimensions()],
                "type": a.GetDataType().GetNumericDataType(),
                "attrs": attr_values(a),
                "nodata": a.GetNoDataValueAsDouble(),
                "unit": a.GetUnit(),
                "srs": srs,
                "axes": srs.GetDataAxisToSRSAxisMapping() if srs else None,
                "values": a.ReadAsArray(),
            }
        for name in g.GetGroupNames() or []:
            walk(g.OpenGroup(name), prefix + "/" + name)

    walk(ds.GetRootGroup(), "")
    return out


def gdal_only_artefacts(ref):
    """What GDAL 3.13's driver shows that is not in the store: a parent group's
    coordinate arrays again under each subgroup (/meteo/x for /x), and a
    default "spatial:registration" attribute the file does not hold."""
    extra = {k for k in ref if k.count("/") > 1 and not k.endswith("/")
             and "/" + k.rsplit("/", 1)[1] in ref and ref[k]["dims"][0][0] == k.rsplit("/", 1)[1]}
    return extra, {"spatial:registration"}


def assert_same_tree(got, ref):
    extra_arrays, extra_attrs = gdal_only_artefacts(ref)
    assert sorted(got) == sorted(set(ref) - extra_arrays)
    for k, r in ref.items():
        if k in extra_arrays:
            continue
        g = got[k]
        assert g["attrs"] == {a: v for a, v in r["attrs"].items() if a not in extra_attrs}, k
        if "values" in r:
            for field in ("dims", "type", "unit", "axes"):
                assert g[field] == r[field], (k, field)
            assert (g["srs"] is None) == (r["srs"] is None), k
            assert r["srs"] is None or g["srs"].IsSame(r["srs"]), (k, g["srs"].ExportToWkt())
            assert same_nodata(g["nodata"], r["nodata"]), (k, g["nodata"], r["nodata"])
            np.testing.assert_array_equal(g["values"], r["values"])


# ------------------------------------------------------------------ every GDAL


def test_v3_goes_to_plugin_zarr_prefix_and_v2_to_gdal(tmp_path):
    v3 = tmp_path / "v3.zarr"
    gdal.Translate(str(v3), source_raster(), format="Zarr3")
    assert gdal.Open(str(v3)).GetDriver().ShortName == "Zarr3"
    assert gdal.Open(str(v3 / "zarr.json")).GetDriver().ShortName == "Zarr3"
    v2 = tmp_path / "v2.zarr"
    gdal.Translate(str(v2), source_raster(), format="Zarr", creationOptions=["FORMAT=ZARR_V2"])
    ds = gdal.Open(str(v2))
    assert ds.GetDriver().ShortName == "Zarr"
    np.testing.assert_array_equal(ds.ReadAsArray(), source_raster().ReadAsArray())
    # ZARR: always reaches GDAL's driver, ZARR3: the plugin.
    assert gdal.Open(f'ZARR:"{v2}"').GetDriver().ShortName == "Zarr"
    drivers = [gdal.GetDriver(i).ShortName for i in range(gdal.GetDriverCount())]
    assert drivers.index("Zarr3") < drivers.index("Zarr")


def test_null_fill_value_is_no_nodata(tmp_path):
    """GDAL's driver writes "fill_value": null for arrays without nodata."""
    root = tmp_path / "null_fill.zarr"
    (root / "c" / "0").mkdir(parents=True)
    meta = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": [2, 4],
        "data_type": "uint8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 2]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": None,
        "codecs": [{"name": "bytes"}],
        "attributes": {},
        "dimension_names": ["y", "x"],
    }
    (root / "zarr.json").write_text(json.dumps(meta))
    (root / "c" / "0" / "0").write_bytes(bytes([0, 7, 0, 9]))  # chunk 0/1 is missing
    ds = gdal.Open(str(root))
    assert ds.GetDriver().ShortName == "Zarr3"
    assert ds.GetRasterBand(1).GetNoDataValue() is None
    np.testing.assert_array_equal(ds.ReadAsArray(), [[0, 7, 0, 0], [0, 9, 0, 0]])
    mds = gdal.OpenEx(f'ZARR3:"{root}"', gdal.OF_MULTIDIM_RASTER)
    arr = mds.GetRootGroup().OpenMDArray(mds.GetRootGroup().GetMDArrayNames()[0])
    assert arr.GetNoDataValueAsDouble() is None
    # An update keeps the null (no nodata appears by rewriting the metadata).
    ds = gdal.Open(str(root), gdal.GA_Update)
    ds.GetRasterBand(1).WriteArray(np.array([[1, 2, 3, 4], [5, 6, 7, 8]], dtype=np.uint8))
    ds.SetMetadataItem("note", "updated")
    ds = None
    assert json.loads((root / "zarr.json").read_text())["fill_value"] is None
    assert gdal.Open(str(root)).GetRasterBand(1).GetNoDataValue() is None


# ------------------------------------------------------------------ GDAL 3.13 writes, plugin reads

GDAL_WRITES = {
    "zstd": ["FORMAT=ZARR_V3", "COMPRESS=ZSTD"],
    "blosc": ["FORMAT=ZARR_V3", "COMPRESS=BLOSC"],
    "sharded": ["FORMAT=ZARR_V3", "COMPRESS=ZSTD", "BLOCKSIZE=32,32", "SHARD_CHUNK_SHAPE=16,16"],
    "spatial_proj": ["FORMAT=ZARR_V3", "GEOREFERENCING_CONVENTION=SPATIAL_PROJ"],
}


@pytest.mark.parametrize("case", sorted(GDAL_WRITES))
@pytest.mark.parametrize("nodata", [None, -9999.0])
def test_gdal313_written_raster_reads_the_same(tmp_path, case, nodata):
    require_builtin_v3()
    path = tmp_path / f"{case}.zarr"
    gdal.Translate(str(path), source_raster(nodata=nodata), format="Zarr",
                   creationOptions=GDAL_WRITES[case])
    compare_classic_stores(path)
    assert_same_tree(multidim_tree(f'ZARR3:"{path}"', "Zarr3"), multidim_tree(f'ZARR:"{path}"', "Zarr"))


@pytest.mark.parametrize("layout", [["SINGLE_ARRAY=NO"], ["INTERLEAVE=BAND"], ["INTERLEAVE=PIXEL"]])
def test_gdal313_written_three_bands_read_the_same(tmp_path, layout):
    require_builtin_v3()
    path = tmp_path / "rgb.zarr"
    gdal.Translate(str(path), source_raster(bands=3, dtype=gdal.GDT_Byte), format="Zarr",
                   creationOptions=["FORMAT=ZARR_V3", "COMPRESS=ZSTD"] + layout)
    compare_classic_stores(path)
    assert_same_tree(multidim_tree(f'ZARR3:"{path}"', "Zarr3"), multidim_tree(f'ZARR:"{path}"', "Zarr"))


def test_gdal313_black_rgb_pixels_are_not_nodata(tmp_path):
    """The reported bug: fill_value null made black pixels of an RGB image transparent."""
    require_builtin_v3()
    path = tmp_path / "rgb.zarr"
    src = source_raster(bands=3, dtype=gdal.GDT_Byte)
    gdal.Translate(str(path), src, format="Zarr", creationOptions=["FORMAT=ZARR_V3"])
    ds = gdal.Open(str(path))
    assert ds.GetDriver().ShortName == "Zarr3"
    assert [ds.GetRasterBand(i + 1).GetNoDataValue() for i in range(3)] == [None] * 3
    assert ds.GetRasterBand(1).GetMaskFlags() == gdal.GMF_ALL_VALID


def test_gdal313_multidim_consolidated_reads_the_same(tmp_path):
    require_builtin_v3()
    path = tmp_path / "md.zarr"
    ds = gdal.GetDriverByName("Zarr").CreateMultiDimensional(
        str(path), options=["FORMAT=ZARR_V3", "CREATE_CONSOLIDATED_METADATA=YES"])
    fill_gdal_cube(ds.GetRootGroup())
    ds = None  # GDAL writes the consolidated metadata when the last object is released
    root_meta = json.loads((path / "zarr.json").read_text())
    assert "consolidated_metadata" in root_meta, sorted(root_meta)
    assert_same_tree(multidim_tree(f'ZARR3:"{path}"', "Zarr3"), multidim_tree(f'ZARR:"{path}"', "Zarr"))


def fill_gdal_cube(rg):
    """time/y/x coordinates and a /meteo/temp cube with nodata, unit and an attribute."""
    rg.CreateAttribute("title", [], gdal.ExtendedDataType.CreateString()).Write("gdal 3.13 cube")
    t = rg.CreateDimension("time", "TEMPORAL", None, 3)
    y = rg.CreateDimension("y", "HORIZONTAL_Y", None, 5)
    x = rg.CreateDimension("x", "HORIZONTAL_X", None, 7)
    f64 = gdal.ExtendedDataType.Create(gdal.GDT_Float64)
    for dim, vals in ((t, [0, 1, 2]), (y, np.arange(5) * -10.0 + 100), (x, np.arange(7) * 10.0)):
        a = rg.CreateMDArray(dim.GetName(), [dim], f64)
        a.Write(np.asarray(vals, dtype=np.float64))
        dim.SetIndexingVariable(a)
    sub = rg.CreateGroup("meteo")
    v = sub.CreateMDArray("temp", [t, y, x], gdal.ExtendedDataType.Create(gdal.GDT_Float32),
                          ["BLOCKSIZE=1,3,4"])
    v.SetNoDataValueDouble(-1.0)
    v.SetUnit("K")
    v.CreateAttribute("long_name", [], gdal.ExtendedDataType.CreateString()).Write("temperature")
    v.Write(np.arange(3 * 5 * 7, dtype=np.float32).reshape(3, 5, 7))


# ------------------------------------------------------------------ plugin writes, GDAL 3.13 reads

PLUGIN_WRITES = {
    "regular": ["BLOCKSIZE=32,16", "COMPRESS=ZSTD"],
    "sharded": ["BLOCKSIZE=32,32", "SHARD_CHUNK_SHAPE=16,16", "COMPRESS=ZSTD"],
}


@pytest.mark.parametrize("case", sorted(PLUGIN_WRITES))
@pytest.mark.parametrize("bands", [1, 3])
def test_plugin_written_reads_the_same_in_gdal313(tmp_path, case, bands):
    require_builtin_v3()
    path = tmp_path / f"{case}.zarr"
    src = source_raster(bands=bands, nodata=-9999.0)
    gdal.Translate(str(path), src, format="Zarr3", creationOptions=PLUGIN_WRITES[case])
    ref = classic_view(src)
    got_plugin = classic_view(gdal.Open(str(path)))
    assert_same_classic(got_plugin, ref)
    gdal_ds = open_with(f'ZARR:"{path}"', "Zarr")
    paths = array_paths(gdal_ds)
    assert len(paths) == 1, paths  # GDAL lists the store's one raster as its subdataset
    if paths != [""]:
        gdal_ds = open_with(f'ZARR:"{path}":{paths[0]}', "Zarr")
    assert_same_classic(classic_view(gdal_ds), ref)


def test_gdal313_reads_a_daily_appended_store(tmp_path, run_tool):
    """Issue 40.4: one-day appends keep the grid regular, so GDAL's own driver reads a daily store
    after any number of appends (values and the time coordinate)."""
    require_builtin_v3()
    from test_append import build_cube, days_of, expected_day, meta
    store = build_cube(tmp_path, run_tool, 12)
    assert meta(store, "cube")["chunk_grid"]["name"] == "regular"
    rg = open_with(f'ZARR:"{store}"', "Zarr", gdal.OF_MULTIDIM_RASTER).GetRootGroup()
    data = rg.OpenMDArray("cube").ReadAsArray()
    assert data.shape == (12, 10, 20)
    for d in range(1, 13):
        np.testing.assert_array_equal(data[d - 1], expected_day(d))
    assert rg.OpenMDArray("time").ReadAsArray().tolist() == [days_of(d) for d in range(1, 13)]
