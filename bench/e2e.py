#!/usr/bin/python3
"""End-to-end GDAL benchmarks of the Zarr3 plugin over data from zarr3_bench_gen.

usage: /usr/bin/python3 bench/e2e.py --data DIR --plugin-dir BUILD [--reps N] [--json OUT]
       [--peer-writes]  (only the writes, beside GDAL's built-in Zarr driver)

--only-latency runs just the reads through the latency proxy (rows 11).
Times only the GDAL calls (time.perf_counter around the read, which includes
the numpy allocation of ReadAsArray), median of --reps runs after one warm-up,
with GDAL_NUM_THREADS = 1 and 2. Process CPU time (time.process_time) is
recorded too. Peak memory of a full read runs in a child process
(--rss-child) so that earlier reads do not raise the high-water mark.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ARRAYS = ["regular_zstd", "rect_zstd", "sharded_zstd", "regular_gzip", "regular_blosc"]
N = 4096


def setup_gdal(plugin_dir):
    os.environ["GDAL_DRIVER_PATH"] = os.path.abspath(plugin_dir)
    from osgeo import gdal

    gdal.UseExceptions()
    gdal.AllRegister()
    if gdal.GetDriverByName("Zarr3") is None:
        sys.exit(f"e2e.py: the Zarr3 plugin did not load from {plugin_dir}")
    return gdal


def open_reader(gdal, root, name, mode):
    """Returns (read(buf=None) -> ndarray, keepalive) for the whole array."""
    if mode == "classic":
        ds = gdal.Open(f'ZARR3:"{root}":/{name}')
        band = ds.GetRasterBand(1)

        def read(buf=None):
            return band.ReadAsArray(buf_obj=buf)

        return read, ds
    ds = gdal.OpenEx(root, gdal.OF_MULTIDIM_RASTER)
    arr = ds.GetRootGroup().OpenMDArray(name)

    def read(buf=None):
        return arr.ReadAsArray(buf_obj=buf)

    return read, (ds, arr)


def pick_mode(gdal, root):
    """'classic' when classic raster access to an array works, else 'multidim'."""
    try:
        read, keep = open_reader(gdal, root, "regular_zstd", "classic")
        a = read()
        if a is not None and a.shape == (N, N):
            return "classic"
    except Exception:
        pass
    return "multidim"


def timed(fn, reps, setup=None):
    """Median wall and cpu time of fn(); setup() runs before each call, untimed."""
    if setup:
        setup()
    fn()  # warm-up (opens files, fills caches)
    wall, cpu = [], []
    for _ in range(reps):
        if setup:
            setup()
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        t1, c1 = time.perf_counter(), time.process_time()
        wall.append(t1 - t0)
        cpu.append(c1 - c0)
    return {"wall": statistics.median(wall), "cpu": statistics.median(cpu), "all_wall": wall}


def read_benchmarks(gdal, root, mode, reps):
    import numpy as np

    out = {}
    for threads in (1, 2):
        gdal.SetConfigOption("GDAL_NUM_THREADS", str(threads))
        for name in ARRAYS:
            read, keep = open_reader(gdal, root, name, mode)
            ref = read()
            if ref.shape != (N, N) or ref.dtype != np.float32:
                raise RuntimeError(f"{name}: unexpected result {ref.shape} {ref.dtype}")
            r = timed(read, reps)
            buf = np.empty((N, N), np.float32)
            r["reused_buffer"] = timed(lambda: read(buf), reps)
            out[f"{name}/{threads}"] = r
            del keep
    gdal.SetConfigOption("GDAL_NUM_THREADS", None)
    return out


def check_values(gdal, root, mode, data):
    import numpy as np

    raw = np.fromfile(os.path.join(data, "raw.f32"), dtype="<f4").reshape(N, N)
    for name in ARRAYS:
        read, keep = open_reader(gdal, root, name, mode)
        if not np.array_equal(read(), raw):
            raise RuntimeError(f"{name}: values read through GDAL differ from raw.f32")


WRITE_OPTIONS = {
    # The plugin: regular 256x256 chunks, and 1024x1024 shards of 256x256 chunks.
    "regular": ("Zarr3", ["BLOCKSIZE=256,256", "COMPRESS=ZSTD", "ZSTD_LEVEL=3"]),
    "sharded": ("Zarr3", ["BLOCKSIZE=1024,1024", "SHARD_CHUNK_SHAPE=256,256", "COMPRESS=ZSTD",
                          "ZSTD_LEVEL=3"]),
    # GDAL's built-in Zarr driver (the peer), Zarr v3, the same chunks and codec.
    "builtin": ("Zarr", ["FORMAT=ZARR_V3", "BLOCKSIZE=256,256", "COMPRESS=ZSTD", "ZSTD_LEVEL=3"]),
}


def write_benchmarks(gdal, data, reps, kinds):
    """gdal_translate of an in-memory (MEM) source into a new store, per kind
    and thread count. The kinds run in turn within each repetition (A B C A B
    C ...), so that a machine that slows down or speeds up during the run
    moves all of them alike and their ratios stay fair. Every run writes a
    new folder and none is removed before the end: on ext4 without a journal
    (this machine's disk) creating a file right after thousands were deleted
    scans every inode freed in the last 30 s (recently_deleted), which made
    file creation, not the drivers, the larger part of a write and its
    cost depend on what the runs before had deleted."""
    import numpy as np

    raw = np.fromfile(os.path.join(data, "raw.f32"), dtype="<f4").reshape(N, N)
    src = gdal.GetDriverByName("MEM").Create("", N, N, 1, gdal.GDT_Float32)
    src.GetRasterBand(1).WriteArray(raw)
    out = {}
    root = os.path.join(data, "e2e_writes")
    try:
        for threads in (1, 2):
            gdal.SetConfigOption("GDAL_NUM_THREADS", str(threads))
            try:
                times = {k: ([], []) for k in kinds}
                last = {}
                for rep in range(reps + 1):  # the first round warms up, untimed
                    for k in kinds:
                        last[k] = os.path.join(root, f"{k}_{threads}_{rep}.zarr")
                        c0, t0 = time.process_time(), time.perf_counter()
                        write_one(gdal, src, k, last[k])
                        t1, c1 = time.perf_counter(), time.process_time()
                        if rep:
                            times[k][0].append(t1 - t0)
                            times[k][1].append(c1 - c0)
                for k in kinds:
                    wall, cpu = times[k]
                    out[f"{k}/{threads}"] = {"wall": statistics.median(wall),
                                             "cpu": statistics.median(cpu), "all_wall": wall,
                                             "roundtrip_ok": check_written(gdal, k, last[k], raw)}
            except Exception as e:  # write path missing or failing: reported, not fatal
                for k in kinds:
                    out.setdefault(f"{k}/{threads}",
                                   {"error": str(e).splitlines()[0] if str(e) else repr(e)})
            finally:
                gdal.SetConfigOption("GDAL_NUM_THREADS", None)
    finally:
        subprocess.run(["rm", "-rf", root], check=False)
    return out


def write_one(gdal, src, kind, out_dir):
    driver, opts = WRITE_OPTIONS[kind]
    ds = gdal.Translate(out_dir, src, format=driver, creationOptions=opts)
    if ds is None:
        raise RuntimeError(f"gdal.Translate to {kind} returned None")
    ds = None


def check_written(gdal, kind, out_dir, raw):
    import numpy as np

    got = gdal.Open(out_dir if kind != "builtin" else f'ZARR:"{out_dir}"').ReadAsArray()
    return bool(np.array_equal(got, raw))


def zoom_benchmarks(gdal, root, reps):
    """A 512x512 view of the whole 4096x4096 array against a full read, 1 thread."""
    out = {}
    gdal.SetConfigOption("GDAL_NUM_THREADS", "1")
    for name in ("regular_zstd", "sharded_zstd", "rect_zstd"):
        ds = gdal.Open(f'ZARR3:"{root}":/{name}')
        band = ds.GetRasterBand(1)
        out[name] = {"full": timed(lambda: band.ReadAsArray(), reps),
                     "zoom": timed(lambda: band.ReadAsArray(buf_xsize=512, buf_ysize=512), reps)}
        ds = None
    gdal.SetConfigOption("GDAL_NUM_THREADS", None)
    return out


LATENCY_CASES = {
    # key: (array, window (x, y, w, h) or None for the whole array)
    "full_regular_256_chunks": ("regular_zstd", None),
    "full_sharded_16_shards": ("sharded_zstd", None),
    "window_2048_over_4_shards": ("sharded_zstd", (1024, 1024, 2048, 2048)),
}


def latency_benchmarks(gdal, root, reps, delay_ms=50):
    """Reads over HTTP through a proxy that delays each request by delay_ms
    (nginx + autotest/latency_proxy.py on 127.0.0.1) against the same reads of
    the local files, GDAL_NUM_THREADS=2: round trips spent beyond a local read
    = (time over the proxy - local time) / delay."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "autotest"))
    from latency_fixture import LatencyProxy
    from nginx_fixture import NginxServer

    server, proxy = NginxServer(), None
    out = {"delay_ms": delay_ms}
    gdal.SetConfigOption("GDAL_NUM_THREADS", "2")
    try:
        server.start()
        os.symlink(os.path.abspath(root), server.root / "bench.zarr")
        proxy = LatencyProxy(server.port, delay_ms=delay_ms, max_seconds=900).start()
        remote = f"/vsicurl/{proxy.url}/bench.zarr"
        for key, (name, win) in LATENCY_CASES.items():
            r = {}
            for where, base in (("local", root), ("remote", remote)):
                ds = gdal.Open(f'ZARR3:"{base}":/{name}')
                band = ds.GetRasterBand(1)
                r[where] = timed(lambda b=band, w=win: b.ReadAsArray(*(w or ())), reps)
                ds = None
            proxy.reset()
            ds = gdal.Open(f'ZARR3:"{remote}":/{name}')
            ds.GetRasterBand(1).ReadAsArray(*(win or ()))
            ds = None
            r["requests"] = proxy.stats()["requests"]  # open + one read
            r["extra_round_trips"] = (r["remote"]["wall"] - r["local"]["wall"]) / (delay_ms / 1e3)
            out[key] = r
    finally:
        gdal.SetConfigOption("GDAL_NUM_THREADS", None)
        if proxy is not None:
            proxy.stop()
        server.stop()
    return out


def open_edges(gdal, root, reps):
    def run():
        ds = gdal.OpenEx(root, gdal.OF_MULTIDIM_RASTER)
        arr = ds.GetRootGroup().OpenMDArray("edges_1m")
        assert arr.GetDimensions()[0].GetSize() > 1000000

    return timed(run, reps)


def vm_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def rss_child(args):
    gdal = setup_gdal(args.plugin_dir)
    import numpy  # noqa: F401  (loaded before the baseline)

    gdal.SetConfigOption("GDAL_NUM_THREADS", str(args.threads))
    root = os.path.join(args.data, "bench.zarr")
    read, keep = open_reader(gdal, root, args.rss_child, args.mode)
    base = vm_kib("VmRSS")
    hwm0 = vm_kib("VmHWM")
    a = read()
    peak = vm_kib("VmHWM")
    print(json.dumps({"baseline_kib": base, "hwm_before_kib": hwm0, "peak_kib": peak,
                      "delta_bytes": (peak - base) * 1024, "decoded_bytes": a.nbytes}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--plugin-dir", required=True)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--json")
    ap.add_argument("--rss-child")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--mode", default="multidim")
    ap.add_argument("--peer-writes", action="store_true",
                    help="only the writes, of the plugin and of GDAL's built-in driver")
    ap.add_argument("--only-latency", action="store_true",
                    help="only the reads through the latency proxy")
    args = ap.parse_args()
    if args.rss_child:
        return rss_child(args)
    if args.only_latency:
        gdal = setup_gdal(args.plugin_dir)
        return emit({"gdal_version": gdal.__version__,
                     "latency": latency_benchmarks(gdal, os.path.join(args.data, "bench.zarr"),
                                                   args.reps)}, args.json)
    if args.peer_writes:
        gdal = setup_gdal(args.plugin_dir)
        res = {"gdal_version": gdal.__version__,
               "writes": write_benchmarks(gdal, args.data, max(3, args.reps // 2),
                                          ("regular", "sharded", "builtin"))}
        return emit(res, args.json)

    gdal = setup_gdal(args.plugin_dir)
    root = os.path.join(args.data, "bench.zarr")
    res = {"gdal_version": gdal.__version__}
    mode = pick_mode(gdal, root)
    res["read_mode"] = mode
    print(f"e2e: reading through GDAL {gdal.__version__}, {mode} API", file=sys.stderr)
    check_values(gdal, root, mode, args.data)
    res["reads"] = read_benchmarks(gdal, root, mode, args.reps)
    res["open_edges_1m"] = open_edges(gdal, root, args.reps)
    res["writes"] = write_benchmarks(gdal, args.data, max(3, args.reps // 2),
                                     ("regular", "sharded"))
    res["write_sharded"] = res["writes"]["sharded/1"]
    if mode == "classic":
        res["zoom"] = zoom_benchmarks(gdal, root, args.reps)
        try:
            res["latency"] = latency_benchmarks(gdal, root, args.reps)
        except Exception as e:  # no nginx: reported, not fatal
            res["latency"] = {"error": str(e).splitlines()[0] if str(e) else repr(e)}
    res["memory"] = {}
    for threads in (1, 2):
        for name in ("regular_zstd", "sharded_zstd"):
            p = subprocess.run([sys.executable, __file__, "--data", args.data, "--plugin-dir",
                                args.plugin_dir, "--rss-child", name, "--threads", str(threads),
                                "--mode", mode], capture_output=True, text=True)
            if p.returncode != 0:
                res["memory"][f"{name}/{threads}"] = {"error": p.stderr.strip()[-300:]}
            else:
                res["memory"][f"{name}/{threads}"] = json.loads(p.stdout.strip().splitlines()[-1])
    emit(res, args.json)


def emit(res, path):
    """The results as JSON, into `path` or on stdout."""
    text = json.dumps(res, indent=1)
    if path:
        with open(path, "w") as f:
            f.write(text)
    else:
        print(text)


if __name__ == "__main__":
    main()
