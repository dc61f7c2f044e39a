"""Icechunk commits on object storage (issue 43): a repository on /vsis3/ (moto on 127.0.0.1,
moto_fixture.py; skipped without one) is created, appended to by two processes at once, and
survives a killed writer and a lost answer; a storage that ignores the conditions is refused.

The `repo` file is replaced with If-Match on the ETag read (If-None-Match: * when new), objects
named by id are written with If-None-Match: * (ConditionProxy records what GDAL sends); a failed
condition is a conflict, handled as on local folders (rebase, or the append retried on the new
tip)."""
import contextlib
import subprocess

import numpy as np
import pytest
from osgeo import gdal

from moto_fixture import ConditionProxy, moto  # noqa: F401 (moto: fixture)
from test_icechunk_write import date_of, day_tif, source_tif

gdal.UseExceptions()

S3_OPTIONS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_S3_ENDPOINT", "AWS_HTTPS",
              "AWS_VIRTUAL_HOSTING", "AWS_REGION", "CPL_VSIL_CURL_ALLOWED_EXTENSIONS")


def translate(*args, env, check=True):
    p = subprocess.run(["gdal_translate", "-q", "-of", "Zarr3", *[str(a) for a in args]], env=env,
                       capture_output=True, text=True, timeout=300)
    if check:
        assert p.returncode == 0, p.stderr
    return p


def append(tmp_path, repo, d, env, *extra, check=True):
    return translate("-co", "APPEND_DIM=time", "-co", f"APPEND_COORD={date_of(d)}", *extra,
                     day_tif(tmp_path, d), repo, env=env, check=check)


@contextlib.contextmanager
def s3_config(moto):  # noqa: F811
    """This process's GDAL configured for the server (reads through the plugin here)."""
    env = moto.env()
    old = {k: gdal.GetConfigOption(k) for k in S3_OPTIONS}
    for k in S3_OPTIONS:
        gdal.SetConfigOption(k, env[k])
    gdal.VSICurlClearCache()
    try:
        yield
    finally:
        for k, v in old.items():
            gdal.SetConfigOption(k, v)
        gdal.VSICurlClearCache()


def coordinate(moto, repo):  # noqa: F811
    with s3_config(moto):
        ds = gdal.OpenEx(repo, gdal.OF_MULTIDIM_RASTER)
        return list(ds.GetRootGroup().OpenMDArray("time").ReadAsArray())


def band_values(moto, repo):  # noqa: F811
    """The value of each band's first pixel (each day's tif holds its day number)."""
    with s3_config(moto):
        ds = gdal.Open(repo)
        return [float(ds.GetRasterBand(b).ReadAsArray()[0, 0]) for b in range(1, ds.RasterCount + 1)]


def new_series(tmp_path, moto):  # noqa: F811
    bucket = moto.make_bucket()
    repo = f"/vsis3/{bucket}/ts.icechunk"
    append(tmp_path, repo, 1, moto.env(), "-co", "ICECHUNK=YES")
    return bucket, repo


def test_translate_creates_a_repository_on_s3_with_conditional_puts(tmp_path, moto):  # noqa: F811
    bucket = moto.make_bucket()
    src = source_tif(tmp_path / "src.tif")
    repo = f"/vsis3/{bucket}/repo.icechunk"
    with ConditionProxy(moto.port) as proxy:
        translate("-co", "ICECHUNK=YES", src, repo, env=moto.env(proxy.port))
    puts = [(path.split("/repo.icechunk/", 1)[1], cond) for m, path, cond in proxy.log
            if m == "PUT" and "/repo.icechunk/" in path and ".zarr3-condition-probe" not in path]
    repo_puts = [cond for key, cond in puts if key == "repo"]
    assert repo_puts[0] == {"if-none-match": "*"}, repo_puts
    assert len(repo_puts) >= 2 and all(list(c) == ["if-match"] for c in repo_puts[1:]), repo_puts
    by_id = [(k, c) for k, c in puts if k.split("/")[0] in ("chunks", "manifests", "overwritten")
             or (k.split("/")[0] in ("snapshots", "transactions") and "1CECHNKREP0F1RSTCMT0" not in k)]
    assert {k.split("/")[0] for k, _ in by_id} >= {"chunks", "manifests", "snapshots", "transactions"}
    assert all(c == {"if-none-match": "*"} for _, c in by_id), by_id
    # Read back through the plugin: bit-exact, georeferenced.
    expected = gdal.Open(src)
    with s3_config(moto):
        ds = gdal.Open(repo)
        assert ds.RasterCount == expected.RasterCount
        assert np.array_equal(ds.ReadAsArray(), expected.ReadAsArray())
        assert ds.GetGeoTransform() == expected.GetGeoTransform()
        ds = None


