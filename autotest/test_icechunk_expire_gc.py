"""zarr3 expire / zarr3 gc on Icechunk repositories (issue 43, history that can be expired), on copies
of data/t2m_2023q1.icechunk (written by the real Icechunk: main January/February/March, tag january,
branch qc) with three compactions of t2m on main on top (daily, 45-day, monthly chunks: garbage once
expired). Nothing is written into data/.

- expire + gc shrink the repository (bytes printed) while every branch tip and every tag reads
  bit-exact through the plugin (every array of the root group);
- the default grace period (1 day) keeps the objects written in the last day;
- killed at every step (ZARR3_TEST_KILL_AT), the repository still reads exact, a writer meanwhile gets
  the ReadOnly status as a clear error, and a rerun takes over and finishes;
- a writer and a reader opened before: the writer is refused while the status is ReadOnly and writes
  after; the reader of the tip reads the same, the reader of an expired snapshot gets an error, not fill;
- a full disk and a read-only file system: an error naming the OS error, not a byte changed;
- hostile links: a link planted in chunks/ is left alone (its target too); a chunks/ folder that is a
  link is refused before anything is deleted.
"""
import os
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from osgeo import gdal

from conftest import REPO
from test_store_safety import Tmpfs, fill_disk

gdal.UseExceptions()

SAMPLE = REPO / "data" / "t2m_2023q1.icechunk"
VERSIONS = (("main", "BRANCH=main"), ("qc", "BRANCH=qc"), ("january", "TAG=january"))
TWO_DAYS_AGO = time.time() - 2 * 86400


def run(exe, *args, env=None):
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=300,
                          env=env)


def ok(exe, *args):
    r = run(exe, *args)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r.stdout


def make_history(exe, dst):
    """The sample with every file two days old, then three compactions of t2m on main (new now)."""
    if not SAMPLE.exists():
        pytest.fail(f"{SAMPLE} missing (scripts/icechunk/make_samples.sh writes it)")
    shutil.copytree(SAMPLE, dst)
    for p in dst.rglob("*"):
        os.utime(p, (TWO_DAYS_AGO, TWO_DAYS_AGO), follow_symlinks=False)
    for edges in ("1", "45", "monthly"):
        ok(exe, "compact", dst, "--array", "t2m", "--dim", "time", "--edges", edges)
    return dst


@pytest.fixture
def repo(exe, tmp_path):
    return make_history(exe, tmp_path / "r.icechunk")


def read_version(repo, option):
    """{array name: uint bits} of every array of the root group of one version."""
    ds = gdal.OpenEx(str(repo), gdal.OF_MULTIDIM_RASTER | gdal.OF_READONLY, open_options=[option])
    root = ds.GetRootGroup()
    out = {}
    for name in root.GetMDArrayNames():
        a = root.OpenMDArray(name).ReadAsArray()
        out[name] = np.asarray(a).tobytes()
    assert "t2m" in out
    return out


def read_all(repo):
    return {name: read_version(repo, opt) for name, opt in VERSIONS}


def size_of(repo):
    return sum(p.stat().st_size for p in repo.rglob("*") if p.is_file() and not p.is_symlink())


def objects(repo):
    return {str(p.relative_to(repo)) for p in repo.rglob("*") if p.is_file()}


def history(exe, repo, branch="main"):
    out = ok(exe, "log", repo, "--branch", branch)
    part = out.split("(newest first):\n", 1)[1]
    return [line.split()[0] for line in part.splitlines() if line.strip()]


def expire_gc(exe, repo, grace="0"):
    e = ok(exe, "expire", repo, "--older-than", "2100-01-01")
    g = ok(exe, "gc", repo, "--grace", grace)
    return e, g


