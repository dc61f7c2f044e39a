"""Malformed-input corpus: every store is built here, opened and read in a
subprocess (10 s timeout, 1 GiB address space unless under ASan). Each must
fail with a GDAL error naming the store or a file inside it, never crash."""
import json
import struct
import subprocess
import sys

import numpy as np
import pytest
from osgeo import gdal

from sharded_writer import crc32c, gzip_bytes
from zarr_meta_util import CS, DELETE, base_array_meta, mutate

from bounded_run import limiter, run_script

READER = r"""
import json, sys
from osgeo import gdal
gdal.UseExceptions()
path = sys.argv[1]
out = {}

def walk(g, depth=0):
    for n in g.GetMDArrayNames() or []:
        a = g.OpenMDArray(n)
        v = a.ReadAsArray()
        out.setdefault("read", []).append([a.GetFullName(), float(v.sum())])
    if depth < 4:
        for n in g.GetGroupNames() or []:
            walk(g.OpenGroup(n), depth + 1)

try:
    ds = gdal.OpenEx(path, gdal.OF_MULTIDIM_RASTER, allowed_drivers=["Zarr3"])
    walk(ds.GetRootGroup())
    out["multidim"] = None
except RuntimeError as e:
    out["multidim"] = str(e)
try:
    ds = gdal.OpenEx(path, gdal.OF_RASTER, allowed_drivers=["Zarr3"])
    for i in range(ds.RasterCount):
        v = ds.GetRasterBand(i + 1).ReadAsArray()
        out.setdefault("read", []).append(["band%d" % (i + 1), float(v.sum())])
    out["classic"] = None
except RuntimeError as e:
    out["classic"] = str(e)
print("RESULT:" + json.dumps(out))
"""


def run_reader(path):
    return run_script(READER, [path], 1 << 30, 10)


# ------------------------------------------------------------------ builders

BASE_DATA = np.arange(60, dtype="<i2").reshape(10, 6)


def write_base_chunks(root, encode=lambda b: b):
    """Chunks of the base array (rows [0,4) and [4,10), cols [0,3) and [3,6))."""
    for i, (r0, r1) in enumerate(((0, 4), (4, 10))):
        for j, (c0, c1) in enumerate(((0, 3), (3, 6))):
            d = root / "c" / str(i)
            d.mkdir(parents=True, exist_ok=True)
            (d / str(j)).write_bytes(encode(BASE_DATA[r0:r1, c0:c1].tobytes()))


def json_store(text):
    def build(root):
        root.mkdir()
        (root / "zarr.json").write_bytes(text if isinstance(text, bytes) else text.encode())
        return root

    return build


def meta_store(change, chunks=False):
    def build(root):
        root.mkdir()
        m = base_array_meta()
        change(m)
        (root / "zarr.json").write_text(json.dumps(m))
        if chunks:
            write_base_chunks(root)
        return root

    return build


BYTES = {"name": "bytes", "configuration": {"endian": "little"}}


def regular(shape):
    return mutate(("chunk_grid",), {"name": "regular", "configuration": {"chunk_shape": shape}})


def sharding(inner, index_codecs=None, shard=(8, 8)):
    def f(m):
        m["chunk_grid"] = {"name": "regular", "configuration": {"chunk_shape": list(shard)}}
        m["codecs"] = [
            {
                "name": "sharding_indexed",
                "configuration": {
                    "chunk_shape": inner,
                    "codecs": [BYTES],
                    "index_codecs": index_codecs or [BYTES, {"name": "crc32c"}],
                    "index_location": "end",
                },
            }
        ]

    return f


def coded_store(codecs, encode, fill=0):
    def build(root):
        root.mkdir()
        m = base_array_meta()
        m["codecs"] = codecs
        m["fill_value"] = fill
        (root / "zarr.json").write_text(json.dumps(m))
        write_base_chunks(root, encode)
        return root

    return build


GZIP = {"name": "gzip", "configuration": {"level": 1}}


def plugin_store(root, options, name):
    """A 16x16 int16 store written by the plugin; returns (store, array dir)."""
    src = gdal.GetDriverByName("MEM").Create("", 16, 16, 1, gdal.GDT_Int16)
    src.GetRasterBand(1).WriteArray(np.arange(256, dtype="<i2").reshape(16, 16))
    gdal.GetDriverByName("Zarr3").CreateCopy(str(root), src, options=options + [f"ARRAY_NAME={name}"])
    return root, root / name


