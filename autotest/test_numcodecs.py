"""Arrays whose codecs carry numcodecs' names (what zarr-python writes for numcodecs filters and
compressors): written and read through GDAL, with the stored chunks checked against numcodecs'
definitions computed here with numpy and Python's zlib/gzip modules."""
import gzip
import json
import zlib

import numpy as np
import pytest
from osgeo import gdal

gdal.UseExceptions()

BYTES = {"name": "bytes", "configuration": {"endian": "little"}}


def c(name, **config):
    return {"name": name, "configuration": config}


def make_store(root, dtype, codecs, shape=(6, 10), chunks=(3, 5), fill=0):
    (root / "a").mkdir(parents=True)
    (root / "zarr.json").write_text(json.dumps({"zarr_format": 3, "node_type": "group"}))
    meta = {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": dtype,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": fill, "codecs": codecs}
    (root / "a" / "zarr.json").write_text(json.dumps(meta))


def md_array(root, update=False):
    flags = gdal.OF_MULTIDIM_RASTER | (gdal.OF_UPDATE if update else 0)
    ds = gdal.OpenEx(str(root), flags, allowed_drivers=["Zarr3"])
    return ds, ds.GetRootGroup().OpenMDArray("a")


def write_all(root, values):
    ds, arr = md_array(root, update=True)
    assert arr.Write(values) == gdal.CE_None
    arr = ds = None


def read_all(root, dtype, shape=(6, 10)):
    ds, arr = md_array(root)
    out = np.frombuffer(arr.Read(), dtype=dtype).reshape(shape)
    arr = ds = None
    return out


def test_fixedscaleoffset_zlib_packs_as_numcodecs(tmp_path):
    make_store(tmp_path, "float64",
               [c("numcodecs.fixedscaleoffset", offset=1000, scale=10, dtype="<f8", astype="<u2"),
                BYTES, c("numcodecs.zlib", level=1)])
    values = 1000 + np.arange(60, dtype="f8").reshape(6, 10) * 1.25 + 0.01
    write_all(tmp_path, values)
    packed = np.around((values - 1000) * 10).astype("<u2")
    stored = np.frombuffer(zlib.decompress((tmp_path / "a/c/1/1").read_bytes()), dtype="<u2")
    np.testing.assert_array_equal(stored.reshape(3, 5), packed[3:6, 5:10])
    np.testing.assert_array_equal(read_all(tmp_path, "f8"), packed / 10 + 1000)


def test_delta_shuffle_gzip_as_numcodecs(tmp_path):
    make_store(tmp_path, "int32",
               [c("numcodecs.delta", dtype="<i4"), BYTES, c("numcodecs.shuffle", elementsize=4),
                c("numcodecs.gzip", level=5)])
    values = (np.arange(60, dtype="i4") ** 3 - 7000).reshape(6, 10)
    write_all(tmp_path, values)
    raw = gzip.decompress((tmp_path / "a/c/0/1").read_bytes())
    deltas = np.frombuffer(raw, dtype="u1").reshape(4, 15).T.copy().view("<i4").reshape(-1)
    chunk = values[0:3, 5:10].reshape(-1)
    np.testing.assert_array_equal(deltas, np.concatenate([chunk[:1], np.diff(chunk)]))
    np.testing.assert_array_equal(read_all(tmp_path, "i4"), values)


def bitround_bits(values, keepbits):
    """The int32 bits of float32 `values` rounded as numcodecs' BitRound does: add half a
    quantum minus one plus the lowest kept bit, drop the rest."""
    b = values.view("i4").astype("i8")
    drop = 23 - keepbits
    return ((b + ((b >> drop) & 1) + (1 << (drop - 1)) - 1) >> drop << drop).astype("i4")


def test_bitround_keeps_the_mantissa_bits_asked_for(tmp_path):
    make_store(tmp_path, "float32",
               [c("numcodecs.bitround", keepbits=5), BYTES, c("numcodecs.zlib", level=1)])
    rng = np.random.default_rng(5)
    values = (rng.standard_normal((6, 10)) * 100).astype("f4")
    write_all(tmp_path, values)
    got = read_all(tmp_path, "f4")
    np.testing.assert_array_equal(got.view("i4"), bitround_bits(values, 5))
    assert np.count_nonzero(got != values) > 30  # really rounded


