"""dask.distributed (Debian python3-distributed): a LocalCluster of two worker processes,
listening on 127.0.0.1 only, reduces a rectilinear, sharded Zarr3 store read through rioxarray
chunks (the way users scale out); the results equal numpy's on the same values.

Each worker process loads the plugin itself (GDAL_DRIVER_PATH is inherited) and reads the
chunks assigned to it. The cluster is started and shut down by the test, with timeouts.
Skipped when rioxarray or distributed is not installed (scripts/install-apps.sh installs them).
"""
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("GDAL_DRIVER_PATH", str(Path(__file__).resolve().parent.parent / "build"))

rioxarray = pytest.importorskip("rioxarray")
distributed = pytest.importorskip("distributed")
if "asan" in os.environ.get("LD_PRELOAD", ""):
    # Worker processes inherit the ASan preload; the plugin's reads in a worker are the
    # reads the rest of the suite checks under ASan already.
    pytest.skip("dask workers are not run under the ASan preload", allow_module_level=True)
from osgeo import gdal  # noqa: E402

from app_stores import geotiff  # noqa: E402

gdal.UseExceptions()

NB, H, W = 4, 300, 256
ROW_EDGES = [100, 200]  # rectilinear rows
COL_EDGES = [96, 160]  # rectilinear columns
INNER = (1, 50, 32)  # shard inner chunk
NODATA = -9999.0
EPSG = 32631
GT = (500000.0, 30.0, 0.0, 4000000.0, 0.0, -30.0)


def values():
    rng = np.random.default_rng(17)
    a = rng.normal(280.0, 15.0, size=(NB, H, W)).astype(np.float32)
    a[2, 150:170, 90:110] = NODATA  # straddles the row edge 100 and the column edge 96
    return a


@pytest.fixture(scope="module")
def store(tmp_path_factory, driver_path):
    d = tmp_path_factory.mktemp("dask")
    src = d / "src.tif"
    geotiff(src, list(values()), GT, EPSG, NODATA)
    out = d / "cube.zarr"
    subprocess.run(
        ["gdal_translate", "-q", "-of", "Zarr3", "-co", f"CHUNK_SHAPES=[1,{ROW_EDGES},{COL_EDGES}]".replace(" ", ""),
         "-co", "SHARD_CHUNK_SHAPE=" + ",".join(map(str, INNER)), "-co", "ARRAY_NAME=cube", str(src), str(out)],
        env=dict(os.environ, GDAL_DRIVER_PATH=driver_path), check=True, timeout=120)
    info = gdal.Open(str(out)).GetMetadata("ZARR3")
    assert '"rectilinear"' in info["CHUNK_GRID"] and "[100,200]" in info["CHUNK_GRID"], info
    assert info["SHARD_CHUNK_SHAPE"] == "[1,50,32]", info
    return out


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=None, silence_logs=40, memory_limit="1GiB")
    c = Client(cluster, timeout=60)
    try:
        c.wait_for_workers(2, timeout=60)
        yield c
    finally:
        c.close(timeout=30)
        cluster.close(timeout=30)


def test_two_worker_processes_reduce_rectilinear_sharded_store(store, client):
    # Chunks follow the store's rectilinear grid: one dask chunk per stored shard.
    chunks = {"band": 1, "y": tuple(ROW_EDGES), "x": tuple(COL_EDGES)}
    da = rioxarray.open_rasterio(str(store), chunks=chunks, lock=False, masked=True)
    assert da.chunks == ((1,) * NB, tuple(ROW_EDGES), tuple(COL_EDGES))
    assert da.rio.crs.to_epsg() == EPSG
    mean_b = da.mean(dim=("y", "x"), dtype=np.float64)
    max_b = da.max(dim=("y", "x"))
    count = da.count()
    col_sums = da.astype(np.float64).sum(dim="y")  # (band, x)
    day = da.sel(band=3).isel(y=slice(140, 180), x=slice(80, 120))  # crosses both grid edges
    futures = client.compute([mean_b, max_b, count, col_sums, day])
    got_mean, got_max, got_count, got_cols, got_day = client.gather(futures, errors="raise")

    a = np.ma.masked_equal(values(), NODATA)
    assert int(got_count) == a.count() == NB * H * W - 20 * 20
    assert np.allclose(got_mean.values, a.astype(np.float64).mean(axis=(1, 2)).filled(np.nan), rtol=1e-12)
    assert np.array_equal(got_max.values, a.max(axis=(1, 2)).filled(np.nan))
    assert np.allclose(got_cols.values, a.astype(np.float64).sum(axis=1).filled(0.0), rtol=1e-12)
    exp_day = a[2, 140:180, 80:120].filled(np.nan)
    assert np.array_equal(np.isnan(got_day.values), np.isnan(exp_day))
    assert np.array_equal(np.nan_to_num(got_day.values), np.nan_to_num(exp_day))

    # The reads ran in the two worker processes, each loading the plugin itself.
    def reader_info():
        from osgeo import gdal as g

        return os.getpid(), g.GetDriverByName("Zarr3") is not None

    info = client.run(reader_info)
    assert len(info) == 2
    assert all(ok for _, ok in info.values()) and os.getpid() not in {p for p, _ in info.values()}
    # Scheduler and workers listen on the loopback interface only.
    addrs = [client.scheduler.address, *client.scheduler_info()["workers"]]
    assert len(addrs) == 3 and all(a.startswith("tcp://127.0.0.1:") for a in addrs), addrs
    # Every worker did part of the work (tasks were spread over both processes).
    processed = client.run(lambda dask_worker: len(dask_worker.data) + dask_worker.state.transition_counter)
    assert all(n > 0 for n in processed.values()), processed
