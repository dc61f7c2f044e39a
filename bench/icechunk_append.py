#!/usr/bin/python3
"""Issue 30, Speed: a one-day append to a 5-year daily cube as one small Icechunk commit.

Builds the cube twice with the same layout (a plain Zarr v3 store and an Icechunk repository):
`days` steps of HxW float32 ending with a tail of `tail` one-day chunks, the rest in calendar-month
chunks (rectilinear), a `time` coordinate in "days since 1970-01-01" and a geotransform + CRS; each
is one gdal_translate -co APPEND_DIM=time call (creation, one commit for the repository) followed by
the `tail` daily appends. Then times one-day appends (the gdal_translate command, one process each),
alternating plain store and repository, with a short history and again after `--fill` more
commits: wall ms, bytes written and objects written (files new or changed, from a listing before
and after), commits added. Last, the compaction of the daily tail into months (`zarr3 compact`)
against rewriting the array with gdal_translate, for both.

    icechunk_append.py --plugin-dir BUILD [--zarr3 BUILD/zarr3] [--json OUT] [--small]
    icechunk_append.py --report OUT.json RESULTS.md   (replaces the section "Icechunk appends")
"""
import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from icechunk_report import run_and_print, write_section  # noqa: E402

TITLE = "## Icechunk appends"
TARGET_RATIO = 2.0
EPOCH = datetime.date(1970, 1, 1)


def load():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def listing(root):
    """{relative path: (size, mtime_ns, inode)} of every file under root."""
    out = {}
    for d, _, files in os.walk(root):
        for n in files:
            p = os.path.join(d, n)
            st = os.stat(p)
            out[os.path.relpath(p, root)] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return out


REPO_KINDS = ("chunks", "manifests", "snapshots", "transactions", "refs", "overwritten")


def changed(before, after):
    return sorted(k for k, v in after.items() if before.get(k) != v)


def written(before, after):
    """(objects, bytes) new or changed between two listings."""
    ch = changed(before, after)
    return len(ch), sum(after[k][0] for k in ch)


def kinds(paths):
    """What the written objects are: a repository's object folders, a plain store's keys with
    their numbers as N ('chunks x2, repo', 'cube/c/N/N/N, cube/zarr.json')."""
    out = {}
    for p in paths:
        top = p.split(os.sep)[0]
        k = top if top in REPO_KINDS else re.sub(r"[0-9]+", "N", p).replace(os.sep, "/")
        out[k] = out.get(k, 0) + 1
    return ", ".join(f"{k} x{n}" if n > 1 else k for k, n in sorted(out.items()))


def commits(repo):
    """Snapshots in the repository (one per commit, the initial one included)."""
    d = os.path.join(repo, "snapshots")
    return len(os.listdir(d)) if os.path.isdir(d) else 0


def build_type(build_dir):
    """The plugin's optimization flags as compiled (CMakeLists.txt defaults an empty build type
    to RelWithDebInfo, so the cache alone does not say), e.g. "-O2 -g", or "?"."""
    try:
        with open(os.path.join(build_dir, "CMakeFiles", "gdal_Zarr3.dir", "flags.make")) as f:
            flags = re.search(r"^CXX_FLAGS = (.*)$", f.read(), re.M).group(1).split()
        return " ".join(f for f in flags if re.fullmatch(r"-O[0-3sz]|-g|-DNDEBUG", f)) or "-O0"
    except (OSError, AttributeError):
        return "?"


