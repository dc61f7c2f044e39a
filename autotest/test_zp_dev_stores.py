"""The newest Zarr data types and codecs through GDAL: stores written by zarr-python's
development line (data/zp-dev, see make_stores.py) read bit-exact; datetime64 as Int64 with
its unit and ISO band metadata; text types (fixed_length_utf32, null_terminated_bytes,
string with vlen-utf8) as GDAL strings (multidim), written back and created; the classic
view refusing them with a hint; scale_offset; zstd checksums
(ZSTD_CHECKSUM); consolidated metadata on request (CREATE_CONSOLIDATED_METADATA), kept up to
date by later writes."""
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from osgeo import gdal

REPO = Path(__file__).resolve().parent.parent
ZP = REPO / "data" / "zp-dev"
STORE = ZP / "zp_dev.zarr"
EXPECTED = json.loads((ZP / "expected.json").read_text())


def md_root(path=STORE, update=False):
    flags = gdal.OF_MULTIDIM_RASTER | (gdal.OF_UPDATE if update else 0)
    return gdal.OpenEx(str(path), flags, allowed_drivers=["Zarr3"]).GetRootGroup()


@pytest.mark.parametrize("name", ["time", "temp", "dt_ms", "td_min", "scaled", "checked", "rect", "rect_shard"])
def test_numeric_and_temporal_arrays_bit_exact(name):
    e = EXPECTED[name]
    arr = md_root().OpenMDArray(name)
    assert [d.GetSize() for d in arr.GetDimensions()] == e["shape"]
    data = arr.ReadAsArray()
    if e["numpy"][1] in "Mm":  # datetime64/timedelta64: Int64
        assert arr.GetDataType().GetNumericDataType() == gdal.GDT_Int64
        assert data.ravel().tolist() == e["int64"]
        data = data.view(e["numpy"])
    assert hashlib.sha256(np.ascontiguousarray(data, dtype=np.dtype(e["numpy"]).newbyteorder("<")).tobytes()).hexdigest() == e["sha256"]


def test_datetime_unit_and_nat():
    root = md_root()
    assert root.OpenMDArray("time").GetUnit() == "seconds since 1970-01-01T00:00:00"
    assert root.OpenMDArray("dt_ms").GetUnit() == "10 milliseconds since 1970-01-01T00:00:00"
    assert root.OpenMDArray("td_min").GetUnit() == "minutes"
    assert root.OpenMDArray("dt_ms").ReadAsArray()[1] == np.iinfo(np.int64).min  # NaT


def test_datetime_coordinate_gives_iso_band_metadata():
    ds = gdal.OpenEx(f'ZARR3:"{STORE}":/temp', allowed_drivers=["Zarr3"])
    assert ds.RasterCount == 3
    assert ds.GetRasterBand(1).GetMetadataItem("time") == "2024-01-01T00:00:00"
    assert ds.GetRasterBand(2).GetMetadataItem("time") == "2024-01-02T12:00:00"
    assert ds.GetRasterBand(3).GetDescription() == "time=2024-03-01T00:00:30"


@pytest.mark.parametrize("name", ["names", "tags"])
def test_text_arrays_as_gdal_strings(name):
    arr = md_root().OpenMDArray(name)
    assert arr.GetDataType().GetClass() == gdal.GEDTC_STRING
    assert arr.Read() == EXPECTED[name]["text"]


def test_text_written_back(copy_store):
    path = copy_store(STORE)
    arr = md_root(path, update=True).OpenMDArray("names")
    assert arr.Write(["Bâle", "x"], array_start_idx=[1], count=[2]) == gdal.CE_None
    with pytest.raises(Exception, match="characters"):
        arr.Write(["toolong"], array_start_idx=[0], count=[1])
    arr = None
    assert md_root(path).OpenMDArray("names").Read() == ["a", "Bâle", "x", "", "abcde"]


def test_vlen_string_read_as_gdal_strings():
    root = md_root()
    assert "vlen" in root.GetMDArrayNames() and "temp" in root.GetMDArrayNames()
    arr = root.OpenMDArray("vlen")
    assert arr.GetDataType().GetClass() == gdal.GEDTC_STRING
    assert arr.Read() == EXPECTED["vlen"]["text"]
    assert arr.Read(array_start_idx=[2], count=[2], array_step=[-1]) == ["ζζζ", "yy"]
    assert arr.GetStructuralInfo()["CODECS"] == "vlen-utf8,zstd"
    # The classic view refuses it as it does the other text types, with the hint...
    with pytest.raises(Exception, match="multidimensional"):
        gdal.OpenEx(f'ZARR3:"{STORE}":/vlen', allowed_drivers=["Zarr3"])
    # ...and lists the readable arrays only.
    ds = gdal.OpenEx(str(STORE), allowed_drivers=["Zarr3"])
    subs = " ".join(v for k, v in ds.GetMetadata("SUBDATASETS").items() if k.endswith("_NAME"))
    assert "/temp" in subs and "/vlen" not in subs


