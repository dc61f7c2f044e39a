"""Bounded work for hostile stores (issue 15): every reproducer runs in a
subprocess with a 1.5 GiB address-space limit (not under ASan) and a
timeout, and must end cleanly with the expected error (or warning) text:
- a 75 MB zarr.json of 25 million {} (JSON value budget),
- a 145 KB store whose one chunk decodes to 4 GiB (decoded-chunk cap; with the
  cap raised, std::bad_alloc must come back as a GDAL error, not abort),
- a 335-byte zarr.json of shape [1000000,1,1] (band count of the classic view),
- symbolic links to "." (group walks: cycles), deep and wide hierarchies
  (depth and node budget),
- Icechunk repositories (issue 29) with one metadata file (repo, snapshot,
  manifest) damaged: zstd frames claiming 1 TiB or decoding to 2 GiB,
  flatbuffers claiming 2^31 elements or a root outside the file, truncated
  files, chunk references of 2^62 bytes (helpers: icechunk_files.py).
"""
import gzip
import json
import os
import struct
import subprocess

import pytest

from bounded_run import ASAN, limiter, run_script

SCRIPT = r"""
import json, sys
from osgeo import gdal
gdal.UseExceptions()
mode, path = sys.argv[1], sys.argv[2]
for kv in sys.argv[3:]:
    k, v = kv.split("=", 1)
    gdal.SetConfigOption(k, v)
out = {"warnings": [], "errors": []}

def handler(cls, num, msg):
    if cls == gdal.CE_Warning:
        out["warnings"].append(msg)
    elif cls >= gdal.CE_Failure:
        out["errors"].append(msg)
gdal.PushErrorHandler(handler)

def walk(g, depth=0):
    out["groups"] = out.get("groups", 0) + 1
    out["max_depth"] = max(out.get("max_depth", 0), depth)
    if depth > 64:
        out["runaway"] = True
        return
    for n in g.GetGroupNames() or []:
        try:
            sub = g.OpenGroup(n)
        except RuntimeError as e:
            out["errors"].append(str(e))
            continue
        if sub is not None:
            walk(sub, depth + 1)

try:
    if mode == "classic":
        ds = gdal.OpenEx(path, gdal.OF_RASTER, allowed_drivers=["Zarr3"])
        out["bands"] = ds.RasterCount
        out["subdatasets"] = len(ds.GetMetadata("SUBDATASETS")) // 2
        if ds.RasterCount:
            out["pixel"] = int(ds.GetRasterBand(1).ReadAsArray(0, 0, 1, 1)[0][0])
    elif mode in ("strings_one", "strings_all"):
        ds = gdal.OpenEx(path, gdal.OF_MULTIDIM_RASTER, allowed_drivers=["Zarr3"])
        arr = ds.GetRootGroup().OpenMDArray(ds.GetRootGroup().GetMDArrayNames()[0])
        got = arr.Read(array_start_idx=[5], count=[1]) if mode == "strings_one" else arr.Read()
        out["lengths"] = [len(v) for v in got]
        out["heads"] = sorted(set(v[:1] for v in got))
    elif mode == "multidim":
        ds = gdal.OpenEx(path, gdal.OF_MULTIDIM_RASTER, allowed_drivers=["Zarr3"])
        walk(ds.GetRootGroup())
        names = ds.GetRootGroup().GetMDArrayNames() or []
        if names:
            arr = ds.GetRootGroup().OpenMDArray(names[0])
            out["shape"] = [d.GetSize() for d in arr.GetDimensions()]
    out["exception"] = None
except RuntimeError as e:
    out["exception"] = str(e)
print("RESULT:" + json.dumps(out))
"""


def run(mode, path, *config, timeout=60):
    return run_script(SCRIPT, [mode, path, *config], 3 << 29, timeout)  # 1.5 GiB


def all_text(r):
    return "\n".join([r.get("exception") or ""] + r["errors"] + r["warnings"])


def array_meta(shape, chunks, codecs=None, dtype="uint8", names=None):
    m = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": shape,
        "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
        "chunk_key_encoding": {"name": "default"},
        "fill_value": 0,
        "codecs": codecs or [{"name": "bytes"}],
    }
    if names:
        m["dimension_names"] = names
    return m


