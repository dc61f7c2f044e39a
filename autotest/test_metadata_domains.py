"""Attributes GDAL's KEY=VALUE form would mangle (names with ':' or '=') and
georeferencing attributes (_CRS, proj:*, spatial:*, zarr_conventions) stay
out of the default metadata domain: all attributes are in the
json:ZARR3_ATTRIBUTES domain as one JSON object. They are not copied into
other formats as plain metadata and never written back as junk."""
import json
import os
import subprocess

import numpy as np
import pytest
from osgeo import gdal, osr

from conftest import drop_consolidated

DOMAIN = "json:ZARR3_ATTRIBUTES"
GEOREF = ("_CRS", "zarr_conventions", "proj:code", "proj:wkt2", "spatial:transform", "spatial:dimensions")


def geo_store(tmp_path, name="geo.zarr"):
    src = gdal.GetDriverByName("MEM").Create("", 6, 4, 1, gdal.GDT_Float32)
    src.GetRasterBand(1).WriteArray(np.arange(24, dtype=np.float32).reshape(4, 6))
    src.SetGeoTransform([2.0, 0.5, 0.0, 48.0, 0.0, -0.5])
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(4326)
    src.SetSpatialRef(srs)
    src.SetMetadataItem("title", "hello")
    src.SetMetadataItem("history", "made: by a test")  # ':' in a value is fine
    out = tmp_path / name
    gdal.Translate(str(out), src, format="Zarr3")
    return out


def attrs_of(store):
    name = store.name.rsplit(".", 1)[0]
    return json.loads((store / name / "zarr.json").read_text())["attributes"]


def test_store_holds_the_georef_attributes(tmp_path):
    attrs = attrs_of(geo_store(tmp_path))
    assert attrs["proj:code"] == "EPSG:4326"
    assert attrs["spatial:transform"] == [0.5, 0.0, 2.0, 0.0, -0.5, 48.0]
    assert attrs["title"] == "hello"


def test_default_domain_plain_attributes_only(tmp_path):
    ds = gdal.Open(str(geo_store(tmp_path)))
    md = ds.GetMetadata()
    # grid_mapping (the pointer to the CRS variable, whose CRS GetSpatialRef gives) is no plain item.
    assert md == {"title": "hello", "history": "made: by a test"}
    for item in ds.GetMetadata_List():
        assert not item.startswith(("proj", "spatial", "_CRS", "zarr_conventions", "grid_mapping"))


def test_json_domain_holds_every_attribute(tmp_path):
    store = geo_store(tmp_path)
    ds = gdal.Open(str(store))
    assert DOMAIN in ds.GetMetadataDomainList()
    items = ds.GetMetadata_List(DOMAIN)
    assert len(items) == 1
    assert json.loads(items[0]) == attrs_of(store)
    assert json.loads(items[0])["proj:code"] == "EPSG:4326"


def test_odd_names_only_in_json_domain(tmp_path):
    store = geo_store(tmp_path)
    p = store / "geo" / "zarr.json"
    meta = json.loads(p.read_text())
    meta["attributes"].update({"a=b": 1, "foo:bar": "x", "count": 3, "obj": {"k": [1, 2]}})
    p.write_text(json.dumps(meta))
    drop_consolidated(store)
    ds = gdal.Open(str(store))
    md = ds.GetMetadata()
    assert md["count"] == "3" and md["obj"] == '{"k":[1,2]}'
    assert "a" not in md and "foo" not in md and "a=b" not in md
    j = json.loads(ds.GetMetadata_List(DOMAIN)[0])
    assert j["a=b"] == 1 and j["foo:bar"] == "x"


