"""Classic raster API: band mapping, subdatasets, block size, window reads,
CreateCopy/Create round trips, creation options, progress/cancel, metadata."""
import json
import os
import random

import numpy as np
import pytest
from osgeo import gdal, osr

from conftest import CONFORMANCE, REPO

GDAL_NUM = int(gdal.VersionInfo("VERSION_NUM"))


def make_tif(path, arrays, gdal_type, nodata=None, epsg=32631, gt=(500000.0, 30.0, 0.0, 4000000.0, 0.0, -30.0)):
    nb = len(arrays)
    h, w = arrays[0].shape
    ds = gdal.GetDriverByName("GTiff").Create(str(path), w, h, nb, gdal_type)
    for i, a in enumerate(arrays):
        b = ds.GetRasterBand(i + 1)
        b.WriteArray(a)
        if nodata is not None:
            b.SetNoDataValue(nodata)
    ds.SetGeoTransform(gt)
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(epsg)
    ds.SetSpatialRef(srs)
    ds = None
    return path


def read_all(ds):
    return np.stack([ds.GetRasterBand(i + 1).ReadAsArray() for i in range(ds.RasterCount)])


# ------------------------------------------------------------------ read mapping


def test_geo_group_opens_directly_and_by_subdataset(conformance_dir):
    store = conformance_dir / "geo_group" / "store.zarr"
    exp = np.fromfile(conformance_dir / "geo_group" / "expected" / "air.bin", dtype="<f4").reshape(12, 18, 36)
    for name in (str(store), f'ZARR3:"{store}":/air'):
        ds = gdal.Open(name)
        assert ds.GetDriver().ShortName == "Zarr3"
        assert (ds.RasterXSize, ds.RasterYSize, ds.RasterCount) == (36, 18, 12)
        assert ds.GetGeoTransform() == pytest.approx((-180, 10, 0, 90, 0, -10))
        assert ds.GetSpatialRef().GetAuthorityCode(None) == "4326"
        assert np.array_equal(ds.ReadAsArray(), exp)
        b = ds.GetRasterBand(3)
        assert b.GetNoDataValue() == 0.0
        assert b.GetUnitType() == "K"
        assert b.GetMetadataItem("time") is not None
        assert ds.GetMetadataItem("grid_mapping") is None  # the CRS variable's pointer: no item
    # The unique data array opens directly; coordinate arrays are no subdatasets
    # and neither is the raster itself (QGIS would offer them as sublayers).
    assert gdal.Open(str(store)).GetMetadata("SUBDATASETS") == {}
    assert gdal.Open(f'ZARR3:"{store}":/air').GetMetadata("SUBDATASETS") == {}


def test_band_coordinate_metadata(conformance_dir):
    ds = gdal.Open(str(conformance_dir / "geo_group" / "store.zarr"))
    times = np.fromfile(conformance_dir / "geo_group" / "expected" / "time.bin", dtype="<i8")
    for i in (0, 5, 11):
        b = ds.GetRasterBand(i + 1)
        assert float(b.GetMetadataItem("time")) == times[i]
        assert b.GetMetadataItem("DIM_time_INDEX") == str(i)
        assert b.GetMetadataItem("time#units") == "days since 2000-01-01"


def test_rect_3d_monthly_365_bands(conformance_dir):
    store = conformance_dir / "rect_3d_monthly_f32" / "store.zarr"
    ds = gdal.Open(str(store))
    assert (ds.RasterXSize, ds.RasterYSize, ds.RasterCount) == (36, 18, 365)
    exp = np.fromfile(conformance_dir / "rect_3d_monthly_f32" / "expected" / "t2m.bin", dtype="<f4").reshape(365, 18, 36)
    got = ds.ReadAsArray()
    assert got.tobytes() == exp.tobytes()
    # February alone through the band list.
    feb = ds.ReadAsArray(band_list=list(range(32, 60)))
    assert feb.tobytes() == exp[31:59].tobytes()
    assert ds.GetRasterBand(200).ReadAsArray().tobytes() == exp[199].tobytes()


