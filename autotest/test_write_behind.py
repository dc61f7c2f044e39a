"""Writes on one thread (GDAL_NUM_THREADS=1, issue 18): the chunks are encoded
on the calling thread while a second thread stores them (write-behind). Every
value arrives, and a store that fails part way (a full disk) still fails the
write with the OS error naming the chunk, keeps each chunk old or new (never
a mix) and leaves no temporary files."""
import glob
import os

import numpy as np
import pytest
from osgeo import gdal

from test_block_writes import threads_option
from test_store_safety import (Tmpfs, chunk_files, create_store, fill_disk, read_all,  # noqa: F401
                               small_disk)

DRV = "Zarr3"

LAYOUTS = {
    "regular": ["BLOCKSIZE=64,64", "COMPRESS=ZSTD"],
    "sharded": ["BLOCKSIZE=128,128", "SHARD_CHUNK_SHAPE=64,64", "COMPRESS=ZSTD"],
}


def noise(h, w, seed):
    return np.random.default_rng(seed).random((h, w))  # float64: compresses badly


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_one_thread_copy_stores_every_chunk(tmp_path, layout):
    want = noise(320, 448, 1)
    path = str(tmp_path / "copy.zarr")
    with threads_option("1"):
        create_store(path, want, LAYOUTS[layout])
    np.testing.assert_array_equal(read_all(path), want)
    assert len(chunk_files(path)) == (35 if layout == "regular" else 12)


def test_one_thread_copy_onto_a_full_disk_names_the_chunk(tmp_path):
    with Tmpfs(tmp_path / "disk", "1m") as disk:
        path = os.path.join(disk.path, "big.zarr")
        src = gdal.GetDriverByName("MEM").Create("", 512, 512, 1, gdal.GDT_Float64)
        src.GetRasterBand(1).WriteArray(noise(512, 512, 2))  # 2 MiB: does not fit
        gdal.ErrorReset()
        with threads_option("1"), _quiet():
            try:
                out = gdal.GetDriverByName(DRV).CreateCopy(path, src,
                                                           options=["BLOCKSIZE=64,64",
                                                                    "COMPRESS=NONE"])
                msg = gdal.GetLastErrorMsg()
            except RuntimeError as e:
                out, msg = None, str(e)
        assert out is None
        assert "No space left on device" in msg, msg
        assert "big.zarr" in msg and "/c/" in msg, msg
        assert not glob.glob(f"{disk.path}/**/*.tmp.*", recursive=True)


def test_one_thread_window_write_on_a_full_disk_keeps_chunks_whole(small_disk):
    path = os.path.join(small_disk.path, "s.zarr")
    old = np.arange(256 * 256, dtype="float64").reshape(256, 256)
    create_store(path, old, ("BLOCKSIZE=64,64", "COMPRESS=ZSTD"))
    fill_disk(small_disk.path)
    new = noise(256, 256, 3)  # 512 KiB that do not compress: cannot all fit
    with threads_option("1"):
        ds = gdal.OpenEx(path, gdal.OF_RASTER | gdal.OF_UPDATE, allowed_drivers=[DRV])
        gdal.ErrorReset()
        with _quiet():
            try:
                err = ds.GetRasterBand(1).WriteArray(new)
                msg = gdal.GetLastErrorMsg()
            except RuntimeError as e:
                err, msg = gdal.CE_Failure, str(e)
        assert err != gdal.CE_None
        assert "No space left on device" in msg and "s.zarr" in msg, msg
        with _quiet():
            ds = None
    os.remove(os.path.join(small_disk.path, "filler"))
    got = read_all(path)
    for y in range(0, 256, 64):
        for x in range(0, 256, 64):
            block = got[y:y + 64, x:x + 64]
            assert (np.array_equal(block, old[y:y + 64, x:x + 64]) or
                    np.array_equal(block, new[y:y + 64, x:x + 64])), (y, x)
    assert not glob.glob(f"{small_disk.path}/**/*.tmp.*", recursive=True)


class _quiet:
    def __enter__(self):
        gdal.PushErrorHandler("CPLQuietErrorHandler")

    def __exit__(self, *exc):
        gdal.PopErrorHandler()
