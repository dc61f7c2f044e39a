"""Many writers of one raster (issue 43): disjoint windows of one array written by the worker
processes of a dask.distributed cluster, each worker through GDAL, into an Icechunk repository or a
plain store. Used by autotest/test_dask_icechunk_writers.py and bench/many_writers.py.

The design (docs/ARCHITECTURE.md, README "Many writers"): the array is created first (one commit,
`create`); then every task opens the repository for update, writes its window with one
`WriteArray` and closes the dataset, which makes one commit with the task's message. A commit that
finds the branch moved is rebased over the commits in between (windows made of whole chunks are
disjoint: they never conflict); a task that dies before its close commits nothing (the chunk objects
it wrote stay unreferenced until `zarr3 gc`). Windows must be made of whole chunks (whole shards
when sharded): two windows sharing a chunk are a conflict, and the later commit fails naming it.

The worker functions take the GDAL configuration (S3 endpoint and keys) as an argument, so a worker
needs nothing from its environment but GDAL_DRIVER_PATH.
"""
import os
import time

import numpy as np

NODATA = -9999.0


def source(h, w, seed=43):
    """The values the job writes (float32, no value equal to NODATA)."""
    return np.random.default_rng(seed).normal(280.0, 15.0, size=(h, w)).astype(np.float32)


def windows(h, w, wh, ww):
    """The job's windows (x0, y0, width, height), row by row; wh, ww: multiples of the chunk."""
    return [(x, y, min(ww, w - x), min(wh, h - y)) for y in range(0, h, wh) for x in range(0, w, ww)]


class _Config:
    """GDAL configuration options set for a block, the earlier values restored after."""

    def __init__(self, options):
        self.options = options or {}

    def __enter__(self):
        from osgeo import gdal

        self.old = {k: gdal.GetConfigOption(k) for k in self.options}
        for k, v in self.options.items():
            gdal.SetConfigOption(k, v)
        gdal.VSICurlClearCache()

    def __exit__(self, *exc):
        from osgeo import gdal

        for k, v in self.old.items():
            gdal.SetConfigOption(k, v)


def _close(held, what):
    """Closes the dataset in the list `held`, the last reference to it (an Icechunk repository: the
    commit), and raises with GDAL's message when it failed. Exceptions off: GDAL < 3.7 only reports a failed close (no status), and the bindings of
    GDAL 3.8-3.12 free a dataset twice when Close() raises."""
    from osgeo import gdal

    was = gdal.GetUseExceptions()
    gdal.DontUseExceptions()
    try:
        gdal.ErrorReset()
        ds = held.pop()
        err = ds.Close() if hasattr(ds, "Close") else 0
        ds = None  # GDAL < 3.7: the commit runs here
        if err or gdal.GetLastErrorType() >= gdal.CE_Failure:
            raise RuntimeError(f"{what}: {gdal.GetLastErrorMsg() or 'closing failed'}")
    finally:
        if was:
            gdal.UseExceptions()


def create(target, h, w, block, config=None, icechunk=True):
    """Creates the empty float32 array (nodata NODATA, chunks `block` x `block`, zstd): in an
    Icechunk repository its first commit ("job: create HxW"), else a plain store."""
    from osgeo import gdal

    opts = [f"BLOCKSIZE={block},{block}", "COMPRESS=ZSTD"]
    if icechunk:
        opts += ["ICECHUNK=YES", f"COMMIT_MESSAGE=job: create {h}x{w}"]
    with _Config(config):
        ds = gdal.GetDriverByName("Zarr3").Create(target, w, h, 1, gdal.GDT_Float32, opts)
        if ds is None:
            raise RuntimeError(f"{target}: {gdal.GetLastErrorMsg()}")
        ds.GetRasterBand(1).SetNoDataValue(NODATA)
        held, ds = [ds], None
        _close(held, target)


def window_message(x0, y0, values):
    return f"job: window x={x0} y={y0} ({values.shape[1]}x{values.shape[0]})"


