"""Icechunk commits on object storage (issue 43): a repository on /vsis3/ (moto on 127.0.0.1,
moto_fixture.py) and on /vsiaz/ (Azurite on 127.0.0.1, azurite_fixture.py), each skipped without
its server, is created, appended to by two processes at once, and survives a killed writer and a
lost answer; a storage that ignores the conditions is refused.

The `repo` file is replaced with If-Match on the ETag read (If-None-Match: * when new), objects
named by id are written with If-None-Match: * (ConditionProxy records what GDAL sends); a failed
condition is a conflict, handled as on local folders (rebase, or the append retried on the new
tip)."""
import contextlib
import subprocess

import numpy as np
import pytest
from osgeo import gdal

from azurite_fixture import azurite  # noqa: F401 (fixture)
from moto_fixture import ConditionProxy, moto  # noqa: F401 (fixture)
from test_icechunk_write import date_of, day_tif, source_tif

gdal.UseExceptions()

# Per storage: its file system prefix, its server's fixture and the options GDAL needs for it.
STORAGES = {
    "s3": ("/vsis3/", "moto", ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_S3_ENDPOINT",
                               "AWS_HTTPS", "AWS_VIRTUAL_HOSTING", "AWS_REGION",
                               "CPL_VSIL_CURL_ALLOWED_EXTENSIONS")),
    "azure": ("/vsiaz/", "azurite", ("AZURE_STORAGE_CONNECTION_STRING",
                                     "CPL_VSIL_CURL_ALLOWED_EXTENSIONS")),
}


class Storage:
    """One storage's server (moto or Azurite: make_bucket, keys, env, port) and its prefix."""

    def __init__(self, prefix, server, options):
        self.prefix, self.server, self.options = prefix, server, options
        self.port = server.port

    def __getattr__(self, name):
        return getattr(self.server, name)


@pytest.fixture(params=sorted(STORAGES))
def storage(request):
    prefix, fixture, options = STORAGES[request.param]
    return Storage(prefix, request.getfixturevalue(fixture), options)


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
def storage_config(storage):
    """This process's GDAL configured for the server (reads through the plugin here)."""
    env = storage.env()
    old = {k: gdal.GetConfigOption(k) for k in storage.options}
    for k in storage.options:
        gdal.SetConfigOption(k, env[k])
    gdal.VSICurlClearCache()
    try:
        yield
    finally:
        for k, v in old.items():
            gdal.SetConfigOption(k, v)
        gdal.VSICurlClearCache()


def coordinate(storage, repo):
    with storage_config(storage):
        ds = gdal.OpenEx(repo, gdal.OF_MULTIDIM_RASTER)
        return list(ds.GetRootGroup().OpenMDArray("time").ReadAsArray())


def band_values(storage, repo):
    """The value of each band's first pixel (each day's tif holds its day number)."""
    with storage_config(storage):
        ds = gdal.Open(repo)
        return [float(ds.GetRasterBand(b).ReadAsArray()[0, 0]) for b in range(1, ds.RasterCount + 1)]


def new_series(tmp_path, storage):
    bucket = storage.make_bucket()
    repo = f"{storage.prefix}{bucket}/ts.icechunk"
    append(tmp_path, repo, 1, storage.env(), "-co", "ICECHUNK=YES")
    return bucket, repo