def write_group(d):
    d.mkdir(parents=True, exist_ok=True)
    (d / "zarr.json").write_text(json.dumps({"zarr_format": 3, "node_type": "group"}))


def write_array(d, meta):
    d.mkdir(parents=True, exist_ok=True)
    (d / "zarr.json").write_text(json.dumps(meta))


def zstd_rle_frame(size, value, stated=None):
    """A zstd frame of `size` bytes of `value` in RLE blocks of 128 KiB (4 bytes each), without a
    content size, or stating `stated` bytes (which need not be `size`)."""
    out = bytearray(b"\x28\xb5\x2f\xfd\x00\x38")  # magic, no FCS, 128 KiB window
    if stated is not None:
        out[4] = 0xC0  # an 8-byte frame content size follows the window descriptor
        out += struct.pack("<Q", stated)
    block = 128 * 1024
    pos = 0
    while pos < size:
        n = min(block, size - pos)
        last = pos + n == size
        h = int(last) | (1 << 1) | (n << 3)
        out += bytes([h & 0xFF, (h >> 8) & 0xFF, (h >> 16) & 0xFF, value])
        pos += n
    return bytes(out)


# ------------------------------------------------------------------ JSON budget


def test_75mb_zarr_json_of_empty_objects_fails_fast_naming_file_and_limit(tmp_path):
    root = tmp_path / "objs.zarr"
    root.mkdir()
    n = 25_000_000
    with open(root / "zarr.json", "w") as f:
        f.write('{"zarr_format":3,"node_type":"group","attributes":{"a":[{}')
        f.write(",{}" * (n - 1))
        f.write("]}}")
    assert (root / "zarr.json").stat().st_size > 74_000_000
    for mode in ("classic", "multidim"):
        r, elapsed = run(mode, root)
        text = all_text(r)
        assert r["exception"], r
        assert "ZARR3_MAX_JSON_NODES" in text, text[:2000]
        assert "4000000 values" in text, text[:2000]
        assert str(root / "zarr.json") in text, text[:2000]
        assert elapsed < 60, elapsed


def test_json_budget_is_configurable(tmp_path):
    root = tmp_path / "attrs.zarr"
    root.mkdir()
    (root / "zarr.json").write_text(
        json.dumps({"zarr_format": 3, "node_type": "group", "attributes": {"a": list(range(500))}})
    )
    r, _ = run("multidim", root, "ZARR3_MAX_JSON_NODES=100")
    assert "100 values" in all_text(r) and "ZARR3_MAX_JSON_NODES" in all_text(r), r
    r, _ = run("multidim", root, "ZARR3_MAX_JSON_NODES=1000")
    assert r["exception"] is None and not r["errors"], r


# ------------------------------------------------------------------ chunk cap


def four_gib_chunk_store(tmp_path):
    """shape [10], one chunk of [2^32] uint8 compressed to a 128 KiB zstd frame."""
    root = tmp_path / "bigchunk.zarr"
    write_array(
        root,
        array_meta(
            [10, 1],
            [1 << 32, 1],
            codecs=[{"name": "bytes"}, {"name": "zstd", "configuration": {"level": 1}}],
            names=["y", "x"],
        ),
    )
    (root / "c" / "0").mkdir(parents=True)
    (root / "c" / "0" / "0").write_bytes(zstd_rle_frame(1 << 32, 7))
    assert sum(f.stat().st_size for f in root.rglob("*") if f.is_file()) < 150_000
    return root


def test_one_pixel_of_a_4gib_chunk_is_refused_before_allocating(tmp_path):
    root = four_gib_chunk_store(tmp_path)
    r, elapsed = run("classic", root)
    text = all_text(r)
    assert r["exception"], r
    assert "ZARR3_MAX_CHUNK_BYTES" in text, text
    assert "4294967296 bytes" in text and "1073741824" in text, text
    assert str(root / "c" / "0" / "0") in text, text
    assert "bad_alloc" not in text and "out of memory" not in text, text
    assert elapsed < 60


