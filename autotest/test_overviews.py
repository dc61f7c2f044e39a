"""Overviews as multiscales pyramids (zarr-conventions/multiscales v1).

- Read: a group whose `multiscales` attribute lists levels (array-based or
  group-based layout) opens as the full resolution raster with the coarser
  levels as overviews; RasterIO into a smaller buffer reads an overview;
  the multidimensional API still shows every level as an array.
- Write: gdaladdo / BuildOverviews and gdal_translate -co OVERVIEWS=AUTO
  write the levels beside the array with the multiscales and spatial:
  attributes; sharding and a rectilinear band axis carry over.
- Bad pyramids (paths leaving the group, missing or mismatched arrays,
  derivation cycles) give a warning naming the store and the problem, and
  the raster opens without overviews.
"""
import json
from pathlib import Path

import numpy as np
import pytest
from osgeo import gdal

MULTISCALES_UUID = "d35379db-88df-4056-af3a-620245f8e347"


# ------------------------------------------------------------------ hand-written stores


def write_array(root, path, values, dims=("y", "x"), attrs=None):
    """An uncompressed array of one chunk holding `values`."""
    d = Path(root) / path if path else Path(root)
    d.mkdir(parents=True, exist_ok=True)
    values = np.ascontiguousarray(values)
    meta = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": list(values.shape),
        "data_type": values.dtype.name,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(values.shape)}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "dimension_names": list(dims),
        "attributes": attrs or {},
    }
    (d / "zarr.json").write_text(json.dumps(meta))
    chunk = d / "c" / "/".join(["0"] * values.ndim)
    chunk.parent.mkdir(parents=True, exist_ok=True)
    chunk.write_bytes(values.astype(values.dtype.newbyteorder("<")).tobytes())


def write_group(root, path, attrs):
    d = Path(root) / path if path else Path(root)
    d.mkdir(parents=True, exist_ok=True)
    (d / "zarr.json").write_text(json.dumps({"zarr_format": 3, "node_type": "group", "attributes": attrs}))


def level(asset, derived_from=None, scale=None, shape=None):
    lv = {"asset": asset}
    if derived_from:
        lv["derived_from"] = derived_from
        lv["transform"] = {"scale": [scale, scale], "translation": [0.0, 0.0]}
    if shape:
        lv["spatial:shape"] = shape
    return lv


def multiscales(layout):
    return {
        "zarr_conventions": [{"uuid": MULTISCALES_UUID, "name": "multiscales"}],
        "multiscales": {"layout": layout, "resampling_method": "nearest"},
    }


def array_pyramid(tmp_path, layout=None, levels=((64, 1), (32, 2), (16, 4))):
    """Root group with arrays data (64x64, all 1), data_2 (32x32, all 2) and
    data_4 (16x16, all 4): each level's value is its factor."""
    root = tmp_path / "arr.zarr"
    names = {1: "data", 2: "data_2", 4: "data_4"}
    for n, f in levels:
        write_array(root, names[f], np.full((n, n), f, np.uint8))
    if layout is None:
        layout = [level("data", shape=[64, 64]), level("data_2", "data", 2.0, [32, 32]),
                  level("data_4", "data_2", 2.0, [16, 16])]
    write_group(root, "", multiscales(layout))
    return root


class Warnings:
    def __enter__(self):
        self.msgs = []
        gdal.PushErrorHandler(lambda cls, no, msg: self.msgs.append((cls, msg)))
        return self

    def __exit__(self, *exc):
        gdal.PopErrorHandler()
        return False

    def text(self):
        return "\n".join(m for c, m in self.msgs if c == gdal.CE_Warning)


def overview_summary(ds):
    b = ds.GetRasterBand(1)
    return [(b.GetOverview(i).XSize, b.GetOverview(i).YSize) for i in range(b.GetOverviewCount())]


# ------------------------------------------------------------------ read


def test_array_based_pyramid_opens_as_one_raster_with_overviews(tmp_path):
    ds = gdal.Open(str(array_pyramid(tmp_path)))
    assert (ds.RasterXSize, ds.RasterYSize) == (64, 64)
    assert ds.GetMetadata("SUBDATASETS") == {}
    assert overview_summary(ds) == [(32, 32), (16, 16)]
    b = ds.GetRasterBand(1)
    assert (b.ReadAsArray() == 1).all()
    assert (b.GetOverview(0).ReadAsArray() == 2).all()
    assert (b.GetOverview(1).ReadAsArray() == 4).all()


