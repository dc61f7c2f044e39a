"""Appends never lose a step (issue 33 #5, #6): the length an append writes at comes from the
array's own zarr.json read under the array's lock, never from (possibly stale) consolidated
metadata; concurrent appends to one local store are serialized (two processes x 10 appends keep
every day with its coordinate value); threads of one process appending to /vsimem/ too; where no
lock exists (object stores, simulated with ZARR3_TEST_NO_STORE_LOCKS=1), an append whose array
changed before its switch fails naming the conflict instead of overwriting the other's step."""
import json
import os
import shutil
import subprocess
import threading

import numpy as np
import pytest
from osgeo import gdal

from process_util import wait_for_pause
from test_append import DRV, KEEP, append_options, day_tif, days_of, expected_day, meta

gdal.UseExceptions()


def append_cmd(src, store, *extra):
    keep = [a for k in KEEP for a in ("-co", k)]
    return ["gdal_translate", "-q", "-of", DRV, "-co", "APPEND_DIM=time", *keep, *extra, str(src),
            str(store)]


def check_days(store, want_days):
    """Every step holds the pixels of the day its coordinate names; the days are `want_days`."""
    ds = gdal.Open(str(store))
    cube = ds.ReadAsArray()
    if cube.ndim == 2:
        cube = cube[None]
    ds = None
    md = gdal.OpenEx(str(store), gdal.OF_MULTIDIM_RASTER)
    time_vals = md.GetRootGroup().OpenMDArray("time").ReadAsArray()
    assert len(time_vals) == cube.shape[0], (len(time_vals), cube.shape)
    by_value = {days_of(d): d for d in want_days}
    got = []
    for i in range(cube.shape[0]):
        day = int(round(cube[i, 0, 0] / 1000))
        assert np.array_equal(cube[i], expected_day(day)), f"step {i}"
        assert by_value.get(float(time_vals[i])) == day, f"step {i}: day {day}, time {time_vals[i]}"
        got.append(day)
    assert sorted(got) == sorted(want_days)


def consolidate(store):
    """Inline consolidated metadata of the store as it is now (as zarr-python writes it)."""
    root = json.loads((store / "zarr.json").read_text())
    members = {}
    for child in sorted(store.iterdir()):
        if (child / "zarr.json").is_file():
            members[child.name] = json.loads((child / "zarr.json").read_text())
    root["consolidated_metadata"] = {"kind": "inline", "must_understand": False, "metadata": members}
    (store / "zarr.json").write_text(json.dumps(root))


def append_day(tmp_path, store, d):
    gdal.Translate(str(store), str(day_tif(tmp_path / f"d{d}.tif", d)), format=DRV,
                   creationOptions=append_options())


def store_with_stale_consolidated_metadata(tmp_path):
    """Days 1-4, whose root's consolidated metadata still says 3 steps: another tool appended
    day 4 without re-consolidating."""
    store = tmp_path / "cube.zarr"
    for d in (1, 2, 3):
        append_day(tmp_path, store, d)
    consolidate(store)
    stale_root = (store / "zarr.json").read_text()
    append_day(tmp_path, store, 4)
    (store / "zarr.json").write_text(stale_root)
    return store


def test_append_ignores_stale_consolidated_metadata(tmp_path):
    store = store_with_stale_consolidated_metadata(tmp_path)
    gdal.Translate(str(store), str(day_tif(tmp_path / "d5.tif", 5)), format=DRV,
                   creationOptions=append_options())
    assert meta(store, "cube")["shape"][0] == 5
    check_days(store, [1, 2, 3, 4, 5])
    # The consolidated metadata was rewritten from the fresh state.
    cons = json.loads((store / "zarr.json").read_text())["consolidated_metadata"]["metadata"]
    assert cons["cube"] == meta(store, "cube")
    assert cons["time"] == meta(store, "time")


def test_stale_consolidated_metadata_through_the_command(tmp_path, run_tool):
    store = tmp_path / "cube.zarr"
    for d in (1, 2):
        gdal.Translate(str(store), str(day_tif(tmp_path / f"d{d}.tif", d)), format=DRV,
                       creationOptions=append_options())
    consolidate(store)
    stale_root = (store / "zarr.json").read_text()
    for d in (3, 4, 5):
        if d > 3:  # the previous append undone in the consolidated copy only
            (store / "zarr.json").write_text(stale_root)
        run_tool(*append_cmd(day_tif(tmp_path / f"d{d}.tif", d), store), check=True)
    check_days(store, [1, 2, 3, 4, 5])


