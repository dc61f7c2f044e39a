"""rioxarray (Debian python3-rioxarray 0.13, on rasterio and the system GDAL) opens stores the
plugin writes: a 2-D raster and a 3-band raster (plain path and ZARR3: name, regular and
rectilinear + sharded), with the right bands, CRS, transform, coordinates, nodata and values;
a store with two data variables opens as an xarray Dataset of those two variables only.

Regression guard of issue 17: rioxarray opened every subdataset a dataset lists, and the
plugin listed every array of the store, the opened array itself included, so open_rasterio
recursed until RecursionError. A dataset that is one raster now lists no subdatasets, and a
store's list names its data arrays only (no x/y/spatial_ref).

The archive `zarr3 virtualize` writes from 4 monthly NetCDF-4 files opens like those files opened
through the netCDF driver and concatenated (issue 42).

Skipped when rioxarray is not installed (scripts/install-apps.sh installs it).
"""
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

# GDAL registers its drivers (and the plugins on GDAL_DRIVER_PATH) once per process.
os.environ.setdefault("GDAL_DRIVER_PATH", str(Path(__file__).resolve().parent.parent / "build"))

rioxarray = pytest.importorskip("rioxarray")
import xarray  # noqa: E402
from osgeo import gdal  # noqa: E402

from app_stores import geotiff as make_geotiff, two_variable_store  # noqa: E402
from icechunk_samples import DATA, between, days_and_qc, history, zarr3_log  # noqa: E402
from virtual_months import virtual_months_archive  # noqa: E402

gdal.UseExceptions()

W, H, NB = 300, 256, 3
NODATA = -9999.0
EPSG = 32631
GT = (500000.0, 30.0, 0.0, 4000000.0, 0.0, -30.0)


