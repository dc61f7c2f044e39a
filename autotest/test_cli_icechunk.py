"""zarr3 tag / branch / compact on Icechunk repositories (issue 30, tool part), on copies of
data/t2m_2023q1.icechunk (written by the real Icechunk: 90 days of t2m in three monthly commits on
main, tag january, branch qc). Nothing is written into data/.

- tag/branch: a new reference to the tip of main, a branch, a tag or a snapshot id; clear errors for a
  name that exists, an unknown snapshot, a folder that is no repository and object-store paths.
- compact: one commit on the branch; the new tip reads bit-exact as before, a dataset opened on the old
  snapshot before the compaction reads it unchanged after, no object that existed is changed or removed,
  nothing but Icechunk objects is added (no switch file, lock file or stray chunk), and a killed
  compaction (every kill point) leaves the branch where it was.
"""
import os
import re
import shutil
import subprocess

import numpy as np
import pytest
from osgeo import gdal

from conftest import REPO

SAMPLE = REPO / "data" / "t2m_2023q1.icechunk"
ICECHUNK_DIRS = {"chunks", "manifests", "snapshots", "transactions", "overwritten"}


@pytest.fixture
def repo(tmp_path):
    if not SAMPLE.exists():
        pytest.fail(f"{SAMPLE} missing (scripts/icechunk/make_samples.sh writes it)")
    shutil.copytree(SAMPLE, tmp_path / "r.icechunk")
    return tmp_path / "r.icechunk"


def run(exe, *args, env=None):
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=120,
                          env=env)


def refs(exe, repo):
    """{'branches': {name: id}, 'tags': {name: id}, 'main': [(id, message), ...]}"""
    r = run(exe, "log", repo)
    assert r.returncode == 0, r.stderr
    out, part = {"branches": {}, "tags": {}, "main": []}, None
    for line in r.stdout.splitlines():
        if line in ("branches:", "tags:"):
            part = line[:-1]
        elif line.startswith("history of branch"):
            part = "main"
        elif part in ("branches", "tags") and "->" in line:
            name, sid = line.strip().split(" -> ")
            out[part][name] = sid
        elif part == "main":
            m = re.match(r"^([0-9A-Z]{20})  \S+  (?:\([^)]*\)  )?(.*)$", line)
            assert m, line
            out["main"].append((m.group(1), m.group(2)))
    return out


def read_t2m(repo, *options):
    ds = gdal.OpenEx(str(repo), gdal.OF_MULTIDIM_RASTER | gdal.OF_READONLY, open_options=list(options))
    assert ds is not None and ds.GetDriver().ShortName == "Zarr3"
    return ds.GetRootGroup().OpenMDArray("t2m").ReadAsArray()


def files(repo):
    return {str(p.relative_to(repo)): p.read_bytes() for p in repo.rglob("*") if p.is_file()}


def test_help_lists_tag_branch_and_repository_compaction(exe):
    r = run(exe, "--help")
    assert r.returncode == 0
    for text in ("zarr3 tag REPO NAME [SNAPSHOT]", "zarr3 branch REPO NAME [SNAPSHOT]",
                 "zarr3 compact REPO --array PATH", "zarr3 log REPO"):
        assert text in r.stdout, text


def test_tag_and_branch_default_to_the_tip_of_main_and_accept_names_and_ids(exe, repo):
    before = refs(exe, repo)
    tip = before["branches"]["main"]
    january = before["tags"]["january"]
    assert run(exe, "tag", repo, "v1").returncode == 0
    assert run(exe, "branch", repo, "dev").returncode == 0
    assert run(exe, "tag", repo, "qc-tip", "qc").returncode == 0          # a branch: its tip
    assert run(exe, "branch", repo, "from-jan", "january").returncode == 0  # a tag
    feb = before["main"][1][0]
    r = run(exe, "tag", repo, "feb", feb)                                   # a snapshot id
    assert r.returncode == 0 and f"tag feb -> {feb}" in r.stdout, r.stderr
    after = refs(exe, repo)
    assert after["tags"] == {"january": january, "v1": tip, "qc-tip": before["branches"]["qc"],
                             "feb": feb}
    assert after["branches"] == {**before["branches"], "dev": tip, "from-jan": january}
    # GDAL reads the new references
    assert read_t2m(repo, "TAG=feb").shape[0] == 59
    assert read_t2m(repo, "BRANCH=from-jan").shape[0] == 31


