"""Georeferencing read from every supported convention, and written so that
this plugin reads it back (GeoZarr spatial:/proj:, CF grid_mapping, _CRS,
regular coordinate arrays)."""
import json

import numpy as np
import pytest
from osgeo import gdal, osr


def array_meta(shape, dtype="float32", dims=None, attrs=None, fill=0):
    m = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": list(shape),
        "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(shape)}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "attributes": attrs or {},
    }
    if dims:
        m["dimension_names"] = dims
    return m


def write_array(root, name, values, dtype, dims=None, attrs=None):
    d = root / name if name else root
    d.mkdir(parents=True, exist_ok=True)
    values = np.asarray(values, dtype=np.dtype(dtype).newbyteorder("<"))
    (d / "zarr.json").write_text(json.dumps(array_meta(values.shape, dtype, dims, attrs)))
    if values.ndim:
        key = d / "c" / "/".join(["0"] * values.ndim)
        key.parent.mkdir(parents=True, exist_ok=True)
        key.write_bytes(values.tobytes())


def group(root, attrs=None):
    root.mkdir(parents=True, exist_ok=True)
    (root / "zarr.json").write_text(json.dumps({"zarr_format": 3, "node_type": "group", "attributes": attrs or {}}))


DATA = np.arange(12, dtype=np.float32).reshape(3, 4)


def test_geozarr_spatial_transform_and_proj_code(tmp_path):
    root = tmp_path / "a.zarr"
    write_array(root, "", DATA, "float32", ["y", "x"],
                {"proj:code": "EPSG:32632", "spatial:transform": [10.0, 0.0, 400000.0, 0.0, -10.0, 5000000.0]})
    ds = gdal.Open(str(root))
    assert ds.GetGeoTransform() == (400000.0, 10.0, 0.0, 5000000.0, 0.0, -10.0)
    assert ds.GetSpatialRef().GetAuthorityCode(None) == "32632"


def test_geozarr_node_registration_and_projjson(tmp_path):
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(3035)
    root = tmp_path / "b.zarr"
    write_array(root, "", DATA, "float32", ["y", "x"],
                {"proj:projjson": json.loads(srs.ExportToPROJJSON()),
                 "spatial:transform": [2.0, 0.0, 100.0, 0.0, -2.0, 200.0], "spatial:registration": "node"})
    ds = gdal.Open(str(root))
    assert ds.GetGeoTransform() == (99.0, 2.0, 0.0, 201.0, 0.0, -2.0)
    assert ds.GetSpatialRef().GetAuthorityCode(None) == "3035"


def test_gdal_crs_attribute(tmp_path):
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(2154)
    root = tmp_path / "c.zarr"
    write_array(root, "", DATA, "float32", ["y", "x"], {"_CRS": {"wkt": srs.ExportToWkt()}})
    ds = gdal.Open(str(root))
    assert ds.GetSpatialRef().GetAuthorityCode(None) == "2154"
    assert ds.GetGeoTransform(can_return_null=True) is None


def test_cf_grid_mapping_geotransform(tmp_path):
    root = tmp_path / "d.zarr"
    group(root)
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(32633)
    write_array(root, "data", DATA, "float32", ["y", "x"], {"grid_mapping": "crs"})
    write_array(root, "crs", np.int32(0), "int32", None,
                {"spatial_ref": srs.ExportToWkt(), "GeoTransform": "1000 5 0 2000 0 -5"})
    ds = gdal.Open(str(root))
    assert ds.GetGeoTransform() == (1000.0, 5.0, 0.0, 2000.0, 0.0, -5.0)
    assert ds.GetSpatialRef().GetAuthorityCode(None) == "32633"


def test_coordinate_arrays_half_cell_shift_and_lonlat_default(tmp_path):
    root = tmp_path / "e.zarr"
    group(root)
    write_array(root, "t", DATA, "float32", ["lat", "lon"])
    write_array(root, "lat", [45.0, 44.0, 43.0], "float64", ["lat"], {"units": "degrees_north"})
    write_array(root, "lon", [1.0, 2.0, 3.0, 4.0], "float32", ["lon"], {"units": "degrees_east"})
    ds = gdal.Open(str(root))
    assert ds.GetGeoTransform() == pytest.approx((0.5, 1.0, 0.0, 45.5, 0.0, -1.0))
    assert ds.GetSpatialRef().GetAuthorityCode(None) == "4326"


