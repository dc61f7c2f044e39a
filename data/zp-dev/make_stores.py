#!/usr/bin/env python3
"""Writes data/zp-dev/zp_dev.zarr and expected.json with zarr-python's development line.

Run inside the Debian 13 compat chroot (see ../../scripts/compat.sh --setup-only):
    ../shared/zarr-python-dev/zp.sh data/zp-dev/make_stores.py data/zp-dev
The stores are committed; rerun only to regenerate them (the output is deterministic).

One group, one array per newer data type or codec (read bit-exact by core/tests/
test_zp_dev_stores.cpp and autotest/test_zp_dev_stores.py):
  time        numpy.datetime64 [s], the coordinate of temp's first axis
  temp        float32 [time, y, x]
  dt_ms       numpy.datetime64 [10ms] with NaT values and a NaT fill value
  td_min      numpy.timedelta64 [m]
  names       fixed_length_utf32 (numpy <U5), non-ASCII text
  tags        null_terminated_bytes (numpy S4)
  scaled      float32 through scale_offset (offset 250, scale 4)
  checked     int32, zstd with "checksum": true
  rect        int16, rectilinear chunk grid [[2, 3, 5], [4, 4]]
  rect_shard  uint16, rectilinear shards [[4, 6], [8]] of 2x4 inner chunks
  vlen        string with vlen-utf8 (+ zstd, zarr-python's default), read as strings
cast_value is not here: zarr-python needs the cast-value-rs package (PyPI) for it.
"""
import hashlib
import json
import os
import shutil
import sys

import numpy as np
import zarr
from zarr.codecs import ZstdCodec
from zarr.codecs.scale_offset import ScaleOffset


def le_bytes(a):
    if a.dtype.kind in "US":
        return a.tobytes()
    return np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<")).tobytes()


def main(out):
    path = os.path.join(out, "zp_dev.zarr")
    shutil.rmtree(path, ignore_errors=True)
    root = zarr.open_group(path, mode="w", zarr_format=3)
    root.attrs["title"] = "zarr-python development line stores"
    arrays = {}

    def put(name, data, **kw):
        a = root.create_array(name, shape=data.shape, dtype=data.dtype, **kw)
        a[...] = data
        arrays[name] = data

    t = np.array(["2024-01-01T00:00:00", "2024-01-02T12:00:00", "2024-03-01T00:00:30"],
                 dtype="datetime64[s]")
    put("time", t, chunks=(3,), dimension_names=["time"], compressors=None)
    temp = (np.arange(3 * 4 * 5, dtype="float32").reshape(3, 4, 5) * 0.5 + 250).astype("float32")
    put("temp", temp, chunks=(1, 4, 5), dimension_names=["time", "y", "x"])
    dt = np.array(["2020-02-29T23:59:59.990", "NaT", "1969-12-31T23:59:59.980", "NaT"],
                  dtype="datetime64[10ms]")
    put("dt_ms", dt, chunks=(2,), fill_value=np.datetime64("NaT", "10ms"))
    put("td_min", np.array([0, 90, -5, 1440], dtype="timedelta64[m]"), chunks=(4,))
    put("names", np.array(["a", "Zürich", "東京", "", "abcde"], dtype="<U5"),
        chunks=(3,), fill_value="")
    put("tags", np.array([b"ab", b"", b"wxyz", b"q"], dtype="S4"), chunks=(2,))
    scaled = np.array([250.0, 250.25, 262.5, 240.0, 300.0, 251.0], dtype="float32")
    put("scaled", scaled, chunks=(3,), filters=[ScaleOffset(offset=250, scale=4)])
    put("checked", np.arange(-8, 8, dtype="int32").reshape(4, 4), chunks=(2, 4),
        compressors=[ZstdCodec(level=3, checksum=True)])
    put("rect", np.arange(80, dtype="int16").reshape(10, 8), chunks=[[2, 3, 5], [4, 4]])
    put("rect_shard", np.arange(80, dtype="uint16").reshape(10, 8), chunks=(2, 4),
        shards=[[4, 6], [8]])
    vlen = np.array(["x", "yy", "ζζζ"], dtype=object)
    a = root.create_array("vlen", shape=(3,), dtype=str, chunks=(3,))
    a[...] = vlen
    zarr.consolidate_metadata(path) if os.environ.get("ZP_CONSOLIDATE") else None

    expected = {}
    for name, data in arrays.items():
        meta = json.load(open(os.path.join(path, name, "zarr.json")))
        e = {"shape": list(data.shape), "data_type": meta["data_type"],
             "numpy": data.dtype.str, "sha256": hashlib.sha256(le_bytes(data)).hexdigest()}
        if data.dtype.kind in "Mm":
            e["int64"] = [int(v) for v in data.view("int64").ravel()]
            e["text"] = [str(v) for v in data.ravel()]
        elif data.dtype.kind == "U":
            e["text"] = [str(v) for v in data.ravel()]
        elif data.dtype.kind == "S":
            e["text"] = [v.decode("ascii") for v in data.ravel()]
        else:
            e["values"] = data.ravel().tolist()
        expected[name] = e
    expected["vlen"] = {"shape": [3], "data_type": "string", "text": list(vlen)}
    expected["_zarr_python"] = zarr.__version__
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, ensure_ascii=False, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
