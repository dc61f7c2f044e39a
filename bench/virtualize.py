#!/usr/bin/python3
"""Issue 42: `zarr3 virtualize` of daily NetCDF-4 files, and the full read of the virtual array it
writes against GDAL's netCDF driver reading the same files, measured in one run.

The files: `files` daily NetCDF-4 files (python3-netcdf4), each one day of t2m float32 on a
`nlat` x `nlon` grid in HDF5 chunks of 1 x `chunk` x `chunk` (shuffle + deflate), time in "days
since 2023-01-01", lat, lon. Timed, medians over --reps runs after one warm-up:
- virtualize: `zarr3 virtualize REPO FILES... --concat-dim time` into a fresh repository per run,
  reported per file and per chunk reference (the count the tool prints);
- full read, each run a fresh process with one driver allowed: the virtual array through the plugin
  (`ZARR3:"REPO":/t2m`, ReadAsArray), and every file through GDAL's netCDF driver
  (`NETCDF:"FILE":t2m`, ReadAsArray each); both results are checked equal once.
Ratios: virtual read / netCDF read, and virtualize / netCDF read (metadata work against reading the
data once).

    virtualize.py --plugin-dir BUILD [--files 100] [--nlat 180] [--nlon 360] [--chunk 90]
                  [--reps 3] [--json OUT] [--work DIR]
    virtualize.py --report OUT.json RESULTS.md   (replaces the section "Virtual archives")
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from icechunk_report import report_or_plugin, run_and_print  # noqa: E402

TITLE = "Virtual archives"

WRITE = r"""
import sys
import numpy as np
import netCDF4
out, n, nlat, nlon, chunk = sys.argv[1], *map(int, sys.argv[2:6])
rng = np.random.default_rng(42)
for d in range(n):
    with netCDF4.Dataset(f"{out}/t2m_{d:04d}.nc", "w", format="NETCDF4") as ds:
        ds.createDimension("time", None)
        ds.createDimension("lat", nlat)
        ds.createDimension("lon", nlon)
        t = ds.createVariable("time", "f8", ("time",))
        t.units, t.calendar = "days since 2023-01-01", "standard"
        t[:] = [d]
        lat = ds.createVariable("lat", "f8", ("lat",))
        lat.units = "degrees_north"
        lat[:] = 90 - (np.arange(nlat) + 0.5) * 180 / nlat
        lon = ds.createVariable("lon", "f8", ("lon",))
        lon.units = "degrees_east"
        lon[:] = -180 + (np.arange(nlon) + 0.5) * 360 / nlon
        v = ds.createVariable("t2m", "f4", ("time", "lat", "lon"), zlib=True, shuffle=True,
                              complevel=4, chunksizes=(1, chunk, chunk))
        v.units = "K"
        v[:] = (270 + rng.random((1, nlat, nlon)) * 20).astype("f4")
"""

READ = r"""
import json, sys, time
import numpy as np
from osgeo import gdal
gdal.UseExceptions()
driver, names = sys.argv[1], sys.argv[2:]
t0 = time.monotonic()
parts = []
for name in names:
    ds = gdal.OpenEx(name, gdal.OF_RASTER | gdal.OF_READONLY, allowed_drivers=[driver])
    parts.append(ds.ReadAsArray())
    ds = None
a = np.concatenate([p.reshape((-1,) + p.shape[-2:]) for p in parts])
elapsed = time.monotonic() - t0
print(json.dumps({"seconds": elapsed, "shape": list(a.shape), "sum": float(a.astype("f8").sum()),
                  "crc": int(np.frombuffer(a.tobytes(), np.uint32).sum(dtype=np.uint64) % 2**32)}))