def test_gdaladdo_never_plans_levels_from_stale_consolidated_metadata(tmp_path):
    """Overview levels are planned from the array as stored now: when the dataset was opened from
    consolidated metadata older than the array (another tool appended without re-consolidating),
    gdaladdo fails naming both shapes and changes nothing (it used to build 3-step levels of a 4-step
    array, exit 0, and leave a pyramid the reader rejects)."""
    store = store_with_stale_consolidated_metadata(tmp_path)
    before = {p: p.read_bytes() for p in store.rglob("*") if p.is_file()}
    p = subprocess.run(["gdaladdo", "-q", str(store), "2"], capture_output=True, text=True)
    assert p.returncode != 0, p.stderr
    assert "changed since it was opened" in p.stderr and "reopen it" in p.stderr, p.stderr
    assert {p: p.read_bytes() for p in store.rglob("*") if p.is_file()} == before
    # Opened from what is stored (the consolidated root re-written by an append), it builds.
    append_day(tmp_path, store, 5)
    p = subprocess.run(["gdaladdo", "-q", str(store), "2"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    gdal.ErrorReset()
    ds = gdal.Open(str(store))
    assert ds.RasterCount == 5 and ds.GetRasterBand(1).GetOverviewCount() == 1
    assert gdal.GetLastErrorMsg() == ""


def run_workers(driver_path, store, day_lists, env_extra=None):
    env = dict(os.environ, GDAL_DRIVER_PATH=driver_path, **(env_extra or {}))
    script = ("import subprocess, sys\n"
              "for cmd in eval(sys.argv[1]):\n"
              "    p = subprocess.run(cmd, capture_output=True, text=True)\n"
              "    print(p.returncode, p.stderr.strip().replace('\\n', ' '), flush=True)\n")
    procs = []
    for days in day_lists:
        # Two writers interleave their days: APPEND_ORDER=ANY accepts the steps in any order.
        cmds = [append_cmd(store.parent / f"d{d}.tif", store, "-co", "APPEND_ORDER=ANY") for d in days]
        procs.append(subprocess.Popen(["/usr/bin/python3", "-c", script, repr(cmds)], env=env,
                                      stdout=subprocess.PIPE, text=True))
    return [p.communicate(timeout=600)[0] for p in procs]


def test_two_processes_appending_concurrently_keep_every_day(tmp_path, driver_path):
    store = tmp_path / "cube.zarr"
    for d in range(1, 22):
        day_tif(tmp_path / f"d{d}.tif", d)
    gdal.Translate(str(store), str(tmp_path / "d1.tif"), format=DRV, creationOptions=append_options())
    outs = run_workers(driver_path, store, [range(2, 22, 2), range(3, 22, 2)])
    for out in outs:
        lines = out.splitlines()
        assert len(lines) == 10 and all(line.startswith("0") for line in lines), out
    assert meta(store, "cube")["shape"][0] == 21
    check_days(store, list(range(1, 22)))
    assert not list(store.rglob("*.lock")), "lock files are removed on release"


def remove_vsimem(path):
    """Unlinks every file under `path` (RmdirRecursive fails on /vsimem/ with GDAL 3.6)."""
    for name in gdal.ReadDir(path) or []:
        child = f"{path}/{name}"
        st = gdal.VSIStatL(child)
        if st is not None and st.IsDirectory():
            remove_vsimem(child)
        else:
            gdal.Unlink(child)


def test_threads_appending_to_vsimem_keep_every_day(tmp_path):
    store = "/vsimem/append_safety/cube.zarr"
    srcs = {d: str(day_tif(tmp_path / f"d{d}.tif", d)) for d in range(1, 17)}
    gdal.Translate(store, srcs[1], format=DRV, creationOptions=append_options())
    errors = []

    def worker(days):
        try:
            for d in days:
                gdal.Translate(store, srcs[d], format=DRV,
                               creationOptions=append_options("APPEND_ORDER=ANY"))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(range(k, 17, 3),)) for k in (2, 3, 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert not errors
        ds = gdal.Open(store)
        cube = ds.ReadAsArray()
        ds = None
        md = gdal.OpenEx(store, gdal.OF_MULTIDIM_RASTER)
        tv = md.GetRootGroup().OpenMDArray("time").ReadAsArray()
        md = None
        days = [int(round(cube[i, 0, 0] / 1000)) for i in range(cube.shape[0])]
        assert sorted(days) == list(range(1, 17))
        for i, d in enumerate(days):
            assert np.array_equal(cube[i], expected_day(d))
            assert tv[i] == days_of(d)
    finally:
        remove_vsimem("/vsimem/append_safety")


def test_append_without_locks_fails_on_a_conflict_instead_of_losing_a_step(tmp_path, driver_path):
    """An object store has no lock: simulated on a local store with ZARR3_TEST_NO_STORE_LOCKS=1.
    Append A pauses before its switch while append B completes; A must fail naming the conflict."""
    store = tmp_path / "cube.zarr"
    for d in (1, 2, 3):
        day_tif(tmp_path / f"d{d}.tif", d)
    gdal.Translate(str(store), str(tmp_path / "d1.tif"), format=DRV, creationOptions=append_options())
    env = dict(os.environ, GDAL_DRIVER_PATH=driver_path, ZARR3_TEST_NO_STORE_LOCKS="1")
    mark = tmp_path / "a-paused"
    a = subprocess.Popen(append_cmd(tmp_path / "d2.tif", store),
                         env=dict(env, ZARR3_TEST_PAUSE_AT="append-switch", ZARR3_TEST_PAUSE_MS="4000",
                                  ZARR3_TEST_PAUSE_MARK=str(mark)),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_pause(a, mark)
    b = subprocess.run(append_cmd(tmp_path / "d3.tif", store), env=env, capture_output=True,
                       text=True, timeout=120)
    out_a, err_a = a.communicate(timeout=120)
    assert b.returncode == 0, b.stderr
    assert a.returncode != 0, "the paused append must fail"
    assert "changed by another writer" in err_a and "cube/zarr.json" in err_a, err_a
    check_days(store, [1, 3])


def test_arrays_sharing_the_coordinate_agree_with_it(tmp_path, run_tool):
    """Two variables share `time`: an append to the shorter one must not shrink the coordinate
    nor re-date the longer one's steps; a date that disagrees with the stored one is refused."""
    store = tmp_path / "cube.zarr"
    for d in (1, 2):
        gdal.Translate(str(store), str(day_tif(tmp_path / f"d{d}.tif", d)), format=DRV,
                       creationOptions=append_options())
    shutil.copytree(store / "cube", store / "precip")
    for d in (3, 4):
        gdal.Translate(str(store), str(day_tif(tmp_path / f"d{d}.tif", d)), format=DRV,
                       creationOptions=append_options("ARRAY_NAME=cube"))
    time_before = meta(store, "time")
    # precip's index 2 is dated day 3 by the coordinate: day 5 there is refused.
    p = run_tool(*append_cmd(day_tif(tmp_path / "d5.tif", 5), store, "-co", "ARRAY_NAME=precip"))
    assert p.returncode != 0
    assert "time: index 2 already holds another value" in p.stderr, p.stderr
    assert meta(store, "time") == time_before and meta(store, "precip")["shape"][0] == 2
    # Day 3 agrees: precip grows, the coordinate keeps its 4 values.
    run_tool(*append_cmd(tmp_path / "d3.tif", store, "-co", "ARRAY_NAME=precip"), check=True)
    assert meta(store, "precip")["shape"][0] == 3
    assert meta(store, "time")["shape"][0] == 4
    md = gdal.OpenEx(str(store), gdal.OF_MULTIDIM_RASTER)
    assert list(md.GetRootGroup().OpenMDArray("time").ReadAsArray()) == [days_of(d) for d in (1, 2, 3, 4)]


# The class (issue 33): every write that depends on metadata takes it from the array's own zarr.json
# at the moment of writing. An update-mode dataset opened before an append (or from stale
# consolidated metadata) must not write its old shape back when it writes attributes.
def cube_with_days(tmp_path, days, consolidated=False):
    store = tmp_path / "cube.zarr"
    for d in days:
        gdal.Translate(str(store), str(day_tif(tmp_path / f"d{d}.tif", d)), format=DRV,
                       creationOptions=append_options())
    if consolidated:
        consolidate(store)
    return store


def test_update_open_before_an_append_keeps_the_appended_step(tmp_path, run_tool):
    store = cube_with_days(tmp_path, (1, 2))
    ds = gdal.Open(str(store), gdal.GA_Update)
    run_tool(*append_cmd(day_tif(tmp_path / "d3.tif", 3), store), check=True)
    ds.SetMetadataItem("note", "written after the append")
    ds = None
    assert meta(store, "cube")["shape"][0] == 3
    check_days(store, [1, 2, 3])


def test_multidim_update_open_before_an_append_keeps_the_appended_step(tmp_path, run_tool):
    store = cube_with_days(tmp_path, (1, 2))
    ds = gdal.OpenEx(str(store), gdal.OF_MULTIDIM_RASTER | gdal.OF_UPDATE)
    arr = ds.GetRootGroup().OpenMDArray("cube")
    run_tool(*append_cmd(day_tif(tmp_path / "d3.tif", 3), store), check=True)
    attr = arr.CreateAttribute("note", [], gdal.ExtendedDataType.CreateString())
    attr.Write("written after the append")
    attr = arr = ds = None
    assert meta(store, "cube")["shape"][0] == 3
    check_days(store, [1, 2, 3])


def test_update_open_with_stale_consolidated_metadata_keeps_the_stored_shape(tmp_path, run_tool):
    store = cube_with_days(tmp_path, (1, 2), consolidated=True)
    stale_root = (store / "zarr.json").read_text()
    run_tool(*append_cmd(day_tif(tmp_path / "d3.tif", 3), store), check=True)
    (store / "zarr.json").write_text(stale_root)
    ds = gdal.Open(str(store), gdal.GA_Update)
    ds.SetMetadataItem("note", "written on a stale consolidated open")
    ds = None
    assert meta(store, "cube")["shape"][0] == 3
