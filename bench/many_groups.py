#!/usr/bin/python3
"""Issue 39 (10): gdalmdiminfo of a hierarchy of many groups, an Icechunk repository read by the
plugin against the same tree as a plain Zarr store read by GDAL's own Zarr driver.

The tree: `groups` groups /g00000 ... under the root, every 100th holding a group `inner`, every
1000th an array `a` (2 uint8). The repository is written through the plugin's multidimensional API
(`CreateMultiDimensional(ICECHUNK=YES)`, one commit); the plain store is written for GDAL's own
driver as Zarr v2 (`.zgroup` / `.zarray` files: GDAL 3.6's built-in driver reads v3 only in its
pre-final draft; v2 it reads on every GDAL). Each timed run is a fresh process opening the root with
one driver only (`allowed_drivers`) and calling `gdal.MultiDimInfo` (what gdalmdiminfo prints);
medians over --reps runs, after one warm-up; the group and array counts are checked.

    many_groups.py --plugin-dir BUILD [--groups 20000] [--reps 3] [--json OUT] [--work DIR]
    many_groups.py --prepare-only --plugin-dir BUILD --work DIR --groups N   (data only)
    many_groups.py --report OUT.json RESULTS.md   (replaces the section "Many groups")
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from icechunk_report import report_or_plugin, run_and_print  # noqa: E402

TITLE = "Many groups"

WRITE_REPO = r"""
import sys
from osgeo import gdal
gdal.UseExceptions()
n, out = int(sys.argv[1]), sys.argv[2]
ds = gdal.GetDriverByName("Zarr3").CreateMultiDimensional(out, options=["ICECHUNK=YES"])
root = ds.GetRootGroup()
dim = root.CreateDimension("x", None, None, 2)
for i in range(n):
    g = root.CreateGroup(f"g{i:05d}")
    if i % 100 == 0:
        g.CreateGroup("inner")
    if i % 1000 == 0:
        g.CreateMDArray("a", [dim], gdal.ExtendedDataType.Create(gdal.GDT_Byte))
ds = None
"""

WALK = r"""
import json, sys, time
from osgeo import gdal
gdal.UseExceptions()
t0 = time.monotonic()
ds = gdal.OpenEx(sys.argv[1], gdal.OF_MULTIDIM_RASTER, allowed_drivers=[sys.argv[2]])
info = gdal.MultiDimInfo(ds)
elapsed = time.monotonic() - t0
groups = info.get("groups", {})
print(json.dumps({"seconds": elapsed, "groups": len(groups),
                  "inner": sum(len(g.get("groups", {})) for g in groups.values()),
                  "arrays": sum(len(g.get("arrays", {})) for g in groups.values())}))
"""


def expected(n):
    return {"groups": n, "inner": (n + 99) // 100, "arrays": (n + 999) // 1000}


def write_plain_v2(root, n):
    """The same tree as a plain Zarr v2 store (GDAL's own driver reads it)."""
    def put(path, doc):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(doc, f)

    group = {"zarr_format": 2}
    array = {"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "|u1", "compressor": None,
             "fill_value": 0, "filters": None, "order": "C"}
    put(os.path.join(root, ".zgroup"), group)
    for i in range(n):
        g = os.path.join(root, f"g{i:05d}")
        put(os.path.join(g, ".zgroup"), group)
        if i % 100 == 0:
            put(os.path.join(g, "inner", ".zgroup"), group)
        if i % 1000 == 0:
            put(os.path.join(g, "a", ".zarray"), dict(array, _ARRAY_DIMENSIONS=["x"]))
            put(os.path.join(g, "a", ".zattrs"), {"_ARRAY_DIMENSIONS": ["x"]})
    return root


def prepare(work, n, env):
    """(repository, plain store) under `work`, the same tree of `n` groups."""
    repo = os.path.join(work, "groups.icechunk")
    subprocess.run([sys.executable, "-c", WRITE_REPO, str(n), repo], env=env, check=True,
                   capture_output=True, text=True, timeout=3600)
    return repo, write_plain_v2(os.path.join(work, "groups.zarr"), n)


def walk(root, driver, env):
    p = subprocess.run([sys.executable, "-c", WALK, root, driver], env=env, capture_output=True,
                       text=True, timeout=3600)
    if p.returncode != 0:
        raise RuntimeError(f"{driver} on {root}: {p.stderr.strip()[-300:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def bench(a):
    repo, plain = prepare(a.work, a.groups, a.env)
    res = {"groups": a.groups, "reps": a.reps}
    for kind, root, driver in (("plugin", repo, "Zarr3"), ("gdal", plain, "Zarr")):
        try:
            runs = [walk(root, driver, a.env) for _ in range(a.reps + 1)][1:]
            got = {k: runs[0][k] for k in ("groups", "inner", "arrays")}
            if got != expected(a.groups):
                raise RuntimeError(f"listed {got}, expected {expected(a.groups)}")
            res[kind] = {"median_s": statistics.median(r["seconds"] for r in runs), **got}
        except Exception as e:  # the section says why
            res[kind] = {"error": str(e)[:300]}
    return res


def section(res):
    lines = [f"## {TITLE}", ""]
    if not res:
        return lines + ["(not run)", ""]
    if "error" in res:
        return lines + [f"(failed: {res['error']})", ""]
    lines += [f"gdalmdiminfo (`gdal.MultiDimInfo`, a fresh process per run, median of "
              f"{res['reps']}) of {res['groups']} groups: an Icechunk repository read by the "
              "plugin, the same tree as a plain Zarr v2 store read by GDAL's own Zarr driver.", "",
              "| reader | seconds | groups listed |", "|---|---|---|"]
    for kind, name in (("plugin", "Zarr3 plugin, Icechunk repository"),
                       ("gdal", "GDAL's Zarr driver, plain store (v2)")):
        r = res.get(kind, {})
        if "error" in r:
            lines.append(f"| {name} | (failed: {r['error']}) | |")
        else:
            lines.append(f"| {name} | {r['median_s']:.2f} | {r['groups']} |")
    return lines + [""]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--plugin-dir")
    ap.add_argument("--groups", type=int, default=20000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--work", help="data folder (default: a temporary one, removed)")
    ap.add_argument("--prepare-only", action="store_true")
    ap.add_argument("--report", nargs=2, metavar=("JSON", "RESULTS_MD"))
    a = ap.parse_args()
    if report_or_plugin(ap, a, section, TITLE):
        return 0
    with tempfile.TemporaryDirectory(prefix="zarr3-groups-") as tmp:
        a.work = a.work or tmp
        os.makedirs(a.work, exist_ok=True)
        if a.prepare_only:
            print("\n".join(prepare(a.work, a.groups, a.env)))
            return 0
        return run_and_print(a, bench, section)


if __name__ == "__main__":
    sys.exit(main())