"""


def prepare(a):
    d = os.path.join(a.work, "nc")
    os.makedirs(d, exist_ok=True)
    subprocess.run([sys.executable, "-c", WRITE, d, str(a.files), str(a.nlat), str(a.nlon), str(a.chunk)],
                   check=True, capture_output=True, text=True, timeout=3600)
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".nc"))


def virtualize(a, files, repo):
    shutil.rmtree(repo, ignore_errors=True)
    t0 = time.monotonic()
    p = subprocess.run([a.zarr3, "virtualize", repo, *files, "--concat-dim", "time"],
                       capture_output=True, text=True, timeout=3600)
    elapsed = time.monotonic() - t0
    if p.returncode != 0:
        raise RuntimeError(f"zarr3 virtualize: {p.stderr.strip()[-300:]}")
    m = re.search(r"(\d+) chunk reference\(s\), (\d+) chunk\(s\) copied", p.stdout)
    if not m:
        raise RuntimeError(f"zarr3 virtualize printed no summary: {p.stdout[-300:]}")
    return elapsed, int(m.group(1)), int(m.group(2))


def read(a, driver, names):
    p = subprocess.run([sys.executable, "-c", READ, driver, *names], env=a.env, capture_output=True,
                       text=True, timeout=3600)
    if p.returncode != 0:
        raise RuntimeError(f"{driver} read: {p.stderr.strip()[-300:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def bench(a):
    files = prepare(a)
    repo = os.path.join(a.work, "v.icechunk")
    runs = [virtualize(a, files, repo) for _ in range(a.reps + 1)][1:]
    virt_s = statistics.median(r[0] for r in runs)
    refs, copied = runs[0][1], runs[0][2]
    plugin = [read(a, "Zarr3", [f'ZARR3:"{repo}":/t2m']) for _ in range(a.reps + 1)][1:]
    netcdf = [read(a, "netCDF", [f'NETCDF:"{f}":t2m' for f in files]) for _ in range(a.reps + 1)][1:]
    if {k: plugin[0][k] for k in ("shape", "crc")} != {k: netcdf[0][k] for k in ("shape", "crc")}:
        raise RuntimeError(f"the virtual array differs from the files: {plugin[0]} vs {netcdf[0]}")
    plugin_s = statistics.median(r["seconds"] for r in plugin)
    netcdf_s = statistics.median(r["seconds"] for r in netcdf)
    return {"files": a.files, "grid": [a.nlat, a.nlon], "chunk": a.chunk, "reps": a.reps,
            "refs": refs, "copied": copied, "virtualize_s": virt_s,
            "per_file_ms": 1000 * virt_s / a.files, "per_ref_ms": 1000 * virt_s / max(refs, 1),
            "read_plugin_s": plugin_s, "read_netcdf_s": netcdf_s,
            "read_ratio": plugin_s / netcdf_s, "virtualize_ratio": virt_s / netcdf_s}


def section(res):
    lines = [f"## {TITLE}", ""]
    if not res:
        return lines + ["(not run)", ""]
    if "error" in res:
        return lines + [f"(failed: {res['error']})", ""]
    nlat, nlon = res["grid"]
    lines += [f"`zarr3 virtualize` of {res['files']} daily NetCDF-4 files ({nlat} x {nlon} float32, HDF5 "
              f"chunks 1 x {res['chunk']} x {res['chunk']}, shuffle + deflate; {res['refs']} chunk "
              f"references, {res['copied']} copied), and the full read of the virtual array through the "
              f"plugin against GDAL's netCDF driver reading the files (a fresh process per read; medians of "
              f"{res['reps']}, measured in one run).", "",
              "| row | seconds | per file (ms) | per reference (ms) | ratio to the netCDF read |",
              "|---|---|---|---|---|",
              f"| zarr3 virtualize | {res['virtualize_s']:.3f} | {res['per_file_ms']:.2f} | "
              f"{res['per_ref_ms']:.3f} | {res['virtualize_ratio']:.2f} |",
              f"| full read, virtual array (plugin) | {res['read_plugin_s']:.3f} | | | "
              f"{res['read_ratio']:.2f} |",
              f"| full read, the files (GDAL's netCDF driver) | {res['read_netcdf_s']:.3f} | | | 1.00 |"]
    return lines + [""]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--plugin-dir")
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--nlat", type=int, default=180)
    ap.add_argument("--nlon", type=int, default=360)
    ap.add_argument("--chunk", type=int, default=90)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--work", help="data folder (default: a temporary one, removed)")
    ap.add_argument("--report", nargs=2, metavar=("JSON", "RESULTS_MD"))
    a = ap.parse_args()
    if report_or_plugin(ap, a, section, TITLE):
        return 0
    a.zarr3 = os.path.join(os.path.abspath(a.plugin_dir), "zarr3")
    with tempfile.TemporaryDirectory(prefix="zarr3-virtualize-") as tmp:
        a.work = a.work or tmp
        os.makedirs(a.work, exist_ok=True)
        return run_and_print(a, bench, section)


if __name__ == "__main__":
    sys.exit(main())
