#!/usr/bin/env python3
"""zarr-python 3 reader/writer for the interop tests (autotest/test_interop.py).

Run with zarr-python's development line (../shared/zarr-python-dev/zp.sh, in the Debian 13
compat chroot: scripts/interop.sh), which reads and writes rectilinear chunk grids.

  zarr_python_io.py version
  zarr_python_io.py read STORE ARRAYPATH OUT.bin
      Reads the whole array; writes its values C order, little-endian to OUT.bin and prints
      {"shape": [...], "dtype": "<numpy dtype>"} on stdout.
  zarr_python_io.py write STORE ARRAYPATH IN.bin --dtype D --shape a,b --chunks a,b
      [--shards a,b] [--codec none|zstd|gzip|blosc] [--fill V] [--index-location end|start]
      [--filters JSON] [--compressors JSON] [--at a,b]
      Opens/creates the group STORE (zarr v3), creates ARRAYPATH with a regular chunk grid
      (sharded when --shards is given: --chunks is then the inner chunk shape; a JSON list of
      per-axis edge lists, e.g. --chunks '[[2,3,5],[4,4]]' or --shards '[[4,6],[8]]', makes the
      chunk or shard grid rectilinear) and writes IN.bin
      (C order, little-endian, numpy dtype D) into it. --filters / --compressors are JSON
      lists of codecs ({"name": ..., "configuration": ...}, e.g. numcodecs.delta) used as the
      array's filters / compressors (--compressors replaces --codec). With --at, IN.bin (of
      --shape) is written into the existing array ARRAYPATH at that offset instead.
  zarr_python_io.py write-strings STORE ARRAYPATH IN.json --chunks a,b [--shards a,b]
      [--codec none|zstd|gzip|blosc]
      A `string` array (vlen-utf8, fill value "") of IN.json's {"shape": [...], "values":
      [flat list, C order]}; --chunks/--shards as for write (rectilinear with edge lists).
A read of a string array writes its values to OUT.bin as a JSON list (C order, UTF-8) and
prints {"shape": [...], "dtype": "string"}.
Exit status: 0 ok, 1 error, 2 usage, 3 unsupported by this zarr-python.
Runs with the zarr-python of the interpreter (Debian 13's python3-zarr in the compat chroot).
"""
import argparse
import json
import sys

import numpy as np


class Unsupported(Exception):
    pass


def _ints(s):
    return tuple(int(x) for x in s.split(",") if x != "")


def _grid(s):
    """"a,b" -> regular shape; "[[...], [...]]" -> per-axis edge lists (rectilinear)."""
    if s.strip().startswith("["):
        return [list(map(int, axis)) if isinstance(axis, list) else int(axis)
                for axis in json.loads(s)]
    return _ints(s)


def cmd_version(_args):
    import numcodecs
    import zarr

    print(json.dumps({"zarr": zarr.__version__, "numcodecs": numcodecs.__version__,
                      "numpy": np.__version__, "python": sys.version.split()[0]}))


def cmd_read(args):
    import zarr

    try:
        arr = zarr.open_array(store=args.store, path=args.arraypath.strip("/"), mode="r",
                              zarr_format=3)
    except (NotImplementedError, ValueError, KeyError, TypeError) as e:
        # zarr-python 3.0 refuses unknown chunk grids (e.g. rectilinear) at open
        raise Unsupported(f"{type(e).__name__}: {e}") from e
    data = np.asarray(arr[...])
    if data.dtype.kind in "OT":  # variable-length strings (object or StringDType)
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump([str(v) for v in data.ravel()], f, ensure_ascii=False)
        print(json.dumps({"shape": list(data.shape), "dtype": "string"}))
        return
    le = data.dtype.newbyteorder("<") if data.dtype.byteorder not in ("|", "=") else data.dtype
    np.ascontiguousarray(data, dtype=le).tofile(args.out)
    print(json.dumps({"shape": list(data.shape), "dtype": le.str}))


def _compressors(name):
    from zarr import codecs

    if name in (None, "none"):
        return None
    if name == "zstd":
        return [codecs.ZstdCodec(level=3)]
    if name == "gzip":
        return [codecs.GzipCodec(level=5)]
    if name == "blosc":
        return [codecs.BloscCodec(cname="lz4", clevel=5, shuffle="shuffle")]
    raise SystemExit(f"unknown codec {name}")