@pytest.mark.parametrize("codecs,says", [
    ([c("numcodecs.bitround", keepbits=3), BYTES], "floating-point"),
    ([BYTES, c("numcodecs.bz2", level=9)], "numcodecs.bz2"),
    ([c("numcodecs.fixedscaleoffset", scale=10, dtype="<f8"), BYTES], "not the data type"),
])
def test_unusable_numcodecs_are_named(tmp_path, codecs, says):
    make_store(tmp_path, "int16", codecs)
    with pytest.raises(RuntimeError) as e:
        md_array(tmp_path)
    msg = str(e.value) + gdal.GetLastErrorMsg()
    assert says in msg and "zarr.json" in msg, msg


def test_checksum_mismatch_names_the_chunk(tmp_path):
    make_store(tmp_path, "uint16", [BYTES, c("numcodecs.crc32")])
    values = np.arange(60, dtype="u2").reshape(6, 10) + 1
    write_all(tmp_path, values)
    chunk = tmp_path / "a/c/1/0"
    raw = bytearray(chunk.read_bytes())
    # numcodecs' crc32: zlib.crc32 of the data, little-endian, before it.
    assert int.from_bytes(raw[:4], "little") == zlib.crc32(bytes(raw[4:]))
    raw[9] ^= 0xFF
    chunk.write_bytes(bytes(raw))
    with pytest.raises(RuntimeError) as e:
        read_all(tmp_path, "u2")
    msg = str(e.value)
    assert "c/1/0" in msg and "numcodecs.crc32 checksum mismatch" in msg, msg


def translate_float(tmp_path, name, options, dtype=gdal.GDT_Float32):
    rng = np.random.default_rng(9)
    values = (rng.standard_normal((40, 50)) * 300).astype("f4")
    src = gdal.GetDriverByName("MEM").Create("", 50, 40, 1, dtype)
    src.GetRasterBand(1).WriteArray(values)
    out = tmp_path / name
    gdal.Translate(str(out), src, format="Zarr3", creationOptions=options)
    return values, out


def stored_bytes(store):
    return sum(p.stat().st_size for p in store.rglob("c/*/*") if p.is_file())


@pytest.mark.parametrize("extra", [[], ["SHARD_CHUNK_SHAPE=10,25"]], ids=["chunks", "shards"])
def test_discard_lsb_writes_bitround(tmp_path, extra):
    values, out = translate_float(tmp_path, "lossy.zarr",
                                  ["BLOCKSIZE=20,50", "DISCARD_LSB=16"] + extra)
    _, plain = translate_float(tmp_path, "plain.zarr", ["BLOCKSIZE=20,50"] + extra)
    meta = json.loads((out / "lossy" / "zarr.json").read_text())
    codecs = meta["codecs"][0]["configuration"]["codecs"] if extra else meta["codecs"]
    assert codecs[0] == c("numcodecs.bitround", keepbits=7), codecs
    got = gdal.Open(str(out)).ReadAsArray()
    np.testing.assert_array_equal(got.view("i4"), bitround_bits(values, 7))
    assert stored_bytes(out) < 0.8 * stored_bytes(plain)


@pytest.mark.parametrize("value,dtype,says", [
    ("3", gdal.GDT_Int16, "floating-point"),
    ("24", gdal.GDT_Float32, "DISCARD_LSB"),
    ("x", gdal.GDT_Float64, "DISCARD_LSB"),
])
def test_discard_lsb_refusals(tmp_path, value, dtype, says):
    with pytest.raises(RuntimeError) as e:
        translate_float(tmp_path, "bad.zarr", [f"DISCARD_LSB={value}"], dtype)
    assert says in str(e.value), str(e.value)
    assert not (tmp_path / "bad.zarr").exists()
