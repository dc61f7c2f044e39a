"""GDAL's creation option conventions, as GIS users type them (issue 32, part 1):
- one BLOCKSIZE (or SHARD_CHUNK_SHAPE) value N means N x N spatial chunks, as for COG; two values are y,x;
- GTiff's BLOCKXSIZE / BLOCKYSIZE are accepted;
- COMPRESS takes the names GDAL users pass (DEFLATE, ZLIB -> gzip; LZ4 -> blosc with lz4), any case,
  and refuses others naming the accepted ones;
- GTiff-only options (TILED, PREDICTOR, INTERLEAVE, ...) are ignored with one warning;
- the default array name (the store's name) never collides with the names the plugin writes.
"""
import json

import numpy as np
import pytest
from osgeo import gdal

gdal.UseExceptions()

W, H = 700, 600


def source(nbands=1):
    ds = gdal.GetDriverByName("MEM").Create("", W, H, nbands, gdal.GDT_UInt16)
    ds.SetGeoTransform((500000.0, 10.0, 0.0, 4000000.0, 0.0, -10.0))
    for b in range(nbands):
        a = (np.arange(W * H, dtype=np.uint32).reshape(H, W) * (b + 3) % 65521).astype(np.uint16)
        ds.GetRasterBand(b + 1).WriteArray(a)
    return ds


def copy(tmp_path, options, nbands=1, name="out.zarr"):
    out = tmp_path / name
    src = source(nbands)
    gdal.Translate(str(out), src, format="Zarr3", creationOptions=options)
    return out, src


def array_meta(store):
    arrays = [p for p in store.iterdir() if (p / "zarr.json").exists()
              and json.loads((p / "zarr.json").read_text())["node_type"] == "array"
              and p.name not in ("x", "y", "spatial_ref")]
    assert len(arrays) == 1, arrays
    return arrays[0].name, json.loads((arrays[0] / "zarr.json").read_text())


def grid_chunks(meta):
    return meta["chunk_grid"]["configuration"]["chunk_shape"]


def sharding(meta):
    c = meta["codecs"][0]
    return c["configuration"] if c["name"] == "sharding_indexed" else None


def assert_same_values(store, src):
    ds = gdal.Open(str(store))
    for b in range(src.RasterCount):
        np.testing.assert_array_equal(ds.GetRasterBand(b + 1).ReadAsArray(),
                                      src.GetRasterBand(b + 1).ReadAsArray())


@pytest.mark.parametrize("nbands,expected", [(1, [256, 256]), (3, [1, 256, 256])])
def test_single_blocksize_means_square_spatial_chunks(tmp_path, nbands, expected):
    out, src = copy(tmp_path, ["BLOCKSIZE=256"], nbands)
    _, meta = array_meta(out)
    assert grid_chunks(meta) == expected
    assert_same_values(out, src)


def test_two_blocksize_values_are_y_x(tmp_path):
    out, _ = copy(tmp_path, ["BLOCKSIZE=100,300"], 3)
    assert grid_chunks(array_meta(out)[1]) == [1, 100, 300]


def test_gtiff_block_x_y_sizes(tmp_path):
    out, src = copy(tmp_path, ["BLOCKXSIZE=128", "BLOCKYSIZE=64"], 2)
    assert grid_chunks(array_meta(out)[1]) == [1, 64, 128]
    assert_same_values(out, src)
    out2, _ = copy(tmp_path, ["BLOCKXSIZE=128"], 1, name="x_only.zarr")
    assert grid_chunks(array_meta(out2)[1]) == [512, 128]  # y keeps the default chunking


def test_blocksize_and_block_x_size_are_exclusive(tmp_path):
    with pytest.raises(RuntimeError, match="mutually exclusive"):
        copy(tmp_path, ["BLOCKSIZE=256", "BLOCKXSIZE=128"])
    assert not (tmp_path / "out.zarr").exists()


def test_single_shard_chunk_shape_means_square_inner_chunks(tmp_path):
    out, src = copy(tmp_path, ["BLOCKSIZE=200", "SHARD_CHUNK_SHAPE=100"], 3)
    _, meta = array_meta(out)
    assert grid_chunks(meta) == [1, 200, 200]
    assert sharding(meta)["chunk_shape"] == [1, 100, 100]
    assert_same_values(out, src)


def bytes_codecs(meta):
    codecs = meta["codecs"]
    return [c for c in codecs if c["name"] not in ("bytes", "transpose", "sharding_indexed")]


@pytest.mark.parametrize("value", ["DEFLATE", "deflate", "ZLIB", "Zlib", "GZIP"])
def test_deflate_and_zlib_are_gzip(tmp_path, value):
    out, src = copy(tmp_path, [f"COMPRESS={value}", "ZLEVEL=9"])
    codecs = bytes_codecs(array_meta(out)[1])
    assert codecs == [{"name": "gzip", "configuration": {"level": 9}}]
    assert_same_values(out, src)