def test_gdal_translate_to_gtiff_has_no_junk(tmp_path, run_tool):
    store = geo_store(tmp_path)
    tif = tmp_path / "out.tif"
    p = run_tool("gdal_translate", store, tif, check=True)
    assert "ERROR" not in p.stderr
    info = run_tool("gdalinfo", tif, check=True).stdout
    for junk in ("proj=", "spatial=", "_CRS", "zarr_conventions", "proj:", "spatial:"):
        assert junk not in info
    assert "title=hello" in info
    t = gdal.Open(str(tif))
    assert t.GetMetadataItem("title") == "hello"
    assert t.GetSpatialRef().GetAuthorityCode(None) == "4326"
    assert t.GetGeoTransform() == (2.0, 0.5, 0.0, 48.0, 0.0, -0.5)


def test_rasterio_tags_not_mangled(tmp_path, driver_path):
    store = geo_store(tmp_path)
    code = (
        "import json, sys, rasterio\n"
        "with rasterio.open(sys.argv[1]) as ds:\n"
        "    print(json.dumps(ds.tags()))\n"
    )
    env = dict(os.environ, GDAL_DRIVER_PATH=driver_path)
    p = subprocess.run(["/usr/bin/python3", "-c", code, str(store)], env=env, capture_output=True,
                       text=True, timeout=120)
    if p.returncode != 0 and "No module named 'rasterio'" in p.stderr:
        pytest.skip("rasterio not installed")
    assert p.returncode == 0, p.stderr
    tags = json.loads(p.stdout)
    assert tags == {"title": "hello", "history": "made: by a test"}  # no grid_mapping (issue 32)


def test_update_metadata_writes_no_junk(tmp_path):
    store = geo_store(tmp_path)
    before = attrs_of(store)
    ds = gdal.Open(str(store), gdal.GA_Update)
    md = ds.GetMetadata()
    md["title"] = "updated"
    ds.SetMetadata(md)  # what rasterio's update_tags does
    ds = None
    after = attrs_of(store)
    assert "proj" not in after and "spatial" not in after
    assert after["title"] == "updated"
    for k in ("proj:code", "spatial:transform", "_CRS", "zarr_conventions"):
        if k in before:
            assert after[k] == before[k]
    z = gdal.Open(str(store))
    assert z.GetSpatialRef().GetAuthorityCode(None) == "4326"
    assert z.GetGeoTransform() == (2.0, 0.5, 0.0, 48.0, 0.0, -0.5)


def test_set_metadata_replaces_plain_attributes(tmp_path):
    store = geo_store(tmp_path)
    ds = gdal.Open(str(store), gdal.GA_Update)
    ds.SetMetadata({"title": "only"})
    ds = None
    after = attrs_of(store)
    assert after["title"] == "only" and "history" not in after
    assert after["proj:code"] == "EPSG:4326"  # georeferencing is not metadata


def test_georef_items_are_refused_with_a_warning(tmp_path):
    store = geo_store(tmp_path)
    msgs = []
    ds = gdal.Open(str(store), gdal.GA_Update)
    gdal.PushErrorHandler(lambda c, n, m: msgs.append(m))
    ds.SetMetadataItem("proj:code", "EPSG:3857")
    ds.SetMetadata(["proj:wkt2=junk", "spatial:transform=[1,0,0,0,1,0]", "keep=1"])
    gdal.PopErrorHandler()
    ds = None
    assert sum("georeferencing" in m for m in msgs) == 3
    after = attrs_of(store)
    assert after["proj:code"] == "EPSG:4326" and after["keep"] == "1"
    assert after["spatial:transform"] == [0.5, 0.0, 2.0, 0.0, -0.5, 48.0]
    assert "proj" not in after and "spatial" not in after


def test_ordinary_attribute_with_colon_key_in_update(tmp_path):
    store = geo_store(tmp_path)
    ds = gdal.Open(str(store), gdal.GA_Update)
    ds.SetMetadataItem("acdd:creator", "me")  # stored under its full name
    ds = None
    after = attrs_of(store)
    assert after["acdd:creator"] == "me" and "acdd" not in after
    z = gdal.Open(str(store))
    assert z.GetMetadataItem("acdd:creator") is None  # not in the default domain
    assert json.loads(z.GetMetadata_List(DOMAIN)[0])["acdd:creator"] == "me"