@pytest.mark.parametrize("args,message", [
    (["tag", "january"], "tag 'january' already exists"),
    (["branch", "qc"], "already exists"),
    (["tag", "x", "ZZZZZZZZZZZZZZZZZZZZ"], "ZZZZZZZZZZZZZZZZZZZZ"),
    (["branch", "x", "nope"], "'nope' is not a snapshot id"),
    (["branch", "a/b"], "not a valid branch name"),
])
def test_tag_and_branch_errors(exe, repo, args, message):
    before = files(repo)
    r = run(exe, args[0], repo, *args[1:])
    assert r.returncode == 1 and message in r.stderr, r.stderr
    assert files(repo) == before


def test_tag_refuses_object_stores_and_plain_folders(exe, tmp_path):
    r = run(exe, "tag", "/vsis3/bucket/repo", "v1")
    assert r.returncode == 1 and "local folders only" in r.stderr, r.stderr
    (tmp_path / "plain").mkdir()
    r = run(exe, "branch", tmp_path / "plain", "dev")
    assert r.returncode == 1 and "not an Icechunk repository" in r.stderr, r.stderr


def test_the_repository_status_and_feature_flags_are_honoured(exe, repo):
    """Spec 2's repo file: status ReadOnly (reason 'gc') refuses tag, branch and compact, naming
    the status; the create_tag feature flag disabled refuses tags only, naming the flag. The repo
    file is the real Icechunk's, edited by zarr3_icechunk_build."""
    from icechunk_build import edit_repo
    edit_repo(repo, "--status", "read_only", "gc")
    before = files(repo)
    for args in (["tag", "v1"], ["branch", "dev"],
                 ["compact", "--array", "t2m", "--dim", "time", "--edges", "45"]):
        r = run(exe, args[0], repo, *args[1:])
        assert r.returncode == 1 and "status is ReadOnly (gc)" in r.stderr, (args, r.stderr)
    assert files(repo) == before
    edit_repo(repo, "--status", "online")
    edit_repo(repo, "--disable-flag", 4)
    r = run(exe, "tag", repo, "v1")
    assert r.returncode == 1 and "feature flag 'create_tag'" in r.stderr, r.stderr
    assert "v1" not in refs(exe, repo)["tags"]
    r = run(exe, "branch", repo, "dev")
    assert r.returncode == 0, r.stderr
    assert "dev" in refs(exe, repo)["branches"]


def plant_link(repo, name, outside):
    """Moves the repository's folder `name` to `outside` and leaves a link to it in its place."""
    shutil.move(repo / name, outside)
    (repo / name).symlink_to(outside)
    return files(outside)


def test_tag_refuses_to_write_through_a_planted_link(exe, repo, tmp_path):
    """Issue 39, point 3: the tool's repository store has the driver's path guard."""
    outside = tmp_path / "outside"
    before_outside = plant_link(repo, "overwritten", outside)
    before = refs(exe, repo)
    repo_file = (repo / "repo").read_bytes()
    r = run(exe, "tag", repo, "v1")
    assert r.returncode == 1 and "symbolic link leading outside the store" in r.stderr, r.stderr
    assert files(outside) == before_outside
    assert (repo / "repo").read_bytes() == repo_file and refs(exe, repo) == before


def test_compact_refuses_to_write_through_a_planted_link(exe, repo, tmp_path):
    outside = tmp_path / "outside"
    before_outside = plant_link(repo, "chunks", outside)
    repo_file = (repo / "repo").read_bytes()
    r = run(exe, "compact", repo, "--array", "t2m", "--dim", "time", "--edges", "45")
    assert r.returncode == 1 and "symbolic link leading outside the store" in r.stderr, r.stderr
    assert files(outside) == before_outside
    assert (repo / "repo").read_bytes() == repo_file