def test_chunk_cap_allows_a_chunk_below_it(tmp_path):
    root = tmp_path / "small.zarr"
    write_array(
        root,
        array_meta(
            [10, 1], [1 << 20, 1], codecs=[{"name": "bytes"}, {"name": "zstd"}], names=["y", "x"]
        ),
    )
    (root / "c" / "0").mkdir(parents=True)
    (root / "c" / "0" / "0").write_bytes(zstd_rle_frame(1 << 20, 9))
    r, _ = run("classic", root)
    assert r["exception"] is None and r["pixel"] == 9, r
    r, _ = run("classic", root, "ZARR3_MAX_CHUNK_BYTES=1000")
    assert "ZARR3_MAX_CHUNK_BYTES" in all_text(r) and "limit of 1000 bytes" in all_text(r), r


@pytest.mark.skipif(ASAN, reason="needs the address-space limit")
def test_bad_alloc_becomes_a_gdal_error_not_an_abort(tmp_path):
    # Cap raised to the 4 GiB maximum: the chunk allocation itself fails under
    # the 1.5 GiB address-space limit and must come back as a GDAL error.
    root = four_gib_chunk_store(tmp_path)
    r, _ = run("classic", root, "ZARR3_MAX_CHUNK_BYTES=4294967296")
    text = all_text(r)
    assert r["exception"], r
    assert "out of memory" in text, text
    assert str(root) in text, text


# ------------------------------------------------------------------ band count


def test_million_band_zarr_json_is_refused_quickly_pointing_to_multidim(tmp_path):
    root = tmp_path / "bands.zarr"
    write_array(root, array_meta([1000000, 1, 1], [1000, 1, 1]))
    assert (root / "zarr.json").stat().st_size < 400
    r, elapsed = run("classic", root)
    text = all_text(r)
    assert r["exception"], r
    assert "1000000 bands" in text and "ZARR3_MAX_BANDS" in text, text
    assert "multidimensional" in text, text
    assert elapsed < 10, elapsed
    # The multidimensional API opens it.
    r, _ = run("multidim", root)
    assert r["exception"] is None and r["shape"] == [1000000, 1, 1], r
    # A raised limit lets the classic view open it.
    small = tmp_path / "bands2.zarr"
    write_array(small, array_meta([300, 1, 1], [300, 1, 1]))
    r, _ = run("classic", small, "ZARR3_MAX_BANDS=200")
    assert "300 bands" in all_text(r), r
    r, _ = run("classic", small, "ZARR3_MAX_BANDS=300")
    assert r["exception"] is None and r["bands"] == 300, r


# ------------------------------------------------------------------ group walks


def cyclic_store(tmp_path):
    root = tmp_path / "cycle.zarr"
    write_group(root)
    write_array(root / "a", array_meta([4, 5], [4, 5], names=["y", "x"]))
    write_array(root / "b", array_meta([4, 5], [4, 5], names=["y", "x"]))
    os.symlink(".", root / "l1")
    os.symlink(".", root / "l2")
    return root


def test_symlink_cycles_end_subdataset_listing(tmp_path):
    root = cyclic_store(tmp_path)
    r, elapsed = run("classic", root, timeout=60)
    assert r["exception"] is None, r
    assert r["subdatasets"] == 2, r
    assert any("symbolic link cycle" in w and str(root) in w for w in r["warnings"]), r
    assert elapsed < 30, elapsed


def test_symlink_cycles_end_multidim_walks(tmp_path):
    root = cyclic_store(tmp_path)
    r, elapsed = run("multidim", root, timeout=60)
    assert not r.get("runaway"), r
    assert r["groups"] == 1, r
    assert any("symbolic link cycle" in e and str(root) in e for e in r["errors"]), r
    assert elapsed < 30, elapsed


def test_symlink_cycles_end_gdalmdiminfo(tmp_path, driver_path):
    root = cyclic_store(tmp_path)
    env = dict(os.environ, GDAL_DRIVER_PATH=driver_path)
    p = subprocess.run(
        ["gdalmdiminfo", str(root)],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=limiter(3 << 29),
        env=env,
    )
    assert p.returncode >= 0, p.stderr[-2000:]
    assert "symbolic link cycle" in p.stderr, p.stderr[-2000:]
    assert '"a"' in p.stdout or "/a" in p.stdout, p.stdout[-2000:]