def write_window(target, x0, y0, values, config=None, message=None, die_after_rows=0):
    """The task a worker runs: opens `target` for update, writes `values` at (x0, y0) in one
    WriteArray and closes it (a repository: one commit with `message`, rebased if the branch moved);
    raises with GDAL's message when the write or the commit failed. `die_after_rows` (tests): the
    process writes and flushes that many rows, then exits at once, as a worker lost mid-window.
    Returns (pid, seconds)."""
    from osgeo import gdal

    t0 = time.monotonic()
    with _Config(config):
        opts = [f"COMMIT_MESSAGE={message}"] if message else []
        ds = gdal.OpenEx(target, gdal.OF_RASTER | gdal.OF_UPDATE, open_options=opts)
        if ds is None:
            raise RuntimeError(f"{target}: {gdal.GetLastErrorMsg()}")
        band = ds.GetRasterBand(1)
        if die_after_rows:
            time.sleep(0.5)  # the worker's earlier answers reach the client first
            band.WriteArray(values[:die_after_rows], x0, y0)
            ds.FlushCache()
            os._exit(3)
        if band.WriteArray(values, x0, y0) != 0:
            raise RuntimeError(f"{target}: window ({x0},{y0}): {gdal.GetLastErrorMsg()}")
        held, ds, band = [ds], None, None
        _close(held, f"{target}: window ({x0},{y0})")
    return os.getpid(), time.monotonic() - t0


def run_job(client, target, values, wins, config=None, icechunk=True, die=None):
    """Submits one task per window and collects each answer as it comes, releasing its future (a
    result left in a worker's memory is computed again, a second commit, when that worker is lost);
    returns {window: (pid, None) or (None, error text)}. `die`: the window whose worker dies after
    writing part of it."""
    from distributed import wait

    futures = {}
    for x, y, ww, wh in wins:
        v = values[y:y + wh, x:x + ww]
        msg = window_message(x, y, v) if icechunk else None
        rows = max(1, wh // 2) if die == (x, y, ww, wh) else 0
        f = client.submit(write_window, target, x, y, v, config, msg, rows, pure=False)
        futures[f.key] = ((x, y, ww, wh), f)
    out, pending = {}, {f for _, f in futures.values()}
    deadline = time.monotonic() + 300
    while pending:  # distributed.wait raises TimeoutError past the deadline
        done, pending = wait(pending, timeout=max(1.0, deadline - time.monotonic()),
                             return_when="FIRST_COMPLETED")
        for f in done:
            win = futures[f.key][0]
            try:
                out[win] = (f.result()[0], None)
            except Exception as e:  # noqa: BLE001 (the task's error is the answer)
                out[win] = (None, repr(e))
            f.release()
    return out


def download_history(prefix, dest, config=None):
    """Copies the objects of a repository at `prefix` (/vsis3/bucket/name) but its chunks into folder
    `dest` through GDAL: its history, to read with the `zarr3` tool (local folders only)."""
    from osgeo import gdal

    with _Config(config):
        for name in gdal.ReadDirRecursive(prefix) or []:
            if name.endswith("/") or name.startswith("chunks/"):
                continue
            path = os.path.join(dest, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            f = gdal.VSIFOpenL(f"{prefix}/{name}", "rb")
            if f is None:
                raise RuntimeError(f"{prefix}/{name}: {gdal.GetLastErrorMsg()}")
            try:
                gdal.VSIFSeekL(f, 0, 2)
                size = gdal.VSIFTellL(f)
                gdal.VSIFSeekL(f, 0, 0)
                data = gdal.VSIFReadL(1, size, f)
            finally:
                gdal.VSIFCloseL(f)
            with open(path, "wb") as out:
                out.write(data)


def read(target, config=None):
    from osgeo import gdal

    with _Config(config):
        ds = gdal.Open(target)
        if ds is None:
            raise RuntimeError(f"{target}: {gdal.GetLastErrorMsg()}")
        return ds.GetRasterBand(1).ReadAsArray()
