"""rasterio (Debian python3-rasterio, built on the system GDAL): opens a
rectilinear, sharded, georeferenced Zarr3 store through the plugin and reads
windows equal to the source GeoTIFF's; CRS, transform, nodata and dtype agree.

Skipped when rasterio is not installed (scripts/install-apps.sh installs it).
"""
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

# GDAL registers its drivers (and the plugins on GDAL_DRIVER_PATH) once per
# process: the path must be set before rasterio is imported.
os.environ.setdefault("GDAL_DRIVER_PATH", str(Path(__file__).resolve().parent.parent / "build"))

rasterio = pytest.importorskip("rasterio")
from rasterio.windows import Window  # noqa: E402

W, H, NB = 300, 256, 3
NODATA = -9999.0
EPSG = 32631
GT = (500000.0, 30.0, 0.0, 4000000.0, 0.0, -30.0)


def pattern():
    y, x = np.mgrid[0:H, 0:W].astype(np.float32)
    bands = [0.5 * x + y + 250.0 * (((x // 50) + (y // 32)) % 2) + 1000.0 * b for b in range(NB)]
    a = np.stack(bands).astype(np.float32)
    a[1, 100:120, 10:40] = NODATA
    return a


@pytest.fixture(scope="module")
def stores(tmp_path_factory, driver_path):
    d = tmp_path_factory.mktemp("rasterio")
    src = d / "src.tif"
    transform = rasterio.Affine.from_gdal(*GT)
    with rasterio.open(src, "w", driver="GTiff", width=W, height=H, count=NB, dtype="float32",
                       crs=f"EPSG:{EPSG}", transform=transform, nodata=NODATA) as ds:
        ds.write(pattern())
    store = d / "r.zarr"
    subprocess.run(
        ["gdal_translate", "-q", "-of", "Zarr3",
         "-co", "CHUNK_SHAPES=[[1,2],[128,64,64],[100,200]]", "-co", "SHARD_CHUNK_SHAPE=1,64,50",
         "-co", "COMPRESS=ZSTD", "-co", "ARRAY_NAME=data", str(src), str(store)],
        env=dict(os.environ, GDAL_DRIVER_PATH=driver_path), check=True, timeout=120,
    )
    meta = json.loads((store / "data" / "zarr.json").read_text())
    assert meta["chunk_grid"]["name"] == "rectilinear"
    assert meta["codecs"][0]["name"] == "sharding_indexed"
    return {"src": src, "store": store, "uri": f'ZARR3:"{store}":/data'}


WINDOWS = [
    Window(0, 0, W, H),          # everything
    Window(37, 101, 130, 60),    # crosses chunk and shard edges in both dimensions
    Window(95, 120, 10, 20),     # straddles the 128-row and 100-column chunk edges
    Window(250, 200, 50, 56),    # bottom-right corner
    Window(5, 90, 60, 40),       # covers the nodata block of band 2
]


@pytest.mark.parametrize("key", ["store", "uri"])
def test_rasterio_window_reads(stores, key):
    with rasterio.open(stores["src"]) as ref, rasterio.open(str(stores[key])) as z:
        assert z.driver == "Zarr3"
        assert (z.width, z.height, z.count) == (W, H, NB)
        assert z.dtypes == ("float32",) * NB
        assert z.crs == ref.crs and z.crs.to_epsg() == EPSG
        assert z.transform == ref.transform == rasterio.Affine.from_gdal(*GT)
        assert z.bounds == ref.bounds
        assert z.nodatavals == (NODATA,) * NB
        a = pattern()
        for win in WINDOWS:
            got = z.read(window=win)
            exp = ref.read(window=win)
            assert got.dtype == np.float32
            assert got.tobytes() == exp.tobytes(), win
            r0, c0 = int(win.row_off), int(win.col_off)
            assert np.array_equal(got, a[:, r0:r0 + int(win.height), c0:c0 + int(win.width)])
        # One band, and a masked read honouring nodata.
        win = WINDOWS[4]
        m = z.read(2, window=win, masked=True)
        assert int(m.mask.sum()) == 20 * 30
        assert np.array_equal(m.filled(NODATA), ref.read(2, window=win))


def test_rasterio_tags_are_what_a_user_expects(stores, tmp_path, driver_path):
    """Issue 32: tags() holds neither the CF pointer grid_mapping (the CRS is z.crs) nor, for a plain
    multi-band store, DIM_band_INDEX on every band (it repeats the band number): the same tags as
    the source GeoTIFF. A time series keeps its date items: the band descriptions are dates and the
    netCDF-style items give the values with their units."""
    with rasterio.open(stores["src"]) as ref, rasterio.open(str(stores["store"])) as z:
        assert "grid_mapping" not in z.tags()
        assert z.tags() == ref.tags()
        for b in range(1, NB + 1):
            assert z.tags(b) == ref.tags(b) == {}
    cube = tmp_path / "ts.zarr"
    for day in ("2024-02-01", "2024-02-02"):
        subprocess.run(["gdal_translate", "-q", "-of", "Zarr3", "-b", "1", "-co", "APPEND_DIM=time",
                        "-co", f"APPEND_COORD={day}", "-co", "APPEND_SUBDATASET=YES", str(stores["src"]), str(cube)],
                       env=dict(os.environ, GDAL_DRIVER_PATH=driver_path), check=True, timeout=120)
    with rasterio.open(str(cube)) as z:
        assert "grid_mapping" not in z.tags()
        assert z.tags()["NETCDF_DIM_time_VALUES"] == "{19754,19755}"
        assert z.tags()["time#units"] == "days since 1970-01-01"
        assert z.descriptions == ("time=2024-02-01", "time=2024-02-02")
        assert z.tags(2) == {"DIM_time_INDEX": "1", "NETCDF_DIM_time": "19755", "time": "19755",
                             "time#units": "days since 1970-01-01"}


def test_rasterio_writes_an_icechunk_repository(stores, tmp_path):
    """rasterio's write mode (GDAL's Create) with ICECHUNK="YES": one commit at close holding the
    pixels, nodata, CRS and transform; updating it in "r+" mode is a second commit."""
    out = tmp_path / "w.icechunk"
    with rasterio.open(stores["src"]) as src:
        profile = dict(src.profile, driver="Zarr3", ICECHUNK="YES", COMMIT_MESSAGE="from rasterio")
        for k in ("blockxsize", "blockysize", "tiled", "interleave", "compress"):
            profile.pop(k, None)
        with rasterio.open(out, "w", **profile) as dst:
            dst.write(src.read())
    assert len(list((out / "snapshots").iterdir())) == 2  # the initial commit and the write
    with rasterio.open(out) as z, rasterio.open(stores["src"]) as ref:
        assert z.crs == ref.crs and z.transform == ref.transform and z.nodata == NODATA
        assert np.array_equal(z.read(), ref.read())
    with rasterio.open(out, "r+") as z:
        z.write(np.full((1, 4), 7, "float32"), 1, window=Window(0, 0, 4, 1))
    assert len(list((out / "snapshots").iterdir())) == 3
    with rasterio.open(out) as z:
        assert (z.read(1, window=Window(0, 0, 4, 1)) == 7).all()


def test_rasterio_sets_nodata_in_update_mode(tmp_path):
    """Issue 41: `dst.nodata = -2` in "r+" raised ValueError (the driver refused to change the
    nodata value of a store holding data); it persists now."""
    out = tmp_path / "n.zarr"
    profile = dict(driver="Zarr3", width=16, height=8, count=1, dtype="float32")
    with rasterio.open(out, "w", **profile) as dst:
        dst.write(np.arange(128, dtype="float32").reshape(1, 8, 16))
    with rasterio.open(out, "r+") as dst:
        dst.nodata = -2
    with rasterio.open(out) as z:
        assert z.nodata == -2
        assert np.array_equal(z.read(1), np.arange(128, dtype="float32").reshape(8, 16))