def test_deep_hierarchy_stops_at_32_levels_with_a_warning(tmp_path):
    root = tmp_path / "deep.zarr"
    write_group(root)
    d = root
    for _ in range(40):
        d = d / "g"
        write_group(d)
    write_array(d / "a", array_meta([4, 5], [4, 5]))
    write_array(root / "g" / "a", array_meta([4, 5], [4, 5]))
    r, _ = run("classic", root)
    assert r["exception"] is None, r
    assert (r["subdatasets"], r["bands"]) == (0, 1), r  # /g/a opens; the deep array is not listed
    assert any("deeper than 32 levels" in w and str(root) in w for w in r["warnings"]), r
    r, _ = run("multidim", root)
    assert r["max_depth"] == 32, r
    assert any("deeper than 32 levels" in e for e in r["errors"]), r


def test_group_node_budget_is_configurable(tmp_path):
    root = tmp_path / "wide.zarr"
    write_group(root)
    for i in range(30):
        write_group(root / f"g{i:02d}")
        write_array(root / f"g{i:02d}" / "a", array_meta([4, 5], [4, 5]))
    r, _ = run("classic", root)
    assert r["subdatasets"] == 30 and not r["warnings"], r
    r, _ = run("classic", root, "ZARR3_MAX_GROUP_NODES=20")
    assert r["exception"] is None, r
    assert r["subdatasets"] < 20, r
    assert any("ZARR3_MAX_GROUP_NODES" in w and str(root) in w for w in r["warnings"]), r
    r, _ = run("multidim", root, "ZARR3_MAX_GROUP_NODES=10")
    assert r["groups"] == 11, r  # the root and 10 groups
    assert any("ZARR3_MAX_GROUP_NODES" in e for e in r["errors"]), r


# ------------------------------------------------ stored and claimed sizes (issue 33 #10, #11)

SPARSE = 3584 << 20  # 3.5 GiB


@pytest.mark.skipif(ASAN, reason="needs the address-space limit")
def test_sparse_chunk_file_is_refused_before_allocating(tmp_path):
    # An 8 KiB chunk (bytes codec: exactly 8192 bytes stored) whose file is a
    # 3.5 GiB sparse file: refused naming the file, the size and the bound,
    # not "out of memory" under the 1.5 GiB address-space limit.
    root = tmp_path / "sparse.zarr"
    write_array(root, array_meta([1, 8192], [1, 8192], names=["y", "x"]))
    chunk = root / "c" / "0" / "0"
    chunk.parent.mkdir(parents=True)
    with open(chunk, "wb") as f:
        f.truncate(SPARSE)
    r, _ = run("classic", root)
    text = all_text(r)
    assert r["exception"], r
    assert str(chunk) in text, text
    assert f"{SPARSE} bytes" in text and "limit of 8192 bytes" in text, text
    assert "out of memory" not in text and "bad_alloc" not in text, text


def vlen_chunk(values):
    out = struct.pack("<I", len(values))
    for v in values:
        b = v.encode()
        out += struct.pack("<I", len(b)) + b
    return out


def long_string_shard_store(tmp_path, n=64, mib=60):
    """A `string` array of n elements in one shard of n inner chunks of one
    element each, each a gzip-compressed string of `mib` MiB: about 4 MiB
    stored, n * mib MiB of text."""
    root = tmp_path / "strings.zarr"
    meta = array_meta([n], [n], dtype="string", names=["x"])
    meta["fill_value"] = ""
    meta["codecs"] = [
        {
            "name": "sharding_indexed",
            "configuration": {
                "chunk_shape": [1],
                "codecs": [{"name": "vlen-utf8"}, {"name": "gzip", "configuration": {"level": 9}}],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                "index_location": "end",
            },
        }
    ]
    write_array(root, meta)
    data, index = b"", b""
    packed = {c: gzip.compress(vlen_chunk([c * (mib << 20)]), 9) for c in "af"}
    for i in range(n):
        inner = packed["f" if i == 5 else "a"]  # element 5 starts with "f"
        index += struct.pack("<QQ", len(data), len(inner))
        data += inner
    (root / "c").mkdir()
    (root / "c" / "0").write_bytes(data + index)
    assert (root / "c" / "0").stat().st_size < 8 << 20
    return root


