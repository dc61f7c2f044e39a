"""Time-series appends on a real object store: GDAL's /vsis3/ pointed at the session nginx, bucket
`wbkt` (nginx_fixture: PUT and DELETE, no listing, no CopyObject, so VSIRename fails and the
plugin PUTs each object directly). Every command runs as a process with the S3 configuration in
its environment (AWS_S3_ENDPOINT, AWS_HTTPS=NO, AWS_VIRTUAL_HOSTING=FALSE, AWS_NO_SIGN_REQUEST).

There is no lock on an object store: an append re-reads the array's zarr.json (past every cache:
the plugin's and GDAL's /vsicurl/ one) right before its switch and fails naming "changed by
another writer" when another append switched meanwhile (test_append_safety.py simulates this on
a local folder with ZARR3_TEST_NO_STORE_LOCKS=1; here it is the real S3 path).

The server cannot list (S3 ListObjects): appends name their array (-co ARRAY_NAME=cube), else
the plugin finds no array in the root group. GDAL 3.6's gdal_translate runs QuietDelete on the
target first: its /vsis3/ stat of the store's folder needs a listing, so it asks the plugin's
Delete, which refuses ("not found; nothing deleted", on stderr, harmless). A listing refused is
taken as an empty one, which makes consolidated metadata hide every node (a strict xfail).
"""
import json
import os
import subprocess
import time
import uuid

import numpy as np
import pytest
from osgeo import gdal

from nginx_fixture import nginx, object_store, object_store_options  # noqa: F401 (nginx: fixture)
from test_append import DRV, KEEP, day_tif, days_of, expected_day

gdal.UseExceptions()

BUCKET = "wbkt"


def s3_env(nginx, driver_path):  # noqa: F811
    return dict(os.environ, GDAL_DRIVER_PATH=driver_path, **object_store_options("s3", nginx.port))


def append_cmd(src, store, *extra):
    keep = [a for k in KEEP for a in ("-co", k)]
    return ["gdal_translate", "-q", "-of", DRV, "-co", "APPEND_DIM=time", "-co", "ARRAY_NAME=cube",
            *keep, *extra, str(src), store]


def new_store(nginx):  # noqa: F811
    """A fresh store: its /vsis3/ path and the folder nginx keeps it in."""
    sid = uuid.uuid4().hex
    return f"/vsis3/{BUCKET}/{sid}/cube.zarr", nginx.root / BUCKET / sid / "cube.zarr"


def run(cmd, env):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, f"{cmd}: {p.stderr}"
    return p


def stored_days(path, classic=None):
    """The days the store holds, in order: each step's pixels are those of one day, bit-exact,
    and its time value is that day's; cube and time agree on the length. `classic`: the name
    the array opens with (default: the store's path)."""
    ds = gdal.Open(classic or path)
    cube = ds.ReadAsArray()
    ds = None
    if cube.ndim == 2:
        cube = cube[None]
    md = gdal.OpenEx(path, gdal.OF_MULTIDIM_RASTER)
    tv = md.GetRootGroup().OpenMDArray("time").ReadAsArray()
    md = None
    assert len(tv) == cube.shape[0], (len(tv), cube.shape)
    days = []
    for i in range(cube.shape[0]):
        day = int(round(cube[i, 0, 0] / 1000))
        assert cube[i].dtype == np.float32 and np.array_equal(cube[i], expected_day(day)), f"step {i}"
        assert tv[i] == days_of(day), f"step {i}: day {day}, time {tv[i]}"
        days.append(day)
    return days


def days_through_s3(nginx, store):  # noqa: F811
    gdal.VSICurlClearCache()
    with object_store("s3", nginx.port):
        # The array by name: opening the store's root lists it (its subdatasets).
        return stored_days(store, f'ZARR3:"{store}":cube')


