#!/usr/bin/python3
"""The Icechunk rows of the benchmark suite (issue 29, "Fast"): an Icechunk
repository against the same array as a plain Zarr store, and a virtual array
against GDAL's netCDF driver reading the monthly files, locally and over HTTP
through the latency proxy (nginx + autotest/latency_proxy.py on 127.0.0.1,
--delay-ms per request).

usage: /usr/bin/python3 bench/icechunk_e2e.py --data DIR --plugin-dir BUILD
       [--reps N] [--delay-ms 50] [--json OUT]
DIR: what scripts/icechunk/make_bench_data.sh wrote (DIR/bench, DIR/fixtures).

Every measured run starts cold (GDAL's /vsicurl/ cache cleared, a new
dataset); GDAL_NUM_THREADS=2. Per run the proxy records each request's start
and end; "round trips" is the longest chain of requests each of which started
after the previous one had ended: the sequential round trips the run waited
for. Values are medians over --reps runs (after one warm-up); requests and
round trips are the same on every run unless the reader's behaviour varies.
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
S3_BUCKET = "zarr3-bench"  # write_bench.mjs: s3://zarr3-bench/<file>


def round_trips(times):
    """Longest chain of requests [start, end] in which each starts after the
    previous one ended (the number of sequential round trips)."""
    spans = sorted((s, e if e is not None else s) for s, e in times)
    depth = []
    for i, (s, _) in enumerate(spans):
        best = 0
        for j in range(i):
            if spans[j][1] <= s:
                best = max(best, depth[j])
        depth.append(best + 1)
    return max(depth, default=0)


class Runner:
    def __init__(self, gdal, proxy, reps):
        self.gdal, self.proxy, self.reps = gdal, proxy, reps

    def phases(self, open_fn, read_fn=None):
        """Median wall time, requests and round trips of open_fn() and then
        read_fn(handle) (separately), each run cold. Returns (result, last value read)."""
        runs, value = [], None
        for rep in range(self.reps + 1):
            self.gdal.VSICurlClearCache()
            one = {}
            if self.proxy:
                self.proxy.reset()
            t0 = time.perf_counter()
            handle = open_fn()
            one["open"] = self._phase(t0)
            if read_fn is not None:
                if self.proxy:
                    self.proxy.reset()
                t0 = time.perf_counter()
                value = read_fn(handle)
                one["read"] = self._phase(t0)
            del handle
            if rep:  # the first run warms up (imports, connections, page cache)
                runs.append(one)
        out = {}
        for phase in runs[0]:
            out[phase] = {k: statistics.median(r[phase][k] for r in runs)
                          for k in runs[0][phase]}
            out[phase]["all_wall"] = [r[phase]["wall"] for r in runs]
        return out, value

    def _phase(self, t0):
        wall = time.perf_counter() - t0
        if not self.proxy:
            return {"wall": wall}
        st = self.proxy.stats()
        return {"wall": wall, "requests": st["requests"], "round_trips": round_trips(st["times"]),
                "max_in_flight": st["max_in_flight"]}


def classic_open(gdal, root, opts=()):
    def fn():
        ds = gdal.OpenEx(f'ZARR3:"{root}":/t2m', gdal.OF_RASTER, open_options=list(opts))
        ds.GetRasterBand(1)
        return ds
    return fn


def multidim_open(gdal, root, array="t2m", opts=(), drivers=None):
    def fn():
        ds = gdal.OpenEx(root, gdal.OF_MULTIDIM_RASTER, open_options=list(opts),
                         allowed_drivers=list(drivers or []))
        arr = ds.GetRootGroup().OpenMDArray(array)
        if arr is None:
            raise RuntimeError(f"{root}: no array {array}")
        return ds, arr
    return fn


def classic_read(ds):
    return ds.GetRasterBand(1).ReadAsArray()


def md_read(handle):
    return handle[1].ReadAsArray()


def repo_vs_plain(run, gdal, bench_dir, base, expected):
    """Rows (a) and (b): open (classic and multidim) and full read of /t2m."""
    import numpy as np

    out = {}
    for kind, root in (("repo", f"{base}/bench.icechunk"), ("plain", f"{base}/bench.zarr")):
        r = {}
        res, a = run.phases(classic_open(gdal, root), classic_read)
        if not np.array_equal(a, expected):
            raise RuntimeError(f"{root}: values differ from t2m.f32")
        r["classic"] = res
        res, a = run.phases(multidim_open(gdal, root), md_read)
        if not np.array_equal(a, expected):
            raise RuntimeError(f"{root}: multidim values differ from t2m.f32")
        r["multidim"] = res
        out[kind] = r
    return out


def netcdf_files(gdal, paths, drivers):
    """Open (first file) and read the monthly files one by one, concatenated."""
    import numpy as np

    def open_fn():
        return [multidim_open(gdal, p, drivers=drivers)() for p in paths]

    def read_fn(handles):
        return np.concatenate([md_read(h) for h in handles])

    return open_fn, read_fn


def virtual_rows(run, gdal, data, remote_base):
    """Row (c): the virtual array against the netCDF driver, local and remote."""
    import numpy as np

    fx = os.path.join(data, "fixtures")
    nc = json.load(open(os.path.join(fx, "nc", "chunks.json")))
    files = [f["path"] for f in nc["files"]]
    expected = np.load(os.path.join(fx, "nc", "t2m_expected.npy"))
    out = {}
    cases = {"local": (os.path.join(fx, "virtual.icechunk"), files, ())}
    if remote_base:
        cases["remote"] = (f"{remote_base}/bench/virtual_s3.icechunk",
                           [f"{remote_base}/nc/{os.path.basename(p)}" for p in files],
                           (f"VIRTUAL_ALLOWED_PREFIXES=s3://{S3_BUCKET}/",))
    for where, (repo, paths, opts) in cases.items():
        r = {}
        res, a = run.phases(multidim_open(gdal, repo, opts=opts), md_read)
        if not np.array_equal(a, expected):
            raise RuntimeError(f"{repo}: virtual values differ from t2m_expected.npy")
        r["repo"] = res
        for drv in ("netCDF", "HDF5"):
            try:
                o, rd = netcdf_files(gdal, paths, [drv])
                res, a = run.phases(o, rd)
                if a.shape != expected.shape or not np.allclose(a, expected, equal_nan=True):
                    raise RuntimeError("values differ from t2m_expected.npy")
                r[drv] = res
            except Exception as e:  # the driver cannot read these (over /vsicurl/ often)
                r[drv] = {"error": (str(e).splitlines() or [repr(e)])[0][:200]}
        out[where] = r
    return out


def serve(data, delay_ms):
    sys.path.insert(0, os.path.join(HERE, "..", "autotest"))
    from latency_fixture import LatencyProxy
    from nginx_fixture import NginxServer

    server = NginxServer().start()
    try:
        os.symlink(os.path.join(data, "bench"), server.root / "bench")
        os.symlink(os.path.join(data, "fixtures", "nc"), server.root / "nc")
        os.symlink(os.path.join(data, "fixtures", "nc"), server.root / S3_BUCKET)
        proxy = LatencyProxy(server.port, delay_ms=delay_ms, max_seconds=1200).start()
    except Exception:
        server.stop()
        raise
    return server, proxy


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--plugin-dir", required=True)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--delay-ms", type=float, default=50.0)
    ap.add_argument("--json")
    args = ap.parse_args()
    data = os.path.abspath(args.data)
    os.environ["GDAL_DRIVER_PATH"] = os.path.abspath(args.plugin_dir)
    import numpy as np
    from osgeo import gdal

    gdal.UseExceptions()
    gdal.AllRegister()
    if gdal.GetDriverByName("Zarr3") is None:
        sys.exit(f"icechunk_e2e.py: the Zarr3 plugin did not load from {args.plugin_dir}")
    bench_dir = os.path.join(data, "bench")
    expected = np.fromfile(os.path.join(bench_dir, "t2m.f32"), "<f4").reshape(1024, 1024)
    res = {"gdal_version": gdal.__version__, "delay_ms": args.delay_ms, "reps": args.reps,
           "load_before": os.getloadavg()[0]}
    gdal.SetConfigOption("GDAL_NUM_THREADS", "2")
    res["local"] = repo_vs_plain(Runner(gdal, None, args.reps), gdal, bench_dir, bench_dir,
                                 expected)
    server, proxy = serve(data, args.delay_ms)
    try:
        for k, v in (("AWS_S3_ENDPOINT", f"127.0.0.1:{proxy.port}"), ("AWS_HTTPS", "NO"),
                     ("AWS_VIRTUAL_HOSTING", "FALSE"), ("AWS_NO_SIGN_REQUEST", "YES")):
            gdal.SetConfigOption(k, v)
        run = Runner(gdal, proxy, args.reps)
        res["remote"] = repo_vs_plain(run, gdal, bench_dir, f"/vsicurl/{proxy.url}/bench",
                                      expected)
        res["virtual"] = virtual_rows(run, gdal, data, f"/vsicurl/{proxy.url}")
    finally:
        proxy.stop()
        server.stop()
    res["load_after"] = os.getloadavg()[0]
    text = json.dumps(res, indent=1)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text)
    else:
        print(text)


if __name__ == "__main__":
    main()
