"""Concurrent readers: 8 threads each with its own dataset on one rectilinear
sharded zstd store, and one dataset read with GDAL_NUM_THREADS=2, give the
same values as a serial read."""
import json
import threading

import numpy as np
import pytest
from osgeo import gdal

from conftest import config_option

H, W, NBANDS = 1000, 1200, 3
CHUNK_SHAPES = [1, [[200, 2], 100, 300, 200], [[400, 3]]]  # bands, rows 1000, cols 1200
SHARD_INNER = "1,100,100"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    d = tmp_path_factory.mktemp("conc")
    rng = np.random.default_rng(11)
    data = rng.integers(-30000, 30000, size=(NBANDS, H, W), dtype=np.int16)
    src = gdal.GetDriverByName("MEM").Create("", W, H, NBANDS, gdal.GDT_Int16)
    for b in range(NBANDS):
        src.GetRasterBand(b + 1).WriteArray(data[b])
    path = d / "conc.zarr"
    opts = [f"CHUNK_SHAPES={json.dumps(CHUNK_SHAPES)}", f"SHARD_CHUNK_SHAPE={SHARD_INNER}", "COMPRESS=ZSTD"]
    gdal.GetDriverByName("Zarr3").CreateCopy(str(path), src, options=opts)
    src = None
    return path, data


def windows(k):
    """Windows for thread k: different offsets and sizes, crossing shard and
    inner-chunk boundaries."""
    rng = np.random.default_rng(100 + k)
    out = [(0, 0, W, H)]
    for _ in range(12):
        x, y = int(rng.integers(0, W - 1)), int(rng.integers(0, H - 1))
        w, h = int(rng.integers(1, W - x + 1)), int(rng.integers(1, H - y + 1))
        out.append((x, y, w, h))
    return out


def test_store_is_rectilinear_sharded(store):
    path, data = store
    meta = json.loads((path / "conc" / "zarr.json").read_text())
    assert meta["chunk_grid"]["name"] == "rectilinear"
    assert meta["codecs"][0]["name"] == "sharding_indexed"
    ds = gdal.Open(str(path))
    assert np.array_equal(ds.ReadAsArray(), data)


def test_eight_threads_separate_datasets(store):
    path, data = store
    # Serial reference through the plugin (and checked against the source).
    serial = {}
    ds = gdal.Open(str(path))
    for k in range(8):
        for x, y, w, h in windows(k):
            a = ds.ReadAsArray(x, y, w, h)
            assert np.array_equal(a, data[:, y : y + h, x : x + w])
            serial[(k, x, y, w, h)] = a
    ds = None

    errors, mismatches = [], []
    start = threading.Barrier(8)

    def worker(k):
        try:
            my = gdal.Open(str(path))
            start.wait()
            for _ in range(10):
                for x, y, w, h in windows(k):
                    a = my.ReadAsArray(x, y, w, h)
                    if not np.array_equal(a, serial[(k, x, y, w, h)]):
                        mismatches.append((k, x, y, w, h))
                my.FlushCache()  # next round decodes again
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append((k, repr(e)))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "reader threads hang"
    assert not errors, errors
    assert not mismatches, mismatches[:5]


def _read_with_threads(path, n):
    with config_option("GDAL_NUM_THREADS", str(n)):
        ds = gdal.Open(str(path))
        full = ds.ReadAsArray()
        parts = [ds.ReadAsArray(x, y, w, h) for x, y, w, h in windows(3)]
        ds = None
    return full, parts


def test_gdal_num_threads_2_equals_1(store):
    path, data = store
    full1, parts1 = _read_with_threads(path, 1)
    full2, parts2 = _read_with_threads(path, 2)
    assert np.array_equal(full1, data)
    assert np.array_equal(full2, full1)
    for a, b in zip(parts1, parts2):
        assert np.array_equal(a, b)