def test_expire_and_gc_shrink_the_repository_and_keep_tips_and_tags_bit_exact(exe, repo):
    want = read_all(repo)
    assert len(history(exe, repo)) == 7  # init, Jan, Feb, Mar, 3 compactions
    before = size_of(repo)
    e, g = expire_gc(exe, repo)
    after = size_of(repo)
    print(f"repository bytes: {before} before expire+gc, {after} after")
    assert "expired 4 snapshot(s)" in e, e  # Feb, Mar and the first two compactions
    assert "deleted " in g and "objects " in g, g
    assert after < before * 0.75, (before, after)
    assert read_all(repo) == want
    assert len(history(exe, repo)) == 2  # the tip, re-parented to the initial snapshot
    assert len(history(exe, repo, "qc")) >= 2
    r = run(exe, "verify", repo)
    assert r.returncode == 0, r.stderr
    # A second pass finds nothing more.
    e, g = expire_gc(exe, repo)
    assert "expired 0 snapshot(s)" in e and "deleted 0 object(s)" in g, (e, g)
    assert size_of(repo) <= after + 8192  # only the repo file's backups (overwritten/) grow


def test_the_default_grace_period_keeps_the_objects_of_the_last_day(exe, repo):
    want = read_all(repo)
    young = {p for p in objects(repo) if (repo / p).stat().st_mtime > time.time() - 3600}
    ok(exe, "expire", repo, "--older-than", "2100-01-01")
    out = ok(exe, "gc", repo)
    assert "grace period (86400 s) kept" in out, out
    kept = int(out.split("; ")[1].split(" unreferenced")[0])
    assert kept > 0, out
    assert young <= objects(repo)  # nothing written in the last hour was deleted
    assert read_all(repo) == want
    out = ok(exe, "gc", repo, "--grace", "0")
    assert f"deleted {kept} object(s)" in out, out
    assert read_all(repo) == want


STEPS = [("expire", "icechunk-repo"), ("expire", "maintenance-readonly"),
         ("expire", "expire-edited"), ("gc", "maintenance-readonly"), ("gc", "gc-marked"),
         ("gc", "gc-deleting")]


@pytest.mark.parametrize("verb,step", STEPS)
def test_killed_maintenance_reads_exact_refuses_writers_and_a_rerun_finishes(exe, repo, verb,
                                                                             step):
    want = read_all(repo)
    if verb == "gc":
        ok(exe, "expire", repo, "--older-than", "2100-01-01")
    args = ["expire", repo, "--older-than", "2100-01-01"] if verb == "expire" else \
        ["gc", repo, "--grace", "0"]
    r = run(exe, *args, env=dict(os.environ, ZARR3_TEST_KILL_AT=step))
    assert r.returncode == -9, (r.returncode, r.stdout, r.stderr)
    assert read_all(repo) == want
    r = run(exe, "tag", repo, "during")
    if step == "icechunk-repo":  # killed before the status was replaced: still Online
        assert r.returncode == 0, r.stderr
    else:
        assert r.returncode == 1 and "ReadOnly" in r.stderr, r.stderr
        assert "gdal-zarr3 maintenance: " + verb in r.stderr, r.stderr
    e, g = expire_gc(exe, repo)
    if step != "icechunk-repo":
        assert "took over the ReadOnly status" in e, e
    assert read_all(repo) == want
    ok(exe, "tag", repo, "after")  # Online again
    assert run(exe, "verify", repo).returncode == 0


def test_a_writer_during_maintenance_is_refused_and_an_earlier_reader(exe, repo):
    """A killed gc leaves the repository ReadOnly: a GDAL write (an update of band 1 through the
    classic view) is refused at its open naming the status and changes nothing; readers opened
    before expire+gc: the tip's reads the same, the expired snapshot's fails (no fill values)."""
    want = read_all(repo)
    old = history(exe, repo)[1]  # the second compaction: expired below
    tip_ds = gdal.OpenEx(str(repo), gdal.OF_MULTIDIM_RASTER | gdal.OF_READONLY)
    old_ds = gdal.OpenEx(str(repo), gdal.OF_MULTIDIM_RASTER | gdal.OF_READONLY,
                         open_options=[f"SNAPSHOT={old}"])
    r = run(exe, "gc", repo, "--grace", "0", env=dict(os.environ, ZARR3_TEST_KILL_AT="gc-marked"))
    assert r.returncode == -9
    with pytest.raises(RuntimeError) as e:  # refused at open, before anything is written
        gdal.OpenEx(f'ZARR3:"{repo}":/t2m', gdal.OF_RASTER | gdal.OF_UPDATE)
    assert "ReadOnly" in str(e.value) and "gdal-zarr3 maintenance: gc" in str(e.value), str(e.value)
    assert read_all(repo) == want
    expire_gc(exe, repo)
    t2m = tip_ds.GetRootGroup().OpenMDArray("t2m").ReadAsArray()
    assert t2m.tobytes() == want["main"]["t2m"]
    with pytest.raises(RuntimeError) as e:
        old_ds.GetRootGroup().OpenMDArray("t2m").ReadAsArray()
    assert str(repo) in str(e.value), str(e.value)
    ds = gdal.OpenEx(f'ZARR3:"{repo}":/t2m', gdal.OF_RASTER | gdal.OF_UPDATE)
    band = ds.GetRasterBand(1)
    band.WriteArray(band.ReadAsArray() + 1)
    ds = None  # Online again: the write commits
    assert read_version(repo, "BRANCH=main")["t2m"] != want["main"]["t2m"]