def test_compact_repository_is_one_commit_and_old_snapshots_stay(exe, repo):
    before = refs(exe, repo)
    old_tip = before["branches"]["main"]
    want = read_t2m(repo)
    # a reader opened on the tip before the compaction
    reader = gdal.OpenEx(str(repo), gdal.OF_MULTIDIM_RASTER | gdal.OF_READONLY,
                         open_options=[f"SNAPSHOT={old_tip}"])
    old_objects = files(repo)
    r = run(exe, "compact", repo, "--array", "t2m", "--dim", "time", "--edges", "45",
            "--message", "two halves")
    assert r.returncode == 0, r.stderr
    assert "[31,28,31] -> 45" in r.stdout
    after = refs(exe, repo)
    assert after["main"][0][1] == "two halves" and after["main"][1][0] == old_tip
    assert len(after["main"]) == len(before["main"]) + 1
    assert after["branches"]["qc"] == before["branches"]["qc"]
    new = read_t2m(repo)
    assert np.array_equal(new.view(np.uint32), want.view(np.uint32))
    ds = gdal.OpenEx(str(repo), gdal.OF_MULTIDIM_RASTER | gdal.OF_READONLY)
    t2m = ds.GetRootGroup().OpenMDArray("t2m")
    assert t2m.GetBlockSize()[0] == 45
    # the reader of the old snapshot, and a fresh one
    got = reader.GetRootGroup().OpenMDArray("t2m").ReadAsArray()
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    ds_old = gdal.OpenEx(str(repo), gdal.OF_MULTIDIM_RASTER | gdal.OF_READONLY,
                         open_options=[f"SNAPSHOT={old_tip}"])
    assert ds_old.GetRootGroup().OpenMDArray("t2m").GetBlockSize()[0] == 31
    # nothing that existed changed (but the repo file), nothing but Icechunk objects was added
    now = files(repo)
    for name, data in old_objects.items():
        if name != "repo":
            assert now.get(name) == data, f"{name} changed or removed"
    for name in set(now) - set(old_objects):
        assert name.split("/")[0] in ICECHUNK_DIRS and "/" in name, f"stray file {name}"
        assert not name.endswith(".lock"), name
    added = {n.split("/")[0] for n in set(now) - set(old_objects)}
    assert {"chunks", "manifests", "snapshots", "transactions"} <= added


def test_compact_repository_monthly_on_a_branch(exe, repo):
    # make a daily tail first: compact to 1-day chunks on a branch, then months again
    assert run(exe, "branch", repo, "work").returncode == 0
    want = read_t2m(repo)
    r = run(exe, "compact", repo, "--array", "/t2m", "--dim", "time", "--edges", "1",
            "--branch", "work")
    assert r.returncode == 0, r.stderr
    r = run(exe, "compact", repo, "--array", "t2m", "--dim", "time", "--edges", "monthly",
            "--branch", "work")
    assert r.returncode == 0 and "-> [31,28,31]" in r.stdout, r.stdout + r.stderr
    got = read_t2m(repo, "BRANCH=work")
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    msgs = [m for _, m in refs(exe, repo)["main"]]
    assert not any(m.startswith("zarr3 compact") for m in msgs)  # main did not move


def chunk_objects(repo):
    return {p.name for p in (repo / "chunks").iterdir()}


def compacted(exe, repo, edges):
    """(written, kept) of a compaction of t2m on main, and the new chunk objects."""
    before = chunk_objects(repo)
    r = run(exe, "compact", repo, "--array", "t2m", "--dim", "time", "--edges", edges)
    assert r.returncode == 0, r.stderr
    m = re.search(r"chunks -> (\d+) \((\d+) written, (\d+) kept as stored\); commit", r.stdout)
    assert m, r.stdout
    new, written, kept = map(int, m.groups())
    assert new == written + kept
    return written, kept, chunk_objects(repo) - before


def test_compact_repository_writes_only_the_months_whose_edges_change(exe, repo):
    want = read_t2m(repo)  # [31,28,31]
    written, kept, objects = compacted(exe, repo, "[31,[1,59]]")  # January stays one chunk
    per_step = kept  # the chunks of one time chunk (January's, kept)
    assert per_step >= 1 and written == 59 * per_step and len(objects) == written
    written, kept, objects = compacted(exe, repo, "monthly")
    assert (written, kept) == (2 * per_step, per_step)  # February and March only
    assert len(objects) == written
    assert np.array_equal(read_t2m(repo).view(np.uint32), want.view(np.uint32))
    # Nothing left to do: said so, no commit, no object.
    tip, state = refs(exe, repo)["branches"]["main"], files(repo)
    r = run(exe, "compact", repo, "--array", "t2m", "--dim", "time", "--edges", "monthly")
    assert r.returncode == 0, r.stderr
    assert "already has these edges ([31,28,31]); nothing to do: no commit" in r.stdout, r.stdout
    assert refs(exe, repo)["branches"]["main"] == tip and files(repo) == state


