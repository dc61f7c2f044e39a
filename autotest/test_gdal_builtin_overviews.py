"""Overview (multiscales) interop with GDAL 3.13's own Zarr driver, both ways.

- GDAL 3.13's BuildOverviews on a v3 store (levels as groups ovr_<f>x holding
  an array named like the base): the plugin opens it with the overview count,
  sizes and values GDAL itself reports.
- The plugin's gdaladdo / OVERVIEWS=AUTO: GDAL 3.13 opens the result with the
  same overviews.

Skipped before GDAL 3.13 unless ZARR3_EXPECT_BUILTIN_V3=1 (the sid leg),
which turns the skip into a failure.
"""
import numpy as np
import pytest
from osgeo import gdal

from test_gdal_builtin import require_builtin_v3, source_raster


def overviews(ds):
    """[(xsize, ysize, [values of each band])] of every overview."""
    out = []
    for i in range(ds.GetRasterBand(1).GetOverviewCount()):
        bands = [ds.GetRasterBand(b + 1).GetOverview(i) for b in range(ds.RasterCount)]
        out.append((bands[0].XSize, bands[0].YSize, [b.ReadAsArray() for b in bands]))
    return out


def assert_same_overviews(got, ref):
    assert [(x, y) for x, y, _ in got] == [(x, y) for x, y, _ in ref]
    assert len(ref) > 0
    for (_, _, gv), (_, _, rv) in zip(got, ref):
        for g, r in zip(gv, rv):
            np.testing.assert_array_equal(g, r)


GDAL_CASES = {
    "one_band": (1, ["FORMAT=ZARR_V3"]),
    "three_bands_blocks": (3, ["FORMAT=ZARR_V3", "COMPRESS=ZSTD", "BLOCKSIZE=1,16,16"]),
    "sharded": (1, ["FORMAT=ZARR_V3", "BLOCKSIZE=32,32", "SHARD_CHUNK_SHAPE=16,16"]),
}


@pytest.mark.parametrize("case", sorted(GDAL_CASES))
def test_gdal313_built_overviews_read_the_same(tmp_path, case):
    require_builtin_v3()
    bands, options = GDAL_CASES[case]
    path = tmp_path / f"{case}.zarr"
    gdal.Translate(str(path), source_raster(bands=bands, dtype=gdal.GDT_Byte), format="Zarr",
                   creationOptions=options)
    ds = gdal.Open(f'ZARR:"{path}"', gdal.GA_Update)
    assert ds.GetDriver().ShortName == "Zarr"
    assert ds.BuildOverviews("AVERAGE", [2, 4]) == 0
    ds = None
    ref = gdal.Open(f'ZARR:"{path}"')
    got = gdal.Open(str(path))
    assert got.GetDriver().ShortName == "Zarr3"
    assert (got.RasterXSize, got.RasterYSize, got.RasterCount) == (ref.RasterXSize, ref.RasterYSize,
                                                                   ref.RasterCount)
    assert_same_overviews(overviews(got), overviews(ref))
    # RasterIO into a small buffer reads the same overview in both.
    assert got.ReadRaster(0, 0, 67, 45, 17, 12) == ref.ReadRaster(0, 0, 67, 45, 17, 12)


PLUGIN_CASES = {
    "gdaladdo": (1, ["BLOCKSIZE=16,16"], "gdaladdo"),
    "three_bands_sharded": (3, ["BLOCKSIZE=32,32", "SHARD_CHUNK_SHAPE=16,16"], "gdaladdo"),
    "creation_option": (1, ["BLOCKSIZE=16,16", "OVERVIEWS=AUTO"], None),
}


@pytest.mark.parametrize("case", sorted(PLUGIN_CASES))
def test_plugin_written_overviews_read_the_same_in_gdal313(tmp_path, case, run_tool):
    require_builtin_v3()
    bands, options, tool = PLUGIN_CASES[case]
    path = tmp_path / f"{case}.zarr"
    gdal.Translate(str(path), source_raster(bands=bands, dtype=gdal.GDT_Byte), format="Zarr3",
                   creationOptions=options)
    if tool:
        p = run_tool("gdaladdo", "-r", "average", path, "2", "4")
        assert p.returncode == 0, p.stderr
    got = gdal.Open(str(path))
    assert got.GetDriver().ShortName == "Zarr3"
    ref = gdal.Open(f'ZARR:"{path}"')
    assert ref.GetDriver().ShortName == "Zarr"
    assert ref.RasterCount == bands, ref.GetMetadata("SUBDATASETS")
    assert_same_overviews(overviews(ref), overviews(got))
    want = [(34, 23), (17, 12)] + ([] if tool else [(9, 6)])  # AUTO: until a level fits a 16x16 block
    assert [(x, y) for x, y, _ in overviews(got)] == want