def test_several_arrays_give_subdatasets(conformance_dir):
    store = conformance_dir / "dtypes" / "store.zarr"
    ds = gdal.Open(str(store))
    assert ds.RasterCount == 0
    subds = ds.GetMetadata("SUBDATASETS")
    names = [v for k, v in subds.items() if k.endswith("_NAME")]
    assert f'ZARR3:"{store}":/u64' in names
    assert any(v == "[7x5] /u64 (uint64)" for k, v in subds.items() if k.endswith("_DESC"))
    sub = gdal.Open(f'ZARR3:"{store}":/u64')
    exp = np.fromfile(conformance_dir / "dtypes" / "expected" / "u64.bin", dtype="<u8").reshape(7, 5)
    assert np.array_equal(sub.ReadAsArray(), exp)
    f16 = gdal.Open(f'ZARR3:"{store}":/f16')
    exp16 = np.fromfile(conformance_dir / "dtypes" / "expected" / "f16.bin", dtype="<f2").reshape(7, 5)
    got = f16.ReadAsArray()
    if GDAL_NUM < 3110000:
        assert got.dtype == np.float32
    assert np.array_equal(got.astype(np.float32), exp16.astype(np.float32), equal_nan=True)
    b = gdal.Open(f'ZARR3:"{store}":/b')
    assert b.GetRasterBand(1).DataType == gdal.GDT_Byte


def test_block_size_regular_rectilinear_sharded(conformance_dir):
    def block(case):
        ds = gdal.Open(str(conformance_dir / case / "store.zarr"))
        if ds.RasterCount == 0:
            ds = gdal.Open(ds.GetMetadata("SUBDATASETS")["SUBDATASET_1_NAME"])
        return ds.GetRasterBand(1).GetBlockSize()

    meta = json.loads((conformance_dir / "shard_regular_zstd" / "store.zarr" / "a" / "zarr.json").read_text())
    inner = meta["codecs"][0]["configuration"]["chunk_shape"]
    assert block("shard_regular_zstd") == [inner[1], inner[0]]
    # geo_group air: y edges [6, 12] -> most common is a tie; x edges all 12.
    assert block("geo_group")[0] == 12


def test_zarr3_metadata_domain(conformance_dir, run_tool):
    store = conformance_dir / "shard_rect_outer" / "store.zarr"
    p = run_tool("gdalinfo", "-mdd", "all", store, check=True)
    assert "Metadata (ZARR3):" in p.stdout
    assert "CHUNK_GRID=" in p.stdout and "rectilinear" in p.stdout
    assert "SHARD_CHUNK_SHAPE=" in p.stdout
    ds = gdal.Open(str(store))
    assert "ZARR3" in ds.GetMetadataDomainList()
    md = ds.GetMetadata("ZARR3")
    assert json.loads(md["CHUNK_GRID"])["name"] == "rectilinear"
    assert json.loads(md["CODECS"])[0]["name"] == "sharding_indexed"
    assert md["DATA_TYPE"] == "int32"