@pytest.fixture
def small_disk(tmp_path):
    with Tmpfs(tmp_path / "disk", "4m") as disk:
        yield disk


def file_bytes(repo):
    return {str(p.relative_to(repo)): p.read_bytes() for p in repo.rglob("*") if p.is_file()}


@pytest.mark.parametrize("fault", ["full", "read-only"])
def test_a_full_or_read_only_disk_changes_nothing(exe, small_disk, tmp_path, fault):
    src = make_history(exe, tmp_path / "src.icechunk")
    repo = Path(shutil.copytree(src, os.path.join(small_disk.path, "r.icechunk")))
    want, state = read_all(repo), file_bytes(repo)
    if fault == "full":
        fill_disk(small_disk.path)
    else:
        small_disk.remount_ro()
    message = "No space left on device" if fault == "full" else "Read-only file system"
    for args in (["expire", repo, "--older-than", "2100-01-01"], ["gc", repo, "--grace", "0"]):
        r = run(exe, *args)
        assert r.returncode == 1 and message in r.stderr, r.stderr
        assert str(repo) in r.stderr, r.stderr
    assert file_bytes(repo) == state
    assert read_all(repo) == want


def test_links_in_the_repository_never_lead_gc_outside(exe, repo, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim"
    victim.write_bytes(b"keep me")
    planted = repo / "chunks" / "00000000000000000000"
    planted.symlink_to(victim)
    ok(exe, "expire", repo, "--older-than", "2100-01-01")
    out = ok(exe, "gc", repo, "--grace", "0")
    assert "chunks/00000000000000000000: not a regular file" in out, out
    assert victim.read_bytes() == b"keep me" and planted.is_symlink()
    planted.unlink()
    # chunks/ itself a link to a folder outside: refused, nothing there deleted.
    shutil.move(repo / "chunks", outside / "chunks")
    (repo / "chunks").symlink_to(outside / "chunks")
    (outside / "chunks" / "00000000000000000000").write_bytes(b"x")
    before = sorted(os.listdir(outside / "chunks"))
    r = run(exe, "gc", repo, "--grace", "0")
    assert r.returncode == 1 and "chunks: not a folder" in r.stderr, r.stderr
    assert sorted(os.listdir(outside / "chunks")) == before
    ok(exe, "tag", repo, "online")  # the failed gc set the status back


def test_expire_and_gc_arguments(exe, repo, tmp_path):
    r = run(exe, "expire", repo)
    assert r.returncode == 1 and "--older-than" in r.stderr, r.stderr
    r = run(exe, "expire", repo, "--older-than", "yesterday")
    assert r.returncode == 1 and "yesterday" in r.stderr, r.stderr
    r = run(exe, "gc", repo, "--grace", "-1")
    assert r.returncode == 1 and "--grace -1" in r.stderr, r.stderr
    r = run(exe, "gc", tmp_path)
    assert r.returncode == 1 and "not an Icechunk repository" in r.stderr, r.stderr
    r = run(exe, "gc", "/vsis3/bucket/repo")
    assert r.returncode == 1 and "local folders only" in r.stderr, r.stderr
    assert "zarr3 expire REPO --older-than DATE" in ok(exe, "--help")
