#!/usr/bin/env python3
"""QGIS pan (issue 44): a scripted pan in headless QGIS over the regular store, the plugin against
GDAL's own Zarr driver.

  qgis_pan.py --prepare --work DIR --plugin-dir BUILD   writes DIR/regular.zarr (bench/pan.py's data)
  qgis_pan.py --work DIR --driver Zarr3 --plugin-dir BUILD --json OUT.json   the plugin (host QGIS)
  qgis_pan.py --work DIR --driver Zarr --json OUT.json    GDAL's own driver (GDAL 3.13 and its QGIS in
                                                          the sid chroot: scripts/bench.sh)
  qgis_pan.py --report PLUGIN.json PEER.json RESULTS.md   replaces the section "QGIS pan"
DIR/regular.zarr opens as a QGIS raster layer (GDAL provider; the child checks the driver that
opened it), then 40 overlapping extents of 1200x1200 source pixels (moved by a fifth of their
width; one zoom out, one zoom in) are each rendered into a 600x600 QImage by
QgsMapRendererSequentialJob, timed after one warm-up render of the first extent; every image must
be opaque. All sizes scale with the array (--prepare --size for a quick check). Each measure is a
fresh process; median of --reps.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from icechunk_report import report_pair  # noqa: E402

TITLE = "QGIS pan"
CONTROL = "regular.tif"  # --prepare: the same array as a tiled zstd GeoTIFF (GDAL's GTiff driver)
STRETCH = (-1000.0, 1000.0)  # fixed gray stretch: no statistics pass over the array at open
# (dx, dy, edge factor) steps in units of a fifth of the extent's edge, from the first extent.
STEPS = ([(1, 0, 1)] * 8 + [(0, 1, 1)] * 6 + [(0, 0, 2), (0, 0, 0.5)] + [(-1, 0, 1)] * 8
         + [(0, -1, 1)] * 6 + [(1, 1, 1)] * 9)


def frames(n):
    """(center column, center row, edge) in source pixels of the 40 extents over an n x n array."""
    k = n / 4096.0
    edge = 1200 * k
    x = y = 700 * k
    out = [(x, y, edge)]
    for dx, dy, f in STEPS:
        x, y = x + dx * edge / 5, y + dy * edge / 5
        out.append((x, y, edge * f))
    return out


def image_size(n):
    return max(16, round(600 * n / 4096.0))


def child_layer(path, driver):
    """The layer with a fixed gray stretch, and the name of the GDAL driver QGIS opened it with."""
    from qgis.core import (Qgis, QgsContrastEnhancement, QgsRasterLayer, QgsSettings,
                           QgsSingleBandGrayRenderer)
    s = QgsSettings()
    s.setValue("/Raster/defaultContrastEnhancementAlgorithm/singleBand", "NoEnhancement")
    s.setValue("/Raster/defaultContrastEnhancementLimits/singleBand", "None")
    layer = QgsRasterLayer(path, "pan", "gdal")
    if not layer.isValid():
        raise SystemExit(f"QGIS could not open {path}: {layer.error().summary()}")
    m = re.search(r"GDAL Driver Description</td><td>([^<]*)", layer.dataProvider().htmlMetadata())
    opened = m.group(1) if m else "?"
    if opened != driver:
        raise SystemExit(f"{path} opened by the driver {opened}, not {driver}")
    ce = QgsContrastEnhancement(Qgis.Float32)
    ce.setContrastEnhancementAlgorithm(QgsContrastEnhancement.StretchToMinimumMaximum)
    ce.setMinimumValue(STRETCH[0])
    ce.setMaximumValue(STRETCH[1])
    r = QgsSingleBandGrayRenderer(layer.dataProvider(), 1)
    r.setContrastEnhancement(ce)
    layer.setRenderer(r)
    return layer, opened


def extents(layer):
    from qgis.core import QgsRectangle
    e, n = layer.extent(), layer.width()
    rx, ry = e.width() / n, e.height() / layer.height()
    return [QgsRectangle(e.xMinimum() + (x - d / 2) * rx, e.yMaximum() - (y + d / 2) * ry,
                         e.xMinimum() + (x + d / 2) * rx, e.yMaximum() - (y - d / 2) * ry)
            for x, y, d in frames(n)]


def render(settings, extent):
    from qgis.core import QgsMapRendererSequentialJob
    settings.setExtent(extent)
    job = QgsMapRendererSequentialJob(settings)
    job.start()
    job.waitForFinished()
    return job.renderedImage()


def opaque_and_gray(img):
    """Share of pixels with alpha > 0 and their mean gray (ARGB32 premultiplied)."""
    import numpy as np
    from qgis.PyQt.QtGui import QImage
    img = img.convertToFormat(QImage.Format_ARGB32_Premultiplied)
    ptr = img.constBits()
    ptr.setsize(img.sizeInBytes())
    px = np.frombuffer(ptr, np.uint8).reshape(img.height(), img.bytesPerLine())[:, :img.width() * 4]
    px = px.reshape(img.height(), img.width(), 4)
    alpha = px[..., 3] > 0
    return float(alpha.mean()), float(px[..., 0][alpha].mean()) if alpha.any() else 0.0


def child(a):
    from osgeo import gdal
    from qgis.core import Qgis, QgsApplication, QgsMapSettings
    from qgis.PyQt.QtCore import QSize
    from qgis.PyQt.QtGui import QColor
    app = QgsApplication([], False)
    QgsApplication.setPrefixPath("/usr", True)
    app.initQgis()
    layer, opened = child_layer(os.path.join(a.work, a.file), a.driver)
    settings = QgsMapSettings()
    settings.setLayers([layer])
    side = image_size(layer.width())
    settings.setOutputSize(QSize(side, side))
    settings.setBackgroundColor(QColor(0, 0, 0, 0))
    boxes = extents(layer)
    render(settings, boxes[0])  # warm-up
    t0 = time.perf_counter()
    images = [render(settings, b) for b in boxes]
    t1 = time.perf_counter()
    checks = [opaque_and_gray(i) for i in images]
    if min(c[0] for c in checks) < 0.99:
        raise SystemExit(f"an image is not opaque: {[round(c[0], 3) for c in checks]}")
    print(json.dumps({"frame_ms": (t1 - t0) * 1000 / len(images), "frames": len(images),
                      "driver": opened, "qgis": Qgis.QGIS_VERSION, "gdal": gdal.__version__,
                      "image": side, "size": layer.width(),
                      "mean_gray": statistics.mean(c[1] for c in checks)}))
    sys.stdout.flush()
    os._exit(0)  # QGIS's exit can abort the interpreter


def env_for(a, home):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=home, XDG_RUNTIME_DIR=home, TMPDIR=home,
               GDAL_PAM_ENABLED="NO")
    if a.plugin_dir:
        env["GDAL_DRIVER_PATH"] = os.path.abspath(a.plugin_dir)
    else:
        env.pop("GDAL_DRIVER_PATH", None)
    return env


def one_run(a, name, driver):
    with tempfile.TemporaryDirectory(prefix="zarr3-qgis-pan-") as home:
        os.chmod(home, 0o700)
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", "--work", a.work,
                            "--file", name, "--driver", driver], env=env_for(a, home),
                           capture_output=True, text=True, timeout=600)
    lines = [x for x in p.stdout.splitlines() if x.startswith("{")]
    if p.returncode or not lines:
        last = ((p.stderr or p.stdout).strip().splitlines() or [""])[-1]
        raise RuntimeError(f"{driver}: rc {p.returncode}: {last[-250:]}")
    return json.loads(lines[-1])


def summarize(runs):
    return {"frame_ms": statistics.median(r["frame_ms"] for r in runs),
            "runs_ms": [round(r["frame_ms"], 2) for r in runs], "mean_gray": runs[0]["mean_gray"]}


def bench(a):
    """The pan over a.file and, when DIR/regular.tif exists, over that GeoTIFF copy (the control:
    the same QGIS and GDAL, another driver), one after the other in each repetition."""
    res = {"driver": a.driver, "reps": a.reps, "load": " ".join(f"{x:.2f}" for x in os.getloadavg()),
           "plugin_build": plugin_build(a.plugin_dir), "cpus": os.cpu_count()}
    control = os.path.exists(os.path.join(a.work, CONTROL))
    runs, ctl = [], []
    try:
        for _ in range(a.reps):
            runs.append(one_run(a, a.file, a.driver))
            if control:
                ctl.append(one_run(a, CONTROL, "GTiff"))
    except Exception as e:  # the section says why
        res["error"] = str(e)[:300]
        return res
    res.update({k: runs[0][k] for k in ("driver", "qgis", "gdal", "frames", "image", "size")})
    res.update(summarize(runs))
    if ctl:
        res["control"] = summarize(ctl)
    return res


def plugin_build(plugin_dir):
    """The plugin's file time (UTC), to tell which build was timed."""
    so = os.path.join(plugin_dir or "", "gdal_Zarr3.so")
    if not plugin_dir or not os.path.exists(so):
        return None
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(os.path.getmtime(so)))