def test_vlen_string_in_gdalmdiminfo(run_tool):
    info = json.loads(run_tool("gdalmdiminfo", "-detailed", STORE, check=True).stdout)
    vlen = info["arrays"]["vlen"]
    assert vlen["datatype"] == "String"
    assert vlen["values"] == EXPECTED["vlen"]["text"]


def test_vlen_malformed_chunk_names_the_file(copy_store):
    path = copy_store(STORE)
    chunk = path / "vlen" / "c" / "0"
    chunk.write_bytes(chunk.read_bytes()[:-3])  # a truncated zstd frame
    with pytest.raises(Exception, match=r"vlen[/\\]c[/\\]0"):
        md_root(path).OpenMDArray("vlen").Read()
    # Uncompressed: a length running past the end of the chunk.
    meta = json.loads((path / "vlen" / "zarr.json").read_text())
    meta["codecs"] = [meta["codecs"][0]]
    (path / "vlen" / "zarr.json").write_text(json.dumps(meta))
    chunk.write_bytes(bytes([3, 0, 0, 0, 1, 0, 0, 0]) + b"x" + bytes([200, 0, 0, 0]) + b"yy" + bytes(8))
    with pytest.raises(Exception, match=r"vlen/c/0.*vlen-utf8.*past the end"):
        md_root(path).OpenMDArray("vlen").Read()


@pytest.mark.parametrize("options,grid", [
    ([], "regular"),
    (["BLOCKSIZE=2", "COMPRESS=ZSTD"], "regular"),
    (["CHUNK_SHAPES=[[1,3,2]]", "COMPRESS=GZIP"], "rectilinear"),
    (["BLOCKSIZE=6", "SHARD_CHUNK_SHAPE=2"], "regular"),
], ids=["default", "zstd", "rectilinear", "sharded"])
def test_create_vlen_string_array_multidim(tmp_path, options, grid):
    out = tmp_path / "v.zarr"
    ds = gdal.GetDriverByName("Zarr3").CreateMultiDimensional(str(out))
    rg = ds.GetRootGroup()
    dim = rg.CreateDimension("band", None, None, 6)
    a = rg.CreateMDArray("band", [dim], gdal.ExtendedDataType.CreateString(), options)
    assert a.GetDataType().GetClass() == gdal.GEDTC_STRING
    values = ["red", "", "Grün", "近赤外", "a" * 300, "x"]
    assert a.Write(values) == gdal.CE_None
    assert a.Write(["B"], array_start_idx=[1], count=[1]) == gdal.CE_None  # partial chunk
    values[1] = "B"
    assert a.Read() == values
    ds = rg = a = None
    meta = json.loads((out / "band" / "zarr.json").read_text())
    assert meta["data_type"] == "string" and meta["fill_value"] == ""
    assert meta["chunk_grid"]["name"] == grid
    codecs = meta["codecs"]
    if any(o.startswith("SHARD") for o in options):
        codecs = codecs[0]["configuration"]["codecs"]
    assert codecs[0] == {"name": "vlen-utf8", "configuration": {}}
    comp = next((o.split("=")[1].lower() for o in options if o.startswith("COMPRESS")), "zstd")
    assert [c["name"] for c in codecs[1:]] == [comp]  # COMPRESS applies, ZSTD by default
    assert md_root(out).OpenMDArray("band").Read() == values


def test_vlen_string_band_coordinate_does_not_break_opening(tmp_path):
    out = tmp_path / "c.zarr"
    ds = gdal.GetDriverByName("Zarr3").CreateMultiDimensional(str(out))
    rg = ds.GetRootGroup()
    band = rg.CreateDimension("band", None, None, 2)
    y = rg.CreateDimension("y", None, None, 3)
    x = rg.CreateDimension("x", None, None, 4)
    rg.CreateMDArray("band", [band], gdal.ExtendedDataType.CreateString()).Write(["red", "nir"])
    v = rg.CreateMDArray("v", [band, y, x], gdal.ExtendedDataType.Create(gdal.GDT_Int16))
    v.Write(np.arange(24, dtype="int16").reshape(2, 3, 4))
    ds = rg = v = None
    rg = md_root(out)
    assert rg.OpenMDArray("v").ReadAsArray().shape == (2, 3, 4)
    dims = {d.GetName(): d for d in rg.OpenMDArray("v").GetDimensions()}
    assert dims["band"].GetIndexingVariable().Read() == ["red", "nir"]
    cl = gdal.OpenEx(f'ZARR3:"{out}":/v', allowed_drivers=["Zarr3"])
    assert cl.RasterCount == 2
    assert cl.GetRasterBand(2).ReadAsArray().tolist() == np.arange(12, 24).reshape(3, 4).tolist()
    assert cl.GetRasterBand(2).GetDescription() == "band=nir"