def test_translate_creates_a_repository_with_conditional_puts(tmp_path, storage):
    bucket = storage.make_bucket()
    src = source_tif(tmp_path / "src.tif")
    repo = f"{storage.prefix}{bucket}/repo.icechunk"
    with ConditionProxy(storage.port) as proxy:
        translate("-co", "ICECHUNK=YES", src, repo, env=storage.env(proxy.port))
    puts = [(path.split("/repo.icechunk/", 1)[1], cond) for m, path, cond in proxy.log
            if m == "PUT" and "/repo.icechunk/" in path and ".zarr3-condition-probe" not in path]
    repo_puts = [cond for key, cond in puts if key == "repo"]
    assert repo_puts[0] == {"if-none-match": "*"}, repo_puts
    assert len(repo_puts) >= 2 and all(list(c) == ["if-match"] for c in repo_puts[1:]), repo_puts
    by_id = [(k, c) for k, c in puts if k.split("/")[0] in ("chunks", "manifests", "overwritten")
             or (k.split("/")[0] in ("snapshots", "transactions") and "1CECHNKREP0F1RSTCMT0" not in k)]
    assert {k.split("/")[0] for k, _ in by_id} >= {"chunks", "manifests", "snapshots", "transactions"}
    assert all(c == {"if-none-match": "*"} for _, c in by_id), by_id
    # Nothing was deleted on the way (GDAL's /vsiaz/ PUT answers a 409, which is how Azure refuses
    # If-None-Match: *, by deleting the blob and sending it again: the plugin does not use it).
    deletes = [path for m, path, _ in proxy.log if m == "DELETE" and ".zarr3-condition-probe" not in path]
    assert deletes == [], deletes
    # Read back through the plugin: bit-exact, georeferenced.
    expected = gdal.Open(src)
    with storage_config(storage):
        ds = gdal.Open(repo)
        assert ds.RasterCount == expected.RasterCount
        assert np.array_equal(ds.ReadAsArray(), expected.ReadAsArray())
        assert ds.GetGeoTransform() == expected.GetGeoTransform()
        ds = None


def test_two_processes_appending_at_once_keep_every_day(tmp_path, storage):
    _, repo = new_series(tmp_path, storage)
    days = [1]
    for r in range(3):
        a, b = 2 + 2 * r, 3 + 2 * r
        procs = [subprocess.Popen(["gdal_translate", "-q", "-of", "Zarr3", "-co", "APPEND_DIM=time",
                                   "-co", f"APPEND_COORD={date_of(d)}", "-co", "APPEND_ORDER=ANY",
                                   str(day_tif(tmp_path, d)), repo], env=storage.env(),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for d in (a, b)]
        for p in procs:
            _, err = p.communicate(timeout=300)
            assert p.returncode == 0, err
        days += [a, b]
    coord = coordinate(storage, repo)
    assert sorted(coord) == [19722 + d for d in days]
    # Each step holds the values of its own day.
    assert band_values(storage, repo) == [c - 19722 for c in coord]


@pytest.mark.parametrize("dropped", ["If-Match", "If-None-Match"])
def test_a_storage_that_ignores_a_condition_is_refused(tmp_path, storage, dropped):
    bucket = storage.make_bucket()
    src = source_tif(tmp_path / "src.tif")
    repo = f"{storage.prefix}{bucket}/repo.icechunk"
    with ConditionProxy(storage.port, drop=[dropped]) as proxy:
        p = translate("-co", "ICECHUNK=YES", src, repo, env=storage.env(proxy.port), check=False)
    assert p.returncode != 0
    assert f"{storage.prefix}{bucket}/repo.icechunk" in p.stderr, p.stderr
    assert "ignores the condition" in p.stderr, p.stderr
    assert dropped in p.stderr and "nothing was written" in p.stderr, p.stderr
    assert storage.keys(bucket) == []


@pytest.mark.parametrize("step", ["icechunk-snapshot", "icechunk-repo"])
def test_a_killed_writer_leaves_the_branch_where_it_was(tmp_path, storage, step):
    _, repo = new_series(tmp_path, storage)
    p = append(tmp_path, repo, 2, storage.env(ZARR3_TEST_KILL_AT=step), check=False)
    assert p.returncode != 0
    assert coordinate(storage, repo) == [19723]
    append(tmp_path, repo, 2, storage.env())
    assert coordinate(storage, repo) == [19723, 19724]
    assert band_values(storage, repo) == [1, 2]


def test_a_lost_answer_neither_duplicates_nor_drops_the_commit(tmp_path, storage):
    bucket, repo = new_series(tmp_path, storage)
    before = [k for k in storage.keys(bucket, "ts.icechunk/snapshots/")]
    p = append(tmp_path, repo, 2, storage.env(ZARR3_TEST_LOSE_RESPONSE="repo"), check=False)
    assert p.returncode == 0, p.stderr
    assert coordinate(storage, repo) == [19723, 19724]
    assert band_values(storage, repo) == [1, 2]
    after = storage.keys(bucket, "ts.icechunk/snapshots/")
    assert len(after) == len(before) + 1, (before, after)
