"""The cache of decoded chunks (issue 44): overlapping windows of one opened dataset are served
from decoded chunks, but never a stale one. A chunk rewritten by another dataset of this process
(local and /vsimem/), by another process (local, and over HTTP from nginx on 127.0.0.1), an
append or a `zarr3 compact` is read again; the cache stays within its bound while reading an array
ten times larger; ZARR3_CHUNK_CACHE=NO turns it off. The cache's state is read through the
ZARR3_CHUNK_CACHE metadata domain of the classic dataset (BYTES, MAX_BYTES, ENTRIES, HITS, MISSES).
"""
import os
import shutil
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from osgeo import gdal

from conftest import config_option
from nginx_fixture import nginx  # noqa: F401  (session fixture)
from test_append import append_options, day_tif, expected_day
from test_compact import cli

DRV = "Zarr3"
SIZE = 128
# x, y, w, h: unaligned, and at least a block (a smaller window goes through GDAL's block cache)
WINDOW = (5, 7, 70, 66)


def layout(sharded):
    # Uncompressed: a rewrite with other values has the same size (only the version tells).
    co = ["BLOCKSIZE=64", "COMPRESS=NONE"]
    return co + ["SHARD_CHUNK_SHAPE=32"] if sharded else co


def values(seed):
    return np.random.default_rng(seed).integers(1, 60000, size=(SIZE, SIZE)).astype(np.uint16)


def write(path, data, sharded):
    src = gdal.GetDriverByName("MEM").Create("", SIZE, SIZE, 1, gdal.GDT_UInt16)
    src.GetRasterBand(1).WriteArray(data)
    gdal.Translate(str(path), src, format=DRV, creationOptions=layout(sharded))


def cache_item(ds, name):
    v = ds.GetMetadataItem(name, "ZARR3_CHUNK_CACHE")
    return None if v is None else int(v)


def window(ds, w=WINDOW):
    x, y, width, height = w
    return ds.GetRasterBand(1).ReadAsArray(x, y, width, height)


def part(data, w=WINDOW):
    x, y, width, height = w
    return data[y : y + height, x : x + width]


def read_twice(ds, data):
    """The window twice: the second time from decoded chunks (a hit)."""
    np.testing.assert_array_equal(window(ds), part(data))
    hits = cache_item(ds, "HITS")
    np.testing.assert_array_equal(window(ds), part(data))
    assert cache_item(ds, "HITS") > hits, "the repeated window was not served from the cache"


REWRITE = """
import sys
import numpy as np
from osgeo import gdal
path, seed, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = np.random.default_rng(seed).integers(1, 60000, size=(size, size)).astype(np.uint16)
ds = gdal.OpenEx(path, gdal.OF_RASTER | gdal.OF_UPDATE, allowed_drivers=["Zarr3"])
ds.GetRasterBand(1).WriteArray(data)
ds = None
"""


def rewrite_in_other_process(path, seed):
    env = dict(os.environ)
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(REWRITE), str(path), str(seed), str(SIZE)],
                       capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 0, p.stderr


def rewrite_in_process(path, data):
    ds = gdal.OpenEx(str(path), gdal.OF_RASTER | gdal.OF_UPDATE, allowed_drivers=[DRV])
    ds.GetRasterBand(1).WriteArray(data)
    ds = None


@pytest.mark.parametrize("sharded", [False, True], ids=["regular", "sharded"])
@pytest.mark.parametrize("writer", ["other_process", "other_dataset"])
def test_local_chunk_rewritten_elsewhere_is_read_again(tmp_path, sharded, writer):
    path = tmp_path / "s.zarr"
    v1, v2 = values(1), values(2)
    write(path, v1, sharded)
    ds = gdal.OpenEx(str(path), gdal.OF_RASTER, allowed_drivers=[DRV])
    read_twice(ds, v1)
    if writer == "other_process":
        rewrite_in_other_process(path, 2)
    else:
        rewrite_in_process(path, v2)
    np.testing.assert_array_equal(window(ds), part(v2), "stale decoded chunk returned")
    read_twice(ds, v2)


@pytest.mark.parametrize("sharded", [False, True], ids=["regular", "sharded"])
def test_vsimem_chunk_rewritten_by_another_dataset_is_read_again(sharded):
    path = f"/vsimem/chunk_cache_{int(sharded)}.zarr"
    v1, v2 = values(3), values(4)
    try:
        write(path, v1, sharded)
        ds = gdal.OpenEx(path, gdal.OF_RASTER, allowed_drivers=[DRV])
        read_twice(ds, v1)
        # /vsimem/ versions are size and a time in seconds: the same size in the same second
        # looks unchanged, so only the write epoch of this process tells.
        rewrite_in_process(path, v2)
        np.testing.assert_array_equal(window(ds), part(v2), "stale decoded chunk returned")
        ds = None
    finally:
        gdal.RmdirRecursive(path)