def test_fixed_length_utf32_refused_in_classic_view_with_hint():
    with pytest.raises(Exception, match="multidimensional"):
        gdal.OpenEx(f'ZARR3:"{STORE}":/names', allowed_drivers=["Zarr3"])


def test_zstd_checksum_option(tmp_path):
    out = tmp_path / "c.zarr"
    ds = gdal.GetDriverByName("Zarr3").Create(str(out), 8, 4, 1, gdal.GDT_Int16, ["ZSTD_CHECKSUM=YES", "ARRAY_NAME=a"])
    ds.GetRasterBand(1).WriteArray(np.arange(32, dtype="int16").reshape(4, 8))
    ds = None
    codecs = json.loads((out / "a" / "zarr.json").read_text())["codecs"]
    assert {"name": "zstd", "configuration": {"level": 3, "checksum": True}} in codecs
    chunk = next(p for p in (out / "a" / "c").rglob("*") if p.is_file())
    b = bytearray(chunk.read_bytes())
    b[-1] ^= 0xFF
    chunk.write_bytes(bytes(b))
    with pytest.raises(Exception, match="checksum"):
        gdal.Open(str(out)).ReadAsArray()


def _consolidated(root):
    return json.loads((root / "zarr.json").read_text()).get("consolidated_metadata")


def test_consolidated_metadata_classic(tmp_path):
    out = tmp_path / "k.zarr"
    ds = gdal.GetDriverByName("Zarr3").Create(str(out), 6, 5, 1, gdal.GDT_Byte,
                                               ["CREATE_CONSOLIDATED_METADATA=YES", "ARRAY_NAME=a"])
    ds.GetRasterBand(1).Fill(3)
    ds = None
    cm = _consolidated(out)
    assert cm["kind"] == "inline" and cm["metadata"]["a"]["shape"] == [5, 6]
    ds = gdal.Open(str(out), gdal.GA_Update)
    ds.GetRasterBand(1).SetDescription("red")
    ds = None
    assert _consolidated(out)["metadata"]["a"]["attributes"].get("band_descriptions") == ["red"]
    assert gdal.Open(str(out)).ReadAsArray().tolist() == [[3] * 6] * 5


def test_consolidated_metadata_multidim(tmp_path):
    out = tmp_path / "m.zarr"
    ds = gdal.GetDriverByName("Zarr3").CreateMultiDimensional(str(out), [], ["CREATE_CONSOLIDATED_METADATA=YES"])
    rg = ds.GetRootGroup()
    dim = rg.CreateDimension("x", None, None, 4)
    a = rg.CreateMDArray("v", [dim], gdal.ExtendedDataType.Create(gdal.GDT_Float32))
    a.Write(np.arange(4, dtype="float32"))
    rg.CreateGroup("sub")
    ds = a = rg = None
    md = _consolidated(out)["metadata"]
    assert md["v"]["data_type"] == "float32" and md["sub"]["node_type"] == "group"
    rg = md_root(out, update=True)
    att = rg.OpenMDArray("v").CreateAttribute("units", [], gdal.ExtendedDataType.CreateString())
    att.Write("K")
    att = rg = None
    assert _consolidated(out)["metadata"]["v"]["attributes"]["units"] == "K"
    assert md_root(out).OpenMDArray("v").ReadAsArray().tolist() == [0, 1, 2, 3]


def test_create_string_array_as_fixed_length_utf32(tmp_path):
    out = tmp_path / "s.zarr"
    ds = gdal.GetDriverByName("Zarr3").CreateMultiDimensional(str(out))
    rg = ds.GetRootGroup()
    dim = rg.CreateDimension("n", None, None, 3)
    a = rg.CreateMDArray("label", [dim], gdal.ExtendedDataType.CreateString(4))
    assert a.Write(["abcd", "Øl", ""]) == gdal.CE_None
    ds = rg = a = None
    meta = json.loads((out / "label" / "zarr.json").read_text())
    assert meta["data_type"] == {"name": "fixed_length_utf32", "configuration": {"length_bytes": 16}}
    assert md_root(out).OpenMDArray("label").Read() == ["abcd", "Øl", ""]
