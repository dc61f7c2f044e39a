"""Block-at-a-time writes (issue 18): writes smaller than a block go through
GDAL's block cache, which hands the driver one block at a time. With
GDAL_NUM_THREADS above 1 those blocks are queued and encoded in parallel
batches; every value arrives, reads in between see what was written, and a
failing batch is reported by FlushCache, naming the store and the OS error."""
import contextlib
import glob
import os

import numpy as np
import pytest
from osgeo import gdal

from test_store_safety import Tmpfs, create_store, read_all

DRV = "Zarr3"

LAYOUTS = {
    "regular": ["BLOCKSIZE=64,64", "COMPRESS=ZSTD"],
    "sharded": ["BLOCKSIZE=128,128", "SHARD_CHUNK_SHAPE=64,64", "COMPRESS=ZSTD"],
}


@contextlib.contextmanager
def threads_option(value):  # gdal.config_options needs GDAL >= 3.7
    gdal.SetConfigOption("GDAL_NUM_THREADS", value)
    try:
        yield
    finally:
        gdal.SetConfigOption("GDAL_NUM_THREADS", None)


def expected(h, w):
    y, x = np.mgrid[0:h, 0:w]
    return (y * 1000 + x).astype("float32")


@pytest.mark.parametrize("threads", ["1", "2"])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_row_by_row_writes_store_every_value(tmp_path, layout, threads):
    path = str(tmp_path / "rows.zarr")
    h, w = 448, 320  # 7 x 5 blocks of 64x64
    want = expected(h, w)
    with threads_option(threads):
        ds = gdal.GetDriverByName(DRV).Create(path, w, h, 1, gdal.GDT_Float32,
                                              options=LAYOUTS[layout])
        band = ds.GetRasterBand(1)
        for y in range(h):
            band.WriteArray(want[y:y + 1], 0, y)  # one row: through the block cache
            if y == 200:
                # A read between writes sees every row written so far.
                np.testing.assert_array_equal(band.ReadAsArray(0, 0, w, 201), want[:201])
        ds = None
    np.testing.assert_array_equal(read_all(path), want)
    files = [f for f in glob.glob(f"{path}/**/c/**", recursive=True) if os.path.isfile(f)]
    assert len(files) == (35 if layout == "regular" else 12), files


# Closing retries the blocks GDAL still holds and fails again: an error
# raised in the dataset's destructor, which Python can only print.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_queued_blocks_that_cannot_be_stored_fail_flush_and_keep_old_bytes(tmp_path):
    with Tmpfs(tmp_path / "disk", "1536k") as disk:
        path = os.path.join(disk.path, "s.zarr")
        old = np.arange(128 * 128, dtype="float64").reshape(128, 128)
        create_store(path, old, ("BLOCKSIZE=64,64", "COMPRESS=NONE"))
        disk.remount_ro()
        with threads_option("2"):
            ds = gdal.OpenEx(path, gdal.OF_RASTER | gdal.OF_UPDATE, allowed_drivers=[DRV])
            band = ds.GetRasterBand(1)
            for y in range(128):
                band.WriteArray(np.full((1, 128), 5.0), 0, y)
            gdal.ErrorReset()
            gdal.PushErrorHandler("CPLQuietErrorHandler")
            try:
                ds.FlushCache()
                msg = gdal.GetLastErrorMsg()
            except RuntimeError as e:  # raised when FlushCache returns an error
                msg = str(e)
            finally:
                gdal.PopErrorHandler()
            assert "Read-only file system" in msg, msg
            assert "s.zarr" in msg, msg
            gdal.PushErrorHandler("CPLQuietErrorHandler")
            ds = None
            gdal.PopErrorHandler()
        np.testing.assert_array_equal(read_all(path), old)


# ------------------------------------------------ issue 33 #9: storing errors
class _no_exceptions:
    """Return codes and the last error, as C callers see them."""

    def __enter__(self):
        self.was = gdal.GetUseExceptions()
        gdal.DontUseExceptions()
        gdal.PushErrorHandler("CPLQuietErrorHandler")

    def __exit__(self, *exc):
        gdal.PopErrorHandler()
        if self.was:
            gdal.UseExceptions()


def _failed(call, read=False):
    """Runs call(); True when it failed: an error return (None for a read);
    for calls returning nothing (FlushCache before GDAL 3.7), a CE_Failure
    raised meanwhile."""
    gdal.ErrorReset()
    r = call()
    if read:
        return r is None, r
    if isinstance(r, int):
        return r != gdal.CE_None, r
    return gdal.GetLastErrorType() >= gdal.CE_Failure, r


