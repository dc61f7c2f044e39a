"""Caches that never lie: a store rewritten by another process while this one
keeps GDAL (and so the plugin's process-wide shard index cache) loaded.

A fresh gdal.Open after another process replaced a shard (by rename or in
place, same or other size, other inner-chunk layout) or the zarr.json must
return exactly the new values; reads racing a writer that renames shard
versions into place must each return exactly one of the versions.
"""
import json
import os
import struct
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from osgeo import gdal

from sharded_writer import crc32c

SHAPE = (256, 256)
SHARD = (128, 128)
INNER = (32, 32)  # 16 inner chunks of 2 KiB per shard (uint16, bytes codec)
EMPTY = 2**64 - 1


def write_meta(root, fill=0, attributes=None):
    meta = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": list(SHAPE),
        "data_type": "uint16",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(SHARD)}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill,
        "codecs": [
            {
                "name": "sharding_indexed",
                "configuration": {
                    "chunk_shape": list(INNER),
                    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                    "index_codecs": [
                        {"name": "bytes", "configuration": {"endian": "little"}},
                        {"name": "crc32c"},
                    ],
                    "index_location": "end",
                },
            }
        ],
        "dimension_names": ["y", "x"],
        "attributes": attributes or {},
    }
    Path(root, "zarr.json").write_text(json.dumps(meta))


def values(seed):
    rng = np.random.default_rng(seed)
    return rng.integers(1, 60000, size=SHAPE, dtype=np.uint16)


def shard_bytes(data, sy, sx, order=None, pad=0, empty=()):
    """Shard (sy, sx) of `data`, inner chunks (uncompressed) stored in `order`
    (default C order) after `pad` bytes; inner chunks in `empty` left out."""
    ny, nx = SHARD[0] // INNER[0], SHARD[1] // INNER[1]
    chunks = []
    for iy in range(ny):
        for ix in range(nx):
            y0, x0 = sy * SHARD[0] + iy * INNER[0], sx * SHARD[1] + ix * INNER[1]
            chunks.append(data[y0 : y0 + INNER[0], x0 : x0 + INNER[1]].astype("<u2").tobytes())
    order = list(range(len(chunks))) if order is None else order
    body = bytearray(b"\x07" * pad)
    entries = [(EMPTY, EMPTY)] * len(chunks)
    for k in order:
        if k in empty:
            continue
        entries[k] = (len(body), len(chunks[k]))
        body += chunks[k]
    idx = b"".join(struct.pack("<QQ", o, n) for o, n in entries)
    return bytes(body) + idx + struct.pack("<I", crc32c(idx))


