"""The Icechunk samples of data/ (scripts/icechunk/make_samples.sh; t2m_2023q1 written by the real Icechunk,
archive.icechunk by `zarr3 virtualize`):

- data/t2m_2023q1.icechunk: the first 90 days of data/daily_t2m_2023.zarr's /t2m in three monthly
  commits on main, tag `january`, branch `qc` with one correction; every version bit-exact against the
  source store through GDAL (classic and multidimensional).
- data/archive.icechunk: one virtual array over data/archive/t2m_2023-0{1,2,3}.nc, equal to GDAL's
  netCDF driver reading the files and to the source. Its references name
  file:///tmp/gdal-zarr3-archive/, so the files are copied there for the test (skipped with the reason
  when that folder cannot be made). The generator's `zarr3 virtualize` command, run again, writes the
  same arrays, attributes and references.

Both in QGIS and rioxarray: test_qgis.py and test_rioxarray.py (the apps leg, where those are installed).
The helpers shared with them are in icechunk_samples.py.

Everything is read from copies in a temporary folder: nothing is ever written into data/.
"""
import json
import re
import shlex
import shutil
import subprocess

import numpy as np
import pytest
from osgeo import gdal

from conftest import value_or_error
from icechunk_samples import (ARCHIVE_DIR, ARCHIVE_GROUP, DATA, MONTHS, NC_FILES, QC, days_and_qc, history,
                              netcdf_months, placed_archive_files, zarr3_log)

pytestmark = ARCHIVE_GROUP  # they use /tmp/gdal-zarr3-archive


def _data_state():
    return sorted((str(p.relative_to(DATA)), p.stat().st_mtime_ns) for p in DATA.rglob("*"))


DATA_BEFORE = _data_state()


@pytest.fixture(scope="module")
def tmp_data(tmp_path_factory):
    """Copies of the source store and both sample repositories."""
    d = tmp_path_factory.mktemp("samples")
    for name in ("daily_t2m_2023.zarr", "t2m_2023q1.icechunk", "archive.icechunk"):
        if not (DATA / name).exists():
            pytest.fail(f"{DATA / name} missing (scripts/icechunk/make_samples.sh writes it)")
        shutil.copytree(DATA / name, d / name)
    return d


@pytest.fixture(scope="module")
def source(tmp_data):
    ds = gdal.OpenEx(str(tmp_data / "daily_t2m_2023.zarr"), gdal.OF_MULTIDIM_RASTER | gdal.OF_READONLY)
    a = ds.GetRootGroup().OpenMDArray("t2m").ReadAsArray(array_start_idx=[0, 0, 0], count=[90, 32, 64])
    assert a.shape == (90, 32, 64) and a.dtype == np.float32
    return a


@pytest.fixture(scope="module")
def q1(tmp_data):
    return str(tmp_data / "t2m_2023q1.icechunk")


def expected(source, days, qc=False):
    want = source[:days].copy()
    if qc:
        t, ys, xs, delta = QC
        want[t, ys, xs] += delta
    return want


def assert_bit_exact(got, want, what):
    assert got.shape == want.shape, f"{what}: shape {got.shape}, want {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, want {want.dtype}"
    if got.tobytes() != want.tobytes():
        bad = np.argwhere(got != want)
        pytest.fail(f"{what}: {len(bad)} values differ, first at {bad[0].tolist()}: "
                    f"{got[tuple(bad[0])]} != {want[tuple(bad[0])]}")


def open_md(path, options=()):
    ds = gdal.OpenEx(path, gdal.OF_MULTIDIM_RASTER | gdal.OF_READONLY, open_options=list(options))
    assert ds is not None and ds.GetDriver().ShortName == "Zarr3", path
    return ds


def open_classic(path, options=()):
    ds = gdal.OpenEx(path, gdal.OF_RASTER | gdal.OF_READONLY, open_options=list(options))
    assert ds is not None and ds.GetDriver().ShortName == "Zarr3", path
    return ds


# ------------------------------------------------------------------ data/t2m_2023q1.icechunk
def test_q1_history_three_monthly_commits_tag_branch(exe, q1):
    main = history(zarr3_log(exe, q1))
    msgs = [c.message for c in main]
    assert [days_and_qc(m) for m in msgs[:3]] == [(90, False), (59, False), (31, False)], msgs
    assert msgs[3] == "Repository initialized" and len(main) == 4
    assert "tag: january" in main[2].labels and "main" in main[0].labels
    assert [c.time for c in main] == sorted((c.time for c in main), reverse=True), main
    qc = history(zarr3_log(exe, q1, "qc"))
    assert days_and_qc(qc[0].message) == (90, True), qc[0]
    assert [c.id for c in qc[1:]] == [c.id for c in main], "qc must branch from main's March commit"


