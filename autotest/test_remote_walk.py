"""Walks of remote hierarchies are bounded in requests (issue 33, defect 15).

A small threaded HTTP server on 127.0.0.1 (stopped by the fixture, counting
every request) serves an endless hierarchy: every group has two child groups,
found either through an HTML directory listing (as /vsicurl/ reads folders)
or through the group's consolidated metadata. Every walk (the classic
subdataset listing, the multidimensional group tree) must stop after a
bounded number of requests with a warning naming the store and the option
that raises the bound. Request counts are asserted, never times. A server
cap answers 404 past MAX_SERVED requests so that an unbounded walk ends (and
the test fails) instead of running for hours.
"""
import contextlib
import json
import os
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from osgeo import gdal

from conftest import config_option

MAX_SERVED = 3000  # past this, every answer is 404 (the walk was not bounded)
BOUND = 1500  # the most requests a bounded walk may take with default options

GROUP = {"zarr_format": 3, "node_type": "group", "attributes": {}}
ARRAY = {
    "zarr_format": 3,
    "node_type": "array",
    "shape": [4, 4],
    "data_type": "uint8",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 4]}},
    "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
    "fill_value": 7,
    "codecs": [{"name": "bytes"}],
    "attributes": {},
}
CHILDREN = ("g0", "g1")