def cmd_write(args):
    import zarr
    from zarr import codecs

    dtype = np.dtype(args.dtype).newbyteorder("<") if np.dtype(args.dtype).itemsize > 1 \
        else np.dtype(args.dtype)
    shape = _ints(args.shape)
    chunks = _grid(args.chunks) if args.chunks else shape
    data = np.fromfile(args.input, dtype=dtype)
    if data.size != int(np.prod(shape, dtype=np.int64)):
        raise SystemExit(f"{args.input}: {data.size} values, shape {shape} needs {np.prod(shape)}")
    data = data.reshape(shape)
    if args.at:
        arr = zarr.open_array(store=args.store, path=args.arraypath.strip("/"), mode="r+",
                              zarr_format=3)
        arr[tuple(slice(a, a + n) for a, n in zip(_ints(args.at), shape))] = data
        return
    fill = 0 if args.fill is None else np.array(args.fill, dtype=np.float64).astype(dtype)[()]

    root = zarr.open_group(store=args.store, mode="a", zarr_format=3)
    parts = args.arraypath.strip("/").split("/")
    grp = root
    for p in parts[:-1]:
        grp = grp.require_group(p)
    kw = dict(name=parts[-1], shape=shape, dtype=dtype, fill_value=fill, overwrite=True)
    comp = json.loads(args.compressors) if args.compressors else _compressors(args.codec)
    if args.filters:
        kw["filters"] = json.loads(args.filters)
    if args.shards and args.index_location == "start":
        inner = [codecs.BytesCodec(endian="little")] + (comp or [])
        kw.update(chunks=_grid(args.shards), compressors=None,
                  serializer=codecs.ShardingCodec(chunk_shape=chunks, codecs=inner,
                                                  index_location="start"))
    elif args.shards:
        kw.update(chunks=chunks, shards=_grid(args.shards), compressors=comp)
    else:
        kw.update(chunks=chunks, compressors=comp)
    arr = grp.create_array(**kw)
    arr[...] = data
    print(json.dumps({"metadata": json.loads(json.dumps(arr.metadata.to_dict(), default=str))}))


def cmd_write_strings(args):
    import zarr

    spec = json.load(open(args.input, encoding="utf-8"))
    shape = tuple(spec["shape"])
    data = np.array(spec["values"], dtype=object).reshape(shape)
    root = zarr.open_group(store=args.store, mode="a", zarr_format=3)
    kw = dict(name=args.arraypath.strip("/"), shape=shape, dtype=str, fill_value="",
              overwrite=True, chunks=_grid(args.chunks), compressors=_compressors(args.codec))
    if args.shards:
        kw["shards"] = _grid(args.shards)
    try:
        arr = root.create_array(**kw)
    except (NotImplementedError, ValueError, TypeError) as e:
        raise Unsupported(f"string array with chunks {args.chunks} shards {args.shards}: "
                          f"{type(e).__name__}: {e}") from e
    arr[...] = data
    print(json.dumps({"metadata": json.loads(json.dumps(arr.metadata.to_dict(), default=str))}))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("version").set_defaults(fn=cmd_version)
    r = sub.add_parser("read")
    r.add_argument("store")
    r.add_argument("arraypath")
    r.add_argument("out")
    r.set_defaults(fn=cmd_read)
    w = sub.add_parser("write")
    w.add_argument("store")
    w.add_argument("arraypath")
    w.add_argument("input")
    w.add_argument("--dtype", required=True)
    w.add_argument("--shape", required=True)
    w.add_argument("--chunks")
    w.add_argument("--shards")
    w.add_argument("--codec", default="none", choices=["none", "zstd", "gzip", "blosc"])
    w.add_argument("--fill")
    w.add_argument("--index-location", default="end", choices=["end", "start"])
    w.add_argument("--filters")
    w.add_argument("--compressors")
    w.add_argument("--at")
    w.set_defaults(fn=cmd_write)
    ws = sub.add_parser("write-strings")
    ws.add_argument("store")
    ws.add_argument("arraypath")
    ws.add_argument("input")
    ws.add_argument("--chunks", required=True)
    ws.add_argument("--shards")
    ws.add_argument("--codec", default="zstd", choices=["none", "zstd", "gzip", "blosc"])
    ws.set_defaults(fn=cmd_write_strings)
    args = ap.parse_args(argv)
    try:
        args.fn(args)
    except Unsupported as e:
        print(f"zarr_python_io: unsupported: {e}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
