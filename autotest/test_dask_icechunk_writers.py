"""Many writers (issue 43): a dask.distributed cluster of two worker processes (127.0.0.1 only,
bounded, stopped by the test) writes disjoint windows of one array into an Icechunk repository on an
S3 server (moto on 127.0.0.1, moto_fixture.py; skipped without one), each worker through GDAL
(window_job.py): every task opens the repository for update, writes its window and closes, which
commits; a commit that finds the branch moved is rebased over the other workers' commits. The result
equals the source bit for bit, the history has one commit per window, and a worker lost mid-window
leaves the branch at the last commit (none of its rows visible).

Skipped when distributed is not installed (scripts/install-apps.sh installs it) and under the ASan
preload (worker processes; the plugin's commits are checked under ASan by the other suites).
"""
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

BUILD = Path(os.environ.setdefault("GDAL_DRIVER_PATH", str(Path(__file__).resolve().parent.parent / "build")))

distributed = pytest.importorskip("distributed")
if "asan" in os.environ.get("LD_PRELOAD", ""):
    pytest.skip("dask workers are not run under the ASan preload", allow_module_level=True)

import window_job as job  # noqa: E402
from moto_fixture import moto  # noqa: E402,F401 (fixture)

H, W, BLOCK = 512, 512, 128
WIN_H, WIN_W = 128, 256  # 8 windows of two chunks each
S3_OPTIONS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_S3_ENDPOINT", "AWS_HTTPS",
              "AWS_VIRTUAL_HOSTING", "AWS_REGION", "GDAL_HTTP_MAX_RETRY")


@pytest.fixture(scope="module")
def client():
    import dask
    from distributed import Client, LocalCluster

    # A worker that dies fails its task at once (KilledWorker) instead of running it again.
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                               dashboard_address=None, silence_logs=50, memory_limit="1GiB")
    c = Client(cluster, timeout=60)
    try:
        c.wait_for_workers(2, timeout=60)
        yield c
    finally:
        c.close(timeout=30)
        cluster.close(timeout=30)


def new_repo(moto):  # noqa: F811
    bucket = moto.make_bucket()
    repo = f"/vsis3/{bucket}/job.icechunk"
    config = {k: moto.env()[k] for k in S3_OPTIONS}
    job.create(repo, H, W, BLOCK, config)
    return bucket, repo, config


def history(moto, bucket, tmp_path):  # noqa: F811
    """The messages of main's history, newest first (`zarr3 log` on a copy of the repository)."""
    dest = tmp_path / f"{bucket}.icechunk"
    job.download_history(f"/vsis3/{bucket}/job.icechunk", dest, {k: moto.env()[k] for k in S3_OPTIONS})
    p = subprocess.run([str(BUILD / "zarr3"), "log", str(dest)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.split("history of branch main (newest first):\n", 1)[1].splitlines()
    return [line.split("  ")[-1] for line in lines if line.strip()]


def messages(src, wins):
    return {job.window_message(x, y, src[y:y + h, x:x + w]) for x, y, w, h in wins}


def test_two_workers_write_disjoint_windows_into_one_repository_on_s3(moto, client, tmp_path):  # noqa: F811
    bucket, repo, config = new_repo(moto)
    src = job.source(H, W)
    wins = job.windows(H, W, WIN_H, WIN_W)
    assert len(wins) == 8
    results = job.run_job(client, repo, src, wins, config)
    assert all(err is None for _, err in results.values()), results
    # Both worker processes wrote windows (and none is this process).
    pids = {pid for pid, _ in results.values()}
    assert len(pids) == 2 and os.getpid() not in pids, pids
    got = job.read(repo, config)
    assert got.dtype == np.float32 and got.tobytes() == src.tobytes()
    # One commit per window, on top of the create: nothing dropped by the rebases.
    h = history(moto, bucket, tmp_path)
    assert len(h) == 10, h
    assert set(h[:8]) == messages(src, wins), h
    assert h[8:] == [f"job: create {H}x{W}", "Repository initialized"], h


def test_a_worker_lost_mid_window_leaves_the_branch_at_a_valid_snapshot(moto, client, tmp_path):  # noqa: F811
    bucket, repo, config = new_repo(moto)
    src = job.source(H, W, seed=7)
    wins = job.windows(H, W, WIN_H, WIN_W)
    lost = wins[3]
    results = job.run_job(client, repo, src, wins, config, die=lost)
    assert "KilledWorker" in results[lost][1], results
    # Each window is either all the source's or all nodata: no partial window is committed. The
    # scheduler may also report as failed a window the lost worker had committed just before (its
    # answer died with it): the history, not the scheduler, says which windows landed.
    got = job.read(repo, config)
    done = []
    for x, y, w, h in wins:
        part = got[y:y + h, x:x + w]
        if part.tobytes() == src[y:y + h, x:x + w].tobytes():
            done.append((x, y, w, h))
        else:
            assert (part == job.NODATA).all(), (x, y)
    assert lost not in done and len(done) >= 4, done
    hist = history(moto, bucket, tmp_path)
    assert set(hist[:len(done)]) == messages(src, done) and len(hist) == len(done) + 2, hist
    # The lost worker flushed chunk objects of its first rows; no commit references them.
    assert len(moto.keys(bucket, "job.icechunk/chunks/")) >= 2 * len(done) + 1
    # Run the windows the history lacks again: the whole array, one commit per window.
    client.wait_for_workers(2, timeout=60)
    again = job.run_job(client, repo, src, [w for w in wins if w not in done], config)
    assert all(err is None for _, err in again.values()), again
    assert job.read(repo, config).tobytes() == src.tobytes()
    hist = history(moto, bucket, tmp_path / "again")
    assert len(hist) == 10 and set(hist[:8]) == messages(src, wins), hist


def test_windows_sharing_a_chunk_conflict_and_the_later_commit_is_refused(moto, tmp_path):  # noqa: F811
    from osgeo import gdal

    bucket, repo, config = new_repo(moto)
    src = job.source(H, W, seed=11)
    with job._Config(config):
        opened = [gdal.OpenEx(repo, gdal.OF_RASTER | gdal.OF_UPDATE, open_options=[f"COMMIT_MESSAGE={m}"])
                  for m in ("first", "second")]
        opened[0].GetRasterBand(1).WriteArray(src[0:128, 0:256], 0, 0)
        opened[1].GetRasterBand(1).WriteArray(src[64:192, 0:256], 0, 64)  # half in the same chunks
        first, second = [opened.pop(0)], [opened.pop(0)]
        job._close(first, "first")
        with pytest.raises(RuntimeError) as e:
            job._close(second, "second")
    assert repo in str(e.value) and "conflict" in str(e.value) and "chunk (0,0)" in str(e.value), e.value
    got = job.read(repo, config)
    assert got[0:128, 0:256].tobytes() == src[0:128, 0:256].tobytes()
    assert (got[128:, :] == job.NODATA).all() and (got[:, 256:] == job.NODATA).all()
    assert history(moto, bucket, tmp_path) == ["first", f"job: create {H}x{W}", "Repository initialized"]