class Handler(BaseHTTPRequestHandler):
    count = 0
    lock = threading.Lock()

    def log_message(self, *args):
        pass

    def _send(self, code, body=b"", ctype="application/octet-stream"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _body(self, path):
        """(code, body, type) for `path` = /<flavour>/<node path>."""
        parts = path.split("?")[0].strip("/").split("/")
        flavour, rest = parts[0], parts[1:]
        if flavour == "slow":  # the listing flavour, each answer 0.2 s late
            time.sleep(0.2)
            flavour = "listing"
        if flavour not in ("listing", "consolidated"):
            return 404, b"", "text/plain"
        if rest and rest[-1] == "zarr.json":
            node = rest[:-1]
            if node == ["data"]:
                return 200, json.dumps(ARRAY).encode(), "application/json"
            if any(p not in CHILDREN for p in node):
                return 404, b"", "text/plain"
            doc = dict(GROUP)
            if flavour == "consolidated":
                meta = {c: dict(GROUP) for c in CHILDREN}
                if not node:
                    meta["data"] = ARRAY
                doc["consolidated_metadata"] = {"kind": "inline", "must_understand": False,
                                                "metadata": meta}
            return 200, json.dumps(doc).encode(), "application/json"
        if flavour == "listing" and path.endswith("/") and all(p in CHILDREN for p in rest):
            names = ["zarr.json"] + [c + "/" for c in CHILDREN] + ([] if rest else ["data/"])
            # Apache's layout, which /vsicurl/ parses: the title names the folder.
            links = "".join(f'<a href="{n}">{n}</a>\n' for n in names)
            folder = path.split("?")[0].rstrip("/")
            html = (f"<html>\n<head>\n<title>Index of {folder}</title>\n</head>\n<body>\n"
                    f"<h1>Index of {folder}</h1>\n{links}</body>\n</html>\n")
            return 200, html.encode(), "text/html"
        return 404, b"", "text/plain"

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        with Handler.lock:
            Handler.count += 1
            over = Handler.count > MAX_SERVED
        if over:
            return self._send(404, b"", "text/plain")
        self._send(*self._body(self.path))


@pytest.fixture(scope="module")
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        with config_option("GDAL_HTTP_TIMEOUT", "10"), config_option("GDAL_HTTP_MAX_RETRY", "0"):
            yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


def requests_of(fn):
    """(result of fn(), requests it made, warnings it raised)."""
    gdal.VSICurlClearCache()
    warnings = []

    def handler(cls, num, msg):
        if cls == gdal.CE_Warning:
            warnings.append(msg)

    with Handler.lock:
        Handler.count = 0
    gdal.PushErrorHandler(handler)
    try:
        got = fn()
    finally:
        gdal.PopErrorHandler()
    with Handler.lock:
        n = Handler.count
    return got, n, warnings


@contextlib.contextmanager
def no_exceptions():
    """GDAL errors as return values (gdal.ExceptionMgr is GDAL >= 3.7)."""
    gdal.DontUseExceptions()
    try:
        yield
    finally:
        gdal.UseExceptions()


def walk_groups(group, out):
    """Every group reachable through GetGroupNames/OpenGroup (as gdalmdiminfo does)."""
    stack = [group]
    while stack:
        g = stack.pop()
        out.append(g.GetFullName())
        g.GetMDArrayNames()
        for name in g.GetGroupNames() or []:
            child = g.OpenGroup(name)
            if child is not None:
                stack.append(child)
    return out


def open_classic(url):
    ds = gdal.OpenEx(f'ZARR3:"{url}"', gdal.OF_RASTER)
    return ds.RasterXSize if ds is not None else None


def open_multidim(url):
    ds = gdal.OpenEx(f'ZARR3:"{url}"', gdal.OF_MULTIDIM_RASTER)
    return walk_groups(ds.GetRootGroup(), [])


def walk_warning(warnings, url):
    hits = [w for w in warnings if url in w and "ZARR3_MAX_GROUP_NODES" in w]
    assert hits, warnings
    return hits[0]


def test_classic_listing_of_endless_remote_hierarchy(server):
    url = f"/vsicurl/{server}/listing"
    with no_exceptions():
        width, n, warnings = requests_of(lambda: open_classic(url))
    assert n <= BOUND, f"{n} requests"
    # The one data array at the root is still found and opened.
    assert width == 4
    assert "remote" in walk_warning(warnings, url)


def test_multidim_walk_of_endless_remote_hierarchy(server):
    url = f"/vsicurl/{server}/listing"
    with no_exceptions():
        groups, n, warnings = requests_of(lambda: open_multidim(url))
    assert n <= BOUND, f"{n} requests"
    assert "/g0" in groups and "/g1/g0" in groups
    assert len(groups) == 257  # the root and the default remote budget of 256
    walk_warning(warnings, url)


@pytest.mark.parametrize("mode", ["classic", "multidim"])
def test_consolidated_metadata_spares_requests(server, mode):
    # Every group's zarr.json lists child groups in its consolidated metadata
    # (the endless hierarchy of issue 33 #15). The root's consolidated
    # metadata is the hierarchy, as zarr-python reads it: the groups it lists
    # are not fetched one request each, and a group without entries below it
    # has no children.
    url = f"/vsicurl/{server}/consolidated"
    with no_exceptions():
        got, n, _ = requests_of(lambda: open_classic(url) if mode == "classic" else open_multidim(url))
    if mode == "classic":
        assert got == 4
    else:
        assert sorted(got) == ["/", "/g0", "/g1"]
    assert n <= 5, f"{n} requests"


def test_option_sets_the_remote_bound(server):
    url = f"/vsicurl/{server}/listing"
    with no_exceptions():
        groups, small, _ = requests_of(lambda: open_multidim(url))
        with config_option("ZARR3_MAX_GROUP_NODES", "10"):
            groups10, smaller, warnings10 = requests_of(lambda: open_multidim(url))
            _, classic10, cwarnings10 = requests_of(lambda: open_classic(url))
    assert len(groups10) == 11 and len(groups) == 257
    assert smaller < small and smaller <= 40, f"{smaller} requests"
    assert classic10 <= 40, f"{classic10} requests"
    assert "more than 10 " in walk_warning(warnings10, url)
    assert "more than 10 " in walk_warning(cwarnings10, url)


def test_local_symlink_cycles_stay_bounded(tmp_path, run_tool, driver_path):
    # Each group links twice to its parent: 2^32 paths within 32 levels.
    root = tmp_path / "cyc.zarr"
    (root / "g").mkdir(parents=True)
    for d in (root, root / "g"):
        (d / "zarr.json").write_text(json.dumps(GROUP))
    (root / "data").mkdir()
    (root / "data" / "zarr.json").write_text(json.dumps(ARRAY))
    os.symlink("..", root / "g" / "x")
    os.symlink("..", root / "g" / "y")
    with no_exceptions():
        ds = gdal.OpenEx(f'ZARR3:"{root}"', gdal.OF_MULTIDIM_RASTER)
        groups = walk_groups(ds.GetRootGroup(), [])
    assert len(groups) < 10, groups
    tool = os.path.join(driver_path, "zarr3")
    p = subprocess.run([tool, "info", str(root)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("uint8") == 1, p.stdout
    assert "symbolic link cycle" in p.stderr, p.stderr


def test_time_bound_of_a_slow_remote_walk(server):
    # A server answering each request late: the classic listing walk stops at
    # its time bound (ZARR3_MAX_WALK_SECONDS, default 60 s on remote stores)
    # with a warning naming the option; counted in requests, not timed here.
    url = f"/vsicurl/{server}/slow"
    with no_exceptions(), config_option("ZARR3_MAX_WALK_SECONDS", "1"):
        _, n, warnings = requests_of(lambda: open_classic(url))
    assert n <= 30, f"{n} requests"
    assert any(url in w and "ZARR3_MAX_WALK_SECONDS" in w for w in warnings), warnings
