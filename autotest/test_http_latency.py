"""Reads over HTTP with many requests in flight, through a proxy that delays
every request (latency_proxy.py in front of the nginx fixture): values equal
to local reads (regular, sharded, rectilinear + sharded; full reads and
windows), each chunk fetched once, the shard indexes of a window fetched once
and together, ZARR3_HTTP_MAX_IN_FLIGHT honoured, and the caller's
thread-local configuration applied to the requests made from helper threads.
Counts only: no timings are asserted here (`make bench` measures them).
"""
import os
import re
import shutil

import numpy as np
import pytest
from osgeo import gdal

from conftest import config_option
from latency_fixture import latency_proxy  # noqa: F401  (module fixture)
from nginx_fixture import nginx  # noqa: F401  (session fixture)

N = 512
STORES = {
    # 64 chunks of 64x64
    "regular": ["BLOCKSIZE=64,64", "COMPRESS=ZSTD"],
    # 4 shards of 256x256, 16 inner chunks of 64x64 each
    "sharded": ["BLOCKSIZE=256,256", "SHARD_CHUNK_SHAPE=64,64", "COMPRESS=ZSTD"],
    # rectilinear shards (rows 128 + 384, columns 192 + 320) of 64x64 inner chunks
    "rect": ["CHUNK_SHAPES=[[128,384],[192,320]]", "SHARD_CHUNK_SHAPE=64,64", "COMPRESS=ZSTD"],
}
WINDOWS = [(0, 0, N, N), (37, 53, 300, 411), (256, 0, 256, 512), (100, 100, 312, 312)]


@pytest.fixture(scope="module")
def data():
    y, x = np.mgrid[0:N, 0:N]
    return (np.sin(x / 17.0) * 100 + y * 0.5 + (x * 7 + y * 13) % 11).astype(np.float32)


@pytest.fixture(scope="module")
def stores(nginx, latency_proxy, data):  # noqa: F811
    """The stores under nginx's root in /lat/, plus aliases (a fresh URL is a
    cold shard index cache). Returns {name: local path}."""
    www = nginx.root / "lat"
    www.mkdir(exist_ok=True)
    src = gdal.GetDriverByName("MEM").Create("", N, N, 1, gdal.GDT_Float32)
    src.GetRasterBand(1).WriteArray(data)
    out = {}
    for name, opts in STORES.items():
        path = www / f"{name}.zarr"
        ds = gdal.Translate(str(path), src, format="Zarr3", creationOptions=opts)
        assert ds is not None, name
        ds = None
        for i in range(8):
            os.symlink(path, www / f"{name}{i}.zarr")
        out[name] = path
    with config_option("GDAL_HTTP_MAX_RETRY", "0"):
        yield out


def url(proxy, name, array=None):
    """The array of store `name` (an alias "regular3" holds the array "regular")
    through the proxy; remote stores are not listed, so the array is named."""
    array = array or re.sub(r"\d+$", "", name)
    return f'ZARR3:"/vsicurl/{proxy.url}/lat/{name}.zarr":/{array}'


def read(path, win, threads="2"):
    with config_option("GDAL_NUM_THREADS", threads):
        ds = gdal.Open(path)
        assert ds is not None and ds.GetDriver().ShortName == "Zarr3", path
        return ds.GetRasterBand(1).ReadAsArray(*win)


def data_requests(stats):
    """(method, path, range) of the chunk and shard requests (not zarr.json)."""
    return [tuple(r) for r in stats["log"] if not r[1].endswith("zarr.json")]


@pytest.mark.parametrize("name", list(STORES))
@pytest.mark.parametrize("win", WINDOWS, ids=lambda w: "x".join(map(str, w)))
def test_reads_equal_local_reads(stores, latency_proxy, data, name, win):  # noqa: F811
    latency_proxy.set_delay(5)
    x, y, w, h = win
    want = data[y:y + h, x:x + w]
    assert np.array_equal(read(str(stores[name]), win), want)
    assert np.array_equal(read(url(latency_proxy, name), win), want)
    assert np.array_equal(read(url(latency_proxy, name), win, threads="1"), want)


def test_each_chunk_fetched_once(stores, latency_proxy, data):  # noqa: F811
    latency_proxy.set_delay(20)
    with config_option("GDAL_NUM_THREADS", "2"):
        ds = gdal.Open(url(latency_proxy, "regular0"))
        latency_proxy.reset()
        assert np.array_equal(ds.GetRasterBand(1).ReadAsArray(), data)
    reqs = data_requests(latency_proxy.stats())
    paths = [p for _, p, _ in reqs]
    assert len(paths) == 64, reqs
    assert len(set(paths)) == 64, reqs
    assert all(m == "GET" and r == "" for m, _, r in reqs), reqs