def month_edges(start, n):
    """Chunk edges along time: one per calendar month of `n` days from `start`."""
    edges, d, end = [], start, start + datetime.timedelta(days=n)
    while d < end:
        nxt = datetime.date(d.year + d.month // 12, d.month % 12 + 1, 1)
        edges.append((min(nxt, end) - d).days)
        d = nxt
    return edges


class Cube:
    def __init__(self, args, gdal, np, osr):
        self.a, self.gdal, self.np, self.osr = args, gdal, np, osr
        self.h, self.w = args.height, args.width
        self.start = datetime.date(2024, 1, 1) + datetime.timedelta(days=args.tail) - \
            datetime.timedelta(days=args.days)

    def date(self, i):
        return self.start + datetime.timedelta(days=i)

    def field(self, i):
        """Day i: a smooth field (compresses like a real one) that changes every day."""
        np = self.np
        y, x = np.mgrid[0:self.h, 0:self.w].astype("f4")
        return (np.sin(x / 17.0 + i / 9.0) * 10 + np.cos(y / 11.0) * 5 + i * 0.01).astype("f4")

    def source(self, first, n, driver="MEM", path=""):
        gdal = self.gdal
        ds = gdal.GetDriverByName(driver).Create(path, self.w, self.h, n, gdal.GDT_Float32)
        ds.SetGeoTransform([-180, 360 / self.w, 0, 90, 0, -180 / self.h])
        srs = self.osr.SpatialReference()
        srs.ImportFromEPSG(4326)
        srs.SetAxisMappingStrategy(self.osr.OAMS_TRADITIONAL_GIS_ORDER)
        ds.SetSpatialRef(srs)
        for b in range(n):
            ds.GetRasterBand(b + 1).WriteArray(self.field(first + b))
        return ds

    def day_tif(self, i):
        path = os.path.join(self.a.work, f"day{i}.tif")
        if not os.path.exists(path):
            self.source(i, 1, "GTiff", path).FlushCache()
        return path

    def build(self, target, repo, src):
        """The cube in one creation call (monthly chunks), then the daily tail."""
        a, gdal = self.a, self.gdal
        n0 = a.days - a.tail
        shapes = json.dumps([month_edges(self.start, n0), [self.h], [self.w]], separators=(",", ":"))
        dates = ",".join(str(self.date(i)) for i in range(n0))
        opts = ["APPEND_DIM=time", "APPEND_COORD=" + dates, "CHUNK_SHAPES=" + shapes]
        if repo:
            opts += ["ICECHUNK=YES", "COMMIT_MESSAGE=cube"]
        t = time.perf_counter()
        gdal.Translate(target, src, format="Zarr3", creationOptions=opts)
        for i in range(n0, a.days):
            self.append_in_process(target, i)
        return time.perf_counter() - t

    def append_in_process(self, target, i):
        self.gdal.Translate(target, self.day_tif(i), format="Zarr3", creationOptions=[
            "APPEND_DIM=time", f"APPEND_COORD={self.date(i)}", "APPEND_SUBDATASET=YES"])

    def append_command(self, target, i):
        """One timed gdal_translate append: (wall s, objects, bytes)."""
        tif = self.day_tif(i)
        before = listing(target)
        t = time.perf_counter()
        subprocess.run(["gdal_translate", "-q", "-of", "Zarr3", "-co", "APPEND_DIM=time", "-co",
                        f"APPEND_COORD={self.date(i)}", "-co", "APPEND_SUBDATASET=YES", tif, target],
                       check=True, env=self.a.env, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - t
        after = listing(target)
        return (wall, *written(before, after), kinds(changed(before, after)))


def timed_round(cube, stores, first, count):
    """`count` appends (days first..), alternating which store goes first; per store the rows."""
    rows = {k: [] for k in stores}
    for j in range(count):
        order = list(stores) if j % 2 == 0 else list(reversed(stores))
        for k in order:
            c0 = commits(stores[k])
            wall, objs, nbytes, what = cube.append_command(stores[k], first + j)
            rows[k].append({"wall": wall, "objects": objs, "bytes": nbytes,
                            "commits": commits(stores[k]) - c0, "kinds": what})
    return rows


def summary(rows):
    return {"wall": statistics.median(r["wall"] for r in rows),
            "objects": sorted({r["objects"] for r in rows}),
            "bytes": statistics.median(r["bytes"] for r in rows),
            "commits": sorted({r["commits"] for r in rows}), "n": len(rows),
            "kinds": sorted({r["kinds"] for r in rows})}


def run_tool(cmd, env, root):
    """Runs a tool once: wall s, objects and bytes written under `root`, or the error."""
    before = listing(root) if os.path.isdir(root) else {}
    t = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1][:300]}
    objs, nbytes = written(before, listing(root))
    return {"wall": wall, "objects": objs, "bytes": nbytes}