@pytest.mark.parametrize("threads", ["1", "ALL_CPUS"])
def test_blocks_that_cannot_be_stored_never_read_back_old_as_success(tmp_path, threads):
    """32 blocks written row by row onto a full disk, with reads in between:
    no read returns old values as success, and FlushCache and close fail
    (stickily) once a block was lost."""
    from test_store_safety import fill_disk
    with Tmpfs(tmp_path / "disk", "1536k") as disk:
        path = os.path.join(disk.path, "s.zarr")
        h, w = 256, 512  # 4 x 8 blocks of 64x64
        old = np.arange(h * w, dtype="float64").reshape(h, w)
        create_store(path, old, ("BLOCKSIZE=64,64", "COMPRESS=NONE"))
        fill_disk(disk.path)
        new = -old - 1
        failures = []
        with threads_option(threads), _no_exceptions():
            ds = gdal.OpenEx(path, gdal.OF_RASTER | gdal.OF_UPDATE, allowed_drivers=[DRV])
            band = ds.GetRasterBand(1)
            for y in range(h):
                bad, _ = _failed(lambda: band.WriteArray(new[y:y + 1], 0, y))
                failures += ["write"] if bad else []
                if y % 32 == 31:
                    bad, got = _failed(lambda: band.ReadAsArray(0, 0, w, y + 1), read=True)
                    if not bad:  # a read that succeeds returns what was written
                        np.testing.assert_array_equal(got, new[:y + 1])
                    failures += ["read"] if bad else []
            assert failures, "no call failed"
            # A later read of the lost blocks is an error, not their old values.
            bad, got = _failed(lambda: band.ReadAsArray(), read=True)
            assert bad or np.array_equal(got, new), "old values read back as success"
            bad, got = _failed(lambda: band.ReadAsArray(0, 0, 64, 64), read=True)
            assert bad or np.array_equal(got, new[:64, :64]), "old block read back as success"
            bad, _ = _failed(lambda: ds.FlushCache())
            assert bad, "FlushCache succeeded after blocks were lost: " + str(failures)
            assert "s.zarr" in gdal.GetLastErrorMsg(), gdal.GetLastErrorMsg()
            bad, _ = _failed(lambda: ds.FlushCache())
            assert bad, "a second FlushCache forgot the lost blocks"
            gdal.ErrorReset()
            ds = None
            assert gdal.GetLastErrorType() >= gdal.CE_Failure, "close reported nothing"
        os.remove(os.path.join(disk.path, "filler"))
        got = read_all(path)
        for y in range(0, h, 64):
            for x in range(0, w, 64):
                blk = got[y:y + 64, x:x + 64]
                assert (np.array_equal(blk, old[y:y + 64, x:x + 64]) or
                        np.array_equal(blk, new[y:y + 64, x:x + 64])), (y, x)


def _md_array(path, n):
    ds = gdal.OpenEx(path, gdal.OF_MULTIDIM_RASTER | gdal.OF_UPDATE, allowed_drivers=[DRV])
    return ds, ds.GetRootGroup().OpenMDArray("a")


@pytest.mark.parametrize("drop_array", [False, True])
def test_multidim_partial_chunks_that_cannot_be_stored_fail_every_flush_and_close(tmp_path,
                                                                                  drop_array):
    """Partial chunks wait in the write buffer: when they cannot be stored,
    FlushCache fails, and keeps failing, and so does close (issue 33 #9),
    also when the array handle was released before."""
    from test_store_safety import fill_disk
    with Tmpfs(tmp_path / "disk", "1536k") as disk:
        path = os.path.join(disk.path, "m.zarr")
        n = 65536
        ds = gdal.GetDriverByName(DRV).CreateMultiDimensional(path)
        rg = ds.GetRootGroup()
        dim = rg.CreateDimension("x", None, None, n)
        a = rg.CreateMDArray("a", [dim], gdal.ExtendedDataType.Create(gdal.GDT_Int32),
                             ["BLOCKSIZE=4096", "COMPRESS=NONE"])
        old = np.arange(n, dtype="int32") + 1
        assert a.Write(old) == gdal.CE_None
        a = rg = ds = None
        fill_disk(disk.path)
        with _no_exceptions():
            ds, a = _md_array(path, n)
            for k in range(0, n, 4096):  # the first half of every chunk
                a.Write(np.full(2048, -1, dtype="int32"), [k], [2048])
            if drop_array:
                a = None
            for attempt in range(2):
                bad, _ = _failed(lambda: ds.FlushCache())
                assert bad, f"FlushCache {attempt} succeeded with chunks not stored"
                assert "m.zarr" in gdal.GetLastErrorMsg(), gdal.GetLastErrorMsg()
            gdal.ErrorReset()
            a = ds = None
            assert gdal.GetLastErrorType() >= gdal.CE_Failure, "close reported nothing"
        os.remove(os.path.join(disk.path, "filler"))
        ds, a = _md_array(path, n)
        got = a.ReadAsArray()
        for k in range(0, n, 4096):  # each chunk old or merged, never a mix
            chunk, was = got[k:k + 4096], old[k:k + 4096]
            merged = np.concatenate([np.full(2048, -1, dtype="int32"), was[2048:]])
            assert np.array_equal(chunk, was) or np.array_equal(chunk, merged), k


@pytest.mark.parametrize("threads", ["1", "ALL_CPUS"])
def test_gdaladdo_fails_when_the_levels_cannot_be_stored(tmp_path, threads):
    """gdaladdo onto a disk with room for the levels' metadata but not their chunks exits non-zero
    (the flush of the overview levels used to be ignored), and the full resolution is untouched."""
    import subprocess
    from test_store_safety import fill_disk
    with Tmpfs(tmp_path / "disk", "1536k") as disk:
        path = os.path.join(disk.path, "s.zarr")
        rng = np.random.default_rng(7)
        data = rng.random((256, 256), dtype=np.float32)  # incompressible: chunks need their size
        src = gdal.GetDriverByName("MEM").Create("", 256, 256, 1, gdal.GDT_Float32)
        src.GetRasterBand(1).WriteArray(data)
        gdal.Translate(path, src, format="Zarr3", creationOptions=["BLOCKSIZE=64"])
        src = None
        fill_disk(disk.path)
        filler = os.path.join(disk.path, "filler")
        os.truncate(filler, max(0, os.path.getsize(filler) - 24 * 1024))  # room for metadata only
        env = dict(os.environ, GDAL_NUM_THREADS=threads)
        r = subprocess.run(["gdaladdo", "-q", path, "2", "4"], capture_output=True, text=True, env=env,
                           timeout=120)
        assert r.returncode != 0, r.stdout + r.stderr
        os.remove(filler)
        ds = gdal.Open(path)
        np.testing.assert_array_equal(ds.GetRasterBand(1).ReadAsArray(), data)