@pytest.mark.skipif(ASAN, reason="needs the address-space limit")
def test_one_element_of_a_long_string_shard_reads_within_the_limit(tmp_path):
    # Issue 33 #10: 64 x 60 MiB of text in a 4 MiB shard; a one-element read
    # decodes one inner chunk (60 MiB), not the whole shard (3.75 GiB).
    root = long_string_shard_store(tmp_path)
    r, _ = run("strings_one", root, "ZARR3_MAX_CHUNK_BYTES=67108864")
    assert r["exception"] is None, r
    assert r["lengths"] == [60 << 20] and r["heads"] == ["f"], r


@pytest.mark.skipif(ASAN, reason="needs the address-space limit")
def test_whole_long_string_shard_is_refused_counting_text_bytes(tmp_path):
    root = long_string_shard_store(tmp_path)
    r, _ = run("strings_all", root, "ZARR3_MAX_CHUNK_BYTES=67108864")
    text = all_text(r)
    assert r["exception"], r
    assert "ZARR3_MAX_CHUNK_BYTES" in text and "limit of 67108864" in text, text
    assert str(root / "c" / "0") in text, text
    assert "out of memory" not in text, text


# ------------------------------------------------------------------ Icechunk repositories (issue 29)
# Hostile copies of two valid repositories, one metadata file damaged: data/t2m_2023q1.icechunk (written
# by the real Icechunk, zstd-compressed files) and one written by zarr3_icechunk_build (uncompressed
# files). The file damaged is the one the open (repo, the head snapshot of main) or the read of chunk 0
# (its manifest) needs (icechunk_files.py). Each must end in a clean error naming that file by its full
# path, without data, within the address-space limit and the timeout.

ICE_SOURCES = ["sample", "built"]
ICE_KINDS = ["repo", "snapshot", "manifest"]
TIB = 1 << 40
GIB = 1 << 30


def icechunk_copy(tmp_path, source):
    """(repository folder, the array read) of a private copy of a valid repository."""
    import shutil

    from conftest import REPO
    from icechunk_build import build_repo, zarr_json

    dst = tmp_path / f"{source}.icechunk"
    if source == "sample":
        shutil.copytree(REPO / "data" / "t2m_2023q1.icechunk", dst)
        return dst, "/t2m"
    build_repo(dst, [{"path": "/a", "zarr_json": zarr_json([4, 6], [2, 3]),
                      "refs": [{"index": [0, 0], "native": list(range(6))},
                               {"index": [1, 1], "inline": [9] * 6}]}])
    return dst, "/a"


