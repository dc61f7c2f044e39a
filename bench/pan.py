#!/usr/bin/env python3
"""Pan and zoom (issue 44): random unaligned windows over one opened dataset, as QGIS reads them
while a user pans, and the same window read again; the plugin against GDAL's own Zarr driver.

  pan.py --prepare --work DIR --plugin-dir BUILD      writes DIR/sharded.zarr and DIR/regular.zarr
                                                      (float32 zstd; 1024 shards of 256 inner
                                                      chunks, and regular 256 chunks)
  pan.py --work DIR --driver Zarr3 --plugin-dir BUILD --json OUT.json    the plugin's rows
  pan.py --work DIR --driver Zarr --json OUT.json                       GDAL's own driver (3.13,
                                                      in the sid chroot: scripts/bench.sh)
  pan.py --report PLUGIN.json PEER.json RESULTS.md    prints the table (ratio GDAL / plugin) and
                                                      replaces the section "Pan and zoom"
Each measure is a fresh process (cold caches at open), median of --reps; threads: 1 and ALL_CPUS
(GDAL_NUM_THREADS). --size and --windows shrink the run (a quick check). Each driver is also asked
for the same window again after another process replaced the chunk under it (stale or not).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from icechunk_report import report_pair  # noqa: E402

TITLE = "Pan and zoom"
LAYOUTS = {"sharded": ["BLOCKSIZE=1024", "SHARD_CHUNK_SHAPE=256"], "regular": ["BLOCKSIZE=256"]}
THREADS = ("1", "ALL_CPUS")

PREPARE = r"""
import sys
import numpy as np
from osgeo import gdal
out, size, shard = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
y, x = np.mgrid[0:size, 0:size].astype(np.float32)
rng = np.random.default_rng(44)
data = (np.sin(x / 97.0) * np.cos(y / 61.0) * 1000 + rng.normal(0, 3, (size, size))).astype(np.float32)
src = gdal.GetDriverByName("MEM").Create("", size, size, 1, gdal.GDT_Float32)
src.GetRasterBand(1).WriteArray(data)
opts = ["COMPRESS=ZSTD"] + shard
if size < 4096:  # a quick check: the same layout cut down
    opts = [o.replace("1024", str(max(size // 4, 64))).replace("=256", "=" + str(max(size // 16, 16)))
            for o in opts]
assert gdal.Translate(out, src, format="Zarr3", creationOptions=opts) is not None
"""

# One open, `windows` random unaligned windows (seed 44), then one window read again `again` times.
RUN = r"""
import json, random, sys, time
from osgeo import gdal
path, driver, windows, again, edge = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
gdal.UseExceptions()
ds = gdal.OpenEx(path, gdal.OF_RASTER, allowed_drivers=[driver])
b = ds.GetRasterBand(1)
n = ds.RasterXSize
rng = random.Random(44)
spots = [(rng.randrange(0, n - edge), rng.randrange(0, n - edge)) for _ in range(windows)]
t0 = time.perf_counter()
for x, y in spots:
    b.ReadRaster(x, y, edge, edge)
t1 = time.perf_counter()
x, y = rng.randrange(0, n - edge), rng.randrange(0, n - edge)
b.ReadRaster(x, y, edge, edge)  # the first read of it
t2 = time.perf_counter()
for _ in range(again):
    b.ReadRaster(x, y, edge, edge)
t3 = time.perf_counter()
print(json.dumps({"window_ms": (t1 - t0) * 1000 / windows, "again_ms": (t3 - t2) * 1000 / again}))
"""


# Whether the same window read again, after another process replaced the chunk under it (a
# rewrite as any writer makes it: a new file renamed over the old), gives the new values
# (exact) or the ones read before (stale). On a copy of the regular store.
STALE = r"""
import json, os, shutil, subprocess, sys
from osgeo import gdal
src, work, driver = sys.argv[1], sys.argv[2], sys.argv[3]
gdal.UseExceptions()
path = os.path.join(work, "stale.zarr")
shutil.copytree(src, path)
open_ = lambda: gdal.OpenEx(path, gdal.OF_RASTER, allowed_drivers=[driver])
ds = open_()
band = ds.GetRasterBand(1)
before = band.ReadRaster(0, 0, 300, 300)
band.ReadRaster(0, 0, 300, 300)
name = [n for n in os.listdir(path) if os.path.isdir(os.path.join(path, n))][0]
chunks = os.path.join(path, name, "c")
new = os.path.join(chunks, "0", "0.new")
shutil.copyfile(os.path.join(chunks, "1", "1"), new)
subprocess.run([sys.executable, "-c", "import os, sys; os.replace(sys.argv[1], sys.argv[2])",
                new, os.path.join(chunks, "0", "0")], check=True)
again = band.ReadRaster(0, 0, 300, 300)
ds2 = open_()  # kept in a variable: GDAL's Python bands do not hold their dataset
fresh = ds2.GetRasterBand(1).ReadRaster(0, 0, 300, 300)
assert fresh != before, "the replaced chunk holds other values"
print(json.dumps({"stale": again != fresh}))
"""


def stale_check(a):
    """{"stale": bool} for a.driver (see STALE), or {"error": ...}."""
    with tempfile.TemporaryDirectory(prefix="zarr3-pan-stale-") as tmp:
        p = subprocess.run([sys.executable, "-c", STALE, os.path.join(a.work, "regular.zarr"), tmp,
                            a.driver], env=env_for(a, "1"), capture_output=True, text=True)
    if p.returncode:
        return {"error": p.stderr.strip()[-300:]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def env_for(a, threads):
    env = dict(os.environ, GDAL_NUM_THREADS=threads)
    if a.plugin_dir:
        env["GDAL_DRIVER_PATH"] = os.path.abspath(a.plugin_dir)
    else:
        env.pop("GDAL_DRIVER_PATH", None)
    return env


def prepare(a):
    for name, opts in LAYOUTS.items():
        out = os.path.join(a.work, f"{name}.zarr")
        if os.path.exists(out):
            continue
        p = subprocess.run([sys.executable, "-c", PREPARE, out, str(a.size), *opts],
                           env=env_for(a, "ALL_CPUS"), capture_output=True, text=True)
        if p.returncode:
            raise RuntimeError(f"writing {out}: {p.stderr.strip()[-300:]}")


def measure(a, layout, threads):
    path = os.path.join(a.work, f"{layout}.zarr")
    edge = min(300, a.size // 4)
    runs = []
    for _ in range(a.reps):
        p = subprocess.run([sys.executable, "-c", RUN, path, a.driver, str(a.windows), str(a.again),
                            str(edge)], env=env_for(a, threads), capture_output=True, text=True)
        if p.returncode:
            raise RuntimeError(f"{a.driver} on {path}: {p.stderr.strip()[-300:]}")
        runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
    return {k: statistics.median(r[k] for r in runs) for k in ("window_ms", "again_ms")}


def bench(a):
    res = {"driver": a.driver, "gdal": None, "size": a.size, "windows": a.windows, "reps": a.reps,
           "rows": {}}
    from osgeo import gdal
    res["gdal"] = gdal.__version__
    for layout in LAYOUTS:
        for threads in THREADS:
            key = f"{layout}/{threads}"
            try:
                res["rows"][key] = measure(a, layout, threads)
            except Exception as e:  # the section says why
                res["rows"][key] = {"error": str(e)[:300]}
    res["stale"] = stale_check(a)
    return res


def section(plugin, peer):
    lines = [f"## {TITLE}", ""]
    if not plugin:
        return lines + ["(not run)", ""]
    cut = "" if plugin["size"] == 4096 else ", cut down in proportion with the size (--size)"
    edge = min(300, plugin["size"] // 4)
    lines += [f"{plugin['windows']} random unaligned {edge}x{edge} windows over one open of a "
              f"{plugin['size']}x{plugin['size']} float32 zstd array (sharded: 1024x1024 shards of "
              f"256x256 inner chunks; regular: 256x256 chunks{cut}), ms per window, then the same window "
              f"read again; median of {plugin['reps']} fresh processes. Plugin on GDAL "
              f"{plugin['gdal']}; peer: GDAL {peer['gdal'] if peer else '(not run)'}'s own Zarr "
              "driver (sid chroot). Ratio = peer / plugin (> 1: the plugin is faster).", "",
              "| row | threads | plugin ms | GDAL ms | ratio |", "|---|---|---|---|---|"]
    for key, r in plugin["rows"].items():
        layout, threads = key.split("/")
        p = (peer or {}).get("rows", {}).get(key, {})
        for what, label in (("window_ms", "random windows"), ("again_ms", "same window again")):
            if "error" in r:
                lines.append(f"| {layout}, {label} | {threads} | (failed: {r['error'][:80]}) | | |")
                continue
            g = p.get(what)
            ratio = f"{g / r[what]:.2f}" if g and r[what] > 0 else ""
            gtxt = f"{g:.3f}" if g else ("(failed)" if "error" in p else "")
            lines.append(f"| {layout}, {label} | {threads} | {r[what]:.3f} | {gtxt} | {ratio} |")
    lines.append("")
    lines += stale_lines(plugin, peer)
    return lines + [""]


def stale_lines(plugin, peer):
    """What each driver gave for the same window read again after another process replaced
    the chunk under it (STALE)."""
    def said(res):
        st = (res or {}).get("stale")
        if st is None:
            return "not run"
        if "error" in st:
            return f"failed: {st['error'][:80]}"
        return "the values read before (stale)" if st["stale"] else "the new values"
    return [f"The same window read again after another process replaced the chunk under it (a new file "
            f"renamed over the old, as writers do): the plugin gives {said(plugin)}; GDAL "
            f"{(peer or {}).get('gdal', '')}'s own driver gives {said(peer)}. The plugin confirms each "
            "read with one poll of its inotify events (one system call)."]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work")
    ap.add_argument("--plugin-dir")
    ap.add_argument("--driver", default="Zarr3")
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--windows", type=int, default=200)
    ap.add_argument("--again", type=int, default=50)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--prepare", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--report", nargs=3, metavar=("PLUGIN_JSON", "PEER_JSON", "RESULTS_MD"))
    a = ap.parse_args()
    if a.report:
        report_pair(a.report, section, TITLE)
        return 0
    with tempfile.TemporaryDirectory(prefix="zarr3-pan-") as tmp:
        a.work = a.work or tmp
        os.makedirs(a.work, exist_ok=True)
        if a.prepare:
            prepare(a)
            return 0
        res = bench(a)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    print(json.dumps(res["rows"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