def test_smaller_buffer_reads_the_overview(tmp_path):
    ds = gdal.Open(str(array_pyramid(tmp_path)))
    b = ds.GetRasterBand(1)
    # Band and dataset RasterIO of the whole extent into 16x16 / 32x32.
    assert set(np.frombuffer(b.ReadRaster(0, 0, 64, 64, 16, 16), np.uint8)) == {4}
    assert set(np.frombuffer(ds.ReadRaster(0, 0, 64, 64, 32, 32), np.uint8)) == {2}
    assert set(np.frombuffer(b.ReadRaster(0, 0, 64, 64, 64, 64), np.uint8)) == {1}


def test_group_based_pyramid(tmp_path):
    root = tmp_path / "grp.zarr"
    for name, n in (("0", 40), ("1", 20), ("2", 10)):
        write_group(root, name, {})
        write_array(root, f"{name}/band1", np.full((n, n), int(name) + 10, np.int16))
        write_array(root, f"{name}/x", np.arange(n, dtype=np.float64), dims=("x",))
    layout = [level("0"), level("1", "0", 2.0, [20, 20]), level("2", "1", 2.0, [10, 10])]
    write_group(root, "", multiscales(layout))
    ds = gdal.Open(str(root))
    assert ds.GetMetadata("ZARR3")["ARRAY"] == "/0/band1"
    assert overview_summary(ds) == [(20, 20), (10, 10)]
    assert (ds.GetRasterBand(1).GetOverview(1).ReadAsArray() == 12).all()
    # A level opened by name has the coarser levels as its overviews.
    lvl = gdal.Open(f'ZARR3:"{root}":/1/band1')
    assert overview_summary(lvl) == [(10, 10)]
    assert (lvl.GetRasterBand(1).ReadAsArray() == 11).all()


