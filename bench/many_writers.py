#!/usr/bin/python3
"""Issue 43 (many writers): a dask.distributed job writing disjoint windows of one array into an
Icechunk repository on an S3 server (moto on 127.0.0.1), with 1 and with 2 worker processes, against
one process writing the same array into a plain store on the same server.

The job (autotest/window_job.py, the one the tests run): the array is created (one commit), then each
window is a task that opens the repository for update, writes the window and commits (rebased over
the other workers' commits). The plain row: one process creates a plain store on the same server and
writes the whole array with one WriteArray. Each timed run starts from a new bucket and includes the
creation; the clusters are started before timing (one warm-up job each); medians over --reps runs;
every run's result is read back and compared with the source bit for bit.

    many_writers.py --plugin-dir BUILD [--size 4096] [--block 512] [--window 1024x2048] [--reps 3]
                    [--json OUT]
    many_writers.py --report OUT.json RESULTS.md   (replaces the section "Many writers")
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "autotest"))
from icechunk_report import report_or_plugin, run_and_print  # noqa: E402

TITLE = "Many writers"
S3_OPTIONS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_S3_ENDPOINT", "AWS_HTTPS",
              "AWS_VIRTUAL_HOSTING", "AWS_REGION", "GDAL_HTTP_MAX_RETRY")


def timed_plain(moto, a, src, config):
    import window_job as job

    target = f"/vsis3/{moto.make_bucket()}/plain.zarr"
    t0 = time.monotonic()
    job.create(target, a.size, a.size, a.block, config, icechunk=False)
    job.write_window(target, 0, 0, src, config)
    seconds = time.monotonic() - t0
    if job.read(target, config).tobytes() != src.tobytes():
        raise RuntimeError(f"{target}: read back differs from the source")
    return seconds


def timed_job(moto, a, src, config, client, wins):
    import window_job as job

    repo = f"/vsis3/{moto.make_bucket()}/job.icechunk"
    t0 = time.monotonic()
    job.create(repo, a.size, a.size, a.block, config)
    results = job.run_job(client, repo, src, wins, config)
    seconds = time.monotonic() - t0
    failed = {w: err for w, (_, err) in results.items() if err}
    if failed:
        raise RuntimeError(f"{repo}: windows failed: {failed}")
    if job.read(repo, config).tobytes() != src.tobytes():
        raise RuntimeError(f"{repo}: read back differs from the source")
    return seconds


def job_rows(moto, a, src, config, wins, workers):
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=None, silence_logs=50, memory_limit="2GiB")
    client = Client(cluster, timeout=60)
    try:
        client.wait_for_workers(workers, timeout=60)
        runs = [timed_job(moto, a, src, config, client, wins) for _ in range(a.reps + 1)][1:]
    finally:
        client.close(timeout=30)
        cluster.close(timeout=30)
    return statistics.median(runs)


def bench(a):
    os.environ["GDAL_DRIVER_PATH"] = a.env["GDAL_DRIVER_PATH"]  # this process and its workers
    import window_job as job
    from moto_fixture import running_moto

    wh, ww = (int(v) for v in a.window.split("x"))
    if a.size % a.block or wh % a.block or ww % a.block:
        raise ValueError("--size and both --window sides must be multiples of --block")
    src = job.source(a.size, a.size)
    wins = job.windows(a.size, a.size, wh, ww)
    with running_moto() as moto:
        config = {k: moto.env()[k] for k in S3_OPTIONS}
        res = {"size": a.size, "block": a.block, "window": a.window, "windows": len(wins),
               "reps": a.reps, "load": os.getloadavg()[0]}
        res["plain_s"] = statistics.median(
            [timed_plain(moto, a, src, config) for _ in range(a.reps + 1)][1:])
        for workers in (1, 2):
            res[f"job{workers}_s"] = job_rows(moto, a, src, config, wins, workers)
    return res


def section(res):
    lines = [f"## {TITLE}", ""]
    if not res:
        return lines + ["(not run)", ""]
    if "error" in res:
        return lines + [f"(failed: {res['error']})", ""]
    n = res["size"]
    lines += [f"A dask.distributed job of {res['windows']} disjoint {res['window']} windows of a "
              f"{n}x{n} float32 array (zstd, {res['block']}x{res['block']} chunks) into an Icechunk "
              "repository on moto (127.0.0.1), one commit per window, rebased as needed "
              "(`bench/many_writers.py`); against one process writing the same array into a plain "
              f"store on the same server. Median of {res['reps']} runs each, creation included, "
              f"read back bit-exact; load average {res['load']:.2f} at the start.", "",
              "| measure | seconds | ratio to the plain store |", "|---|---|---|",
              f"| one process, plain store | {res['plain_s']:.2f} | 1.00 |"]
    for w in (1, 2):
        s = res[f"job{w}_s"]
        lines.append(f"| job, {w} worker process{'es' if w > 1 else ''}, repository | {s:.2f} | "
                     f"{s / res['plain_s']:.2f} |")
    lines.append(f"| 2 workers / 1 worker | {res['job2_s'] / res['job1_s']:.2f} | |")
    return lines + [""]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--plugin-dir")
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--block", type=int, default=512)
    ap.add_argument("--window", default="1024x2048", help="HEIGHTxWIDTH, multiples of --block")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--report", nargs=2, metavar=("JSON", "RESULTS_MD"))
    a = ap.parse_args()
    if report_or_plugin(ap, a, section, TITLE):
        return 0
    return run_and_print(a, bench, section)


if __name__ == "__main__":
    sys.exit(main())