def test_lz4_is_blosc_with_lz4(tmp_path):
    out, src = copy(tmp_path, ["COMPRESS=lz4"])
    (codec,) = bytes_codecs(array_meta(out)[1])
    assert codec["name"] == "blosc" and codec["configuration"]["cname"] == "lz4"
    assert_same_values(out, src)


def test_unsupported_compressor_names_the_accepted_ones(tmp_path):
    with pytest.raises(RuntimeError, match=r"COMPRESS=LZMA: expected NONE, ZSTD, GZIP \(also DEFLATE, ZLIB\), "
                                           r"BLOSC or LZ4"):
        copy(tmp_path, ["COMPRESS=LZMA"])
    assert not (tmp_path / "out.zarr").exists()


def test_gtiff_only_options_are_ignored_with_one_warning(tmp_path):
    messages = []

    def handler(cls, num, msg):
        if cls == gdal.CE_Warning:
            messages.append(msg)

    gdal.PushErrorHandler(handler)
    try:
        out, src = copy(tmp_path, ["TILED=YES", "PREDICTOR=2", "INTERLEAVE=BAND", "COMPRESS=DEFLATE"], 2)
    finally:
        gdal.PopErrorHandler()
    relevant = [m for m in messages if "TILED" in m or "PREDICTOR" in m or "INTERLEAVE" in m]
    assert len(relevant) == 1, messages
    assert "TILED, PREDICTOR, INTERLEAVE" in relevant[0]
    assert_same_values(out, src)


@pytest.mark.parametrize("stem", ["x", "y", "spatial_ref"])
def test_default_array_name_avoids_the_plugins_own_names(tmp_path, stem):
    out, src = copy(tmp_path, [], 1, name=f"{stem}.zarr")
    name, _ = array_meta(out)
    assert name == "data"
    assert_same_values(out, src)


def test_given_array_name_that_collides_is_still_refused(tmp_path):
    with pytest.raises(RuntimeError, match="ARRAY_NAME=x: expected a plain name"):
        copy(tmp_path, ["ARRAY_NAME=x"])


def test_default_array_name_is_the_store_name(tmp_path):
    out, _ = copy(tmp_path, [], 1, name="ndvi.zarr")
    assert array_meta(out)[0] == "ndvi"


# ------------------------------------------------------------- output folders (issue 32, part)


def test_missing_parent_folder_is_an_error(tmp_path):
    out = tmp_path / "no_such_dir" / "out.zarr"
    with pytest.raises(RuntimeError, match=r"the folder .*no_such_dir does not exist"):
        gdal.Translate(str(out), source(), format="Zarr3")
    assert not (tmp_path / "no_such_dir").exists()


def test_parent_that_is_a_file_names_the_os_cause(tmp_path):
    (tmp_path / "afile").write_text("not a folder")
    with pytest.raises(RuntimeError, match=r"cannot create the folder \(Not a directory\)"):
        gdal.Translate(str(tmp_path / "afile" / "out.zarr"), source(), format="Zarr3")
    assert (tmp_path / "afile").read_text() == "not a folder"


def test_vsimem_parents_are_created():
    out = "/vsimem/option_names/deep/er/out.zarr"
    try:
        gdal.Translate(out, source(), format="Zarr3")
        assert gdal.Open(out).RasterXSize == W
    finally:
        gdal.GetDriverByName("Zarr3").Delete(out)


def test_sample_time_coordinate_counts_every_day(tmp_path):
    """The demo sample's time coordinate: its fill value is not a real day (0 was 2023-01-01, which
    `gdalmdiminfo -stats` then left out as nodata). On a copy: statistics are saved beside the store."""
    import shutil
    from pathlib import Path
    sample = tmp_path / "sample.zarr"
    shutil.copytree(Path(__file__).resolve().parent.parent / "data" / "daily_t2m_2023.zarr", sample)
    ds = gdal.OpenEx(f'ZARR3:"{sample}"', gdal.OF_MULTIDIM_RASTER)
    t = ds.GetRootGroup().OpenMDArray("time")
    values = t.ReadAsArray()
    assert values[0] == 0 and len(values) == 365
    stats = t.ComputeStatistics(False)
    assert stats.valid_count == 365


def test_append_coord_without_append_dim_is_refused(tmp_path):
    with pytest.raises(RuntimeError, match="APPEND_COORD needs APPEND_DIM"):
        copy(tmp_path, ["APPEND_COORD=2024-01-01"])
    assert not (tmp_path / "out.zarr").exists()