@pytest.mark.parametrize("case", ["rect_overhang_uint16", "shard_rect_outer", "rect_rle_int16", "shard_sparse_fill"])
def test_random_windows_equal_full_read(conformance_dir, case):
    ds = gdal.Open(str(conformance_dir / case / "store.zarr"))
    full = ds.ReadAsArray()
    rng = random.Random(1234)
    W, H = ds.RasterXSize, ds.RasterYSize
    band = ds.GetRasterBand(1)
    for _ in range(40):
        x, y = rng.randrange(W), rng.randrange(H)
        w, h = rng.randint(1, W - x), rng.randint(1, H - y)
        got = band.ReadAsArray(x, y, w, h)
        assert np.array_equal(got, full[y : y + h, x : x + w], equal_nan=True), (x, y, w, h)
        got = band.ReadAsArray(x, y, w, h, buf_xsize=w, buf_ysize=h, buf_type=gdal.GDT_Float64)
        assert np.array_equal(got, full[y : y + h, x : x + w].astype(np.float64), equal_nan=True)
    # Resampled (buffer smaller than the window) through GDAL's generic path.
    small = band.ReadAsArray(0, 0, W, H, buf_xsize=max(1, W // 2), buf_ysize=max(1, H // 2))
    assert small.shape == (max(1, H // 2), max(1, W // 2))


def test_random_windows_multiband(conformance_dir):
    ds = gdal.Open(str(conformance_dir / "rect_3d_monthly_f32" / "store.zarr"))
    full = ds.ReadAsArray()
    rng = random.Random(7)
    for _ in range(15):
        x, y = rng.randrange(36), rng.randrange(18)
        w, h = rng.randint(1, 36 - x), rng.randint(1, 18 - y)
        b0 = rng.randrange(365)
        n = rng.randint(1, min(60, 365 - b0))
        got = ds.ReadAsArray(x, y, w, h, band_list=list(range(b0 + 1, b0 + n + 1)))
        got = got.reshape(n, h, w)
        assert got.tobytes() == full[b0 : b0 + n, y : y + h, x : x + w].tobytes()


# ------------------------------------------------------------------ write


ROUNDTRIP_TYPES = [
    ("Byte", gdal.GDT_Byte, np.uint8),
    ("UInt16", gdal.GDT_UInt16, np.uint16),
    ("Int16", gdal.GDT_Int16, np.int16),
    ("UInt32", gdal.GDT_UInt32, np.uint32),
    ("Int32", gdal.GDT_Int32, np.int32),
    ("Float32", gdal.GDT_Float32, np.float32),
    ("Float64", gdal.GDT_Float64, np.float64),
    ("CFloat32", gdal.GDT_CFloat32, np.complex64),
    ("CFloat64", gdal.GDT_CFloat64, np.complex128),
]
if GDAL_NUM >= 3050000:
    ROUNDTRIP_TYPES += [("UInt64", gdal.GDT_UInt64, np.uint64), ("Int64", gdal.GDT_Int64, np.int64)]
if GDAL_NUM >= 3070000:
    ROUNDTRIP_TYPES += [("Int8", gdal.GDT_Int8, np.int8)]


def sample(np_type, shape, seed=0):
    rng = np.random.default_rng(seed)
    if np.issubdtype(np_type, np.complexfloating):
        return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(np_type)
    if np.issubdtype(np_type, np.floating):
        a = rng.normal(size=shape).astype(np_type) * 100
        a[0, :3] = np.nan
        return a
    info = np.iinfo(np_type)
    return rng.integers(info.min, info.max, size=shape, dtype=np_type, endpoint=True)


@pytest.mark.parametrize("name,gtype,np_type", ROUNDTRIP_TYPES, ids=[t[0] for t in ROUNDTRIP_TYPES])
def test_geotiff_zarr_geotiff_bit_exact(tmp_path, name, gtype, np_type):
    a = sample(np_type, (70, 90))
    nodata = None if np.issubdtype(np_type, np.complexfloating) else (7 if name != "Int8" else -7)
    src = make_tif(tmp_path / "src.tif", [a], gtype, nodata=nodata)
    out = tmp_path / "out.zarr"
    gdal.Translate(
        str(out), str(src), format="Zarr3",
        creationOptions=["CHUNK_SHAPES=[[32,32,16],[[30,3]]]", "SHARD_CHUNK_SHAPE=16,15", "COMPRESS=ZSTD"],
    )
    z = gdal.Open(str(out))
    assert z.GetDriver().ShortName == "Zarr3"
    assert z.GetRasterBand(1).DataType == gtype
    assert z.GetRasterBand(1).ReadAsArray().tobytes() == a.tobytes()
    back = tmp_path / "back.tif"
    gdal.Translate(str(back), str(out), format="GTiff")
    t = gdal.Open(str(back))
    assert t.GetRasterBand(1).DataType == gtype
    assert t.GetRasterBand(1).ReadAsArray().tobytes() == a.tobytes()
    assert t.GetGeoTransform() == (500000.0, 30.0, 0.0, 4000000.0, 0.0, -30.0)
    assert t.GetSpatialRef().GetAuthorityCode(None) == "32631"
    if nodata is None:
        assert t.GetRasterBand(1).GetNoDataValue() is None
    else:
        assert t.GetRasterBand(1).GetNoDataValue() == nodata
    meta = json.loads((out / "out" / "zarr.json").read_text())
    assert meta["chunk_grid"]["name"] == "rectilinear"
    assert meta["chunk_grid"]["configuration"]["chunk_shapes"] == [[[32, 2], 16], [[30, 3]]]
    assert meta["codecs"][0]["name"] == "sharding_indexed"
    inner = meta["codecs"][0]["configuration"]
    assert inner["chunk_shape"] == [16, 15]
    assert [c["name"] for c in inner["codecs"]] == ["bytes", "zstd"]
    assert inner["codecs"][1]["configuration"]["level"] == 3
    assert [c["name"] for c in inner["index_codecs"]] == ["bytes", "crc32c"]


def test_complex_int_refused_in_strict_mode(tmp_path):
    src = gdal.GetDriverByName("MEM").Create("", 4, 4, 1, gdal.GDT_CInt16)
    with pytest.raises(RuntimeError, match="CInt16"):
        gdal.GetDriverByName("Zarr3").CreateCopy(str(tmp_path / "c.zarr"), src, strict=1)
    assert not (tmp_path / "c.zarr").exists()
    ds = gdal.GetDriverByName("Zarr3").CreateCopy(str(tmp_path / "c2.zarr"), src, strict=0)
    assert ds.GetRasterBand(1).DataType == gdal.GDT_CFloat32


def test_multiband_round_trip(tmp_path):
    arrays = [sample(np.uint16, (50, 40), seed=i) for i in range(5)]
    src = make_tif(tmp_path / "mb.tif", arrays, gdal.GDT_UInt16, nodata=0)
    out = tmp_path / "mb.zarr"
    gdal.Translate(str(out), str(src), format="Zarr3", creationOptions=["CHUNK_SHAPES=[[2,3],[20,30],16]", "ARRAY_NAME=data"])
    meta = json.loads((out / "data" / "zarr.json").read_text())
    assert meta["shape"] == [5, 50, 40]
    assert meta["dimension_names"] == ["band", "y", "x"]
    z = gdal.Open(str(out))
    assert z.RasterCount == 5
    assert np.array_equal(z.ReadAsArray(), np.stack(arrays))
    back = tmp_path / "mb_back.tif"
    gdal.Translate(str(back), str(out))
    assert np.array_equal(read_all(gdal.Open(str(back))), np.stack(arrays))


def test_georef_layout_and_cf(tmp_path):
    src = make_tif(tmp_path / "g.tif", [np.ones((20, 30), np.float32)], gdal.GDT_Float32, epsg=4326,
                   gt=(-10.0, 0.5, 0.0, 60.0, 0.0, -0.5))
    out = tmp_path / "g.zarr"
    gdal.Translate(str(out), str(src), format="Zarr3")
    root = json.loads((out / "zarr.json").read_text())
    assert root["node_type"] == "group"
    a = json.loads((out / "g" / "zarr.json").read_text())
    attrs = a["attributes"]
    assert attrs["grid_mapping"] == "spatial_ref"
    assert attrs["proj:code"] == "EPSG:4326"
    assert attrs["spatial:transform"] == [0.5, 0.0, -10.0, 0.0, -0.5, 60.0]
    sr = json.loads((out / "spatial_ref" / "zarr.json").read_text())
    assert sr["shape"] == [] and sr["data_type"] == "int32"
    assert "crs_wkt" in sr["attributes"] and "GeoTransform" in sr["attributes"]
    x = gdal.OpenEx(str(out), gdal.OF_MULTIDIM_RASTER).GetRootGroup().OpenMDArray("x").ReadAsArray()
    assert np.allclose(x, -10.0 + 0.25 + 0.5 * np.arange(30))


@pytest.mark.parametrize("opts", [[], ["ICECHUNK=YES"]], ids=["plain", "icechunk"])
def test_nodata_set_after_create_is_kept(tmp_path, opts):
    """Create, then SetNoDataValue (gdal_create -a_nodata, rasterio's nodata=): the fill value is
    zarr.json's at close, whether or not data was written (it was lost when the attributes were
    written on top of zarr.json as stored)."""
    for written in (False, True):
        out = str(tmp_path / f"n{written}.zarr")
        ds = gdal.GetDriverByName("Zarr3").Create(out, 6, 4, 1, gdal.GDT_Int16, options=opts)
        assert ds.GetRasterBand(1).SetNoDataValue(-1) == gdal.CE_None
        if written:
            ds.GetRasterBand(1).WriteArray(np.full((1, 1), 5, "i2"), 2, 2)
        ds = None
        ds = gdal.Open(out)
        assert ds.GetRasterBand(1).GetNoDataValue() == -1, written
        v = ds.ReadAsArray()
        assert v[2, 2] == (5 if written else -1) and v[0, 0] == -1


@pytest.mark.parametrize("dtype, nodata", [(gdal.GDT_Float32, -2.0), (gdal.GDT_Int16, -2),
                                           (gdal.GDT_Float64, float("nan"))])
def test_nodata_set_in_update_mode_persists(tmp_path, dtype, nodata):
    """Issue 41: SetNoDataValue on a store opened in update mode (rasterio's dst.nodata = -2 in
    "r+") failed, as the nodata value was the fill value, which cannot change once data is
    written. It is kept as the array's gdal_zarr3:nodata attribute; the values stay as stored
    (unwritten chunks still read as the fill value)."""
    out = str(tmp_path / "u.zarr")
    src = gdal.GetDriverByName("MEM").Create("", 40, 30, 1, dtype)
    src.GetRasterBand(1).WriteArray(np.full((10, 40), 5))  # the other rows are never written
    gdal.Translate(out, src, format="Zarr3", creationOptions=["BLOCKSIZE=10,20"])
    before = gdal.Open(out).ReadAsArray()
    ds = gdal.Open(out, gdal.GA_Update)
    assert ds.GetRasterBand(1).SetNoDataValue(nodata) == gdal.CE_None
    got = ds.GetRasterBand(1).GetNoDataValue()
    assert got == nodata or (np.isnan(nodata) and np.isnan(got))
    ds = None
    ds = gdal.Open(out)
    got = ds.GetRasterBand(1).GetNoDataValue()
    assert got == nodata or (np.isnan(nodata) and np.isnan(got))
    assert np.array_equal(ds.ReadAsArray(), before)
    md = gdal.OpenEx(out, gdal.OF_MULTIDIM_RASTER).GetRootGroup().OpenMDArray("u")
    got = md.GetNoDataValueAsDouble()
    assert got == nodata or (np.isnan(nodata) and np.isnan(got))
    ds = None
    # Set again to the fill value: the attribute goes, the fill value is the nodata value.
    ds = gdal.Open(out, gdal.GA_Update)
    assert ds.GetRasterBand(1).SetNoDataValue(0) == gdal.CE_None
    ds = None
    assert gdal.Open(out).GetRasterBand(1).GetNoDataValue() == 0
    meta = json.loads((tmp_path / "u.zarr" / "u" / "zarr.json").read_text())
    assert "gdal_zarr3:nodata" not in meta.get("attributes", {})


def test_create_update_and_reopen(tmp_path):
    out = tmp_path / "c.zarr"
    drv = gdal.GetDriverByName("Zarr3")
    ds = drv.Create(str(out), 100, 80, 2, gdal.GDT_Int32, options=["BLOCKSIZE=1,32,40", "COMPRESS=GZIP"])
    ds.GetRasterBand(1).SetNoDataValue(-1)
    ds.SetGeoTransform([0, 1, 0, 80, 0, -1])
    a = np.arange(8000, dtype=np.int32).reshape(80, 100)
    ds.GetRasterBand(1).WriteArray(a)
    ds.GetRasterBand(2).WriteArray(a[:10, :10] * 2, 5, 7)  # through the block cache
    ds = None
    z = gdal.Open(str(out))
    assert np.array_equal(z.GetRasterBand(1).ReadAsArray(), a)
    b2 = z.GetRasterBand(2).ReadAsArray()
    assert np.array_equal(b2[7:17, 5:15], a[:10, :10] * 2)
    assert b2[0, 0] == -1  # untouched: fill value
    assert z.GetGeoTransform() == (0, 1, 0, 80, 0, -1)
    z = None
    u = gdal.Open(str(out), gdal.GA_Update)
    u.GetRasterBand(1).WriteArray(np.full((3, 4), 42, np.int32), 10, 20)
    u.SetMetadataItem("title", "updated")
    u = None
    z = gdal.Open(str(out))
    r = z.GetRasterBand(1).ReadAsArray()
    assert (r[20:23, 10:14] == 42).all() and r[0, 0] == 0 and r[23, 14] == a[23, 14]
    assert z.GetMetadataItem("title") == "updated"


BAD_OPTIONS = [
    (["CHUNK_SHAPES=[[10,10],20"], "CHUNK_SHAPES"),
    (["CHUNK_SHAPES=[[10,5],20]"], "CHUNK_SHAPES"),  # edges short of 50 rows
    (["CHUNK_SHAPES=[0,20]"], "CHUNK_SHAPES"),
    (["CHUNK_SHAPES=[20,20,20]"], "CHUNK_SHAPES"),
    (["BLOCKSIZE=abc"], "BLOCKSIZE"),
    (["SHARD_CHUNK_SHAPE=7,7", "BLOCKSIZE=20,20"], "SHARD_CHUNK_SHAPE"),
    (["COMPRESS=LZMA"], "COMPRESS"),
    (["ZSTD_LEVEL=99"], "ZSTD_LEVEL"),
    (["GZIP_LEVEL=x"], "GZIP_LEVEL"),
    (["COMPRESS=BLOSC", "BLOSC_CNAME=foo"], "BLOSC_CNAME"),
    (["BLOSC_SHUFFLE=sometimes"], "BLOSC_SHUFFLE"),
    (["DIMENSION_NAMES=a,b,c"], "DIMENSION_NAMES"),
    (["ARRAY_NAME=spatial_ref"], "ARRAY_NAME"),
]


@pytest.mark.parametrize("opts,word", BAD_OPTIONS, ids=[f"{o[1]}-{i}" for i, o in enumerate(BAD_OPTIONS)])
def test_bad_creation_options_rejected_before_writing(tmp_path, opts, word):
    src = gdal.GetDriverByName("MEM").Create("", 40, 50, 1, gdal.GDT_Byte)
    out = tmp_path / "bad.zarr"
    with pytest.raises(RuntimeError) as e:
        gdal.GetDriverByName("Zarr3").CreateCopy(str(out), src, options=opts)
    assert word in str(e.value)
    assert not out.exists()
    with pytest.raises(RuntimeError) as e:
        gdal.GetDriverByName("Zarr3").Create(str(out), 40, 50, 1, gdal.GDT_Byte, options=opts)
    assert word in str(e.value)
    assert not out.exists()


def test_progress_monotonic_and_cancel(tmp_path):
    src = gdal.GetDriverByName("MEM").Create("", 64, 256, 3, gdal.GDT_Float32)
    for i in range(3):
        src.GetRasterBand(i + 1).Fill(i + 1)
    seen = []

    def cb(pct, msg, data):
        seen.append(pct)
        return 1

    out = tmp_path / "p.zarr"
    gdal.GetDriverByName("Zarr3").CreateCopy(str(out), src, options=["BLOCKSIZE=1,16,64"], callback=cb)
    assert seen == sorted(seen) and seen[-1] == 1.0 and len(seen) >= 4

    calls = []

    def cancel(pct, msg, data):
        calls.append(pct)
        return 0 if pct > 0.3 else 1

    out2 = tmp_path / "cancelled.zarr"
    with pytest.raises(RuntimeError):
        gdal.GetDriverByName("Zarr3").CreateCopy(str(out2), src, options=["BLOCKSIZE=1,16,64"], callback=cancel)
    assert not out2.exists()
    try:
        ds = gdal.Open(str(out2))
    except RuntimeError:
        ds = None
    assert ds is None


def test_gdalwarp_from_zarr(tmp_path, run_tool):
    a = sample(np.int16, (60, 80), seed=3)
    src = make_tif(tmp_path / "w.tif", [a], gdal.GDT_Int16, nodata=-32768, epsg=4326, gt=(0, 0.1, 0, 50, 0, -0.1))
    z = tmp_path / "w.zarr"
    run_tool("gdal_translate", "-of", "Zarr3", "-co", "CHUNK_SHAPES=[[25,25,10],[32,48]]", src, z, check=True)
    out = tmp_path / "warped.tif"
    run_tool("gdalwarp", "-t_srs", "EPSG:3857", z, out, check=True)
    w = gdal.Open(str(out))
    assert w.GetSpatialRef().GetAuthorityCode(None) == "3857"
    v = w.ReadAsArray()
    assert (v != -32768).sum() > 0.8 * a.size
    # Same CRS: identical pixels.
    out2 = tmp_path / "same.tif"
    run_tool("gdalwarp", z, out2, check=True)
    assert np.array_equal(gdal.Open(str(out2)).ReadAsArray(), a)


def test_subdataset_name_quoting_vsicurl_style():
    from conftest import config_option  # noqa: F401

    # Quoted names with ':' inside the path parse; a missing server fails cleanly.
    with pytest.raises(RuntimeError):
        gdal.Open('ZARR3:"/vsicurl/http://127.0.0.1:9/none.zarr":/air')


def test_sample_store_classic(run_tool):
    store = REPO / "data" / "daily_t2m_2023.zarr"
    ds = gdal.Open(str(store))
    assert ds.RasterCount == 365
    assert ds.GetRasterBand(1).GetBlockSize() == [32, 16] or ds.GetRasterBand(1).GetBlockSize()[0] > 0
    assert ds.GetSpatialRef().GetAuthorityCode(None) == "4326"


def test_create_copy_and_multidim_create_with_relative_paths(tmp_path, monkeypatch):
    """`gdal_translate -of Zarr3 in.tif out.zarr` in the current folder (a bare relative name)."""
    monkeypatch.chdir(tmp_path)
    src = gdal.GetDriverByName("MEM").Create("", 20, 10, 1, gdal.GDT_Int16)
    src.GetRasterBand(1).WriteArray(np.arange(200, dtype=np.int16).reshape(10, 20))
    drv = gdal.GetDriverByName("Zarr3")
    out = drv.CreateCopy("rel.zarr", src, options=["BLOCKSIZE=5,10"])
    assert out is not None
    out = None
    ds = gdal.OpenEx("rel.zarr", allowed_drivers=["Zarr3"])
    assert ds.GetRasterBand(1).ReadAsArray().tobytes() == np.arange(200, dtype=np.int16).tobytes()
    md = drv.CreateMultiDimensional("relmd.zarr")
    assert md is not None
    md = None
    assert (tmp_path / "relmd.zarr" / "zarr.json").exists()


@pytest.mark.parametrize("value, threads", [("2", 2), ("ALL_CPUS", None), ("1", 1)])
def test_num_threads_creation_option_sets_the_writer_threads(tmp_path, value, threads):
    """Issue 41: -co NUM_THREADS (GDAL's GTiff/COG name for writer threads) gave 'does not support
    creation option'. It is declared and sets the threads encoding the chunks."""
    import subprocess
    src = gdal.GetDriverByName("MEM").Create("", 300, 200, 2, gdal.GDT_Float32)
    data = np.random.default_rng(3).random((2, 200, 300), dtype=np.float32)
    for b in range(2):
        src.GetRasterBand(b + 1).WriteArray(data[b])
    tif = str(tmp_path / "s.tif")
    gdal.Translate(tif, src, format="GTiff")
    drv = gdal.GetDriverByName("Zarr3")
    assert "NUM_THREADS" in drv.GetMetadataItem(gdal.DMD_CREATIONOPTIONLIST)
    out = str(tmp_path / "t.zarr")
    r = subprocess.run(["gdal_translate", "--debug", "on", "-of", "Zarr3", "-co", f"NUM_THREADS={value}",
                        "-co", "BLOCKSIZE=64,64", tif, out], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "does not support creation option" not in r.stderr, r.stderr
    assert f"NUM_THREADS={value}: " in r.stderr and "threads encode the chunks" in r.stderr, r.stderr
    if threads is not None:
        assert f"NUM_THREADS={value}: {threads} threads" in r.stderr, r.stderr
    np.testing.assert_array_equal(gdal.Open(out).ReadAsArray(), data)


def test_num_threads_that_is_no_number_warns(tmp_path):
    src = gdal.GetDriverByName("MEM").Create("", 8, 8, 1, gdal.GDT_Byte)
    messages = []
    gdal.PushErrorHandler(lambda cls, num, msg: messages.append(msg))
    try:
        gdal.Translate(str(tmp_path / "w.zarr"), src, format="Zarr3", creationOptions=["NUM_THREADS=many"])
    finally:
        gdal.PopErrorHandler()
    assert any("NUM_THREADS=many" in m and "1 thread" in m for m in messages), messages