def test_gdal_layout_level_groups_hold_an_array_named_like_the_base(tmp_path):
    """GDAL 3.13's gdaladdo layout: base array `data`, levels ovr_2x/data, ovr_4x/data."""
    root = tmp_path / "g.zarr"
    write_array(root, "data", np.full((64, 48), 1, np.uint16))
    for f in (2, 4):
        write_group(root, f"ovr_{f}x", {})
        write_array(root, f"ovr_{f}x/data", np.full((64 // f, 48 // f), f, np.uint16))
    layout = [{"asset": "data", "transform": {"scale": [1.0, 1.0]}},
              level("ovr_2x", "data", 2.0), level("ovr_4x", "ovr_2x", 2.0)]
    write_group(root, "", multiscales(layout))
    ds = gdal.Open(str(root))
    assert ds.GetMetadata("SUBDATASETS") == {}
    assert overview_summary(ds) == [(24, 32), (12, 16)]
    assert (ds.GetRasterBand(1).GetOverview(1).ReadAsArray() == 4).all()
    assert set(np.frombuffer(ds.ReadRaster(0, 0, 48, 64, 12, 16), np.uint16)) == {4}


def test_multidim_shows_every_level(tmp_path):
    ds = gdal.OpenEx(str(array_pyramid(tmp_path)), gdal.OF_MULTIDIM_RASTER)
    assert sorted(ds.GetRootGroup().GetMDArrayNames()) == ["data", "data_2", "data_4"]


def test_layout_order_does_not_matter_and_same_size_levels_are_skipped(tmp_path):
    layout = [level("data_4", "data_2", 2.0), level("data", shape=[64, 64]), level("data_2", "data", 2.0)]
    ds = gdal.Open(str(array_pyramid(tmp_path, layout=layout)))
    assert (ds.RasterXSize, ds.RasterYSize) == (64, 64)
    assert overview_summary(ds) == [(32, 32), (16, 16)]


# ------------------------------------------------------------------ bad pyramids

BAD = {
    "parent": ([level("data"), level("../data_2", "data", 2.0)], "not a relative path inside the group"),
    "absolute": ([level("data"), level("/data_2", "data", 2.0)], "is absolute"),
    "missing": ([level("data"), level("data_9", "data", 2.0)], "data_9"),
    "cycle": ([level("data"), level("data_2", "data_4", 2.0), level("data_4", "data_2", 2.0)], "cycle"),
    "unknown_source": ([level("data"), level("data_2", "nowhere", 2.0)], "no level"),
    "shape_mismatch": ([level("data"), level("data_2", "data", 2.0, [30, 30])], "spatial:shape"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_pyramid_warns_and_opens_without_overviews(tmp_path, case):
    layout, needle = BAD[case]
    root = array_pyramid(tmp_path, layout=layout)
    # By name: arrays the layout does not list as levels stay subdatasets of
    # the store (data_4 here, and data_2 when its entry is not a valid level).
    with Warnings() as w:
        ds = gdal.Open(f'ZARR3:"{root}":/data')
    assert (ds.RasterXSize, ds.RasterYSize) == (64, 64)
    assert ds.GetRasterBand(1).GetOverviewCount() == 0
    assert str(root) in w.text() and needle in w.text(), w.text()
    assert "without overviews" in w.text()
    assert (ds.GetRasterBand(1).ReadAsArray() == 1).all()


def test_level_with_another_type_or_larger_than_the_base_is_refused(tmp_path):
    root = array_pyramid(tmp_path)
    write_array(root, "data_2", np.full((32, 32), 2, np.int16))
    with Warnings() as w:
        ds = gdal.Open(str(root))
    assert ds.GetRasterBand(1).GetOverviewCount() == 0
    assert "data type int16" in w.text(), w.text()
    write_array(root, "data_2", np.full((80, 32), 2, np.uint8))
    with Warnings() as w:
        ds = gdal.Open(str(root))
    assert ds.GetRasterBand(1).GetOverviewCount() == 0
    assert "does not fit" in w.text(), w.text()


# ------------------------------------------------------------------ write


def source(w=100, h=60, bands=1, dtype=gdal.GDT_Byte):
    ds = gdal.GetDriverByName("MEM").Create("", w, h, bands, dtype)
    ds.SetGeoTransform([1000.0, 10.0, 0.0, 2000.0, 0.0, -10.0])
    for b in range(1, bands + 1):
        v = (np.arange(w * h).reshape(h, w) * (b + 3)) % 251
        ds.GetRasterBand(b).WriteArray(v)
    return ds


def reference_overviews(src, method, factors):
    """GDAL's own result of the same resampling on a MEM copy (averages may
    differ by one: GDAL derives a level from the full resolution or from the
    previous level depending on the code path)."""
    mem = gdal.GetDriverByName("MEM").CreateCopy("", src)
    mem.BuildOverviews(method, factors)
    b = mem.GetRasterBand(1)
    return [b.GetOverview(i).ReadAsArray().astype(int) for i in range(b.GetOverviewCount())]


def group_attrs(root):
    return json.loads((Path(root) / "zarr.json").read_text())["attributes"]


def test_gdaladdo_writes_levels_gdal_reads_back(tmp_path, run_tool):
    src = source()
    path = tmp_path / "a.zarr"
    gdal.Translate(str(path), src, format="Zarr3", creationOptions=["BLOCKSIZE=32,32"])
    p = run_tool("gdaladdo", "-r", "average", path, "2", "4")
    assert p.returncode == 0, p.stderr
    ds = gdal.Open(str(path))
    assert overview_summary(ds) == [(50, 30), (25, 15)]
    ref = reference_overviews(src, "AVERAGE", [2, 4])
    for i in range(2):  # GDAL's averages may round differently by one
        got = ds.GetRasterBand(1).GetOverview(i).ReadAsArray().astype(int)
        np.testing.assert_allclose(got, ref[i], atol=1)
        assert (got != ref[i]).mean() < 0.5
    attrs = group_attrs(path)
    layout = attrs["multiscales"]["layout"]
    # GDAL 3.13's layout: group ovr_<f>x holding an array named like the base,
    # each level derived from the previous one.
    assert [lv["asset"] for lv in layout] == ["a", "ovr_2x", "ovr_4x"]
    assert [lv.get("derived_from") for lv in layout] == [None, "a", "ovr_2x"]
    assert [lv["spatial:shape"] for lv in layout] == [[60, 100], [30, 50], [15, 25]]
    assert layout[2]["transform"]["scale"] == [2.0, 2.0]
    assert layout[2]["spatial:transform"] == [40.0, 0.0, 1000.0, 0.0, -40.0, 2000.0]
    assert layout[1]["resampling_method"] == "average"
    assert MULTISCALES_UUID in [c["uuid"] for c in attrs["zarr_conventions"]]
    assert attrs["spatial:dimensions"] == ["y", "x"]  # what spatial:shape counts (GDAL 3.13 checks it)
    assert json.loads((path / "ovr_4x" / "a" / "zarr.json").read_text())["shape"] == [15, 25]
    # Cleaning removes the levels and the attribute.
    assert run_tool("gdaladdo", "-clean", path).returncode == 0
    assert gdal.Open(str(path)).GetRasterBand(1).GetOverviewCount() == 0
    assert "multiscales" not in group_attrs(path)
    assert not (path / "ovr_2x").exists() and not (path / "ovr_4x").exists()


def test_build_overviews_python_keeps_sharding_and_rectilinear_bands(tmp_path):
    src = source(w=64, h=64, bands=3)
    path = tmp_path / "s.zarr"
    gdal.Translate(str(path), src, format="Zarr3",
                   creationOptions=["CHUNK_SHAPES=[[1,2],32,32]", "SHARD_CHUNK_SHAPE=1,16,16"])
    ds = gdal.Open(str(path), gdal.GA_Update)
    assert ds.BuildOverviews("NEAREST", [2, 4, 8]) == 0
    ds = None
    ds = gdal.Open(str(path))
    assert overview_summary(ds) == [(32, 32), (16, 16), (8, 8)]
    ref = reference_overviews(src, "NEAREST", [2, 4, 8])
    for i in range(3):
        np.testing.assert_array_equal(ds.GetRasterBand(1).GetOverview(i).ReadAsArray(), ref[i])
    layout = group_attrs(path)["multiscales"]["layout"]
    for lv in layout[1:]:
        meta = json.loads((path / lv["asset"] / "s" / "zarr.json").read_text())
        assert meta["codecs"][0]["name"] == "sharding_indexed"
        assert meta["chunk_grid"]["configuration"]["chunk_shapes"][0] == [1, 2]
        assert meta["shape"][0] == 3
    # Band 3's overview holds band 3's values.
    b3 = ds.GetRasterBand(3).GetOverview(0).ReadAsArray()
    np.testing.assert_array_equal(b3, src.GetRasterBand(3).ReadAsArray()[::2, ::2])


def test_build_overviews_read_only_fails(tmp_path):
    path = tmp_path / "r.zarr"
    gdal.Translate(str(path), source(), format="Zarr3")
    ds = gdal.Open(str(path))
    with pytest.raises(RuntimeError, match="read-only"):
        ds.BuildOverviews("NEAREST", [2])


def test_creation_option_overviews(tmp_path):
    src = source(w=64, h=64)
    auto = tmp_path / "auto.zarr"
    gdal.Translate(str(auto), src, format="Zarr3", creationOptions=["BLOCKSIZE=16,16", "OVERVIEWS=AUTO"])
    ds = gdal.Open(str(auto))
    assert overview_summary(ds) == [(32, 32), (16, 16)]
    ref = reference_overviews(src, "AVERAGE", [2, 4])
    np.testing.assert_allclose(ds.GetRasterBand(1).GetOverview(1).ReadAsArray().astype(int), ref[1], atol=1)

    counted = tmp_path / "n.zarr"
    gdal.Translate(str(counted), src, format="Zarr3",
                   creationOptions=["OVERVIEW_COUNT=3", "OVERVIEW_RESAMPLING=NEAREST"])
    ds = gdal.Open(str(counted))
    assert overview_summary(ds) == [(32, 32), (16, 16), (8, 8)]
    assert group_attrs(counted)["multiscales"]["layout"][1]["resampling_method"] == "nearest"

    none = tmp_path / "none.zarr"
    gdal.Translate(str(none), src, format="Zarr3", creationOptions=["OVERVIEWS=NONE"])
    assert gdal.Open(str(none)).GetRasterBand(1).GetOverviewCount() == 0

    with pytest.raises(RuntimeError, match="OVERVIEWS=SOME"):
        gdal.Translate(str(tmp_path / "bad.zarr"), src, format="Zarr3", creationOptions=["OVERVIEWS=SOME"])
