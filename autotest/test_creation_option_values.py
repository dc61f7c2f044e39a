"""Creation option values as GIS users know them from GDAL's built-in Zarr driver
(issue 17): BLOSC_SHUFFLE=NONE/BYTE/BIT, a warning for options the chosen COMPRESS
ignores, a description for every option, CHUNK_SHAPES as lenient about leading (band)
axes as BLOCKSIZE."""
import json

import numpy as np
import pytest
from osgeo import gdal

gdal.UseExceptions()


def mem_source(bands=1, h=16, w=24):
    src = gdal.GetDriverByName("MEM").Create("", w, h, bands, gdal.GDT_UInt16)
    for b in range(bands):
        src.GetRasterBand(b + 1).WriteArray(
            (np.arange(h * w, dtype=np.uint16).reshape(h, w) + 100 * b))
    return src


def copy(tmp_path, name, options, bands=1):
    out = str(tmp_path / name)
    src = mem_source(bands)
    messages = []

    def handler(cls, num, msg):
        messages.append((cls, msg))

    gdal.PushErrorHandler(handler)
    try:
        ds = gdal.GetDriverByName("Zarr3").CreateCopy(out, src, options=options)
        ds = None
    finally:
        gdal.PopErrorHandler()
    ds = gdal.Open(out)
    for b in range(bands):
        np.testing.assert_array_equal(ds.GetRasterBand(b + 1).ReadAsArray(),
                                      src.GetRasterBand(b + 1).ReadAsArray())
    return out, messages


def array_json(store):
    for p in sorted(__import__("pathlib").Path(store).rglob("zarr.json")):
        j = json.loads(p.read_text())
        if j.get("node_type") == "array" and len(j["shape"]) >= 2:
            return j
    raise AssertionError("no array in " + store)


def blosc_config(j):
    codecs = j["codecs"]
    names = [c["name"] for c in codecs]
    assert "blosc" in names, names
    return codecs[names.index("blosc")]["configuration"]


@pytest.mark.parametrize("gdal_value,zarr_value", [("NONE", "noshuffle"), ("BYTE", "shuffle"),
                                                   ("BIT", "bitshuffle"), ("byte", "shuffle"),
                                                   ("bitshuffle", "bitshuffle")])
def test_blosc_shuffle_takes_gdal_zarr_driver_values(tmp_path, gdal_value, zarr_value):
    out, messages = copy(tmp_path, "s.zarr", ["COMPRESS=BLOSC", "BLOSC_SHUFFLE=" + gdal_value])
    assert blosc_config(array_json(out))["shuffle"] == zarr_value
    assert not [m for c, m in messages if c >= gdal.CE_Warning], messages


def test_blosc_shuffle_default_is_byte_shuffle(tmp_path):
    out, _ = copy(tmp_path, "s.zarr", ["COMPRESS=BLOSC"])
    assert blosc_config(array_json(out))["shuffle"] == "shuffle"


def test_bad_blosc_shuffle_names_option_and_values(tmp_path):
    with pytest.raises(RuntimeError) as e:
        gdal.GetDriverByName("Zarr3").CreateCopy(str(tmp_path / "s.zarr"), mem_source(),
                                                 options=["COMPRESS=BLOSC", "BLOSC_SHUFFLE=WORD"])
    assert "BLOSC_SHUFFLE=WORD" in str(e.value) and "NONE, BYTE or BIT" in str(e.value)
    assert not (tmp_path / "s.zarr" / "zarr.json").exists()


@pytest.mark.parametrize("options,ignored", [
    (["BLOSC_CLEVEL=7"], "BLOSC_CLEVEL"),
    (["BLOSC_SHUFFLE=BIT", "BLOSC_CNAME=zstd"], "BLOSC_SHUFFLE"),
    (["COMPRESS=GZIP", "ZSTD_LEVEL=9"], "ZSTD_LEVEL"),
    (["COMPRESS=NONE", "GZIP_LEVEL=2"], "GZIP_LEVEL"),
])
def test_options_the_compressor_ignores_warn(tmp_path, options, ignored):
    out, messages = copy(tmp_path, "s.zarr", options)
    warnings = [m for c, m in messages if c == gdal.CE_Warning]
    assert any(ignored in m and "ignored" in m for m in warnings), messages
    # The chosen compressor is the one written.
    names = [c["name"] for c in array_json(out)["codecs"]]
    assert "blosc" not in names


def test_options_of_the_chosen_compressor_do_not_warn(tmp_path):
    _, messages = copy(tmp_path, "s.zarr", ["COMPRESS=GZIP", "GZIP_LEVEL=1"])
    assert not [m for c, m in messages if c >= gdal.CE_Warning], messages


def test_every_creation_option_has_a_description():
    drv = gdal.GetDriverByName("Zarr3")
    for key in (gdal.DMD_CREATIONOPTIONLIST, "DMD_MULTIDIM_ARRAY_CREATIONOPTIONLIST"):
        xml = drv.GetMetadataItem(key)
        assert xml, key
        tree = gdal.ParseXMLString(xml)
        options = [n for n in tree[2:] if n[1] == "Option"]
        assert len(options) >= 9, key
        for opt in options:
            attrs = {a[1]: a[2][1] for a in opt[2:] if a[0] == gdal.CXT_Attribute}
            assert attrs.get("description"), (key, attrs)


def test_chunk_shapes_is_as_lenient_as_blocksize_for_band_axes(tmp_path):
    out, messages = copy(tmp_path, "s.zarr", ["CHUNK_SHAPES=[[10,6],24]"], bands=3)
    j = array_json(out)
    assert j["shape"] == [3, 16, 24]
    grid = j["chunk_grid"]
    assert grid["name"] == "rectilinear", grid
    shapes = grid["configuration"]["chunk_shapes"]
    assert shapes[0] in (1, [1, 1, 1], [[1, 3]]), shapes
    assert not [m for c, m in messages if c >= gdal.CE_Warning], messages
    # Same layout as BLOCKSIZE with two entries for a regular grid.
    out2, _ = copy(tmp_path, "r.zarr", ["CHUNK_SHAPES=[8,12]"], bands=3)
    assert array_json(out2)["chunk_grid"]["configuration"]["chunk_shape"] == [1, 8, 12]
    out3, _ = copy(tmp_path, "b.zarr", ["BLOCKSIZE=8,12"], bands=3)
    assert array_json(out3)["chunk_grid"] == array_json(out2)["chunk_grid"]


def test_chunk_shapes_with_more_entries_than_axes_is_refused(tmp_path):
    with pytest.raises(RuntimeError) as e:
        gdal.GetDriverByName("Zarr3").CreateCopy(str(tmp_path / "s.zarr"), mem_source(),
                                                 options=["CHUNK_SHAPES=[1,8,12]"])
    assert "CHUNK_SHAPES" in str(e.value) and "1 to 2" in str(e.value)
