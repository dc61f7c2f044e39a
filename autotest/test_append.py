"""Time-series appends from gdal_translate (-co APPEND_DIM / APPEND_COORD), on every GDAL version:
whole-chunk appends keeping a regular grid, otherwise run-length merged chunk_shapes, the time coordinate extended, mismatches
refused, and a killed append (ZARR3_TEST_KILL_AT) leaving the store as it was."""
import datetime
import json
import os
import shutil

import numpy as np
import pytest
from osgeo import gdal, osr

DRV = "Zarr3"
EPOCH = datetime.date(1970, 1, 1)
# GDAL after 3.6 may delete an existing folder target before a copy (QuietDelete through the driver's
# Delete) unless APPEND_SUBDATASET=YES; GDAL 3.6 leaves folders alone and runs the plain command.
KEEP = [] if int(gdal.VersionInfo()) < 3070000 else ["APPEND_SUBDATASET=YES"]


def append_options(*opts):
    return ["APPEND_DIM=time", *opts, *KEEP]


def day_tif(path, day, dtype=gdal.GDT_Float32, gt=(100, 1, 0, 50, 0, -1), epsg=4326, size=(20, 10),
            with_date=True):
    """A GeoTIFF whose pixels are day*1000 + column, dated 2024-01-01 + day - 1."""
    ds = gdal.GetDriverByName("GTiff").Create(str(path), size[0], size[1], 1, dtype)
    ds.SetGeoTransform(gt)
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(epsg)
    ds.SetSpatialRef(srs)
    date = datetime.date(2024, 1, 1) + datetime.timedelta(days=day - 1)
    if with_date:
        ds.SetMetadataItem("TIFFTAG_DATETIME", date.strftime("%Y:%m:%d 00:00:00"))
    ds.GetRasterBand(1).WriteArray(expected_day(day, size))
    ds = None
    return path


def expected_day(day, size=(20, 10)):
    return (np.full((size[1], size[0]), day * 1000, np.float32) +
            np.arange(size[0], dtype=np.float32))


def days_of(day):
    return float(((datetime.date(2024, 1, 1) + datetime.timedelta(days=day - 1)) - EPOCH).days)


def append(run_tool, src, store, *extra, env_extra=None):
    keep = [a for k in KEEP for a in ("-co", k)]
    return run_tool("gdal_translate", "-q", "-of", DRV, "-co", "APPEND_DIM=time", *keep, *extra, src,
                    store, env_extra=env_extra)


def meta(store, name):
    return json.loads((store / name / "zarr.json").read_text())


def read_cube(store):
    ds = gdal.Open(str(store))
    return ds.ReadAsArray(), ds.RasterCount


def read_time(store):
    ds = gdal.OpenEx(str(store), gdal.OF_MULTIDIM_RASTER)
    return ds.GetRootGroup().OpenMDArray("time").ReadAsArray()


def build_cube(tmp_path, run_tool, days, store_name="cube.zarr"):
    """Daily appends through GDALTranslate (gdal_translate's library entry point, in process:
    the same QuietDelete + CreateCopy path as the command, without a process per day)."""
    store = tmp_path / store_name
    for d in range(1, days + 1):
        gdal.Translate(str(store), str(day_tif(tmp_path / f"d{d}.tif", d)), format=DRV,
                       creationOptions=append_options())
    return store


def test_forty_daily_appends_give_one_run_of_one_day_chunks(tmp_path, run_tool):
    store = build_cube(tmp_path, run_tool, 38)
    for d in (39, 40):  # and the command itself
        p = append(run_tool, day_tif(tmp_path / f"d{d}.tif", d), store)
        assert p.returncode == 0, p.stderr
    m = meta(store, "cube")
    assert m["shape"] == [40, 10, 20]
    assert m["dimension_names"] == ["time", "y", "x"]
    # Whole one-day chunks: the grid stays regular (issue 40.4).
    assert m["chunk_grid"] == {"name": "regular", "configuration": {"chunk_shape": [1, 10, 20]}}
    # One chunk per day, no other chunk files.
    assert sorted(p.name for p in (store / "cube" / "c").iterdir()) == sorted(str(i) for i in range(40))
    data, bands = read_cube(store)
    assert bands == 40
    for d in range(1, 41):
        np.testing.assert_array_equal(data[d - 1], expected_day(d))
    assert read_time(store).tolist() == [days_of(d) for d in range(1, 41)]
    assert meta(store, "time")["attributes"]["units"] == "days since 1970-01-01"
    assert meta(store, "time")["shape"] == [40]