def side_row(label, r):
    if not r:
        return f"| {label} | | | | (not run) | |"
    if "error" in r:
        return f"| {label} | | | | (failed: {r['error'][:120]}) | |"
    return (f"| {label} | {r['qgis']} | {r['gdal']} | {r['driver']} | {r['frame_ms']:.1f} | "
            f"{', '.join(f'{x:.1f}' for x in r['runs_ms'])} |")


def control_rows(plugin, peer):
    rows = []
    for label, r in (("GeoTIFF copy, host (control)", plugin),
                     ("GeoTIFF copy, sid chroot (control)", peer)):
        c = (r or {}).get("control")
        if c:
            rows.append(f"| {label} | {r['qgis']} | {r['gdal']} | GTiff | {c['frame_ms']:.1f} | "
                        f"{', '.join(f'{x:.1f}' for x in c['runs_ms'])} |")
    return rows


def control_text(plugin, peer):
    if not (plugin.get("control") and peer.get("control")):
        return ""
    z = peer["frame_ms"] / plugin["frame_ms"]
    c = peer["control"]["frame_ms"] / plugin["control"]["frame_ms"]
    return (f" Control: the same pan over a GeoTIFF copy of the array (tiles as the chunks, zstd; GDAL's "
            f"GTiff driver on both sides, each repetition right after the Zarr one) gives sid / host "
            f"= {c:.2f}: that part of the gap comes from the QGIS and GDAL versions around the "
            f"driver, not from the Zarr driver; the Zarr ratio divided by it is {z / c:.2f}.")