def leftovers(folder):
    """Temporary objects and unfinished markers left in the store's folder."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                  if ".tmp." in p.name or p.name == ".zarr3-unfinished")


def test_appends_on_s3_keep_every_day(tmp_path, nginx, driver_path):  # noqa: F811
    """Day 1 creates the store on /vsis3/, days 2..4 append: every day is read back bit-exact with
    its date, through /vsis3/ and from nginx's folder; no temporary object or marker is left."""
    env = s3_env(nginx, driver_path)
    store, folder = new_store(nginx)
    for d in range(1, 5):
        run(append_cmd(day_tif(tmp_path / f"d{d}.tif", d), store), env)
    assert json.loads((folder / "cube" / "zarr.json").read_text())["shape"] == [4, 10, 20]
    assert json.loads((folder / "time" / "zarr.json").read_text())["shape"] == [4]
    assert days_through_s3(nginx, store) == [1, 2, 3, 4]
    assert stored_days(str(folder)) == [1, 2, 3, 4]
    assert leftovers(folder) == []
    # Without ARRAY_NAME the array is looked for by listing, which this store refuses: the error
    # says so (it used to say that no array has the dimension) and nothing changes.
    cmd = append_cmd(day_tif(tmp_path / "d5.tif", 5), store)
    at = cmd.index("ARRAY_NAME=cube")
    p = subprocess.run(cmd[:at - 1] + cmd[at + 1:], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode != 0 and "the store lists no array" in p.stderr, p.stderr
    assert stored_days(str(folder)) == [1, 2, 3, 4]


def test_append_on_s3_fails_on_a_conflict_instead_of_losing_a_step(tmp_path, nginx, driver_path):  # noqa: F811
    """Append A (day 2) writes its chunks and pauses before its switch; append B (day 3) runs to
    its end meanwhile, writing the same step; A must then fail naming the array's zarr.json and
    switch nothing: the store holds days 1 and 3, as B left it."""
    env = s3_env(nginx, driver_path)
    store, folder = new_store(nginx)
    srcs = {d: day_tif(tmp_path / f"d{d}.tif", d) for d in (1, 2, 3)}
    run(append_cmd(srcs[1], store), env)
    # B takes ~0.3 s here; under the sanitize leg's ASan runtime (preloaded) everything is slower.
    pause_ms = 15000 if "libasan" in os.environ.get("LD_PRELOAD", "") else 3000
    mark = nginx.mark()
    a_start = time.monotonic()
    a = subprocess.Popen(append_cmd(srcs[2], store),
                         env=dict(env, ZARR3_TEST_PAUSE_AT="append-switch",
                                  ZARR3_TEST_PAUSE_MS=str(pause_ms)),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # A's last write before its pause is the coordinate's chunk (time/c/0).
        coord_chunk = f"/{BUCKET}/{folder.parent.name}/cube.zarr/time/c/0"
        while not any(r.method == "PUT" and r.uri == coord_chunk and r.status in (200, 201)
                      for r in nginx.requests(mark)):
            assert a.poll() is None, f"append A ended before its pause: {a.communicate()}"
            assert time.monotonic() - a_start < 30, "append A never wrote its coordinate chunk"
            time.sleep(0.05)
        b = subprocess.run(append_cmd(srcs[3], store), env=env, capture_output=True, text=True,
                           timeout=120)
        b_end = time.monotonic()
        out_a, err_a = a.communicate(timeout=120)
    finally:
        if a.poll() is None:
            a.kill()
            a.wait()
    assert b.returncode == 0, b.stderr
    assert b_end - a_start < pause_ms / 1000, "B did not end within A's pause: raise pause_ms"
    assert a.returncode != 0, f"the paused append must fail: {err_a}"
    assert "changed by another writer" in err_a and "cube.zarr/cube/zarr.json" in err_a, err_a
    assert json.loads((folder / "cube" / "zarr.json").read_text())["shape"] == [2, 10, 20]
    assert json.loads((folder / "time" / "zarr.json").read_text())["shape"] == [2]
    assert days_through_s3(nginx, store) == [1, 3]
    assert stored_days(str(folder)) == [1, 3]
    assert leftovers(folder) == []


def stored_nodes(folder):
    """The nodes under the store's root, as paths relative to it ("cube", "time", ...)."""
    return {p.parent.relative_to(folder).as_posix() for p in folder.rglob("zarr.json")
            if p.parent != folder}


def test_consolidated_metadata_on_a_store_that_cannot_be_listed_never_hides_a_node(
        tmp_path, nginx, driver_path):  # noqa: F811
    """-co CREATE_CONSOLIDATED_METADATA=YES on /vsis3/ without listing (nginx refuses S3's
    ListObjects): the root's consolidated metadata never leaves out a node the store holds. A
    refused listing used to be taken as an empty one: both commands exited 0 and the store opened
    as an empty group, its array hidden. Now the command fails, naming the store and the listing,
    and writes no consolidated metadata from it."""
    env = s3_env(nginx, driver_path)
    store, folder = new_store(nginx)
    for d in (1, 2):
        p = subprocess.run(append_cmd(day_tif(tmp_path / f"d{d}.tif", d), store,
                                      "-co", "CREATE_CONSOLIDATED_METADATA=YES"),
                           env=env, capture_output=True, text=True, timeout=120)
        if (folder / "zarr.json").exists():
            root = json.loads((folder / "zarr.json").read_text())
            if "consolidated_metadata" in root:
                members = set(root["consolidated_metadata"]["metadata"])
                assert stored_nodes(folder) <= members, (d, sorted(members), p.stderr[-2000:])
        if p.returncode == 0:
            continue
        assert "listing does not show" in p.stderr and "refuse listings" in p.stderr, p.stderr
        assert d == 1  # the creation already fails
        return
    assert stored_days(str(folder)) == [1, 2]


def stored_steps(folder):
    """Per stored step: (the day its time value dates, the day its pixels are), pixels checked
    bit-exact against that day; read from nginx's folder (no cache)."""
    gdal.VSICurlClearCache()
    cube = gdal.Open(str(folder)).ReadAsArray()
    if cube.ndim == 2:
        cube = cube[None]
    md = gdal.OpenEx(str(folder), gdal.OF_MULTIDIM_RASTER)
    tv = md.GetRootGroup().OpenMDArray("time").ReadAsArray()[:cube.shape[0]]
    md = None
    steps = []
    for i in range(cube.shape[0]):
        pix = int(round(cube[i, 0, 0] / 1000))
        assert np.array_equal(cube[i], expected_day(pix)), f"step {i}: pixels of no single day"
        steps.append((next(d for d in range(1, 400) if days_of(d) == tv[i]), pix))
    return steps


ROUNDS = 6


def test_concurrent_appends_on_s3_report_only_what_is_stored(tmp_path, nginx, driver_path):  # noqa: F811
    """Issue 39.11: two appends at once into one plain store on /vsis3/ (APPEND_ORDER=ANY), in a
    loop. Without conditional writes both may write the same step and the last writer of each
    object wins; every append re-reads its step after its switch (past every cache) and reports
    success only when it is stored. Checked every round: every day reported appended is stored
    (date and pixels), no day reported failed is stored. The measured outcome is printed (README,
    'Appends on object storage')."""
    env = s3_env(nginx, driver_path)
    store, folder = new_store(nginx)
    run(append_cmd(day_tif(tmp_path / "d1.tif", 1), store), env)
    ok, failed, messages, day = {1}, set(), {}, 2
    for _ in range(ROUNDS):
        pair = (day, day + 1)
        day += 2
        procs = [subprocess.Popen(append_cmd(day_tif(tmp_path / f"d{d}.tif", d), store,
                                             "-co", "APPEND_ORDER=ANY"),
                                  env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for d in pair]
        for d, p in zip(pair, procs):
            _, err = p.communicate(timeout=120)
            (ok if p.returncode == 0 else failed).add(d)
            if p.returncode != 0:
                messages[d] = err.strip().splitlines()[-1]
        steps = stored_steps(folder)
        complete = {date for date, pix in steps if date == pix}
        assert ok <= complete, (sorted(ok), steps, messages)
        # A failed append whose pixels ended up stored says so.
        said = {d for d in failed if "this step is stored there" in messages[d]}
        assert not ((failed - said) & complete), (sorted(failed), steps, messages)
        mixed = [s for s in steps if s[0] != s[1]]
        for date, pix in mixed:  # a step of two appends: both reported failed, naming it
            assert date in failed and pix in failed, (mixed, messages)
    print(f"\n{ROUNDS} rounds of 2 concurrent appends: {len(ok) - 1} reported appended, "
          f"{len(failed)} reported failed, {len(stored_steps(folder)) - 1} steps stored, "
          f"inconsistent steps {[s for s in stored_steps(folder) if s[0] != s[1]]}; "
          f"messages: {messages}")
