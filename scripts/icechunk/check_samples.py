"""Host side of scripts/icechunk/make_samples.sh (GDAL Python bindings + this plugin).

usage: check_samples.py source SRC_STORE OUTDIR
         the first 90 days of SRC_STORE's /t2m and its coordinates through the plugin, as raw
         little-endian files plus OUTDIR/source.json (shapes, dtypes, every node's attributes), for
         make_sample_netcdf.py and write_samples.mjs
       check_samples.py check DATA_DIR SAMPLES_JSON
         DATA_DIR/t2m_2023q1.icechunk: every snapshot, the tag and both branches bit-exact against
         DATA_DIR/daily_t2m_2023.zarr through the plugin; DATA_DIR/archive.icechunk (written by
         zarr3 virtualize): the plugin reads the array bit-exact against the source (copying the .nc
         files to /tmp/gdal-zarr3-archive/ for the time of the check when that folder does not exist).
"""
import filecmp
import json
import shutil
import sys
from pathlib import Path

import numpy as np
from osgeo import gdal

gdal.UseExceptions()
NDAYS = 90
MONTHS = [31, 28, 31]
ARCHIVE_DIR = Path("/tmp/gdal-zarr3-archive")


def attrs_of(store, name):
    node = Path(store) / name / "zarr.json" if name else Path(store) / "zarr.json"
    return json.loads(node.read_text())["attributes"]


def source(store, out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    root = gdal.OpenEx(store, gdal.OF_MULTIDIM_RASTER | gdal.OF_READONLY).GetRootGroup()
    t2m = root.OpenMDArray("t2m").ReadAsArray(array_start_idx=[0, 0, 0], count=[NDAYS, 32, 64])
    arrays = {
        "t2m": t2m.astype("<f4"),
        "time": root.OpenMDArray("time").ReadAsArray()[:NDAYS].astype("<i8"),
        "lat": root.OpenMDArray("lat").ReadAsArray().astype("<f8"),
        "lon": root.OpenMDArray("lon").ReadAsArray().astype("<f8"),
        "spatial_ref": np.array(root.OpenMDArray("spatial_ref").ReadAsArray(), dtype="<i4").reshape(()),
    }
    doc = {"months": MONTHS, "arrays": {}, "group_attributes": attrs_of(store, "")}
    for name, a in arrays.items():
        (out / f"{name}.bin").write_bytes(a.tobytes())
        doc["arrays"][name] = {"shape": list(a.shape), "dtype": a.dtype.str, "attributes": attrs_of(store, name)}
    (out / "source.json").write_text(json.dumps(doc, indent=1))
    print(f"source: /t2m {t2m.shape} {t2m.dtype} from {store}")


def read_md(path, options, name="t2m"):
    ds = gdal.OpenEx(path, gdal.OF_MULTIDIM_RASTER | gdal.OF_READONLY, open_options=options)
    return ds.GetRootGroup().OpenMDArray(name).ReadAsArray()


def expect(src, days, qc=None):
    want = src[:days].copy()
    if qc:
        t, (y0, y1), (x0, x1) = qc["day_index"], qc["rows"], qc["cols"]
        want[t, y0:y1, x0:x1] += np.float32(qc["delta"])
    return want


def same(a, b):
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def check_versions(data, samples, src):
    repo = str(data / "t2m_2023q1.icechunk")
    q1 = samples["t2m_2023q1"]
    failures = 0
    cases = [(f"SNAPSHOT={s['id']}", s["days"], s.get("qc")) for s in q1["snapshots"]]
    cases += [("TAG=january", 31, None), ("BRANCH=main", 90, None), ("BRANCH=qc", 90, q1["qc"])]
    for opt, days, qc in cases:
        got = read_md(repo, [opt])
        ok = same(got, expect(src, days, qc))
        failures += not ok
        print(f"  t2m_2023q1 {opt:32s} {got.shape[0]:3d} days {'bit-exact' if ok else 'DIFFERS'}")
    return failures


def check_archive(data, src):
    failures = 0
    made = not ARCHIVE_DIR.exists()
    ncs = sorted((data / "archive").glob("t2m_2023-0?.nc"))
    if made:
        ARCHIVE_DIR.mkdir()
        for nc in ncs:
            shutil.copy(nc, ARCHIVE_DIR / nc.name)
    stale = [nc.name for nc in ncs
             if not (ARCHIVE_DIR / nc.name).is_file() or not filecmp.cmp(nc, ARCHIVE_DIR / nc.name, shallow=False)]
    if stale:
        print(f"  archive: {ARCHIVE_DIR} exists without data/archive/'s files ({', '.join(stale)}): remove it")
        return failures + 1
    try:
        got = read_md(str(data / "archive.icechunk"), [])
    finally:
        if made:
            shutil.rmtree(ARCHIVE_DIR)
    ok = same(got, src)
    print(f"  archive.icechunk /t2m through the plugin: {'bit-exact' if ok else 'DIFFERS'}")
    return failures + (not ok)


def check(data, samples_json):
    data = Path(data)
    samples = json.loads(Path(samples_json).read_text())
    root = gdal.OpenEx(str(data / "daily_t2m_2023.zarr"), gdal.OF_MULTIDIM_RASTER | gdal.OF_READONLY).GetRootGroup()
    src = root.OpenMDArray("t2m").ReadAsArray(array_start_idx=[0, 0, 0], count=[NDAYS, 32, 64])
    failures = check_versions(data, samples, src) + check_archive(data, src)
    if failures:
        sys.exit(f"check: {failures} failure(s)")
    print("check: all samples bit-exact")


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("source", "check"):
        sys.exit(__doc__)
    (source if sys.argv[1] == "source" else check)(sys.argv[2], sys.argv[3])