def test_irregular_coordinates_give_no_geotransform(tmp_path):
    root = tmp_path / "f.zarr"
    group(root)
    write_array(root, "t", DATA, "float32", ["y", "x"])
    write_array(root, "y", [0.0, 1.0, 3.0], "float64", ["y"])
    write_array(root, "x", [0.0, 1.0, 2.0, 3.0], "float64", ["x"])
    ds = gdal.Open(str(root))
    assert ds.GetGeoTransform(can_return_null=True) is None


def test_transposed_axes_by_dimension_names(tmp_path):
    """dimension_names [lon, lat]: X is axis 0, Y is axis 1."""
    root = tmp_path / "g.zarr"
    a = np.arange(20, dtype=np.int16).reshape(5, 4)  # (lon, lat)
    write_array(root, "", a, "int16", ["lon", "lat"])
    ds = gdal.Open(str(root))
    assert (ds.RasterXSize, ds.RasterYSize) == (5, 4)
    assert np.array_equal(ds.ReadAsArray(), a.T)
    assert np.array_equal(ds.ReadAsArray(1, 2, 3, 2), a.T[2:4, 1:4])


def test_written_georef_reads_back_through_each_convention(tmp_path):
    src = gdal.GetDriverByName("MEM").Create("", 8, 6, 1, gdal.GDT_Float32)
    src.SetGeoTransform((100.0, 2.0, 0.0, 50.0, 0.0, -2.0))
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(32630)
    src.SetSpatialRef(srs)
    out = tmp_path / "w.zarr"
    gdal.GetDriverByName("Zarr3").CreateCopy(str(out), src)
    meta_path = out / "w" / "zarr.json"
    full = json.loads(meta_path.read_text())
    expected = (100.0, 2.0, 0.0, 50.0, 0.0, -2.0)

    def check(drop):
        m = json.loads(json.dumps(full))
        for k in drop:
            m["attributes"].pop(k, None)
        meta_path.write_text(json.dumps(m))
        ds = gdal.Open(str(out))
        assert ds.GetGeoTransform() == pytest.approx(expected)
        assert ds.GetSpatialRef().GetAuthorityCode(None) == "32630"

    geozarr = ["spatial:transform", "proj:code", "proj:wkt2", "_CRS"]
    check([])  # everything
    check(["grid_mapping", "_CRS"])  # GeoZarr alone
    check(geozarr)  # CF grid_mapping (crs_wkt + GeoTransform)
    sr = out / "spatial_ref" / "zarr.json"
    s = json.loads(sr.read_text())
    s["attributes"].pop("GeoTransform")
    sr.write_text(json.dumps(s))
    check(geozarr)  # CF coordinate arrays x/y give the transform


def test_unreadable_coordinate_array_is_named_in_a_warning(tmp_path):
    """A coordinate variable that is there but cannot be read (malformed
    zarr.json) is said, not silently dropped; the raster opens without it."""
    root = tmp_path / "bad.zarr"
    group(root)
    write_array(root, "t", DATA, "float32", ["lat", "lon"])
    write_array(root, "lat", [45.0, 44.0, 43.0], "float64", ["lat"])
    (root / "lon").mkdir()
    (root / "lon" / "zarr.json").write_text('{"zarr_format": 3, "node_type": "array", "shape": [4]')
    gdal.ErrorReset()
    gdal.PushErrorHandler("CPLQuietErrorHandler")
    try:
        ds = gdal.Open(str(root))
        msg = gdal.GetLastErrorMsg()
    finally:
        gdal.PopErrorHandler()
    assert ds is not None and ds.RasterXSize == 4
    assert "lon/zarr.json" in msg and "lon" in msg, msg
    assert ds.GetGeoTransform(can_return_null=True) is None
    np.testing.assert_array_equal(ds.ReadAsArray(), DATA)