def compaction(a, cube, plain, repo):
    """zarr3 compact (monthly) against a gdal_translate rewrite with the same monthly chunks."""
    total = a.days + a.appends_total
    shapes = json.dumps([month_edges(cube.start, total), [cube.h], [cube.w]], separators=(",", ":"))
    arr = a.array
    out = {}
    out["plain_compact"] = run_tool([a.zarr3, "compact", os.path.join(plain, arr), "--dim", "time",
                                     "--edges", "monthly"], a.env, plain)
    out["repo_compact"] = run_tool([a.zarr3, "compact", repo, "--array", "/" + arr, "--dim", "time",
                                    "--edges", "monthly", "--message", "compact"], a.env, repo)
    tr = ["gdal_translate", "-q", "-of", "Zarr3", "-co", "CHUNK_SHAPES=" + shapes]
    dst = os.path.join(a.work, "rewrite.zarr")
    out["plain_rewrite"] = run_tool(tr + [plain, dst], a.env, dst)
    dst = os.path.join(a.work, "rewrite.icechunk")
    out["repo_rewrite"] = run_tool(tr + ["-co", "ICECHUNK=YES", repo, dst], a.env, dst)
    for k in ("plain", "repo"):
        c, r = out[f"{k}_compact"], out[f"{k}_rewrite"]
        if "wall" in c and "wall" in r:
            out[f"{k}_ratio"] = c["wall"] / r["wall"]
    return out


