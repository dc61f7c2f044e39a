"""Undo (issue 40.8): `zarr3 trim STORE/ARRAY --dim time --length N` on a store of daily appends
(GDAL sees N bands, the time coordinate and every overview level cut with it, chunks past the end
deleted, an append after it writes the right values; refusals change nothing; a kill at each step
leaves the old or the new length; a concurrent append waits for the trim's lock), the same on an
Icechunk repository as one commit, and `zarr3 reset REPO --branch NAME SNAPSHOT|--to-tag T`
(the branch moves, the later snapshots stay readable by id, the previous tip is printed)."""
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from osgeo import gdal

from conftest import REPO
from process_util import wait_for_pause
from test_store_safety import Tmpfs, fill_disk
from test_append import append, build_cube, day_tif, days_of, expected_day, read_time

SAMPLE = REPO / "data" / "t2m_2023q1.icechunk"


def run(exe, *args, env_extra=None):
    env = dict(os.environ, **(env_extra or {}))
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=120,
                          env=env)


@pytest.fixture
def cube(tmp_path, run_tool):
    """Six daily appends, then gdaladdo 2: cube.zarr/cube (6 bands), cube.zarr/time, one level."""
    store = build_cube(tmp_path, run_tool, 6)
    p = run_tool("gdaladdo", "-q", store, "2")
    assert p.returncode == 0, p.stderr
    assert gdal.Open(str(store)).GetRasterBand(1).GetOverviewCount() == 1
    return store


def check_days(store, n):
    ds = gdal.Open(str(store))
    assert ds.RasterCount == n
    data = ds.ReadAsArray().reshape(n, ds.RasterYSize, ds.RasterXSize)
    for d in range(1, n + 1):
        np.testing.assert_array_equal(data[d - 1], expected_day(d))
    return ds


def test_trim_cuts_bands_coordinate_and_overviews(cube, exe, run_tool):
    r = run(exe, "trim", cube / "cube", "--dim", "time", "--length", 4)
    assert r.returncode == 0, r.stderr
    assert "/cube, /ovr_2x/cube, /time time 6 -> 4" in r.stdout
    ds = check_days(cube, 4)
    ovr = ds.GetRasterBand(4).GetOverview(0)
    assert ovr is not None and ds.GetRasterBand(1).GetOverviewCount() == 1
    assert read_time(cube).tolist() == [days_of(d) for d in range(1, 5)]
    assert sorted(p.name for p in (cube / "cube" / "c").iterdir()) == ["0", "1", "2", "3"]
    info = run_tool("gdalinfo", cube)
    assert info.returncode == 0 and "Band 4 " in info.stdout and "Band 5 " not in info.stdout
    assert "Warning" not in info.stderr, info.stderr
    # rasterio sees 4 bands too.
    rasterio = pytest.importorskip("rasterio")
    with rasterio.open(str(cube)) as src:
        assert src.count == 4
    # An append after the trim writes the right values at index 4.
    p = append(run_tool, day_tif(cube.parent / "again5.tif", 5), cube)
    assert p.returncode == 0, p.stderr
    check_days(cube, 5)
    assert read_time(cube).tolist() == [days_of(d) for d in range(1, 6)]


@pytest.mark.parametrize("length", [6, 7, 0, "x"])
def test_trim_refuses_a_length_that_does_not_shorten(cube, exe, length):
    before = {p: p.read_bytes() for p in cube.rglob("*") if p.is_file()}
    r = run(exe, "trim", cube / "cube", "--dim", "time", "--length", length)
    assert r.returncode == 1
    if length == "x":
        assert "--length x: expected a whole number" in r.stderr
    else:
        assert f"cannot trim axis 0 to {length} elements: it has 6" in r.stderr, r.stderr
        assert "between 1 and 5" in r.stderr
    assert {p: p.read_bytes() for p in cube.rglob("*") if p.is_file()} == before


def test_trim_refuses_another_axis(cube, exe):
    r = run(exe, "trim", cube / "cube", "--dim", "x", "--length", 4)
    assert r.returncode == 1 and "dimension x is axis 2; trim works along axis 0" in r.stderr


@pytest.mark.parametrize("step", ["trim-levels", "trim-switch", "trim-coord"])
def test_a_killed_trim_leaves_the_old_or_the_new_length(cube, exe, step):
    r = run(exe, "trim", cube / "cube", "--dim", "time", "--length", 4,
            env_extra={"ZARR3_TEST_KILL_AT": step})
    assert r.returncode == -9, (r.returncode, r.stderr)
    n = gdal.Open(str(cube)).RasterCount
    assert n == (6 if step == "trim-levels" else 4)
    check_days(cube, n)
    assert len(read_time(cube)) >= n
    if n == 6:  # killed before its switch: a second run finishes
        r = run(exe, "trim", cube / "cube", "--dim", "time", "--length", 4)
        assert r.returncode == 0, r.stderr
        check_days(cube, 4)