def test_window_fetches_shard_indexes_once_and_together(stores, latency_proxy, data):  # noqa: F811
    latency_proxy.set_delay(50)
    win = (100, 100, 312, 312)  # part of each of the 4 shards, none whole
    x, y, w, h = win
    path = url(latency_proxy, "sharded1")
    with config_option("GDAL_NUM_THREADS", "2"):
        ds = gdal.Open(path)
        latency_proxy.reset()
        assert np.array_equal(ds.GetRasterBand(1).ReadAsArray(*win), data[y:y + h, x:x + w])
        stats = latency_proxy.stats()
        reqs = data_requests(stats)
        index = [p for _, p, r in reqs if re.fullmatch(r"bytes=-\d+", r)]
        assert sorted(index) == sorted(f"/lat/sharded1.zarr/sharded/c/{i}/{j}" for i in (0, 1)
                                       for j in (0, 1)), reqs
        # The 4 index requests went out together, then the inner chunks.
        assert stats["max_in_flight"] >= 4, stats
        first_data = sorted(r for r in reqs if not re.fullmatch(r"bytes=-\d+", r[2]))
        assert {p for _, p, _ in first_data} == set(index), reqs
        # Again, from a new dataset: the indexes are cached, the same data
        # ranges are fetched again.
        ds = gdal.Open(path)
        latency_proxy.reset()
        assert np.array_equal(ds.GetRasterBand(1).ReadAsArray(*win), data[y:y + h, x:x + w])
        assert sorted(data_requests(latency_proxy.stats())) == first_data


@pytest.mark.parametrize("bound", ["1", "6", None])
def test_in_flight_bound(stores, latency_proxy, data, bound):  # noqa: F811
    latency_proxy.set_delay(30)
    with config_option("ZARR3_HTTP_MAX_IN_FLIGHT", bound), config_option("GDAL_NUM_THREADS", "2"):
        ds = gdal.Open(url(latency_proxy, "regular2"))
        latency_proxy.reset()
        assert np.array_equal(ds.GetRasterBand(1).ReadAsArray(), data)
    stats = latency_proxy.stats()
    assert len(data_requests(stats)) == 64
    peak = stats["max_in_flight"]
    if bound == "1":
        assert peak <= 2, stats  # the two decode threads, as before
    elif bound == "6":
        assert 2 < peak <= 6, stats
    else:
        assert 6 < peak <= 64, stats


def test_thread_local_configuration_reaches_every_request(stores, nginx, latency_proxy, data):  # noqa: F811
    if not hasattr(gdal, "SetThreadLocalConfigOption"):
        pytest.skip("no thread-local configuration options in these bindings")
    latency_proxy.set_delay(5)
    gdal.SetThreadLocalConfigOption("GDAL_HTTP_HEADERS", "X-Zarr3-Probe: tl")
    try:
        mark = nginx.mark()
        assert np.array_equal(read(url(latency_proxy, "regular3"), (0, 0, N, N)), data)
    finally:
        gdal.SetThreadLocalConfigOption("GDAL_HTTP_HEADERS", None)
    got = [r for r in nginx.requests(since=mark) if r.uri.startswith("/lat/regular3.zarr")]
    # Besides the 64 chunks and the metadata: the GET of an Icechunk `repo` file a prefixed open
    # sends with the root zarr.json's (icechunk_open.cpp ReadPrefixedRoot), from a helper thread
    # that must carry the configuration too.
    assert [(r.uri, r.status) for r in got if r.uri.endswith("/repo")] == [("/lat/regular3.zarr/repo", 404)], got
    assert len([r for r in got if not r.uri.endswith(("zarr.json", "/repo"))]) == 64, got
    assert all(r.probe == "tl" for r in got), [r for r in got if r.probe != "tl"]


def test_error_names_the_chunk(stores, latency_proxy, tmp_path):  # noqa: F811
    latency_proxy.set_delay(5)
    bad = stores["regular"].parent / "regular_bad.zarr"
    shutil.copytree(stores["regular"], bad)
    # The 512x512 array's chunk (0, 1), wherever the copy put the array.
    meta = next(p for p in bad.rglob("zarr.json")
                if '"shape":[512,512]' in re.sub(r"\s", "", p.read_text()))
    chunk = next(p for p in meta.parent.rglob("*")
                 if p.is_file() and p.relative_to(meta.parent).parts[-2:] == ("0", "1"))
    chunk.write_bytes(b"not zstd at all")
    key = str(chunk.relative_to(bad))
    gdal.ErrorReset()
    with pytest.raises(RuntimeError) as e:
        read(url(latency_proxy, "regular_bad", "regular"), (0, 0, N, N))
    assert key in str(e.value), (key, str(e.value))