def summary(plugin, peer):
    ok = [r for r in (plugin, peer) if r and "frame_ms" in r]
    if len(ok) < 2:
        return []
    lines = [f"Ratio GDAL {peer['gdal']} / plugin: **{peer['frame_ms'] / plugin['frame_ms']:.2f}** "
             "(> 1: the plugin renders the pan faster). Mean gray of the frames: plugin "
             f"{plugin['mean_gray']:.1f}, peer {peer['mean_gray']:.1f}." + control_text(plugin, peer)]
    if plugin["qgis"] != peer["qgis"]:
        lines.append(f"The two sides run different QGIS versions (host Debian 12: QGIS "
                     f"{plugin['qgis']}; sid chroot: QGIS {peer['qgis']}), so the rendering code "
                     "around the reads differs too, not only the Zarr driver.")
    return [" ".join(lines), ""]


def section(plugin, peer):
    lines = [f"## {TITLE}", ""]
    if not plugin:
        return lines + ["(not run)", ""]
    n = plugin.get("size") or 4096
    k = n / 4096.0
    load = (f" Load average at the start ({plugin.get('cpus')} cores, a shared machine): plugin run "
            f"{plugin['load']}" + (f", GDAL run {peer['load']}." if peer else "."))
    cut = "" if n == 4096 else ", cut down in proportion with the size"
    lines += [f"A scripted pan in headless QGIS (`bench/qgis_pan.py`): the regular {n}x{n} float32 "
              f"zstd store (256x256 chunks{cut}) opened as a raster layer through QGIS's GDAL provider "
              "(the driver that opened it is checked), then 40 overlapping extents of "
              f"{round(1200 * k)}x{round(1200 * k)} source pixels, moved by a fifth of their width "
              "(right, down, left, up, diagonally; one zoom out to twice and one zoom in to half "
              f"the extent), each rendered into a {image_size(n)}x{image_size(n)} QImage with "
              "QgsMapRendererSequentialJob after one warm-up render of the first extent; ms per "
              f"rendered frame, median of {plugin['reps']} fresh processes; every image checked "
              "opaque. A fixed gray stretch (no statistics pass over the array at open), "
              "GDAL_NUM_THREADS and GDAL_CACHEMAX unset, GDAL_PAM_ENABLED=NO; plugin build of "
              f"{plugin.get('plugin_build')}." + load, "",
              "| side | QGIS | GDAL | driver | ms per frame | runs |", "|---|---|---|---|---|---|",
              side_row("plugin (host)", plugin), side_row("GDAL's own Zarr driver (sid chroot)", peer),
              *control_rows(plugin, peer), ""]
    return lines + summary(plugin, peer)


TO_TIFF = r"""
import sys
from osgeo import gdal
src, out, block = sys.argv[1], sys.argv[2], sys.argv[3]
opts = ["TILED=YES", "BLOCKXSIZE=" + block, "BLOCKYSIZE=" + block, "COMPRESS=ZSTD"]
assert gdal.Translate(out, gdal.OpenEx(src, allowed_drivers=["Zarr3"]), format="GTiff",
                      creationOptions=opts) is not None
"""


def prepare(a):
    import pan
    pan.prepare(argparse.Namespace(work=a.work, size=a.size, plugin_dir=a.plugin_dir))
    out = os.path.join(a.work, CONTROL)
    if not os.path.exists(out):
        block = str(256 if a.size >= 4096 else max(a.size // 16, 16))  # pan.py's chunks
        env = dict(os.environ, GDAL_DRIVER_PATH=os.path.abspath(a.plugin_dir))
        subprocess.run([sys.executable, "-c", TO_TIFF, os.path.join(a.work, "regular.zarr"), out, block],
                       env=env, check=True, capture_output=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work")
    ap.add_argument("--plugin-dir")
    ap.add_argument("--driver", default="Zarr3")
    ap.add_argument("--file", default="regular.zarr", help="the layer's source in --work")
    ap.add_argument("--size", type=int, default=4096, help="with --prepare")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--prepare", action="store_true")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--json")
    ap.add_argument("--report", nargs=3, metavar=("PLUGIN_JSON", "PEER_JSON", "RESULTS_MD"))
    a = ap.parse_args()
    if a.child:
        return child(a)
    if a.report:
        report_pair(a.report, section, TITLE)
        return 0
    if a.prepare:
        os.makedirs(a.work, exist_ok=True)
        prepare(a)
        return 0
    res = bench(a)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    print(json.dumps(res))
    return 1 if "error" in res else 0


if __name__ == "__main__":
    sys.exit(main())