def test_append_coord_option_and_sharded_store(tmp_path, run_tool):
    store = tmp_path / "s.zarr"
    for d in (1, 2, 3):
        p = append(run_tool, day_tif(tmp_path / f"d{d}.tif", d, with_date=False), store,
                   "-co", f"APPEND_COORD=2023-12-{28 + d}", "-co", "SHARD_CHUNK_SHAPE=1,5,10")
        assert p.returncode == 0, p.stderr
    m = meta(store, "s")
    assert m["chunk_grid"] == {"name": "regular", "configuration": {"chunk_shape": [1, 10, 20]}}
    assert m["codecs"][0]["name"] == "sharding_indexed"
    assert read_time(store).tolist() == [days_of(d) - 3 for d in (1, 2, 3)]
    data, _ = read_cube(store)
    np.testing.assert_array_equal(data[2], expected_day(3))


@pytest.mark.parametrize("kind", ["dtype", "size", "geotransform", "crs", "no_date"])
def test_mismatches_are_refused_naming_the_problem(tmp_path, run_tool, kind):
    store = build_cube(tmp_path, run_tool, 2)
    before = (store / "cube" / "zarr.json").read_text()
    args = {"dtype": dict(dtype=gdal.GDT_Int16), "size": dict(size=(21, 10)),
            "geotransform": dict(gt=(101, 1, 0, 50, 0, -1)), "crs": dict(epsg=32631),
            "no_date": dict(with_date=False)}[kind]
    p = append(run_tool, day_tif(tmp_path / "bad.tif", 3, **args), store)
    assert p.returncode != 0
    expect = {"dtype": "source band 1 is Int16, the array holds float32",
              "size": "the source is 21x10 pixels, the array 20x10",
              "geotransform": "the source's geotransform (101,", "crs": "the source's CRS (WGS 84 / UTM",
              "no_date": "no coordinate value for the new step"}[kind]
    assert expect in p.stderr, p.stderr
    assert str(store) in p.stderr or "cube.zarr" in p.stderr
    assert (store / "cube" / "zarr.json").read_text() == before
    assert read_cube(store)[1] == 2


def test_unknown_dimension_is_refused(tmp_path, run_tool):
    store = build_cube(tmp_path, run_tool, 1)
    p = run_tool("gdal_translate", "-q", "-of", DRV, "-co", "APPEND_DIM=level", "-co", "APPEND_SUBDATASET=YES",
                 day_tif(tmp_path / "x.tif", 2), store)
    assert p.returncode != 0 and "APPEND_DIM=level: no array has that dimension" in p.stderr


def test_append_on_vsimem_works(tmp_path):
    src = day_tif(tmp_path / "a.tif", 1)
    for d in (1, 2):
        gdal.Translate("/vsimem/ts.zarr", str(day_tif(tmp_path / f"v{d}.tif", d)), format=DRV,
                       creationOptions=append_options())
    ds = gdal.Open("/vsimem/ts.zarr")
    assert ds.RasterCount == 2
    np.testing.assert_array_equal(ds.ReadAsArray()[1], expected_day(2))
    ds = None
    gdal.GetDriverByName(DRV).Delete("/vsimem/ts.zarr")
    assert src.exists()