def test_q1_main_classic_georeferenced_bit_exact(q1, source):
    ds = open_classic(q1)
    assert (ds.RasterCount, ds.RasterYSize, ds.RasterXSize) == (90, 32, 64)
    assert ds.GetGeoTransform() == (-20.0, 1.0, 0.0, 72.0, 0.0, -1.0)
    assert ds.GetSpatialRef().GetAuthorityCode(None) == "4326"
    assert np.isnan(ds.GetRasterBand(1).GetNoDataValue())
    assert_bit_exact(ds.ReadAsArray(), source, "main (classic)")
    assert ds.GetMetadata("ICECHUNK")["SNAPSHOT_MESSAGE"].startswith("March 2023 appended")
    grid = json.loads(ds.GetMetadata("ZARR3")["CHUNK_GRID"])
    assert grid["name"] == "rectilinear" and grid["configuration"]["chunk_shapes"][0] == MONTHS


def version_cases(exe, q1):
    """(label, path, open options, days, qc) for every snapshot, the tag and both branches."""
    cases = []
    for branch in ("main", "qc"):
        for c in history(zarr3_log(exe, q1, branch)):
            sid, msg = c.id, c.message
            what = days_and_qc(msg)
            if what and not any(c[2] == [f"SNAPSHOT={sid}"] for c in cases):
                cases.append((f"snapshot {sid} ({msg[:22]})", q1, [f"SNAPSHOT={sid}"], *what))
    assert len(cases) == 4, cases
    cases += [("TAG=january", q1, ["TAG=january"], 31, False),
              ("BRANCH=main", q1, ["BRANCH=main"], 90, False),
              ("BRANCH=qc", q1, ["BRANCH=qc"], 90, True),
              ("ICECHUNK:?tag=january", f"ICECHUNK:{q1}?tag=january", [], 31, False),
              ("ICECHUNK:?branch=qc", f"ICECHUNK:{q1}?branch=qc", [], 90, True)]
    return cases


def test_q1_every_version_bit_exact_classic_and_multidim(exe, q1, source):
    for label, path, opts, days, qc in version_cases(exe, q1):
        want = expected(source, days, qc)
        mds = open_md(path, opts)
        rg = mds.GetRootGroup()
        assert_bit_exact(rg.OpenMDArray("t2m").ReadAsArray(), want, f"{label} (multidim)")
        assert rg.OpenMDArray("time").ReadAsArray().tolist() == list(range(days)), label
        ds = open_classic(path, opts)
        assert ds.RasterCount == days, label
        assert_bit_exact(ds.ReadAsArray(), want, f"{label} (classic)")
        grid = json.loads(ds.GetMetadata("ZARR3")["CHUNK_GRID"])["configuration"]["chunk_shapes"][0]
        assert sum(grid) == days and grid == MONTHS[:len(grid)], (label, grid)


def test_q1_qc_correction_is_the_only_difference(q1):
    ds_main, ds_qc = open_md(q1, ["BRANCH=main"]), open_md(q1, ["BRANCH=qc"])  # kept open while read
    main = ds_main.GetRootGroup().OpenMDArray("t2m").ReadAsArray()
    qc = ds_qc.GetRootGroup().OpenMDArray("t2m").ReadAsArray()
    diff = qc - main
    t, ys, xs, delta = QC
    assert (diff[t, ys, xs] == delta).all()
    diff[t, ys, xs] = 0
    assert not diff.any()
    ds = open_classic(q1, ["BRANCH=qc"])
    assert ds.GetRasterBand(t + 1).ReadAsArray()[0, 0] == main[t, 0, 0] + delta


def test_q1_unknown_tag_lists_the_valid_ones(q1):
    got, err = value_or_error(lambda: open_classic(q1, ["TAG=february"]))
    assert got is None and "february" in err and "january" in err, err


def test_q1_gdalmdiminfo_command_opens_the_tagged_version(run_tool, q1):
    """`gdalmdiminfo -oo TAG=january repo` as a command: the JSON has /t2m and a /time dimension of the
    tag's 31 days (branch main, without -oo: 90), and the time values of that version."""
    for oo, days in ((["-oo", "TAG=january"], 31), ([], 90), (["-oo", "BRANCH=qc"], 90)):
        p = run_tool("gdalmdiminfo", *oo, q1, env_extra={"GDAL_PAM_ENABLED": "NO"})
        assert p.returncode == 0 and "ERROR" not in p.stderr, (oo, p.stderr)
        info = json.loads(p.stdout)
        assert info["driver"] == "Zarr3", oo
        dims = {d["full_name"]: d for d in info["dimensions"]}
        assert dims["/time"]["size"] == days and dims["/time"]["type"] == "TEMPORAL", (oo, dims)
        assert (dims["/lat"]["size"], dims["/lon"]["size"]) == (32, 64), (oo, dims)
        t2m = info["arrays"]["t2m"]
        assert t2m["dimensions"] == ["/time", "/lat", "/lon"] and t2m["dimension_size"] == [days, 32, 64], (oo, t2m)
        assert t2m["datatype"] == "Float32"
        assert info["arrays"]["time"]["dimension_size"] == [days], oo
    p = run_tool("gdalmdiminfo", "-oo", "TAG=january", "-detailed", "-array", "time", q1,
                 env_extra={"GDAL_PAM_ENABLED": "NO"})
    assert p.returncode == 0, p.stderr
    time = json.loads(p.stdout)
    assert time["unit"] == "days since 2023-01-01" and time["values"] == list(range(31)), time


