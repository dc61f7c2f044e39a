"""Appends keep what the values mean (issue 40 points 1 and 2): a source whose band scale/offset
(CF scale_factor/add_offset, a packed int16 NetCDF) or nodata differ from the array's is converted
into the array's packing exactly (nodata mapped to the array's nodata), refused naming both sides
and -co APPEND_REPACK=NEAREST when a value lies between two steps of the array's packing, refused
when a value does not fit; units that differ are refused. A refused append writes nothing."""
import numpy as np
import pytest
from osgeo import gdal, osr

from test_append import append, meta, read_time

DRV = "Zarr3"
W, H = 8, 4


def packed(path, physical, scale, offset, nodata, holes=(), fmt="GTiff", unit=None):
    """An Int16 raster holding `physical` (K) packed with scale/offset, `holes` pixels nodata."""
    raw = np.round((np.asarray(physical, np.float64) - offset) / scale).astype(np.int16)
    for (y, x) in holes:
        raw[y, x] = nodata
    mem = gdal.GetDriverByName("MEM").Create("", W, H, 1, gdal.GDT_Int16)
    mem.SetGeoTransform((0, 1, 0, H, 0, -1))
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(4326)
    mem.SetSpatialRef(srs)
    b = mem.GetRasterBand(1)
    b.WriteArray(raw)
    b.SetScale(scale)
    b.SetOffset(offset)
    if nodata is not None:
        b.SetNoDataValue(nodata)
    if unit:
        b.SetUnitType(unit)
    gdal.GetDriverByName(fmt).CreateCopy(str(path), mem)
    return path


def field(base=285.0):
    return np.full((H, W), base) + np.arange(W) * 0.5


def first(run_tool, tmp_path, src):
    store = tmp_path / "s.zarr"
    p = append(run_tool, src, store, "-co", "APPEND_COORD=2024-01-01")
    assert p.returncode == 0, p.stderr
    return store


def physical(store, band):
    ds = gdal.Open(str(store))
    b = ds.GetRasterBand(band)
    raw = b.ReadAsArray().astype(np.float64)
    return raw, raw * (b.GetScale() or 1.0) + (b.GetOffset() or 0.0), b.GetNoDataValue()


@pytest.mark.parametrize("fmt", ["netCDF", "GTiff"])
def test_other_packing_and_nodata_are_converted_exactly(tmp_path, run_tool, fmt):
    ext = ".nc" if fmt == "netCDF" else ".tif"
    store = first(run_tool, tmp_path, packed(tmp_path / f"d1{ext}", field(), 0.001, 280, -9999, fmt=fmt))
    src = packed(tmp_path / f"d2{ext}", field(), 0.002, 270, -32768, holes=[(1, 2), (3, 7)], fmt=fmt)
    ds = gdal.Open(str(src))
    assert ds.GetRasterBand(1).GetScale() == 0.002 and ds.GetRasterBand(1).GetOffset() == 270
    ds = None
    p = append(run_tool, src, store, "-co", "APPEND_COORD=2024-01-02")
    assert p.returncode == 0, p.stderr
    raw, value, nodata = physical(store, 2)
    assert nodata == -9999
    assert raw[1, 2] == -9999 and raw[3, 7] == -9999  # the source's nodata is the array's nodata
    want = field()
    mask = raw != -9999
    assert mask.sum() == W * H - 2
    np.testing.assert_allclose(value[mask], want[mask], atol=1e-9)  # 285.0 stays 285.0, not 287.5
    assert read_time(store).size == 2


def test_rounding_is_refused_naming_both_sides_then_nearest_rounds(tmp_path, run_tool):
    store = first(run_tool, tmp_path, packed(tmp_path / "d1.tif", field(), 0.002, 270, -9999))
    before = (store / "s" / "zarr.json").read_text()
    fine = field() + 0.001  # 0.001 steps: half of them between two 0.002 steps
    src = packed(tmp_path / "d2.tif", fine, 0.001, 280, -9999)
    p = append(run_tool, src, store, "-co", "APPEND_COORD=2024-01-02")
    assert p.returncode != 0
    for part in ("source band 1", "scale 0.001, offset 280", "scale 0.002, offset 270",
                 "-co APPEND_REPACK=NEAREST", "nothing was appended"):
        assert part in p.stderr, p.stderr
    assert (store / "s" / "zarr.json").read_text() == before
    assert sorted(x.name for x in (store / "s" / "c").iterdir()) == ["0"]
    p = append(run_tool, src, store, "-co", "APPEND_COORD=2024-01-02", "-co", "APPEND_REPACK=NEAREST")
    assert p.returncode == 0, p.stderr
    _, value, _ = physical(store, 2)
    assert np.abs(value - fine).max() <= 0.001 + 1e-9  # within half a step of the array's packing


def test_values_that_do_not_fit_are_refused(tmp_path, run_tool):
    store = first(run_tool, tmp_path, packed(tmp_path / "d1.tif", field(), 0.001, 280, -9999))
    hot = field(320.0)  # 320 K: raw 40000 at 0.001/280, past int16
    p = append(run_tool, packed(tmp_path / "d2.tif", hot, 0.01, 300, -9999), store,
               "-co", "APPEND_COORD=2024-01-02")
    assert p.returncode != 0 and "out of range" in p.stderr, p.stderr
    assert gdal.Open(str(store)).RasterCount == 1


def test_nodata_only_differs(tmp_path, run_tool):
    store = first(run_tool, tmp_path, packed(tmp_path / "d1.tif", field(), 1, 0, -9999))
    p = append(run_tool, packed(tmp_path / "d2.tif", field(), 1, 0, -32768, holes=[(0, 0)]), store,
               "-co", "APPEND_COORD=2024-01-02")
    assert p.returncode == 0, p.stderr
    raw, _, _ = physical(store, 2)
    assert raw[0, 0] == -9999 and raw[0, 1] == 286  # 285.5 rounded at packing
    assert (raw != -9999).sum() == W * H - 1


def test_source_nodata_without_array_nodata_is_refused(tmp_path, run_tool):
    store = first(run_tool, tmp_path, packed(tmp_path / "d1.tif", field(), 1, 0, None))
    p = append(run_tool, packed(tmp_path / "d2.tif", field(), 1, 0, -32768, holes=[(0, 0)]), store,
               "-co", "APPEND_COORD=2024-01-02")
    assert p.returncode != 0
    assert "nodata -32768 has no counterpart: the array has no nodata" in p.stderr, p.stderr
    assert gdal.Open(str(store)).RasterCount == 1


def test_other_units_are_refused(tmp_path, run_tool):
    store = first(run_tool, tmp_path, packed(tmp_path / "d1.tif", field(), 0.001, 280, -9999, unit="K"))
    p = append(run_tool, packed(tmp_path / "d2.tif", field() - 273.15, 0.001, 10, -9999, unit="degC"),
               store, "-co", "APPEND_COORD=2024-01-02")
    assert p.returncode != 0
    assert 'source band 1 is in units "degC", the array in "K"' in p.stderr, p.stderr
    assert gdal.Open(str(store)).RasterCount == 1
    assert meta(store, "s")["shape"][0] == 1


def test_append_repack_needs_append_dim(tmp_path):
    src = packed(tmp_path / "d1.tif", field(), 1, 0, None)
    with pytest.raises(RuntimeError, match="creation option APPEND_REPACK needs APPEND_DIM"):
        gdal.Translate(str(tmp_path / "o.zarr"), str(src), format=DRV,
                       creationOptions=["APPEND_REPACK=NEAREST"])
