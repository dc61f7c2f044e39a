"""Plain-store appends on object storage that checks conditions (issue 43): moto on 127.0.0.1
(moto_fixture.py; skipped without one, or where it ignores If-Match). Before writing any chunk an
append reserves its step: the object `<array>/.zarr3-append` (and `<coordinate>/.zarr3-append`),
created with If-None-Match: *; it then switches the coordinate's and the array's zarr.json with
If-Match on the ETag it read, and removes its reservation. A second append finding the step
reserved waits for it and appends at the next step (APPEND_ORDER=ANY; STRICT refuses an earlier
day, clearly); a reservation left by a killed writer is taken over once its step is switched
(at once) or once it stayed unchanged for ZARR3_APPEND_RESERVATION_TIMEOUT seconds.
test_object_store_append.py covers a storage without conditional writes (nginx)."""
import contextlib
import subprocess
import time

import numpy as np
from osgeo import gdal

from moto_fixture import moto  # noqa: F401 (fixture)
from test_append import DRV, KEEP, day_tif, days_of, expected_day

gdal.UseExceptions()

ROUNDS = 3


def append_cmd(src, store, *extra):
    keep = [a for k in KEEP for a in ("-co", k)]
    return ["gdal_translate", "-q", "-of", DRV, "-co", "APPEND_DIM=time", "-co", "ARRAY_NAME=cube",
            *keep, *extra, str(src), store]


def env_of(moto, driver_path, **extra):  # noqa: F811
    """The fixture's environment without CPL_VSIL_CURL_ALLOWED_EXTENSIONS: set empty, it makes
    GDAL 3.6's VSIStatL fail on every object, and gdal_translate then takes an existing store for
    a new one (the Icechunk tests read through the plugin's own HTTP requests only)."""
    env = moto.env(GDAL_DRIVER_PATH=driver_path, **extra)
    env.pop("CPL_VSIL_CURL_ALLOWED_EXTENSIONS")
    return env


def new_store(tmp_path, moto, driver_path):  # noqa: F811
    """A store on the server holding day 1: its /vsis3/ path, bucket and key prefix."""
    bucket = moto.make_bucket()
    store = f"/vsis3/{bucket}/cube.zarr"
    p = subprocess.run(append_cmd(day_tif(tmp_path / "d1.tif", 1), store),
                       env=env_of(moto, driver_path), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return store, bucket


@contextlib.contextmanager
def s3_config(moto):  # noqa: F811
    """This process's GDAL configured for the server, nothing cached."""
    env = moto.env()
    keys = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_S3_ENDPOINT", "AWS_HTTPS",
            "AWS_VIRTUAL_HOSTING", "AWS_REGION")
    old = {k: gdal.GetConfigOption(k) for k in keys}
    try:
        for k in keys:
            gdal.SetConfigOption(k, env[k])
        gdal.VSICurlClearCache()
        yield
    finally:
        for k, v in old.items():
            gdal.SetConfigOption(k, v)
        gdal.VSICurlClearCache()


def steps_of(moto, store):  # noqa: F811
    """Per stored step: (the day its time value dates, the day its pixels are, bit-exact), read
    through /vsis3/ in this process, nothing cached."""
    with s3_config(moto):
        cube = gdal.Open(f'ZARR3:"{store}":cube').ReadAsArray()
        md = gdal.OpenEx(store, gdal.OF_MULTIDIM_RASTER)
        tv = md.GetRootGroup().OpenMDArray("time").ReadAsArray()
        md = None
    if cube.ndim == 2:
        cube = cube[None]
    assert len(tv) >= cube.shape[0]
    steps = []
    for i in range(cube.shape[0]):
        pix = int(round(cube[i, 0, 0] / 1000))
        assert np.array_equal(cube[i], expected_day(pix)), f"step {i}: pixels of no single day"
        steps.append((next(d for d in range(1, 400) if days_of(d) == tv[i]), pix))
    return steps


def reservations(moto, bucket):  # noqa: F811
    return [k for k in moto.keys(bucket) if ".zarr3-append" in k]