SHARD_OPTS = ["BLOCKSIZE=8,8", "SHARD_CHUNK_SHAPE=4,4", "COMPRESS=NONE"]
N_INNER = 4
INDEX_SIZE = 16 * N_INNER + 4


def shard_store(corrupt):
    """Valid plugin-written sharded store (shards of 128 data bytes + 68 index
    bytes at the end), then corrupt(bytes) -> bytes on shard c/0/0."""

    def build(root):
        store, arr = plugin_store(root, SHARD_OPTS, "a")
        f = arr / "c" / "0" / "0"
        raw = f.read_bytes()
        assert len(raw) == 128 + INDEX_SIZE
        f.write_bytes(corrupt(raw))
        return store

    return build


def index_entries(raw):
    idx = raw[-INDEX_SIZE:-4]
    return [list(struct.unpack_from("<QQ", idx, 16 * i)) for i in range(N_INNER)]


def with_entries(raw, entries):
    idx = b"".join(struct.pack("<QQ", o, n) for o, n in entries)
    return raw[:-INDEX_SIZE] + idx + struct.pack("<I", crc32c(idx))


def set_entry(k, offset=None, nbytes=None):
    def f(raw):
        e = index_entries(raw)
        if offset is not None:
            e[k][0] = offset
        if nbytes is not None:
            e[k][1] = nbytes
        return with_entries(raw, e)

    return f


def flip(pos):
    def f(raw):
        b = bytearray(raw)
        b[pos] ^= 0x5A
        return bytes(b)

    return f


def zstd_store(corrupt):
    def build(root):
        store, arr = plugin_store(root, ["BLOCKSIZE=8,8", "COMPRESS=ZSTD"], "a")
        f = arr / "c" / "0" / "1"
        f.write_bytes(corrupt(f.read_bytes()))
        return store

    return build


def consolidated_store(names):
    """A group whose consolidated metadata lists nodes with hostile names; a
    valid array sits next to the store so that escaping the root would read it."""

    def build(root):
        root.mkdir()
        outside = root.parent / "x"
        outside.mkdir(exist_ok=True)
        arr = base_array_meta()
        (outside / "zarr.json").write_text(json.dumps(arr))
        write_base_chunks(outside)
        meta = {n: arr for n in names}
        (root / "zarr.json").write_text(
            json.dumps(
                {
                    "zarr_format": 3,
                    "node_type": "group",
                    "attributes": {},
                    "consolidated_metadata": {"kind": "inline", "must_understand": False, "metadata": meta},
                }
            )
        )
        return root

    return build


def escaping_path_store(array_path):
    def build(root):
        root.mkdir()
        (root / "zarr.json").write_text(json.dumps({"zarr_format": 3, "node_type": "group", "attributes": {}}))
        outside = root.parent / "x"
        outside.mkdir(exist_ok=True)
        (outside / "zarr.json").write_text(json.dumps(base_array_meta()))
        write_base_chunks(outside)
        return f'ZARR3:"{root}":{array_path}', root

    return build


BIG = 9223372036854775807