# ------------------------------------------------------------------ data/archive.icechunk (virtual)
@pytest.fixture(scope="module")
def archive(tmp_data):
    with placed_archive_files():
        yield str(tmp_data / "archive.icechunk")


def test_archive_classic_equals_netcdf_driver_and_source(archive, source):
    if gdal.GetDriverByName("netCDF") is None:
        pytest.skip("GDAL built without the netCDF driver")
    ds = open_classic(f'ZARR3:"{archive}":/t2m')
    assert ds.RasterCount == 90 and ds.GetGeoTransform() == (-20.0, 1.0, 0.0, 72.0, 0.0, -1.0)
    assert ds.GetSpatialRef().GetAuthorityCode(None) == "4326"
    got = ds.ReadAsArray()
    assert_bit_exact(got, netcdf_months(), "virtual archive vs netCDF driver")
    assert_bit_exact(got, source, "virtual archive vs daily_t2m_2023.zarr")
    nc = gdal.Open(f'NETCDF:"{ARCHIVE_DIR / NC_FILES[1]}":t2m')
    feb14 = nc.GetRasterBand(14).ReadAsArray()
    assert_bit_exact(ds.GetRasterBand(45).ReadAsArray(), feb14, "2023-02-14")


def test_archive_multidim_virtual_rectilinear(archive, source):
    ds = open_md(archive)
    rg = ds.GetRootGroup()
    t2m = rg.OpenMDArray("t2m")
    assert_bit_exact(t2m.ReadAsArray(), source, "virtual archive (multidim)")
    assert rg.OpenMDArray("time").ReadAsArray().tolist() == list(range(90))
    # a window across the February/March chunk boundary
    win = t2m.ReadAsArray(array_start_idx=[55, 10, 20], count=[8, 12, 20])
    assert_bit_exact(win, source[55:63, 10:22, 20:40], "window across months")
    md = open_classic(archive).GetMetadata("ZARR3")
    grid = json.loads(md["CHUNK_GRID"])["configuration"]["chunk_shapes"]
    assert grid[0] == MONTHS
    assert [c["name"] for c in json.loads(md["CODECS"])] == ["bytes", "numcodecs.shuffle", "numcodecs.zlib"]


def sample_virtualize_args():
    """The arguments after `zarr3 virtualize OUT` in make_samples.sh's virtualize step (the generator)."""
    text = (DATA.parent / "scripts" / "icechunk" / "make_samples.sh").read_text()
    step = re.search(r'^  step virtualize "\$GDAL_DRIVER_PATH/zarr3" virtualize "\$STAGE/out/archive.icechunk" \\\n'
                     r'((?:    .*\n)+?)(?=  \S)', text, re.M)
    assert step, "make_samples.sh has no `step virtualize` writing archive.icechunk"
    words = shlex.split(step.group(1).replace("\\\n", " "))
    return [w.replace("$STAGE/out/archive/", str(DATA / "archive") + "/") for w in words]


def test_archive_is_what_the_generator_command_writes(archive, exe, tmp_path):
    """make_samples.sh writes data/archive.icechunk with `zarr3 virtualize` (issue 42): that command, run
    again on data/archive/*.nc, gives the same arrays (gdalmdiminfo: dimensions, attributes, codecs,
    chunk grids, coordinates) and the same values read through the references."""
    args = sample_virtualize_args()
    assert "--no-checksum" in args and "file:///tmp/gdal-zarr3-archive/" in args, args
    files = sorted(str(p) for p in (DATA / "archive").glob("t2m_2023-0[123].nc"))
    args = [a for a in args if "t2m_2023-0[123].nc" not in a]
    again = tmp_path / "again.icechunk"
    p = subprocess.run([str(exe), "virtualize", str(again), *files, *args], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    assert "12 chunk reference(s), 0 chunk(s) copied" in p.stdout, p.stdout
    info = [gdal.MultiDimInfo(f"ICECHUNK:{r}", detailed=True) for r in (archive, again)]
    assert info[0] == info[1]
    assert_bit_exact(open_md(str(again)).GetRootGroup().OpenMDArray("t2m").ReadAsArray(),
                     open_md(archive).GetRootGroup().OpenMDArray("t2m").ReadAsArray(), "again vs sample")


# ------------------------------------------------------------------ last: data/ untouched
def test_data_folder_untouched():
    assert _data_state() == DATA_BEFORE, "a test wrote into data/"