def test_concurrent_appends_on_s3_keep_every_day(tmp_path, moto, driver_path):  # noqa: F811
    """Two processes append different days at once, ROUNDS times: every day reported appended is
    stored with its date and exact pixels, each step is one append's, no day is lost (a loser
    waits for the winner's reservation and appends at the next step), no reservation is left.
    Before reservations and conditional switches, moto 5.2 lost a day reported as appended in
    every round."""
    store, bucket = new_store(tmp_path, moto, driver_path)
    env = env_of(moto, driver_path)
    ok, failed, day = [1], {}, 2
    for r in range(ROUNDS):
        pair = (day, day + 1)
        day += 2
        procs = [subprocess.Popen(append_cmd(day_tif(tmp_path / f"d{d}.tif", d), store,
                                             "-co", "APPEND_ORDER=ANY"),
                                  env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for d in pair]
        for d, p in zip(pair, procs):
            _, err = p.communicate(timeout=300)
            if p.returncode == 0:
                ok.append(d)
            else:
                failed[d] = err.strip()
        steps = steps_of(moto, store)
        assert all(date == pix for date, pix in steps), (r, steps)
        assert sorted(date for date, _ in steps) == sorted(ok), (r, steps, ok, failed)
    assert failed == {}, failed
    assert reservations(moto, bucket) == []


def test_append_after_a_killed_writer(tmp_path, moto, driver_path):  # noqa: F811
    """A writer killed after writing its chunks (its step reserved, not switched) leaves its
    reservation; the next append waits at most ZARR3_APPEND_RESERVATION_TIMEOUT (here 3 s) for it
    to change, takes it over and appends; a reader opened before both keeps reading what it read;
    no reservation is left."""
    store, bucket = new_store(tmp_path, moto, driver_path)
    env = env_of(moto, driver_path, ZARR3_APPEND_RESERVATION_TIMEOUT="3")
    reader = steps_of(moto, store)
    with s3_config(moto):
        earlier = gdal.Open(f'ZARR3:"{store}":cube')  # opened before both appends
        before = earlier.ReadAsArray()
    p = subprocess.run(append_cmd(day_tif(tmp_path / "d2.tif", 2), store),
                       env=dict(env, ZARR3_TEST_KILL_AT="append-chunks"), capture_output=True,
                       text=True, timeout=120)
    assert p.returncode != 0
    assert reservations(moto, bucket) == ["cube.zarr/cube/.zarr3-append",
                                          "cube.zarr/time/.zarr3-append"]
    assert steps_of(moto, store) == reader == [(1, 1)]
    start = time.monotonic()
    p = subprocess.run(append_cmd(day_tif(tmp_path / "d3.tif", 3), store), env=env,
                       capture_output=True, text=True, timeout=120)
    took = time.monotonic() - start
    assert p.returncode == 0, p.stderr
    assert 3 <= took < 3 + 30, took  # waited for the bound, not beyond it
    assert steps_of(moto, store) == [(1, 1), (3, 3)]
    with s3_config(moto):
        assert np.array_equal(earlier.ReadAsArray(), before)
        assert np.array_equal(before, expected_day(1))
    earlier = None
    assert reservations(moto, bucket) == []


def test_append_after_a_writer_killed_past_its_switch(tmp_path, moto, driver_path):  # noqa: F811
    """A writer killed after its switch, before removing its reservation: its step is stored;
    the next append takes the reservation over at once (its step is switched), not after the
    bound (here 600 s)."""
    store, bucket = new_store(tmp_path, moto, driver_path)
    env = env_of(moto, driver_path, ZARR3_APPEND_RESERVATION_TIMEOUT="600")
    p = subprocess.run(append_cmd(day_tif(tmp_path / "d2.tif", 2), store),
                       env=dict(env, ZARR3_TEST_KILL_AT="append-meta"), capture_output=True,
                       text=True, timeout=120)
    assert p.returncode != 0
    assert reservations(moto, bucket) == ["cube.zarr/cube/.zarr3-append",
                                          "cube.zarr/time/.zarr3-append"]
    assert steps_of(moto, store) == [(1, 1), (2, 2)]
    start = time.monotonic()
    p = subprocess.run(append_cmd(day_tif(tmp_path / "d3.tif", 3), store), env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert time.monotonic() - start < 60
    assert steps_of(moto, store) == [(1, 1), (2, 2), (3, 3)]
    assert reservations(moto, bucket) == []


def test_a_strict_loser_fails_clearly(tmp_path, moto, driver_path):  # noqa: F811
    """APPEND_ORDER=STRICT (the default): an append that reserved after a later day was appended
    fails naming the order and writes nothing; the later day stays."""
    store, bucket = new_store(tmp_path, moto, driver_path)
    env = env_of(moto, driver_path)
    a = subprocess.Popen(append_cmd(day_tif(tmp_path / "d3.tif", 3), store),
                         env=dict(env, ZARR3_TEST_PAUSE_AT="append-switch", ZARR3_TEST_PAUSE_MS="3000"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)  # A reserved and is writing (or paused before its switch)
    b = subprocess.run(append_cmd(day_tif(tmp_path / "d2.tif", 2), store), env=env,
                       capture_output=True, text=True, timeout=120)
    _, err_a = a.communicate(timeout=120)
    assert a.returncode == 0, err_a
    if b.returncode != 0:
        assert "strictly increasing" in b.stderr, b.stderr
        assert steps_of(moto, store) == [(1, 1), (3, 3)]
    else:  # B reserved before A: A then appended day 3 after it
        assert steps_of(moto, store) == [(1, 1), (2, 2), (3, 3)]
    assert reservations(moto, bucket) == []