@pytest.mark.parametrize("step", ["compact-chunks", "icechunk-chunks", "icechunk-snapshot",
                                  "icechunk-repo"])
def test_killed_compaction_leaves_the_branch(exe, repo, step):
    before = refs(exe, repo)
    want = read_t2m(repo)
    env = dict(os.environ, ZARR3_TEST_KILL_AT=step)
    r = run(exe, "compact", repo, "--array", "t2m", "--dim", "time", "--edges", "45", env=env)
    assert r.returncode == -9, (r.returncode, r.stderr)
    assert refs(exe, repo) == before
    got = read_t2m(repo)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    assert read_t2m(repo).shape == (90, 32, 64) and gdal.OpenEx(
        str(repo), gdal.OF_MULTIDIM_RASTER).GetRootGroup().OpenMDArray("t2m").GetBlockSize()[0] == 31
    r = run(exe, "compact", repo, "--array", "t2m", "--dim", "time", "--edges", "45")
    assert r.returncode == 0, r.stderr  # a later compaction works


def test_compact_options_for_repositories_only(exe, repo, tmp_path):
    r = run(exe, "compact", repo, "--dim", "time", "--edges", "45")
    assert r.returncode == 1 and "--array PATH" in r.stderr, r.stderr
    store = tmp_path / "s.zarr"
    shutil.copytree(REPO / "data" / "daily_t2m_2023.zarr", store)
    r = run(exe, "compact", store / "t2m", "--dim", "time", "--edges", "45", "--branch", "main")
    assert r.returncode == 1 and "Icechunk repositories only" in r.stderr, r.stderr
    r = run(exe, "compact", repo, "--array", "t2m", "--dim", "time", "--edges", "45",
            "--branch", "nope")
    assert r.returncode == 1 and "nope" in r.stderr, r.stderr


def test_readers_of_the_old_snapshot_during_a_compaction(exe, repo):
    """A dataset opened on the tip reads the same values while a compaction to daily chunks (360
    new chunk objects) commits, and after it."""
    tip = refs(exe, repo)["branches"]["main"]
    ds = gdal.OpenEx(str(repo), gdal.OF_MULTIDIM_RASTER | gdal.OF_READONLY,
                     open_options=[f"SNAPSHOT={tip}"])
    t2m = ds.GetRootGroup().OpenMDArray("t2m")
    want = t2m.ReadAsArray().view(np.uint32)
    p = subprocess.Popen([str(exe), "compact", str(repo), "--array", "t2m", "--dim", "time",
                          "--edges", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    reads = 0
    while p.poll() is None or reads == 0:
        fresh = gdal.OpenEx(str(repo), gdal.OF_MULTIDIM_RASTER | gdal.OF_READONLY,
                            open_options=[f"SNAPSHOT={tip}"])
        for a in (t2m, fresh.GetRootGroup().OpenMDArray("t2m")):
            assert np.array_equal(a.ReadAsArray().view(np.uint32), want)
        reads += 1
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    assert refs(exe, repo)["main"][1][0] == tip
    assert np.array_equal(t2m.ReadAsArray().view(np.uint32), want)
    assert np.array_equal(read_t2m(repo).view(np.uint32), want)


def test_compact_of_an_array_path_inside_a_repository_names_array(exe, repo):
    """Issue 40.9: `zarr3 compact repo/t2m` (an array of a repository is no folder) points to --array."""
    before = files(repo)
    r = run(exe, "compact", repo / "t2m", "--dim", "time", "--edges", "45")
    assert r.returncode != 0
    assert "no such folder" in r.stderr and "is an Icechunk repository" in r.stderr, r.stderr
    assert "--array t2m" in r.stderr and f"zarr3 compact {repo}" in r.stderr, r.stderr
    assert files(repo) == before