@pytest.mark.parametrize("sharded", [False, True], ids=["regular", "sharded"])
def test_http_chunk_rewritten_by_another_process_is_read_again(nginx, sharded):  # noqa: F811
    name = f"cache_{int(sharded)}.zarr"
    local = nginx.root / name
    shutil.rmtree(local, ignore_errors=True)
    v1 = values(5)
    write(local, v1, sharded)
    with config_option("GDAL_HTTP_MAX_RETRY", "0"):
        ds = gdal.OpenEx(f"/vsicurl/{nginx.url}/{name}", gdal.OF_RASTER, allowed_drivers=[DRV])
        read_twice(ds, v1)
        # nginx's ETag is the file's time in seconds and its size: a rewrite of the same size
        # is told apart from the next second on.
        time.sleep(1.1)
        rewrite_in_other_process(local, 6)
        v2 = values(6)
        np.testing.assert_array_equal(window(ds), part(v2), "stale decoded chunk returned")
        ds = None


CUBE = (200, 100)  # x, y of each day
CUBE_WINDOW = (5, 7, 60, 60)  # larger than a 50 x 50 block, unaligned


def build_big_cube(tmp_path, days):
    store = tmp_path / "cube.zarr"
    for d in range(1, days + 1):
        gdal.Translate(str(store), str(day_tif(tmp_path / f"d{d}.tif", d, size=CUBE)), format=DRV,
                       creationOptions=append_options("BLOCKSIZE=1,50,50"))
    return store


def cube_window(ds, band):
    x, y, w, h = CUBE_WINDOW
    return ds.GetRasterBand(band).ReadAsArray(x, y, w, h)


def day_part(day):
    x, y, w, h = CUBE_WINDOW
    return expected_day(day, CUBE)[y : y + h, x : x + w]


def test_append_then_reads_see_the_stored_values(tmp_path):
    store = build_big_cube(tmp_path, 3)
    ds = gdal.Open(str(store))
    for _ in range(2):
        for b in range(1, 4):
            np.testing.assert_array_equal(cube_window(ds, b), day_part(b))
    assert cache_item(ds, "HITS") > 0
    gdal.Translate(str(store), str(day_tif(tmp_path / "d4.tif", 4, size=CUBE)), format=DRV,
                   creationOptions=append_options())
    for b in range(1, 4):  # the dataset opened before the append
        np.testing.assert_array_equal(cube_window(ds, b), day_part(b))
    ds = None
    ds = gdal.Open(str(store))
    assert ds.RasterCount == 4
    for b in range(1, 5):
        np.testing.assert_array_equal(cube_window(ds, b), day_part(b))


def test_compaction_by_another_process_never_gives_cached_values(tmp_path, exe):
    store = build_big_cube(tmp_path, 40)
    ds = gdal.Open(str(store))
    for _ in range(2):
        np.testing.assert_array_equal(cube_window(ds, 7), day_part(7))
    assert cache_item(ds, "HITS") > 0
    p = cli(exe, "compact", store / "cube", "--dim", "time", "--edges", "monthly")
    assert p.returncode == 0, p.stderr
    # The dataset opened before: the stored values or an error (the array changed), never the
    # cached chunk of a key that no longer holds it.
    gdal.ErrorReset()
    gdal.PushErrorHandler("CPLQuietErrorHandler")
    error = ""
    try:
        got = cube_window(ds, 7)
    except RuntimeError as e:  # with gdal.UseExceptions()
        got, error = None, str(e)
    finally:
        gdal.PopErrorHandler()
    if got is None:
        assert "changed since it was opened" in (error or gdal.GetLastErrorMsg())
    else:
        np.testing.assert_array_equal(got, day_part(7))
    ds = None
    ds = gdal.Open(str(store))
    for b in (7, 31, 40):
        np.testing.assert_array_equal(cube_window(ds, b), day_part(b))


def test_cache_stays_within_its_bound_over_an_array_ten_times_larger(tmp_path):
    path = tmp_path / "big.zarr"
    n = 2048  # 16 MiB of float32 in 64 x 64 chunks (16 KiB each)
    data = np.arange(n * n, dtype=np.float32).reshape(n, n)
    src = gdal.GetDriverByName("MEM").Create("", n, n, 1, gdal.GDT_Float32)
    src.GetRasterBand(1).WriteArray(data)
    gdal.Translate(str(path), src, format=DRV, creationOptions=["BLOCKSIZE=64"])
    with config_option("ZARR3_CHUNK_CACHE_MB", "1"):
        ds = gdal.Open(str(path))
    bound = cache_item(ds, "MAX_BYTES")
    assert bound == 1 << 20
    assert data.nbytes >= 10 * bound
    band = ds.GetRasterBand(1)
    most = 0
    for y in range(0, n - 70, 100):  # a pan over every row of chunks, windows overlapping
        for x in range(0, n - 70, 35):
            np.testing.assert_array_equal(band.ReadAsArray(x, y, 70, 70), data[y : y + 70, x : x + 70])
            most = max(most, cache_item(ds, "BYTES"))
            assert most <= bound
    assert most > bound // 2, "the cache was barely used"
    assert cache_item(ds, "HITS") > 0


def test_chunk_cache_no_turns_it_off(tmp_path):
    path = tmp_path / "s.zarr"
    v1 = values(7)
    write(path, v1, True)
    with config_option("ZARR3_CHUNK_CACHE", "NO"):
        ds = gdal.Open(str(path))
    assert cache_item(ds, "MAX_BYTES") is None
    np.testing.assert_array_equal(window(ds), part(v1))
    ds = gdal.Open(str(path))
    assert cache_item(ds, "MAX_BYTES") == gdal.GetCacheMax() // 4
