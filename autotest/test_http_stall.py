"""A stalled server respects GDAL_HTTP_TIMEOUT once.

A threaded HTTP server on 127.0.0.1 serves a sharded store's zarr.json and
accepts every other request without ever answering (until the fixture stops
it). A read must fail with an error within about one GDAL_HTTP_TIMEOUT: the
direct HTTP path must not fall back to GDAL's /vsicurl/ after a timeout, which
would wait for the same server again.
"""
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from osgeo import gdal

from conftest import config_option, value_or_error
from sharded_writer import make_data, write_sharded_store

TIMEOUT = 2


class StallHandler(BaseHTTPRequestHandler):
    root = None
    release = threading.Event()
    requests = []
    lock = threading.Lock()

    def log_message(self, *args):
        pass

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        with self.lock:
            self.requests.append((self.command, self.path))
        if self.path.endswith("/zarr.json"):
            body = (self.root / "zarr.json").read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
            return
        # Never answer (bounded: the fixture releases every waiter at the end).
        self.release.wait(60)
        self.close_connection = True


@pytest.fixture
def stalled_server(tmp_path):
    data = make_data((256, 256), seed=9)
    root = tmp_path / "s.zarr"
    write_sharded_store(root, data, (128, 128), (64, 64))
    StallHandler.root = root
    StallHandler.release.clear()
    StallHandler.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), StallHandler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/s.zarr"
    finally:
        StallHandler.release.set()
        server.shutdown()
        server.server_close()
        thread.join(10)


@pytest.mark.parametrize("window", [(0, 0, 64, 64), (0, 0, 256, 256)], ids=["one_chunk", "all_shards"])
def test_stalled_read_fails_within_one_timeout(stalled_server, window):
    gdal.VSICurlClearCache()
    with config_option("GDAL_HTTP_TIMEOUT", str(TIMEOUT)):
        ds = gdal.OpenEx(f'ZARR3:"/vsicurl/{stalled_server}"', gdal.OF_RASTER)
        assert ds is not None, gdal.GetLastErrorMsg()
        x, y, w, h = window
        t0 = time.monotonic()
        got, msg = value_or_error(lambda: ds.GetRasterBand(1).ReadAsArray(x, y, w, h))
        elapsed = time.monotonic() - t0
    print(f"\nstalled read {window}: {elapsed:.2f} s with GDAL_HTTP_TIMEOUT={TIMEOUT}: {msg[:160]}")
    assert got is None, "a stalled server produced values"
    assert re.search(r"s\.zarr/c/\d/\d", msg) and "timeout" in msg.lower(), msg
    # Functional bound, not a benchmark: one timeout (parallel requests
    # included), never a second one through the VSI fallback.
    assert elapsed < 1.9 * TIMEOUT, f"{elapsed:.2f} s"
    with StallHandler.lock:
        chunk_requests = [r for r in StallHandler.requests if "/c/" in r[1]]
    # Each shard requested once, by the direct path (no HEAD of the VSI fallback).
    assert all(cmd == "GET" for cmd, _ in chunk_requests), chunk_requests
    assert len(chunk_requests) == len({p for _, p in chunk_requests}), chunk_requests