def write_store(root, data, **kw):
    """The store of `data`; `kw` (shard_bytes layout) applies to shard c/0/0."""
    root.mkdir(parents=True, exist_ok=True)
    write_meta(root)
    for sy in range(SHAPE[0] // SHARD[0]):
        for sx in range(SHAPE[1] // SHARD[1]):
            p = root / "c" / str(sy) / str(sx)
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(shard_bytes(data, sy, sx, **(kw if (sy, sx) == (0, 0) else {})))


def expected(data, empty_chunks=(), fill=0):
    """`data` with the inner chunks of shard (0, 0) listed in `empty_chunks` set to fill."""
    out = data.copy()
    nx = SHARD[1] // INNER[1]
    for k in empty_chunks:
        y0, x0 = (k // nx) * INNER[0], (k % nx) * INNER[1]
        out[y0 : y0 + INNER[0], x0 : x0 + INNER[1]] = fill
    return out


def run_other_process(code, *args):
    """Runs `code` in another Python process (the writer); raises on failure."""
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr


REPLACE_BY_RENAME = """
import os, sys
src, dst = sys.argv[1], sys.argv[2]
tmp = dst + ".writer-tmp"
with open(src, "rb") as f, open(tmp, "wb") as g:
    g.write(f.read())
os.replace(tmp, dst)
"""

REWRITE_IN_PLACE = """
import sys
src, dst = sys.argv[1], sys.argv[2]
with open(src, "rb") as f, open(dst, "r+b") as g:
    data = f.read()
    g.write(data)
    g.truncate(len(data))
"""


def read_window(root, x, y, w, h):
    """A fresh gdal.Open of the store, one window read (partial shard reads)."""
    ds = gdal.OpenEx(str(root), gdal.OF_RASTER, allowed_drivers=["Zarr3"])
    try:
        return ds.GetRasterBand(1).ReadAsArray(x, y, w, h)
    finally:
        ds = None


# Windows inside shard (0, 0): one inner chunk; two non-adjacent ones; a
# 2x3 block of inner chunks; an empty-in-v1 inner chunk (k = 5).
WINDOWS = [(0, 0, 32, 32), (96, 0, 32, 64), (32, 32, 96, 64), (32, 32, 32, 32), (0, 0, 256, 256)]


@pytest.mark.parametrize("how", ["rename_same_size", "in_place_same_size", "rename_other_size"])
def test_shard_rewritten_by_another_process_reads_new_values(tmp_path, how):
    root = tmp_path / "s.zarr"
    v1, v2 = values(1), values(2)
    write_store(root, v1, empty=(5,))
    exp1 = expected(v1, empty_chunks=(5,))
    for x, y, w, h in WINDOWS[:4]:  # partial reads: the shard indexes enter the cache
        assert np.array_equal(read_window(root, x, y, w, h), exp1[y : y + h, x : x + w])

    # The new version of shard c/0/0: other values, inner chunks in reverse
    # order, inner chunk 5 present now; chunk 9 left out (same size as v1,
    # which left chunk 5 out), or all chunks after padding (other size).
    order = list(range(16))[::-1]
    old_size = (root / "c/0/0").stat().st_size
    if how == "rename_other_size":
        new = shard_bytes(v2, 0, 0, order=order, pad=48)
        assert len(new) != old_size
    else:
        new = shard_bytes(v2, 0, 0, order=order, empty=(9,))
        assert len(new) == old_size
    src = tmp_path / "new-shard"
    src.write_bytes(new)
    time.sleep(0.02)  # another process writes later (file times advance by clock ticks)
    run_other_process(REWRITE_IN_PLACE if how.startswith("in_place") else REPLACE_BY_RENAME,
                      src, root / "c/0/0")

    exp2 = v1.copy()
    exp2[:128, :128] = v2[:128, :128]
    if how != "rename_other_size":
        exp2 = expected(exp2, empty_chunks=(9,))
    for x, y, w, h in WINDOWS:
        got = read_window(root, x, y, w, h)
        assert np.array_equal(got, exp2[y : y + h, x : x + w]), f"window {(x, y, w, h)}: stale values"


def test_zarr_json_changed_by_another_process_is_seen(tmp_path):
    root = tmp_path / "s.zarr"
    v1 = values(3)
    write_store(root, v1, empty=(0,))
    write_meta(root, fill=11, attributes={"title": "first"})
    ds = gdal.OpenEx(str(root), gdal.OF_RASTER, allowed_drivers=["Zarr3"])
    b = ds.GetRasterBand(1)
    assert b.GetNoDataValue() == 11
    assert ds.GetMetadataItem("title") == "first"
    assert np.all(b.ReadAsArray(0, 0, 32, 32) == 11)
    ds = None

    new_meta = tmp_path / "new-zarr.json"
    keep = root / "zarr.json"
    saved = keep.read_bytes()
    write_meta(root, fill=22, attributes={"title": "second", "extra": "yes"})
    new_meta.write_bytes(keep.read_bytes())
    keep.write_bytes(saved)
    time.sleep(0.02)
    run_other_process(REPLACE_BY_RENAME, new_meta, keep)

    ds = gdal.OpenEx(str(root), gdal.OF_RASTER, allowed_drivers=["Zarr3"])
    b = ds.GetRasterBand(1)
    assert b.GetNoDataValue() == 22
    assert ds.GetMetadataItem("title") == "second"
    assert ds.GetMetadataItem("extra") == "yes"
    assert np.all(b.ReadAsArray(0, 0, 32, 32) == 22)
    ds = None

    # In place this time (same inode), through the multidimensional API.
    write_meta(root, fill=33, attributes={"title": "third"})
    new_meta.write_bytes(keep.read_bytes())
    keep.write_bytes(saved)
    time.sleep(0.02)
    run_other_process(REWRITE_IN_PLACE, new_meta, keep)
    ds = gdal.OpenEx(str(root), gdal.OF_MULTIDIM_RASTER, allowed_drivers=["Zarr3"])
    rg = ds.GetRootGroup()
    md = rg.OpenMDArray(rg.GetMDArrayNames()[0])
    assert md.GetNoDataValueAsDouble() == 33
    assert md.GetAttribute("title").ReadAsString() == "third"


WRITER_LOOP = """
import os, sys, time
a, b, dst, stop, started = sys.argv[1:6]
versions = [open(a, "rb").read(), open(b, "rb").read()]
deadline = time.monotonic() + 120
n = 0
while not os.path.exists(stop) and time.monotonic() < deadline:
    tmp = dst + ".w" + str(n % 2)
    with open(tmp, "wb") as f:
        f.write(versions[n % 2])
    os.replace(tmp, dst)
    n += 1
    if n == 1:
        open(started, "w").close()
    time.sleep(0.0001)
print(n)
"""


def test_reads_racing_a_renaming_writer_see_one_version(tmp_path):
    root = tmp_path / "s.zarr"
    v1, v2 = values(4), values(5)
    write_store(root, v1)
    a = tmp_path / "a"
    b = tmp_path / "b"
    a.write_bytes(shard_bytes(v1, 0, 0))
    # Other values, other layout (reversed, padded: other offsets and size).
    b.write_bytes(shard_bytes(v2, 0, 0, order=list(range(16))[::-1], pad=4096))
    stop, started = tmp_path / "stop", tmp_path / "started"
    writer = subprocess.Popen([sys.executable, "-c", textwrap.dedent(WRITER_LOOP), a, b,
                               root / "c/0/0", stop, started], stdout=subprocess.PIPE, text=True)
    wrong, errors, seen = 0, [], set()
    try:
        t0 = time.monotonic()
        while not started.exists():  # the writer is renaming before the first read
            assert writer.poll() is None and time.monotonic() - t0 < 60
            time.sleep(0.01)
        windows = [(0, 0, 32, 64), (64, 32, 64, 32), (32, 96, 32, 32)]
        for i in range(300):
            x, y, w, h = windows[i % len(windows)]
            try:
                got = read_window(root, x, y, w, h)
            except RuntimeError as e:
                errors.append(str(e))
                continue
            if np.array_equal(got, v1[y : y + h, x : x + w]):
                seen.add(1)
            elif np.array_equal(got, v2[y : y + h, x : x + w]):
                seen.add(2)
            else:
                wrong += 1
    finally:
        stop.write_text("stop")
        out, _ = writer.communicate(timeout=60)
    print(f"\n300 reads racing {out.strip()} renames: {wrong} wrong, {len(errors)} errors, "
          f"versions seen {sorted(seen)}")
    assert wrong == 0
    assert not errors, errors[:3]
    assert int(out) > 10  # the writer really ran during the reads
