#!/usr/bin/python3
"""Overview benchmark: a zoomed-out view of a 16384x16384 store with a
multiscales pyramid against a full-resolution read.

usage: /usr/bin/python3 bench/overviews.py --plugin-dir BUILD [--dir DIR] [--size 16384]

Generates (once per run, in DIR or a temporary folder) a uint8 store with
512x512 zstd chunks of blocky values with 4 bits of noise (zstd halves them:
with constant data every chunk is a few hundred bytes and the zarr.json
reads dominate both counts) and overviews
2..32 (gdaladdo -r average through BuildOverviews). Each measurement runs in
a fresh child process and counts the bytes it read from disk through
/proc/self/io (rchar: every read() of the store's files), so no cache of an
earlier read helps. Prints the bytes and time of a 1024x1024 view of the
whole extent (RasterIO into a 1024x1024 buffer, which GDAL serves from an
overview) and of a full-resolution read; the target is a ratio of at most
1/32 of the bytes.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e import setup_gdal  # noqa: E402  (bench/e2e.py: loads the plugin or exits)


def generate(gdal, path, n):
    import numpy as np

    ds = gdal.GetDriverByName("Zarr3").Create(path, n, n, 1, gdal.GDT_Byte,
                                               ["BLOCKSIZE=512,512", "COMPRESS=ZSTD"])
    ds.SetGeoTransform([0.0, 1.0, 0.0, 0.0, 0.0, -1.0])
    band = ds.GetRasterBand(1)
    rng = np.random.default_rng(0)
    cols = (np.arange(n) // 256).astype(np.uint16)
    for y0 in range(0, n, 512):
        rows = (np.arange(y0, y0 + 512) // 256).astype(np.uint16)
        blocks = (rows[:, None] * 7 + cols[None, :] * 3) % 240
        noise = rng.integers(0, 16, size=(512, n), dtype=np.uint16)  # ~4 bits of noise per pixel
        band.WriteArray((blocks + noise).astype(np.uint8), 0, y0)
    ds = None
    ds = gdal.Open(path, gdal.GA_Update)
    ds.BuildOverviews("AVERAGE", [2, 4, 8, 16, 32])
    ds = None


def rchar():
    with open("/proc/self/io") as f:
        for line in f:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    return 0


def measure(args):
    """Child: one read, prints JSON {bytes, seconds, shape, overviews}."""
    gdal = setup_gdal(args.plugin_dir)
    before = rchar()
    t0 = time.perf_counter()
    ds = gdal.Open(args.path)
    band = ds.GetRasterBand(1)
    buf = args.view if args.view else ds.RasterXSize
    data = band.ReadRaster(0, 0, ds.RasterXSize, ds.RasterYSize, buf, buf)
    seconds = time.perf_counter() - t0
    print(json.dumps({"bytes": rchar() - before, "seconds": seconds, "buffer": buf,
                      "pixels": len(data), "overviews": band.GetOverviewCount()}))


def child(plugin_dir, path, view):
    cmd = [sys.executable, __file__, "--plugin-dir", plugin_dir, "--measure", path, "--view", str(view)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugin-dir", required=True)
    ap.add_argument("--dir")
    ap.add_argument("--size", type=int, default=16384)
    ap.add_argument("--measure", dest="path")
    ap.add_argument("--view", type=int, default=0)
    args = ap.parse_args()
    if args.path:
        return measure(args)
    gdal = setup_gdal(args.plugin_dir)
    work = args.dir or tempfile.mkdtemp(prefix="zarr3-ovr-bench.")
    path = os.path.join(work, "pyramid.zarr")
    try:
        t0 = time.perf_counter()
        generate(gdal, path, args.size)
        print(f"generated {args.size}x{args.size} uint8 with overviews 2..32 in "
              f"{time.perf_counter() - t0:.1f} s")
        view = child(args.plugin_dir, path, 1024)
        full = child(args.plugin_dir, path, 0)
        ratio = view["bytes"] / max(1, full["bytes"])
        print(f"{'read':<34}{'bytes':>14}{'seconds':>10}")
        print(f"{'1024x1024 view of the whole extent':<34}{view['bytes']:>14}{view['seconds']:>10.3f}")
        print(f"{'full resolution':<34}{full['bytes']:>14}{full['seconds']:>10.3f}")
        verdict = "OK" if ratio <= 1 / 32 else "ABOVE TARGET"
        print(f"bytes ratio view/full = 1/{1 / ratio:.0f} (target <= 1/32): {verdict}; "
              f"overviews seen: {view['overviews']}")
        return 0 if ratio <= 1 / 32 else 1
    finally:
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