def check(cube, stores, n):
    """'ok' when both stores hold n steps and the first, a middle, the first appended and the last
    step read back as written; else what differs (the timings of a broken store mean nothing)."""
    for k, path in stores.items():
        ds = cube.gdal.Open(path)
        if ds.RasterCount != n:
            return f"{k}: {ds.RasterCount} steps, expected {n}"
        for i in (0, n // 2, cube.a.days, n - 1):
            if not cube.np.array_equal(ds.GetRasterBand(i + 1).ReadAsArray(), cube.field(i)):
                return f"{k}: step {i} differs from what was written"
    return "ok"


def bench(a):
    from osgeo import gdal, osr
    import numpy as np

    gdal.UseExceptions()
    cube = Cube(a, gdal, np, osr)
    plain = os.path.join(a.work, "cube.zarr")
    repo = os.path.join(a.work, "cube.icechunk")
    res = {"gdal_version": gdal.VersionInfo("RELEASE_NAME"), "days": a.days, "tail": a.tail,
           "fill": a.fill, "zarr3": a.zarr3, "plugin_dir": a.plugin_dir,
           "build_type": build_type(a.plugin_dir),
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "height": a.height, "width": a.width, "load": [load()]}
    src = cube.source(0, a.days - a.tail)
    res["build"] = {"plain": cube.build(plain, False, src), "repo": cube.build(repo, True, src)}
    src = None
    res["array"] = a.array = next(n for n in os.listdir(plain)
                                  if n not in ("time", "x", "y", "spatial_ref", "zarr.json"))
    res["layout"] = json.load(open(os.path.join(plain, a.array, "zarr.json")))["chunk_grid"]
    res["commits_start"] = commits(repo)
    res["load"].append(load())
    stores = {"plain": plain, "repo": repo}
    day = a.days
    short = timed_round(cube, stores, day, a.appends)
    day += a.appends
    res["commits_short"] = commits(repo) - len(short["repo"])
    res["repo_file_short"] = os.path.getsize(os.path.join(repo, "repo"))
    # The history grows by `fill` commits: in-process appends (GDALTranslate, no process start),
    # alternating, timed without any listing.
    lib = {k: [] for k in stores}
    for j in range(a.fill):
        for k in (list(stores) if j % 2 == 0 else list(reversed(stores))):
            cube.day_tif(day + j)
            t = time.perf_counter()
            cube.append_in_process(stores[k], day + j)
            lib[k].append(time.perf_counter() - t)
    res["library"] = {k: statistics.median(v) for k, v in lib.items()}
    res["library_ratio"] = res["library"]["repo"] / res["library"]["plain"]
    day += a.fill
    res["load"].append(load())
    res["commits_long"] = commits(repo)
    long = timed_round(cube, stores, day, a.appends)
    res["repo_file_long"] = os.path.getsize(os.path.join(repo, "repo"))
    day += a.appends
    res["load"].append(load())
    res["rows"] = {"short": short, "long": long}
    res["short"] = {k: summary(v) for k, v in short.items()}
    res["long"] = {k: summary(v) for k, v in long.items()}
    both = {k: short[k] + long[k] for k in stores}
    res["ratio"] = statistics.median(r["wall"] for r in both["repo"]) / \
        statistics.median(r["wall"] for r in both["plain"])
    a.appends_total = day - a.days
    res["check_before"] = check(cube, stores, a.days + a.appends_total)
    res["compaction"] = compaction(a, cube, plain, repo)
    res["check_after"] = check(cube, stores, a.days + a.appends_total)
    res["load"].append(load())
    return res


def ms(v):
    return "n/a" if v is None else f"{v * 1e3:.0f}"


def kib(v):
    return f"{v / 1024:.1f}"


def objs(v):
    return "/".join(str(x) for x in v)


def compaction_rows(c):
    lines = ["| store | `zarr3 compact`: ms / objects / MiB written | gdal_translate rewrite | "
             "ratio of times |", "|---|---|---|---|"]

    def cell(r):
        if "wall" not in r:
            return f"cannot: {r.get('error')}"
        return f"{ms(r['wall'])} / {r.get('objects', '?')} / {r.get('bytes', 0) / 2**20:.1f}"

    for k, label in (("plain", "plain store"), ("repo", "Icechunk repository")):
        cell_c, cell_r = cell(c.get(f"{k}_compact", {})), cell(c.get(f"{k}_rewrite", {}))
        ratio = f"{c[k + '_ratio']:.2f}" if f"{k}_ratio" in c else "n/a"
        lines.append(f"| {label} | {cell_c} | {cell_r} | {ratio} |")
    return lines


def section(res):
    if not res:
        return [TITLE, "", "(not run)", ""]
    if "error" in res:
        return [TITLE, "", f"(failed: {res['error']})", ""]
    lines = ["| history | store | appends | median ms | objects written | median KiB written | "
             "commits per append |", "|---|---|---|---|---|---|---|"]
    for ph, hist in (("short", res["commits_short"]), ("long", res["commits_long"])):
        for k, label in (("plain", "plain store"), ("repo", "repository")):
            s = res[ph][k]
            lines.append(f"| {hist} commits | {label} | {s['n']} | {ms(s['wall'])} | "
                         f"{objs(s['objects'])} | {kib(s['bytes'])} | "
                         f"{objs(s['commits']) if k == 'repo' else '-'} |")
    same = res["short"]["repo"]["objects"] == res["long"]["repo"]["objects"]
    ok = "ok" if res["ratio"] <= TARGET_RATIO else "MISS"
    la = res["load"]
    noisy = max(la)
    return [TITLE, "",
            f"`bench/icechunk_append.py` (issue 30, Speed), {res.get('date', '')}, "
            f"GDAL {res['gdal_version']}, plugin "
            f"compiled with `{res.get('build_type', '?')}`: a "
            f"{res['days']}-step daily cube of {res['height']}x{res['width']} float32, chunks of one "
            f"calendar month plus a tail of {res['tail']} one-day chunks (layout "
            f"`{json.dumps(res['layout']['configuration']['chunk_shapes'][0])[:60]}...`), time "
            "coordinate in CF units, once as a plain Zarr v3 store and once as an Icechunk "
            "repository. Each append is the `gdal_translate -co APPEND_DIM=time -co "
            "APPEND_COORD=<date> -co APPEND_SUBDATASET=YES day.tif` command (one process, local "
            "folder), plain and repository alternating; objects/bytes written = files new or "
            "changed (listing before and after). Built in "
            f"{res['build']['plain']:.1f} s (plain) / {res['build']['repo']:.1f} s (repository).", "",
            (f"**Noisy**: load average up to {noisy:.1f} on this 2-core machine "
             if noisy > 2.5 else f"Load average up to {noisy:.1f} ") +
            f"(samples {', '.join(f'{x:.1f}' for x in la)}); the object and byte counts do not "
            "depend on it, the times do.", "", *lines, "",
            f"- repository / plain append time (median of all timed appends): "
            f"**{res['ratio']:.2f}x** (target <= {TARGET_RATIO:g}x: {ok})",
            f"- the same appends in process (`gdal.Translate`, no process start, the "
            f"{res['fill']} appends between the two rounds): median "
            f"{ms(res['library']['plain'])} ms plain, {ms(res['library']['repo'])} ms repository: "
            f"**{res['library_ratio']:.2f}x**",
            f"- objects per commit with {res['commits_short']} commits of history: "
            f"{objs(res['short']['repo']['objects'])}; with {res['commits_long']}: "
            f"{objs(res['long']['repo']['objects'])} "
            f"({'constant' if same else 'NOT constant'})",
            f"- bytes above the plain store's per append: "
            f"{kib(res['short']['repo']['bytes'] - res['short']['plain']['bytes'])} KiB "
            f"({res['commits_short']} commits), "
            f"{kib(res['long']['repo']['bytes'] - res['long']['plain']['bytes'])} KiB "
            f"({res['commits_long']}); the repo file, written anew and its previous version kept in "
            f"overwritten/, grows with the history ({kib(res.get('repo_file_short', 0))} -> "
            f"{kib(res.get('repo_file_long', 0))} KiB)",
            f"- what one append writes, plain store: {'; '.join(res['long']['plain']['kinds'])}; "
            f"repository: {'; '.join(res['long']['repo']['kinds'])}", "",
            f"- values read back (first, middle, first appended and last step of both stores): "
            f"{res.get('check_before')} before the compaction, {res.get('check_after')} after", "",
            "### Compaction of the daily tail into months", "",
            "`zarr3 compact --dim time --edges monthly` (for the repository `--array`, one commit) "
            "against `gdal_translate -co CHUNK_SHAPES=<the same monthly edges>` rewriting the "
            "array into a new store (`-co ICECHUNK=YES` for the repository); one run each "
            f"(tool: `{res.get('zarr3')}`).", "",
            *compaction_rows(res["compaction"]), ""]


def report(json_path, md_path):
    with open(json_path) as f:
        res = json.load(f)
    write_section(md_path, section(res), "Icechunk appends")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--plugin-dir")
    ap.add_argument("--zarr3", help="the zarr3 tool (default: PLUGIN_DIR/zarr3)")
    ap.add_argument("--json")
    ap.add_argument("--work", help="data folder (default: a temporary one, removed)")
    ap.add_argument("--days", type=int, default=1826)
    ap.add_argument("--tail", type=int, default=10)
    ap.add_argument("--height", type=int, default=180)
    ap.add_argument("--width", type=int, default=360)
    ap.add_argument("--appends", type=int, default=7, help="timed appends per store and history")
    ap.add_argument("--fill", type=int, default=30, help="commits added between the two rounds")
    ap.add_argument("--small", action="store_true", help="smoke-test sizes (120 days of 18x36)")
    ap.add_argument("--report", nargs=2, metavar=("JSON", "RESULTS_MD"))
    a = ap.parse_args()
    if a.report:
        report(*a.report)
        return 0
    if not a.plugin_dir:
        ap.error("--plugin-dir is required")
    if a.small:
        a.days, a.height, a.width, a.appends, a.fill = 120, 18, 36, 2, 3
    a.zarr3 = a.zarr3 or os.path.join(a.plugin_dir, "zarr3")
    a.env = dict(os.environ, GDAL_DRIVER_PATH=a.plugin_dir)
    os.environ["GDAL_DRIVER_PATH"] = a.plugin_dir
    with tempfile.TemporaryDirectory(prefix="zarr3-append-") as tmp:
        a.work = a.work or tmp
        os.makedirs(a.work, exist_ok=True)
        return run_and_print(a, bench, section)


if __name__ == "__main__":
    sys.exit(main())