def test_a_concurrent_append_waits_for_the_trim(cube, exe, run_tool, driver_path):
    mark = cube.parent / "trim-paused"
    env = dict(os.environ, GDAL_DRIVER_PATH=driver_path, ZARR3_TEST_PAUSE_AT="trim-switch",
               ZARR3_TEST_PAUSE_MS="2000", ZARR3_TEST_PAUSE_MARK=str(mark))
    trim = subprocess.Popen([str(exe), "trim", str(cube / "cube"), "--dim", "time", "--length", "4"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_pause(trim, mark)  # the trim holds the locks and pauses before its switch
        p = append(run_tool, day_tif(cube.parent / "c5.tif", 5), cube)
        assert p.returncode == 0, p.stderr
    finally:
        out, err = trim.communicate(timeout=60)
    assert trim.returncode == 0, err
    # The append read the length after the trim: day 5 is band 5, not band 7.
    check_days(cube, 5)


def test_an_append_waiting_for_the_trim_also_waits_for_its_clean_up(cube, exe, run_tool, driver_path):
    """The trim removes the chunk folders it emptied under the array's lock: unlocked, it removed a
    folder of ovr_2x that the append which had waited for the trim was creating ("cannot create the
    folder (No such file or directory)", seen under load)."""
    mark = cube.parent / "tidy-paused"
    env = dict(os.environ, GDAL_DRIVER_PATH=driver_path, ZARR3_TEST_PAUSE_AT="trim-tidy",
               ZARR3_TEST_PAUSE_MS="3000", ZARR3_TEST_PAUSE_MARK=str(mark))
    trim = subprocess.Popen([str(exe), "trim", str(cube / "cube"), "--dim", "time", "--length", "4"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_pause(trim, mark)  # trimmed, the clean-up about to start, the lock held
        paused = time.monotonic()
        p = append(run_tool, day_tif(cube.parent / "c5.tif", 5), cube)
        waited = time.monotonic() - paused
        assert p.returncode == 0, p.stderr
    finally:
        out, err = trim.communicate(timeout=60)
    assert trim.returncode == 0, err
    # The append waited for the rest of the 3 s pause: the clean-up held the lock.
    assert waited >= 2.5, waited
    check_days(cube, 5)


def test_trim_in_a_repository_is_one_commit_and_reset_undoes_it(tmp_path, exe):
    repo = tmp_path / "r.icechunk"
    shutil.copytree(SAMPLE, repo)
    before = gdal.OpenEx(str(repo), gdal.OF_MULTIDIM_RASTER).GetRootGroup().OpenMDArray("t2m")
    old = before.ReadAsArray()
    assert old.shape[0] == 90
    tip = re.search(r"main -> (\S+)", run(exe, "log", repo).stdout).group(1)
    r = run(exe, "trim", repo, "--array", "t2m", "--dim", "time", "--length", 60)
    assert r.returncode == 0, r.stderr
    commit = re.search(r"commit (\S+) on branch main", r.stdout).group(1)
    log = run(exe, "log", repo).stdout
    assert "zarr3 trim: /t2m" in log and "time 90 -> 60" in log
    root = gdal.OpenEx(str(repo), gdal.OF_MULTIDIM_RASTER).GetRootGroup()
    np.testing.assert_array_equal(root.OpenMDArray("t2m").ReadAsArray(), old[:60])
    if root.OpenMDArray("time") is not None:
        assert root.OpenMDArray("time").GetDimensions()[0].GetSize() == 60
    # reset: back to the tip before the trim; the trim's snapshot stays readable by id.
    r = run(exe, "reset", repo, "--branch", "main", tip)
    assert r.returncode == 0, r.stderr
    assert f"branch main -> {tip} (was {commit}" in r.stdout
    assert f"zarr3 reset {repo} --branch main {commit}" in r.stdout
    root = gdal.OpenEx(str(repo), gdal.OF_MULTIDIM_RASTER).GetRootGroup()
    np.testing.assert_array_equal(root.OpenMDArray("t2m").ReadAsArray(), old)
    by_id = gdal.OpenEx(str(repo), gdal.OF_MULTIDIM_RASTER, open_options=[f"SNAPSHOT={commit}"])
    assert by_id.GetRootGroup().OpenMDArray("t2m").ReadAsArray().shape[0] == 60
    # --to-tag: the sample's tag january.
    r = run(exe, "reset", repo, "--branch", "main", "--to-tag", "january")
    assert r.returncode == 0, r.stderr
    assert f"(was {tip}" in r.stdout


def test_reset_refuses_unknown_branches_and_snapshots(tmp_path, exe):
    repo = tmp_path / "r.icechunk"
    shutil.copytree(SAMPLE, repo)
    r = run(exe, "reset", repo, "--branch", "nope", "--to-tag", "january")
    assert r.returncode == 1 and "nope" in r.stderr
    r = run(exe, "reset", repo, "--branch", "main", "00000000000000000000")
    assert r.returncode == 1 and "00000000000000000000" in r.stderr
    r = run(exe, "reset", repo, "--branch", "main")
    assert r.returncode == 1 and "expected REPO --branch NAME SNAPSHOT_ID" in r.stderr


def test_trim_inside_a_monthly_chunk_then_append_fills_it(tmp_path, exe, run_tool):
    """A monthly rectilinear, sharded store cut on 2023-02-09 keeps February's chunk (its edge and
    bytes); the next append (2023-02-10) goes into that chunk and every value reads right."""
    store = tmp_path / "daily.zarr"
    shutil.copytree(REPO / "data" / "daily_t2m_2023.zarr", store)
    name = f'ZARR3:"{store}":/t2m'
    original = gdal.Open(name).ReadAsArray()
    src = tmp_path / "feb10.tif"
    gdal.Translate(str(src), name, bandList=[41])  # the 2023-02-10 the trim removes
    r = run(exe, "trim", store / "t2m", "--dim", "time", "--length", 40)
    assert r.returncode == 0, r.stderr
    m = json.loads((store / "t2m" / "zarr.json").read_text())
    assert m["shape"][0] == 40
    assert m["chunk_grid"]["configuration"]["chunk_shapes"][0] == [31, 28]
    ds = gdal.Open(name)
    assert ds.RasterCount == 40
    np.testing.assert_array_equal(ds.ReadAsArray(), original[:40])
    ds = None
    p = append(run_tool, src, store, "-co", "APPEND_COORD=2023-02-10", "-co", "ARRAY_NAME=t2m")
    assert p.returncode == 0, p.stderr
    m = json.loads((store / "t2m" / "zarr.json").read_text())
    assert m["shape"][0] == 41
    assert m["chunk_grid"]["configuration"]["chunk_shapes"][0] == [31, 28]
    np.testing.assert_array_equal(gdal.Open(name).ReadAsArray(), original[:41])


def tree_bytes(folder):
    return {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture
def cube_on_small_disk(tmp_path, run_tool):
    """The cube fixture's store on a 2 MiB tmpfs (skipped where this process may not mount)."""
    with Tmpfs(tmp_path / "disk", "2m") as disk:
        store = build_cube(Path(disk.path), run_tool, 6)
        p = run_tool("gdaladdo", "-q", store, "2")
        assert p.returncode == 0, p.stderr
        yield disk, store


def test_trim_on_a_read_only_disk_changes_nothing_and_names_the_error(cube_on_small_disk, exe):
    disk, store = cube_on_small_disk
    before = tree_bytes(store)
    disk.remount_ro()
    r = run(exe, "trim", store / "cube", "--dim", "time", "--length", 4)
    assert r.returncode == 1, r.stdout
    assert "Read-only file system" in r.stderr and str(store) in r.stderr, r.stderr
    assert tree_bytes(store) == before
    check_days(store, 6)


def test_trim_on_a_full_disk_leaves_the_old_or_the_new_length(cube_on_small_disk, exe):
    disk, store = cube_on_small_disk
    fill_disk(disk.path)
    r = run(exe, "trim", store / "cube", "--dim", "time", "--length", 4)
    if r.returncode != 0:
        assert "No space left on device" in r.stderr and str(store) in r.stderr, r.stderr
    n = gdal.Open(str(store)).RasterCount
    assert n in (4, 6), n
    check_days(store, n)
    assert len(read_time(store)) >= n
    # With room again, the trim finishes (or has nothing left to do).
    os.unlink(os.path.join(disk.path, "filler"))
    if n == 6:
        r = run(exe, "trim", store / "cube", "--dim", "time", "--length", 4)
        assert r.returncode == 0, r.stderr
    check_days(store, 4)
    assert read_time(store).tolist() == [days_of(d) for d in range(1, 5)]
    assert gdal.Open(str(store)).GetRasterBand(1).GetOverviewCount() == 1