@pytest.mark.parametrize("step", ["append-chunks", "append-coord-chunks", "append-coord", "append-meta"])
def test_killed_append_leaves_old_or_new_store(tmp_path, run_tool, step):
    store = build_cube(tmp_path, run_tool, 3)
    p = append(run_tool, day_tif(tmp_path / "d4.tif", 4), store, env_extra={"ZARR3_TEST_KILL_AT": step})
    assert p.returncode == -9, (p.returncode, p.stderr)
    data, bands = read_cube(store)
    new = step == "append-meta"
    assert bands == (4 if new else 3)
    for d in range(1, bands + 1):
        np.testing.assert_array_equal(data[d - 1], expected_day(d))
    times = read_time(store).tolist()
    assert times[:bands] == [days_of(d) for d in range(1, bands + 1)]
    # The coordinate may hold the killed step's value past the array's end (in its zarr.json;
    # readers see the root's consolidated metadata, refreshed after the whole step, and with it
    # the old coordinate); the next append overwrites it and the store is consistent again.
    assert meta(store, "time")["shape"][0] == (4 if step in ("append-coord", "append-meta") else 3)
    assert len(times) == (4 if step == "append-meta" else 3)
    if not new:
        p = append(run_tool, day_tif(tmp_path / "d4b.tif", 4), store)
        assert p.returncode == 0, p.stderr
    p = append(run_tool, day_tif(tmp_path / "d5.tif", 5), store)
    assert p.returncode == 0, p.stderr
    data, bands = read_cube(store)
    assert bands == 5 and read_time(store).tolist() == [days_of(d) for d in range(1, 6)]
    np.testing.assert_array_equal(data[4], expected_day(5))
    assert meta(store, "cube")["chunk_grid"]["configuration"]["chunk_shape"][0] == 1
    shutil.rmtree(store)


def test_multiband_source_appends_one_chunk_of_its_bands(tmp_path, run_tool):
    store = build_cube(tmp_path, run_tool, 1)
    src = tmp_path / "two.tif"
    ds = gdal.GetDriverByName("GTiff").Create(str(src), 20, 10, 2, gdal.GDT_Float32)
    ds.SetGeoTransform((100, 1, 0, 50, 0, -1))
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(4326)
    ds.SetSpatialRef(srs)
    for b, d in ((1, 2), (2, 3)):
        ds.GetRasterBand(b).WriteArray(expected_day(d))
    ds = None
    p = append(run_tool, src, store, "-co", "APPEND_COORD=2024-01-02")
    assert p.returncode != 0 and "expected 2 value(s), one per source band" in p.stderr
    p = append(run_tool, src, store, "-co", "APPEND_COORD=2024-01-02,2024-01-03")
    assert p.returncode == 0, p.stderr
    assert meta(store, "cube")["chunk_grid"]["configuration"]["chunk_shape"][0] == 1  # two chunks of 1
    data, bands = read_cube(store)
    assert bands == 3
    for d in (1, 2, 3):
        np.testing.assert_array_equal(data[d - 1], expected_day(d))
    assert read_time(store).tolist() == [days_of(d) for d in (1, 2, 3)]


def multi_day_tif(path, first, n):
    ds = gdal.GetDriverByName("GTiff").Create(str(path), 20, 10, n, gdal.GDT_Float32)
    ds.SetGeoTransform((100, 1, 0, 50, 0, -1))
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(4326)
    ds.SetSpatialRef(srs)
    for b in range(n):
        ds.GetRasterBand(b + 1).WriteArray(expected_day(first + b))
    ds = None
    return path


def dates(first, n):
    return ",".join((datetime.date(2024, 1, 1) + datetime.timedelta(days=d - 1)).isoformat()
                    for d in range(first, first + n))


def test_appends_of_whole_chunks_keep_the_grid_regular(tmp_path, run_tool):
    """Issue 40.4: a store with time chunk 1 stays regular after any number of one-day appends
    (GDAL's own Zarr driver and zarr-python without the rectilinear flag read it); with time
    chunk 4, an append of 4 steps keeps it regular, one of 3 makes it rectilinear (an edge that
    really differs), written with every axis as a list (issue 40.5)."""
    store = build_cube(tmp_path, run_tool, 10)
    assert meta(store, "cube")["chunk_grid"] == {"name": "regular",
                                                 "configuration": {"chunk_shape": [1, 10, 20]}}
    data, bands = read_cube(store)
    assert bands == 10 and all(np.array_equal(data[d - 1], expected_day(d)) for d in range(1, 11))
    four = tmp_path / "four.zarr"
    for first, n in ((1, 4), (5, 4)):
        p = append(run_tool, multi_day_tif(tmp_path / f"m{first}.tif", first, n), four,
                   "-co", f"APPEND_COORD={dates(first, n)}",
                   *(["-co", "BLOCKSIZE=4,10,20"] if first == 1 else []))
        assert p.returncode == 0, p.stderr
        assert meta(four, "four")["chunk_grid"]["name"] == "regular", meta(four, "four")["chunk_grid"]
    assert meta(four, "four")["chunk_grid"]["configuration"]["chunk_shape"][0] == 4
    p = append(run_tool, multi_day_tif(tmp_path / "m9.tif", 9, 3), four, "-co", f"APPEND_COORD={dates(9, 3)}")
    assert p.returncode == 0, p.stderr
    grid = meta(four, "four")["chunk_grid"]
    assert grid == {"name": "rectilinear",
                    "configuration": {"kind": "inline", "chunk_shapes": [[[4, 2], 3], [10], [20]]}}, grid
    data, bands = read_cube(four)
    assert bands == 11 and all(np.array_equal(data[d - 1], expected_day(d)) for d in range(1, 12))
    assert read_time(four).tolist() == [days_of(d) for d in range(1, 12)]


