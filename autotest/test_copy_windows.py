"""CreateCopy reads its source in windows of whole chunks
(RasterCopy::CopyPixels): a wide raster arrives whole with progress reported
to the end, and a source that fails part way fails the copy with the
source's own error, leaving no output behind, on one thread and on two."""
import os

import numpy as np
import pytest
from osgeo import gdal

from test_block_writes import threads_option

DRV = "Zarr3"


@pytest.mark.parametrize("threads", ["1", "2"])
def test_wide_source_arrives_whole(tmp_path, threads):
    want = np.random.default_rng(3).integers(0, 255, (600, 70000), dtype=np.uint8)
    src = gdal.GetDriverByName("MEM").Create("", 70000, 600, 1, gdal.GDT_Byte)
    src.GetRasterBand(1).WriteArray(want)
    steps = []
    out = str(tmp_path / "wide.zarr")

    def progress(pct, msg, data):
        steps.append(pct)
        return 1

    with threads_option(threads):
        gdal.Translate(out, src, format=DRV, callback=progress,
                       creationOptions=["BLOCKSIZE=256,256", "COMPRESS=ZSTD"])
    np.testing.assert_array_equal(gdal.Open(out).ReadAsArray(), want)
    assert steps == sorted(steps) and steps[-1] == 1.0, steps


@pytest.mark.parametrize("threads", ["1", "2"])
def test_source_failing_part_way_fails_the_copy(tmp_path, threads):
    # 32 MiB of float32 whose file ends three quarters of the way.
    src_path = str(tmp_path / "cut.tif")
    ds = gdal.GetDriverByName("GTiff").Create(src_path, 2048, 4096, 1, gdal.GDT_Float32)
    ds.GetRasterBand(1).Fill(1.5)
    ds = None
    os.truncate(src_path, os.path.getsize(src_path) * 3 // 4)
    out = str(tmp_path / "copy.zarr")
    # GTiff decoding on one thread: with its own threads GDAL 3.6 reports no
    # error for the missing strips.
    src = gdal.OpenEx(src_path, open_options=["NUM_THREADS=1"])
    with threads_option(threads), pytest.raises(RuntimeError) as e:
        gdal.Translate(out, src, format=DRV, creationOptions=["BLOCKSIZE=256,256"])
    msg = str(e.value)
    assert "reading the source failed" in msg and "cut.tif" in msg, msg
    assert not os.path.exists(out)