def damage_icechunk_file(f, kind, damage):
    """Damages metadata file f; returns what the error must say."""
    import icechunk_files as ice

    data = f.read_bytes()
    compressed = data[ice.COMPRESSION] == 1
    if damage == "zstd_states_1tib":  # a 28-byte frame whose header claims 1 TiB
        f.write_bytes(data[:ice.COMPRESSION] + b"\x01" + zstd_rle_frame(1 << 20, 0, stated=TIB))
        return f"compressed payload states {TIB} bytes, which exceeds the limit of {GIB} bytes"
    if damage == "zstd_decodes_2gib":  # a 64 KiB frame without a content size that decodes to 2 GiB
        f.write_bytes(data[:ice.COMPRESSION] + b"\x01" + zstd_rle_frame(2 * GIB, 0))
        return f"decoded data is larger than the limit of {GIB} bytes"
    if damage == "flatbuffer_count":  # the main vector (snapshots, nodes, arrays) claims 2^31 - 16
        ice.set_main_vector_length(f, kind, 0x7FFFFFF0)
        return "the flatbuffer failed verification"
    if damage == "flatbuffer_root":  # the root table 4 GiB past the start
        ice.set_root_offset(f, 0xFFFFFFF0)
        return "the flatbuffer failed verification"
    if damage == "truncated_half":
        f.write_bytes(data[:len(data) // 2])
        return "zstd: truncated compressed data" if compressed else "the flatbuffer failed verification"
    if damage == "truncated_header":
        f.write_bytes(data[:20])
        return "truncated Icechunk file (20 bytes, the header alone takes 39)"
    raise ValueError(damage)


def icechunk_cases():
    # A frame decoding to 2 GiB is counted in a scratch buffer and refused at the 1 GiB limit before
    # anything that large is allocated (it used to grow a buffer by doubling: out of memory under the
    # 1.5 GiB limit, without the file's name).
    bad_alloc = [pytest.mark.skipif(ASAN, reason="needs the address-space limit")]
    out = []
    for source in ICE_SOURCES:
        damages = ["flatbuffer_count", "flatbuffer_root", "truncated_half", "truncated_header"]
        if source == "sample":  # the frame replaces the stored flatbuffer: one source is enough
            damages = ["zstd_states_1tib", "zstd_decodes_2gib"] + damages
        for kind in ICE_KINDS:
            for damage in damages:
                marks = bad_alloc if damage == "zstd_decodes_2gib" else []
                out.append(pytest.param(source, kind, damage, marks=marks, id=f"{source}-{kind}-{damage}"))
    return out


def assert_refused_naming(r, elapsed, f, want):
    text = all_text(r)
    assert r["exception"], r  # an error, not an open (or a read) that succeeded
    assert "pixel" not in r, r  # no data returned
    assert f"{f}: " in text, text[:3000]  # the file, by its full path
    assert want in text, text[:3000]
    assert "out of memory" not in text and "bad_alloc" not in text, text[:3000]
    assert elapsed < 60, elapsed


@pytest.mark.parametrize("source,kind,damage", icechunk_cases())
def test_hostile_icechunk_file_is_refused_naming_it(tmp_path, source, kind, damage):
    import icechunk_files as ice

    repo, node = icechunk_copy(tmp_path, source)
    f = ice.metadata_file(repo, kind, node)
    want = damage_icechunk_file(f, kind, damage)
    r, elapsed = run("classic", repo)
    assert_refused_naming(r, elapsed, f, want)
    if kind == "manifest":  # the open needs no manifest: the read of chunk 0 failed
        assert r["bands"] >= 1, r


@pytest.mark.parametrize("source", ICE_SOURCES)
def test_icechunk_chunk_reference_of_absurd_length_is_refused_before_reading(tmp_path, source):
    """Every chunk reference of the manifest claims 2^62 bytes: the read of chunk 0 is refused before
    anything is read or allocated, naming the chunk and the size."""
    import icechunk_files as ice

    repo, node = icechunk_copy(tmp_path, source)
    f = ice.metadata_file(repo, "manifest", node)
    assert ice.set_chunk_ref_lengths(f, 1 << 62) > 0
    r, elapsed = run("classic", repo)
    text = all_text(r)
    assert r["exception"] and "pixel" not in r, r
    chunk = f"{repo}@{ice.head_snapshot(repo)}{node}/c/" + "/".join(["0"] * (3 if source == "sample" else 2))
    assert f"{chunk}: {1 << 62} bytes exceeds the limit of" in text and "refused before reading" in text, text
    assert "out of memory" not in text and elapsed < 60, (text, elapsed)


def test_icechunk_chunk_reference_of_absurd_length_names_its_manifest(tmp_path):
    import icechunk_files as ice

    repo, node = icechunk_copy(tmp_path, "sample")
    f = ice.metadata_file(repo, "manifest", node)
    ice.set_chunk_ref_lengths(f, 1 << 62)
    r, _ = run("classic", repo)
    assert r["exception"] and str(f) in all_text(r), r


def test_icechunk_manifest_size_claim_is_not_blamed_on_the_chunk(tmp_path):
    import icechunk_files as ice

    repo, node = icechunk_copy(tmp_path, "sample")
    f = ice.metadata_file(repo, "manifest", node)
    damage_icechunk_file(f, "manifest", "zstd_states_1tib")
    r, _ = run("classic", repo)
    text = all_text(r)
    assert r["exception"] and f"{f}: compressed payload states {TIB} bytes" in text, r
    assert "ZARR3_MAX_CHUNK_BYTES" not in text and "stored chunk" not in text, text