def long_series(tmp_path, kind, steps=100_000):
    """An array [time, lat, lon] of `steps` steps of 2x2 float32 pixels, nodata -9999, no chunk
    stored (all fill value): a plain store, or an Icechunk repository copied from it."""
    plain = tmp_path / "long.zarr"
    ds = gdal.GetDriverByName(DRV).CreateMultiDimensional(str(plain))
    rg = ds.GetRootGroup()
    dims = [rg.CreateDimension(n, None, None, s) for n, s in (("time", steps), ("lat", 2), ("lon", 2))]
    a = rg.CreateMDArray("t2m", dims, gdal.ExtendedDataType.Create(gdal.GDT_Float32),
                         ["BLOCKSIZE=1,2,2"])
    a.SetNoDataValueDouble(-9999)
    ds = None
    if kind == "plain":
        return plain
    repo = tmp_path / "long.icechunk"
    gdal.MultiDimTranslate(str(repo), str(plain), format=DRV, creationOptions=["ICECHUNK=YES"])
    return repo


# Under the sanitize leg's ASan runtime 100,000 band objects take minutes: there the same rule is
# checked against a lower limit (ZARR3_MAX_BANDS=1000, 1,500 steps).
ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")
LONG_STEPS, BAND_LIMIT = (1_500, "1000") if ASAN else (100_000, None)


@pytest.mark.parametrize("kind", ["plain", "icechunk"])
def test_append_to_a_series_longer_than_the_band_limit(tmp_path, kind):
    """Issue 43: an append writes one step; an array of 100,000 steps (an hourly series of 11 years)
    is above the classic view's band limit (ZARR3_MAX_BANDS, 65536), which the append must not meet.
    Opening it in the classic view is still refused (the limit stays for views)."""
    gdal.SetConfigOption("ZARR3_MAX_BANDS", BAND_LIMIT)
    try:
        target = long_series(tmp_path, kind, LONG_STEPS)
        day = gdal.GetDriverByName("GTiff").Create(str(tmp_path / "day.tif"), 2, 2, 1, gdal.GDT_Float32)
        day.GetRasterBand(1).WriteArray(np.array([[1, 2], [3, 4]], np.float32))
        day = None
        gdal.UseExceptions()
        out = gdal.Translate(str(target), str(tmp_path / "day.tif"), format=DRV,
                             creationOptions=append_options())
        assert out is not None
        out = None
        ds = gdal.OpenEx(str(target), gdal.OF_MULTIDIM_RASTER)
        a = ds.GetRootGroup().OpenMDArray("t2m")
        assert [d.GetSize() for d in a.GetDimensions()] == [LONG_STEPS + 1, 2, 2]
        got = a.ReadAsArray(array_start_idx=[LONG_STEPS - 1, 0, 0], count=[2, 2, 2])
        assert np.array_equal(got[1], [[1, 2], [3, 4]]) and np.all(got[0] == -9999), got
        with pytest.raises(RuntimeError, match="ZARR3_MAX_BANDS"):
            gdal.OpenEx(str(target) if kind == "icechunk" else f'ZARR3:"{target}":/t2m', gdal.OF_RASTER)
    finally:
        gdal.SetConfigOption("ZARR3_MAX_BANDS", None)