def test_json_domain_is_read_only(tmp_path):
    store = geo_store(tmp_path)
    ds = gdal.Open(str(store), gdal.GA_Update)
    with pytest.raises(RuntimeError, match="read-only"):
        ds.SetMetadata(['{"x": 1}'], DOMAIN)
    ds = None
    assert "x" not in attrs_of(store)


def test_zarr_to_zarr_copy_keeps_georef_without_warnings(tmp_path):
    store = geo_store(tmp_path)
    msgs = []
    gdal.PushErrorHandler(lambda c, n, m: msgs.append(m))
    out = tmp_path / "copy.zarr"
    gdal.Translate(str(out), str(store), format="Zarr3")
    gdal.PopErrorHandler()
    assert msgs == []
    a = attrs_of(out)
    assert a["proj:code"] == "EPSG:4326" and a["title"] == "hello"
    assert "proj" not in a and "spatial" not in a


# ---------------------------------- datetime64/timedelta64 extremes (issue 33 #16)

NAT = -(1 << 63)
EXTREMES = [1, -922337203685477579, 922337203685477579, (1 << 63) - 1, -(1 << 63) + 1, NAT]


def _node(path, meta, chunk=None):
    path.mkdir(parents=True, exist_ok=True)
    (path / "zarr.json").write_text(json.dumps(meta))
    if chunk is not None:
        key = path / "c" / "/".join("0" * len(meta["shape"]))
        key.parent.mkdir(parents=True, exist_ok=True)
        key.write_bytes(chunk)


def _array(shape, dtype, dims, fill):
    return {"zarr_format": 3, "node_type": "array", "shape": shape, "data_type": dtype,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": shape}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": fill, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "attributes": {}, "dimension_names": dims}


@pytest.mark.parametrize("unit", ["ms", "us", "s", "ns"])
@pytest.mark.parametrize("kind", ["timedelta64", "datetime64"])
def test_temporal_extremes_never_read_as_nat(tmp_path, kind, unit):
    """Every valid int64 count of a scaled unit (10 ms, 10 us, ...) reads back
    exactly, and no text of a valid value says NaT: a unit conversion that
    overflows must not turn a value into "missing"."""
    root = tmp_path / "t.zarr"
    _node(root, {"zarr_format": 3, "node_type": "group", "attributes": {}})
    dt = {"name": f"numpy.{kind}", "configuration": {"unit": unit, "scale_factor": 10}}
    n = len(EXTREMES)
    _node(root / "time", _array([n], dt, ["time"], "NaT"), np.array(EXTREMES, "<i8").tobytes())
    _node(root / "v", _array([n, 2, 2], "uint8", ["time", "y", "x"], 0), bytes(4 * n))
    mds = gdal.OpenEx(str(root), gdal.OF_MULTIDIM_RASTER)
    assert mds.GetRootGroup().OpenMDArray("time").ReadAsArray().tolist() == EXTREMES
    ds = gdal.Open(f'ZARR3:"{root}":/v')
    for i, v in enumerate(EXTREMES):
        text = ds.GetRasterBand(i + 1).GetMetadataItem("time")
        assert text is not None
        assert ("NaT" in text) == (v == NAT), (v, text)
        if kind == "timedelta64":
            assert text == ("NaT" if v == NAT else f"{v} 10{unit}")


def test_invalid_utf32_code_point_is_refused_naming_the_store(tmp_path):
    root = tmp_path / "u.zarr"
    dt = {"name": "fixed_length_utf32", "configuration": {"length_bytes": 8}}
    meta = _array([2], dt, ["n"], "")
    _node(root, meta, np.array([ord("a"), 0, 0xD800, 0], "<u4").tobytes())
    g = gdal.OpenEx(str(root), gdal.OF_MULTIDIM_RASTER).GetRootGroup()
    arr = g.OpenMDArray(g.GetMDArrayNames()[0])
    with pytest.raises(RuntimeError) as e:
        arr.Read()
    assert str(root) in str(e.value) and "U+D800" in str(e.value)