def test_two_processes_appending_at_once_keep_every_day(tmp_path, moto):  # noqa: F811
    _, repo = new_series(tmp_path, moto)
    days = [1]
    for r in range(3):
        a, b = 2 + 2 * r, 3 + 2 * r
        procs = [subprocess.Popen(["gdal_translate", "-q", "-of", "Zarr3", "-co", "APPEND_DIM=time",
                                   "-co", f"APPEND_COORD={date_of(d)}", "-co", "APPEND_ORDER=ANY",
                                   str(day_tif(tmp_path, d)), repo], env=moto.env(),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for d in (a, b)]
        for p in procs:
            _, err = p.communicate(timeout=300)
            assert p.returncode == 0, err
        days += [a, b]
    coord = coordinate(moto, repo)
    assert sorted(coord) == [19722 + d for d in days]
    # Each step holds the values of its own day.
    assert band_values(moto, repo) == [c - 19722 for c in coord]


@pytest.mark.parametrize("dropped", ["If-Match", "If-None-Match"])
def test_a_storage_that_ignores_a_condition_is_refused(tmp_path, moto, dropped):  # noqa: F811
    bucket = moto.make_bucket()
    src = source_tif(tmp_path / "src.tif")
    repo = f"/vsis3/{bucket}/repo.icechunk"
    with ConditionProxy(moto.port, drop=[dropped]) as proxy:
        p = translate("-co", "ICECHUNK=YES", src, repo, env=moto.env(proxy.port), check=False)
    assert p.returncode != 0
    assert f"/vsis3/{bucket}/repo.icechunk" in p.stderr and "ignores the condition" in p.stderr, \
        p.stderr
    assert dropped in p.stderr and "nothing was written" in p.stderr, p.stderr
    assert moto.keys(bucket) == []


@pytest.mark.parametrize("step", ["icechunk-snapshot", "icechunk-repo"])
def test_a_killed_writer_leaves_the_branch_where_it_was(tmp_path, moto, step):  # noqa: F811
    _, repo = new_series(tmp_path, moto)
    p = append(tmp_path, repo, 2, moto.env(ZARR3_TEST_KILL_AT=step), check=False)
    assert p.returncode != 0
    assert coordinate(moto, repo) == [19723]
    append(tmp_path, repo, 2, moto.env())
    assert coordinate(moto, repo) == [19723, 19724]
    assert band_values(moto, repo) == [1, 2]


def test_a_lost_answer_neither_duplicates_nor_drops_the_commit(tmp_path, moto):  # noqa: F811
    bucket, repo = new_series(tmp_path, moto)
    before = [k for k in moto.keys(bucket, "ts.icechunk/snapshots/")]
    p = append(tmp_path, repo, 2, moto.env(ZARR3_TEST_LOSE_RESPONSE="repo"), check=False)
    assert p.returncode == 0, p.stderr
    assert coordinate(moto, repo) == [19723, 19724]
    assert band_values(moto, repo) == [1, 2]
    after = moto.keys(bucket, "ts.icechunk/snapshots/")
    assert len(after) == len(before) + 1, (before, after)
