"""Crash-safe writes: SIGKILL a process writing a store (gdal_translate into a
new store, an update of an existing one) at several points; what is left must
either not open or read back without a decode error, every chunk holding the
complete old or new contents (chunks and zarr.json are written to a temporary
name and renamed into place)."""
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from osgeo import gdal

N = 2048
B = 64  # block edge
NB = N // B


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    d = tmp_path_factory.mktemp("crash_src")
    rng = np.random.default_rng(7)
    data = (rng.standard_normal((N, N)) * 100 + 1000).astype("<f4")  # never 0 (the fill value)
    path = d / "src.tif"
    ds = gdal.GetDriverByName("GTiff").Create(str(path), N, N, 1, gdal.GDT_Float32)
    ds.GetRasterBand(1).WriteArray(data)
    ds = None
    return path, data


VERIFY = r"""
import sys
import numpy as np
from osgeo import gdal
gdal.UseExceptions()
try:
    ds = gdal.OpenEx(sys.argv[1], gdal.OF_RASTER, allowed_drivers=["Zarr3"])
except RuntimeError as e:
    print("NOOPEN:" + str(e))
    sys.exit(0)
a = ds.GetRasterBand(1).ReadAsArray()
np.save(sys.argv[2], a)
print("READ")
"""


def verify(store, out_npy):
    """Opens and reads the whole store in a subprocess. Returns None when it
    does not open, else the array. A read error fails the test."""
    p = subprocess.run([sys.executable, "-c", VERIFY, str(store), str(out_npy)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, f"reading {store} after the kill failed ({p.returncode}): {p.stderr[-3000:]}"
    if p.stdout.startswith("NOOPEN:"):
        return None
    assert p.stdout.strip() == "READ", p.stdout + p.stderr
    return np.load(out_npy)


def blocks(a):
    return a.reshape(NB, B, NB, B).swapaxes(1, 2)


def chunk_files(store):
    n = 0
    for _, _, files in os.walk(store):
        n += sum(1 for f in files if ".tmp." not in f and f != "zarr.json")
    return n


def translate_cmd(src, dst):
    return [
        "gdal_translate", "-q", "-of", "Zarr3",
        "-co", f"BLOCKSIZE={B},{B}", "-co", "COMPRESS=GZIP", "-co", "GZIP_LEVEL=9",
        str(src), str(dst),
    ]  # fmt: skip


# (kind, value): kill after a delay in seconds, or once that many chunk files exist.
KILL_POINTS = [("delay", 0.0), ("delay", 0.05), ("delay", 0.1), ("delay", 0.2), ("delay", 0.5),
               ("files", 1), ("files", 100), ("files", 500), ("files", 1000)]  # fmt: skip


@pytest.mark.parametrize("kind,value", KILL_POINTS, ids=[f"{k}{v}" for k, v in KILL_POINTS])
def test_kill_gdal_translate(tmp_path, source, kind, value):
    src, data = source
    dst = tmp_path / "dst.zarr"
    env = dict(os.environ, GDAL_NUM_THREADS="1")
    p = subprocess.Popen(translate_cmd(src, dst), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    t0 = time.monotonic()
    if kind == "delay":
        while p.poll() is None and time.monotonic() - t0 < value:
            time.sleep(0.002)
    else:
        while p.poll() is None and chunk_files(dst) < value and time.monotonic() - t0 < 60:
            pass
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)
    p.stderr.close()
    got = verify(dst, tmp_path / "got.npy")
    if got is None:
        return
    assert got.shape == data.shape
    gb, db = blocks(got), blocks(data)
    for i in range(NB):
        for j in range(NB):
            g = gb[i, j]
            assert np.array_equal(g, db[i, j]) or not g.any(), f"block {i},{j} is neither complete nor empty"


UPDATE = r"""
import sys
import numpy as np
from osgeo import gdal
gdal.UseExceptions()
ds = gdal.OpenEx(sys.argv[1], gdal.OF_UPDATE | gdal.OF_RASTER, allowed_drivers=["Zarr3"])
band = ds.GetRasterBand(1)
B, NB, LAST = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
k = 0
for i in range(NB):
    for j in range(NB):
        if k >= LAST:
            break
        old = band.ReadAsArray(j * B, i * B, B, B)
        band.WriteArray(-old, j * B, i * B)
        ds.FlushCache()
        k += 1
        print("done", k, flush=True)
print("finished", flush=True)
"""

LAST = NB * NB * 3 // 4  # the last quarter of the blocks is never touched


@pytest.fixture(scope="module")
def base_store(tmp_path_factory, source):
    src, data = source
    d = tmp_path_factory.mktemp("crash_base")
    ds = gdal.Open(str(src))
    gdal.GetDriverByName("Zarr3").CreateCopy(str(d / "base.zarr"), ds, options=[f"BLOCKSIZE={B},{B}", "COMPRESS=GZIP", "GZIP_LEVEL=9"])
    ds = None
    return d / "base.zarr"


UPDATE_KILLS = [("blocks", 1), ("blocks", 37), ("blocks", 400), ("delay", 0.3), ("delay", 1.0)]


@pytest.mark.parametrize("kind,value", UPDATE_KILLS, ids=[f"{k}{v}" for k, v in UPDATE_KILLS])
def test_kill_update(tmp_path, source, base_store, kind, value):
    import shutil

    _, data = source
    store = tmp_path / "upd.zarr"
    shutil.copytree(base_store, store)
    p = subprocess.Popen(
        [sys.executable, "-c", UPDATE, str(store), str(B), str(NB), str(LAST)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ, GDAL_NUM_THREADS="1"),
    )  # fmt: skip
    done = 0
    if kind == "blocks":
        for line in p.stdout:
            if line.startswith("done"):
                done = int(line.split()[1])
                if done >= value:
                    break
    else:
        time.sleep(value)
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)
    p.stdout.close()
    p.stderr.close()
    got = verify(store, tmp_path / "got.npy")
    assert got is not None, "the updated store no longer opens"
    gb, db = blocks(got), blocks(data)
    changed = 0
    for k in range(NB * NB):
        i, j = divmod(k, NB)
        g = gb[i, j]
        if k >= LAST:
            assert np.array_equal(g, db[i, j]), f"untouched block {i},{j} changed"
        elif np.array_equal(g, -db[i, j]):
            changed += 1
        else:
            assert np.array_equal(g, db[i, j]), f"block {i},{j} is neither its old nor its new value"
    # Blocks whose write was reported flushed before the kill hold their new value.
    assert changed >= done


def _host_tag():
    import socket

    tag = "".join(c for c in socket.gethostname() if c.isascii() and (c.isalnum() or c == "-"))[:32]
    return tag or "host"


def test_stale_temp_files_removed_on_next_write(tmp_path, source, base_store):
    """A writer killed between writing its temporary file and renaming it
    leaves "<key>.tmp.<host>.<pid>.<n>"; the next write into that folder
    removes it when no process <pid> exists on this host. Files of live
    processes, of other hosts and in folders not written are left alone."""
    import shutil

    _, data = source
    store = tmp_path / "sweep.zarr"
    shutil.copytree(base_store, store)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    host = _host_tag()
    row0, row5 = store / "base" / "c" / "0", store / "base" / "c" / "5"
    assert row0.is_dir() and row5.is_dir()
    planted = {
        "stale": row0 / f"3.tmp.{host}.{dead.pid}.0",
        "live": row0 / f"4.tmp.{host}.{os.getpid()}.1",
        "other_host": row0 / f"5.tmp.otherhost-x.{dead.pid}.2",
        "unwritten_folder": row5 / f"3.tmp.{host}.{dead.pid}.3",
    }
    for f in planted.values():
        f.write_bytes(b"partial chunk")
    ds = gdal.OpenEx(str(store), gdal.OF_UPDATE | gdal.OF_RASTER, allowed_drivers=["Zarr3"])
    ds.GetRasterBand(1).WriteArray(-data[0:B, 0:B], 0, 0)  # block c/0/0
    ds = None
    assert not planted["stale"].exists()
    assert planted["live"].exists() and planted["other_host"].exists() and planted["unwritten_folder"].exists()
    ds = gdal.Open(str(store))  # kept alive while its band is read
    got = ds.GetRasterBand(1).ReadAsArray(0, 0, 2 * B, B)
    assert np.array_equal(got[:, :B], -data[0:B, 0:B]) and np.array_equal(got[:, B:], data[0:B, B : 2 * B])