def pattern(nb):
    y, x = np.mgrid[0:H, 0:W].astype(np.float32)
    a = np.stack([0.5 * x + y + 250.0 * (((x // 50) + (y // 32)) % 2) + 1000.0 * b for b in range(nb)])
    a = a.astype(np.float32)
    a[-1, 100:120, 10:40] = NODATA
    return a


def geotiff(path, nb):
    make_geotiff(path, pattern(nb), GT, EPSG, NODATA)


STORES = {
    # name: (bands, creation options)
    "plain1": (1, []),
    "plain3": (3, []),
    "rect1": (1, ["-co", "CHUNK_SHAPES=[[128,64,64],[100,200]]", "-co", "SHARD_CHUNK_SHAPE=64,50"]),
    "rect3": (3, ["-co", "CHUNK_SHAPES=[[1,2],[128,64,64],[100,200]]", "-co", "SHARD_CHUNK_SHAPE=1,64,50"]),
}


@pytest.fixture(scope="module")
def stores(tmp_path_factory, driver_path):
    d = tmp_path_factory.mktemp("rioxarray")
    out = {}
    for nb in (1, 3):
        geotiff(d / f"src{nb}.tif", nb)
    env = dict(os.environ, GDAL_DRIVER_PATH=driver_path)
    for name, (nb, co) in STORES.items():
        store = d / f"{name}.zarr"
        subprocess.run(["gdal_translate", "-q", "-of", "Zarr3", *co, "-co", "ARRAY_NAME=data",
                        str(d / f"src{nb}.tif"), str(store)], env=env, check=True, timeout=120)
        out[name] = store
    return out


@pytest.mark.parametrize("uri", [False, True], ids=["path", "ZARR3-name"])
@pytest.mark.parametrize("name", list(STORES))
def test_open_rasterio_bands_crs_values(stores, name, uri):
    nb = STORES[name][0]
    store = stores[name]
    src = f'ZARR3:"{store}":/data' if uri else str(store)
    # The dataset that is one raster lists no subdatasets: the cause of the RecursionError.
    assert gdal.Open(src).GetSubDatasets() == []
    with rioxarray.open_rasterio(src) as da:
        assert isinstance(da, xarray.DataArray), type(da)
        assert da.dims == ("band", "y", "x") and da.shape == (nb, H, W)
        assert list(da["band"].values) == list(range(1, nb + 1))
        assert da.dtype == np.float32
        assert da.rio.crs.to_epsg() == EPSG
        assert tuple(da.rio.transform().to_gdal()) == GT
        assert da.rio.nodata == NODATA
        # Cell-centre coordinates from the geotransform.
        assert np.allclose(da["x"].values, GT[0] + (np.arange(W) + 0.5) * GT[1])
        assert np.allclose(da["y"].values, GT[3] + (np.arange(H) + 0.5) * GT[5])
        exp = pattern(nb)
        assert np.array_equal(da.values, exp)
        # A window through xarray indexing (crosses chunk and shard edges of the rect stores).
        assert np.array_equal(da.isel(y=slice(101, 161), x=slice(37, 167)).values, exp[:, 101:161, 37:167])
    with rioxarray.open_rasterio(src, masked=True) as m:
        assert int(np.isnan(m.values).sum()) == 20 * 30
        assert np.isnan(m.values[-1, 100:120, 10:40]).all()


def test_open_rasterio_two_variable_store_is_a_dataset(tmp_path):
    """Two data arrays sharing y/x coordinates: a Dataset of a and b (no x, y, spatial_ref)."""
    store = tmp_path / "two.zarr"
    values = two_variable_store(store, EPSG)

    subs = [s[0] for s in gdal.Open(str(store)).GetSubDatasets()]
    assert subs == [f'ZARR3:"{store}":/a', f'ZARR3:"{store}":/b']
    r = rioxarray.open_rasterio(str(store))
    try:
        assert isinstance(r, xarray.Dataset), type(r)
        assert sorted(r.data_vars) == ["a", "b"]
        for n, v in values.items():
            assert r[n].shape == (1, 20, 30)
            assert np.array_equal(r[n].values[0], v)
            assert r[n].rio.crs.to_epsg() == EPSG
            assert tuple(r[n].rio.transform().to_gdal()) == (1000.0, 10.0, 0.0, 2000.0, 0.0, -10.0)
    finally:
        r.close()


def test_to_raster_from_a_geotiff_dataarray_round_trips(tmp_path):
    """`da.rio.to_raster("x.zarr", driver="Zarr3")` on a DataArray opened from a GeoTIFF: rioxarray passes the
    source's GeoTIFF settings on (COMPRESS=deflate, BLOCKXSIZE/BLOCKYSIZE, TILED, INTERLEAVE); the store is
    written with the deflate (gzip) codec and square chunks and reads back equal (issue 32, part 1)."""
    tif = tmp_path / "src.tif"
    gdal.Translate(str(tif), gdal.Open(str(_src_tif(tmp_path))),
                   creationOptions=["COMPRESS=DEFLATE", "TILED=YES", "BLOCKXSIZE=128", "BLOCKYSIZE=128"])
    out = tmp_path / "x.zarr"
    with rioxarray.open_rasterio(str(tif)) as da:
        da.rio.to_raster(str(out), driver="Zarr3")
        expected = da.values.copy()
    import json
    meta = json.loads((out / "data" / "zarr.json").read_text())  # x.zarr: the default name is "data"
    assert meta["chunk_grid"]["configuration"]["chunk_shape"][-2:] == [128, 128]
    assert any(c["name"] == "gzip" for c in meta["codecs"])
    with rioxarray.open_rasterio(str(out)) as back:
        assert back.rio.crs.to_epsg() == EPSG
        assert tuple(back.rio.transform().to_gdal()) == GT
        assert np.array_equal(back.values, expected)


def _src_tif(d):
    p = d / "pattern.tif"
    geotiff(p, 3)
    return p


def test_time_axis_is_a_datetime_dimension():
    """A band axis with a CF time coordinate opens as a `time` dimension with datetime values (through the
    NETCDF_DIM_* metadata rioxarray reads), so `sel(time=...)` works (issue 32, part)."""
    sample = Path(__file__).resolve().parent.parent / "data" / "daily_t2m_2023.zarr"
    with rioxarray.open_rasterio(str(sample)) as da:
        assert da.dims[0] == "time" and da.sizes["time"] == 365
        # datetime64, or cftime dates (xarray's choice for this calendar and version): both select by date
        first = da["time"].values[0]
        assert np.issubdtype(da["time"].dtype, np.datetime64) or type(first).__module__.startswith("cftime")
        assert str(first)[:10] == "2023-01-01"
        day = da.sel(time="2023-02-01")
        ds = gdal.Open(str(sample))
        expected = ds.GetRasterBand(32).ReadAsArray()
        assert np.array_equal(np.squeeze(day.values), expected)


@pytest.fixture(scope="module")
def q1(tmp_path_factory):
    """A copy of data/t2m_2023q1.icechunk (nothing is written into data/)."""
    import shutil

    repo = tmp_path_factory.mktemp("q1") / "t2m_2023q1.icechunk"
    shutil.copytree(DATA / "t2m_2023q1.icechunk", repo)
    return repo


def q1_version(exe, q1, which):
    """(open options, snapshot id, days) of a version of the sample, the ids and times from `zarr3 log`."""
    main = history(zarr3_log(exe, q1))
    qc = history(zarr3_log(exe, q1, "qc"))
    march, feb, jan = main[0], main[1], main[2]
    assert [days_and_qc(c.message) for c in (march, feb, jan)] == [(90, False), (59, False), (31, False)]
    assert days_and_qc(qc[0].message) == (90, True) and qc[1].id == march.id
    return {
        "default": ({}, march.id, 90),
        "tag": ({"TAG": "january"}, jan.id, 31),
        "branch": ({"BRANCH": "qc"}, qc[0].id, 90),
        "snapshot": ({"SNAPSHOT": feb.id}, feb.id, 59),
        # branch qc as of a time between January and February: January, the first commit qc shares
        "branch_as_of": ({"BRANCH": "qc", "AS_OF": between(jan, feb)}, jan.id, 31),
    }[which]


@pytest.mark.parametrize("which", ["default", "tag", "branch", "snapshot", "branch_as_of"])
def test_icechunk_repository_versions(exe, q1, which):
    """An Icechunk repository opens in rioxarray like a store, at the version its open options choose
    (BRANCH=, TAG=, SNAPSHOT=, BRANCH= with AS_OF=), with its dates on a `time` dimension, and all the days
    of that version equal GDAL's read of the same version (issue 29)."""
    opts, sid, days = q1_version(exe, q1, which)
    with rioxarray.open_rasterio(str(q1), **{k.lower(): v for k, v in opts.items()}) as da:
        assert da.dims == ("time", "y", "x") and da.shape == (days, 32, 64), (da.dims, da.shape)
        last = {31: "2023-01-31", 59: "2023-02-28", 90: "2023-03-31"}[days]
        assert str(da["time"].values[0])[:10] == "2023-01-01" and str(da["time"].values[-1])[:10] == last
        assert da.rio.crs.to_epsg() == 4326
        ds = gdal.OpenEx(str(q1), gdal.OF_RASTER, open_options=[f"{k}={v}" for k, v in opts.items()])
        assert ds.GetMetadataItem("SNAPSHOT_ID", "ICECHUNK") == sid and ds.RasterCount == days
        want = ds.ReadAsArray()
        got = da.values
        assert got.dtype == want.dtype == np.float32 and got.shape == want.shape
        assert got.tobytes() == want.tobytes(), f"{opts}: {np.count_nonzero(got != want)} values differ"
        day = da.sel(time="2023-01-15")
        assert np.array_equal(np.squeeze(day.values), ds.GetRasterBand(15).ReadAsArray())


# ------------------------------------------------------------------ zarr3 virtualize (issue 42, done-when)
@pytest.fixture(scope="module")
def virtual_months(tmp_path_factory, exe):
    """The done-when archive (virtual_months.virtual_months_archive) in this module's folder."""
    return virtual_months_archive(tmp_path_factory.mktemp("virtual_months"), exe)


@pytest.mark.parametrize("mask_and_scale", [False, True])
@pytest.mark.parametrize("var", ["t2m", "sp", "tp"])
def test_virtualized_months_in_rioxarray(virtual_months, var, mask_and_scale):
    """Each array of the archive `zarr3 virtualize` writes opens in rioxarray like the 4 files opened
    through GDAL's netCDF driver and concatenated on time: the same dates (datetime values), transform,
    CRS, nodata and packing (scale_factor, add_offset, _FillValue), and the same values, packed
    (mask_and_scale=False) and physical (True: sp unpacked, fill values masked)."""
    repo, files = virtual_months
    with rioxarray.open_rasterio(f'ZARR3:"{repo}":/{var}', mask_and_scale=mask_and_scale) as da:
        parts = [rioxarray.open_rasterio(f'NETCDF:"{f}":{var}', mask_and_scale=mask_and_scale) for f in files]
        try:
            want = xarray.concat(parts, dim="time")
            assert da.dims == want.dims == ("time", "y", "x") and da.shape == want.shape == (120, 20, 40)
            assert da.dtype == want.dtype, (da.dtype, want.dtype)
            np.testing.assert_array_equal(da["time"].values, want["time"].values)
            assert str(da["time"].values[31])[:19] == "2023-02-01 12:00:00"
            np.testing.assert_array_equal(da["x"].values, want["x"].values)
            np.testing.assert_array_equal(da["y"].values, want["y"].values)
            assert da.rio.transform() == want.rio.transform()
            assert da.rio.crs == want.rio.crs and da.rio.crs.to_epsg() == 4326
            assert da.rio.nodata == parts[0].rio.nodata or (np.isnan(da.rio.nodata) and np.isnan(parts[0].rio.nodata))
            assert da.rio.encoded_nodata == parts[0].rio.encoded_nodata
            for key in ("scale_factor", "add_offset", "_FillValue", "dtype"):
                assert da.encoding.get(key) == parts[0].encoding.get(key), key
            got, exp = da.values, want.values
            assert got.tobytes() == exp.tobytes() or np.array_equal(got, exp, equal_nan=True), \
                f"{var}: {np.count_nonzero(got != exp)} values differ"
            if mask_and_scale and var == "sp":
                assert got.dtype == np.float32 and np.nanmin(got) > 80000  # physical Pa, not packed counts
        finally:
            for p in parts:
                p.close()