CASES = [
    # JSON
    ("bad_json", json_store("{ this is not json")),
    ("truncated_json", json_store(json.dumps(base_array_meta())[:-25])),
    ("empty_json", json_store("")),
    ("binary_json", json_store(b"\x00\xff\xfe{\x01")),
    ("json_top_array", json_store("[1, 2, 3]")),
    ("json_deep_nesting", json_store("[" * 200000 + "]" * 200000)),
    ("json_deep_object", json_store('{"a":' * 100000 + "1" + "}" * 100000)),
    # grids
    ("zero_edge", meta_store(mutate(CS, [[4, 0, 6], 3]))),
    ("negative_edge", meta_store(mutate(CS, [[4, -6], 3]))),
    ("float_edge", meta_store(mutate(CS, [[4.5, 6], 3]))),
    ("rle_count_zero", meta_store(mutate(CS, [[[5, 0], 10], 3]))),
    ("rle_count_negative", meta_store(mutate(CS, [[[5, -2], 10], 3]))),
    ("rle_value_zero", meta_store(mutate(CS, [[[0, 3], 10], 3]))),
    ("rle_run_count_overflow", meta_store(mutate(CS, [[[3, BIG]], 3]))),
    ("rle_two_runs_overflow", meta_store(mutate(CS, [[[2, BIG], [2, BIG]], 3]))),
    ("rle_run_count_u64", meta_store(mutate(CS, [[[2, 2**64 - 1]], 3]))),
    ("rle_run_count_too_big_for_json_u64", meta_store(mutate(CS, [[[1, 2**64]], 3]))),
    ("rle_sum_overflow", meta_store(mutate(CS, [[[2**62, 8]], 3]))),
    ("rle_bad_pair", meta_store(mutate(CS, [[[5, 2, 1]], 3]))),
    ("edges_short", meta_store(mutate(CS, [[4, 5], 3]))),
    ("rank_mismatch_short", meta_store(mutate(CS, [[4, 6]]))),
    ("rank_mismatch_long", meta_store(mutate(CS, [[4, 6], 3, 3]))),
    ("chunk_shapes_not_list", meta_store(mutate(CS, "4,6"))),
    ("rectilinear_no_kind", meta_store(mutate(("chunk_grid", "configuration", "kind"), DELETE))),
    ("regular_zero", meta_store(regular([0, 3]))),
    ("regular_negative", meta_store(regular([4, -3]))),
    ("regular_rank_mismatch", meta_store(regular([4]))),
    ("unknown_grid", meta_store(mutate(("chunk_grid", "name"), "hexagonal"))),
    # shape
    ("negative_shape", meta_store(mutate(("shape",), [-10, 6]))),
    ("shape_overflow", meta_store(mutate(("shape",), [2**63, 2**63]))),
    ("shape_not_list", meta_store(mutate(("shape",), 10))),
    # codecs / types / keys / members
    ("unknown_codec", meta_store(mutate(("codecs",), [BYTES, {"name": "lzma9000"}]))),
    ("two_array_bytes_codecs", meta_store(mutate(("codecs",), [BYTES, BYTES]))),
    ("bad_endian", meta_store(mutate(("codecs",), [{"name": "bytes", "configuration": {"endian": "middle"}}]))),
    ("bad_transpose", meta_store(mutate(("codecs",), [{"name": "transpose", "configuration": {"order": [0, 0]}}, BYTES]))),
    ("gzip_bad_level", meta_store(mutate(("codecs",), [BYTES, {"name": "gzip", "configuration": {"level": "max"}}]))),
    ("unknown_dtype", meta_store(mutate(("data_type",), "int128"))),
    ("unknown_key_encoding", meta_store(mutate(("chunk_key_encoding", "name"), "morton"))),
    ("bad_separator", meta_store(mutate(("chunk_key_encoding", "configuration", "separator"), "|"))),
    ("unknown_member", meta_store(mutate(("frobnicate",), {"x": 1}))),
    ("unknown_member_must_understand_true", meta_store(mutate(("frobnicate",), {"must_understand": True}))),
    ("storage_transformer", meta_store(mutate(("storage_transformers",), [{"name": "foo"}]))),
    ("missing_node_type", meta_store(mutate(("node_type",), DELETE))),
    ("bad_dimension_names", meta_store(mutate(("dimension_names",), ["y"]))),
    # fill values
    ("fill_banana", meta_store(mutate(("fill_value",), "banana"))),
    ("fill_out_of_range", meta_store(mutate(("fill_value",), 70000))),
    ("fill_fraction_for_int", meta_store(mutate(("fill_value",), 1.5))),
    ("fill_hex_wrong_width", meta_store(lambda m: m.update(data_type="float32", fill_value="0x12"))),
    ("fill_complex_for_float", meta_store(lambda m: m.update(data_type="float64", fill_value=[1, 2]))),
    # sharding metadata
    ("shard_inner_not_dividing", meta_store(sharding([3, 3]), chunks=False)),
    ("shard_inner_rank_mismatch", meta_store(sharding([4]), chunks=False)),
    ("shard_inner_zero", meta_store(sharding([0, 4]), chunks=False)),
    ("shard_index_compressed", meta_store(sharding([4, 4], [BYTES, GZIP]), chunks=False)),
    # chunk bytes
    ("truncated_chunk", coded_store([BYTES], lambda b: b[:-3])),
    ("oversized_chunk", coded_store([BYTES], lambda b: b + b"\0" * 8)),
    ("garbage_gzip_chunk", coded_store([BYTES, GZIP], lambda b: b"definitely not gzip at all")),
    ("truncated_gzip_chunk", coded_store([BYTES, GZIP], lambda b: gzip_bytes(b, level=1)[:-12])),
    ("gzip_chunk_too_large", coded_store([BYTES, GZIP], lambda b: gzip_bytes(b"\0" * (64 << 20), level=1))),
    ("gzip_chunk_too_small", coded_store([BYTES, GZIP], lambda b: gzip_bytes(b[:4], level=1))),
    ("crc32c_mismatch", coded_store([BYTES, {"name": "crc32c"}], lambda b: b + b"\1\2\3\4")),
    ("crc32c_chunk_too_short", coded_store([BYTES, {"name": "crc32c"}], lambda b: b"\1\2")),
    ("garbage_zstd_chunk", zstd_store(lambda raw: raw[:8] + bytes(x ^ 0xA5 for x in raw[8:]))),
    ("truncated_zstd_chunk", zstd_store(lambda raw: raw[: len(raw) // 2])),
    ("zstd_random_bytes", zstd_store(lambda raw: bytes(range(256)) * 4)),
    # shards
    ("shard_index_crc_mismatch", shard_store(flip(128 + 3))),
    ("shard_index_crc_bytes_flipped", shard_store(flip(-1))),
    ("truncated_shard", shard_store(lambda raw: raw[:-10])),
    ("shard_shorter_than_index", shard_store(lambda raw: raw[:20])),
    ("shard_empty_file", shard_store(lambda raw: b"")),
    ("shard_entry_past_end", shard_store(set_entry(1, offset=4096))),
    ("shard_entry_nbytes_past_end", shard_store(set_entry(2, nbytes=1 << 40))),
    ("shard_entry_overlaps_index", shard_store(set_entry(3, offset=128 + 8))),
    ("shard_entry_offset_overflow", shard_store(set_entry(0, offset=2**64 - 8, nbytes=32))),
    ("shard_entry_half_empty", shard_store(set_entry(0, offset=2**64 - 1))),
    ("shard_entry_wrong_nbytes", shard_store(set_entry(1, nbytes=16))),
]

# Names that would escape the store root: an error, or the node is skipped;
# never the array lying next to the store.
ESCAPES = [
    ("consolidated_dotdot", consolidated_store(["../x"])),
    ("consolidated_nested_dotdot", consolidated_store(["a/../../x"])),
    ("consolidated_absolute", consolidated_store(["/../x"])),
    ("consolidated_backslash", consolidated_store(["..\\x"])),
    ("array_path_dotdot", escaping_path_store("/../x")),
    ("array_path_nested_dotdot", escaping_path_store("/a/../../x")),
]


def build_and_read(tmp_path, name, build):
    """Builds case `name` under tmp_path/s and reads it in a subprocess within
    10 s: (built, store root, reader result); `built` is what build returned
    (the store, or (open name, store))."""
    (tmp_path / "s").mkdir()
    built = build(tmp_path / "s" / f"{name}.zarr")
    open_name, root = built if isinstance(built, tuple) else (built, built)
    res, elapsed = run_reader(open_name)
    assert elapsed < 10
    return built, root, res


@pytest.mark.parametrize("name,build", CASES, ids=[c[0] for c in CASES])
def test_malformed_store(tmp_path, name, build):
    _, root, res = build_and_read(tmp_path, name, build)
    msg = res["multidim"]
    assert msg is not None, f"{name}: multidimensional open and read succeeded"
    assert str(root) in msg, msg
    # Classic mode also fails (or finds nothing to open); its message names the store.
    assert res["classic"] is not None and str(root) in res["classic"], res["classic"]


@pytest.mark.parametrize("name,build", ESCAPES, ids=[c[0] for c in ESCAPES])
def test_names_never_escape_the_store(tmp_path, name, build):
    built, root, res = build_and_read(tmp_path, name, build)
    outside_sum = float(BASE_DATA.sum())
    assert all(s != outside_sum for _, s in res.get("read", [])), res
    for mode in ("multidim", "classic"):
        assert res[mode] is None or str(root) in res[mode], res[mode]
    # The classic open of a hostile array path is an error.
    if isinstance(built, tuple):
        assert res["classic"] is not None


def test_case_count():
    assert len(CASES) >= 40


def test_valid_arrays_read_next_to_malformed_one(tmp_path):
    root = tmp_path / "mixed.zarr"
    root.mkdir()
    (root / "zarr.json").write_text(json.dumps({"zarr_format": 3, "node_type": "group", "attributes": {}}))
    for name, offset in (("a", 0), ("b", 1000)):
        d = root / name
        d.mkdir()
        (d / "zarr.json").write_text(json.dumps(base_array_meta()))
        for i, (r0, r1) in enumerate(((0, 4), (4, 10))):
            for j, (c0, c1) in enumerate(((0, 3), (3, 6))):
                (d / "c" / str(i)).mkdir(parents=True, exist_ok=True)
                (d / "c" / str(i) / str(j)).write_bytes((BASE_DATA[r0:r1, c0:c1] + offset).astype("<i2").tobytes())
    bad = root / "c"
    bad.mkdir()
    m = base_array_meta()
    m["chunk_grid"]["configuration"]["chunk_shapes"] = [[[3, BIG]], 3]
    (bad / "zarr.json").write_text(json.dumps(m))
    script = r"""
import json, sys
from osgeo import gdal
gdal.UseExceptions()
g = gdal.OpenEx(sys.argv[1], gdal.OF_MULTIDIM_RASTER, allowed_drivers=["Zarr3"]).GetRootGroup()
out = {}
for n in ("a", "b", "c"):
    try:
        out[n] = g.OpenMDArray(n).ReadAsArray().tolist()
    except RuntimeError as e:
        out[n] = "ERROR:" + str(e)
print("RESULT:" + json.dumps(out))
"""
    p = subprocess.run([sys.executable, "-c", script, str(root)], capture_output=True, text=True, timeout=10, preexec_fn=limiter(1 << 30))
    assert p.returncode == 0, p.stderr[-2000:]
    out = json.loads([ln for ln in p.stdout.splitlines() if ln.startswith("RESULT:")][0][7:])
    assert out["a"] == BASE_DATA.tolist()
    assert out["b"] == (BASE_DATA + 1000).tolist()
    assert isinstance(out["c"], str) and out["c"].startswith("ERROR:") and str(bad / "zarr.json") in out["c"], out["c"]




@pytest.mark.parametrize("kind", ["array", "group"])
@pytest.mark.parametrize("key", ["", "a//b", "."])
def test_consolidated_entry_naming_no_node(tmp_path, key, kind):
    """A consolidated entry whose path names no node ("" and the like) is
    ignored with a warning naming the store, by the classic and the
    multidimensional open alike; the valid array next to it reads."""
    root = tmp_path / "s.zarr"
    (root / "a").mkdir(parents=True)
    arr = base_array_meta()
    (root / "a" / "zarr.json").write_text(json.dumps(arr))
    write_base_chunks(root / "a")
    bad = arr if kind == "array" else {"zarr_format": 3, "node_type": "group", "attributes": {}}
    meta = {"a": arr, key: bad}
    (root / "zarr.json").write_text(json.dumps({
        "zarr_format": 3, "node_type": "group", "attributes": {},
        "consolidated_metadata": {"kind": "inline", "must_understand": False, "metadata": meta}}))
    warnings = []

    def handler(cls, num, msg):
        warnings.append((cls, msg))

    gdal.PushErrorHandler(handler)
    try:
        ds = gdal.OpenEx(str(root), gdal.OF_RASTER, allowed_drivers=["Zarr3"])
        classic = ds.GetRasterBand(1).ReadAsArray().tolist()
        mds = gdal.OpenEx(str(root), gdal.OF_MULTIDIM_RASTER, allowed_drivers=["Zarr3"])
        g = mds.GetRootGroup()
        names = (g.GetMDArrayNames(), g.GetGroupNames() or [])
        md = g.OpenMDArray("a").ReadAsArray().tolist()
    finally:
        gdal.PopErrorHandler()
    assert classic == BASE_DATA.tolist() and md == BASE_DATA.tolist()
    assert names == (["a"], []), names
    hits = [m for c, m in warnings if c == gdal.CE_Warning and str(root) in m and f'"{key}"' in m]
    assert len(hits) == 2, warnings  # one per open
    assert not [m for c, m in warnings if c != gdal.CE_Warning], warnings
