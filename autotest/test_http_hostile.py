"""Direct HTTP reads against a server that answers byte ranges wrongly.

A small threaded HTTP server on 127.0.0.1 (stopped by the fixture) serves a
sharded store correctly for whole-object GETs and HEADs, and misbehaves on
Range requests in one way per URL prefix. Every read must either return the
exact values or fail with an error naming the object: never wrong values,
never a crash or a hang.
"""
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from osgeo import gdal

from conftest import config_option, value_or_error
from sharded_writer import make_data, write_sharded_store

SHAPE = (512, 512)
SHARD = (256, 256)
INNER = (64, 64)

MODES = {
    "ok": "serves ranges correctly",
    "norange": "ignores Range: 200 and the whole object",
    "shifted": "206 for a range one byte later than asked (header and body agree)",
    "short": "206 whose body is shorter than its Content-Range says",
    "lying_total": "206 whose Content-Range total is smaller than the range end",
    "garbage": "206 with an unparsable Content-Range",
    "multipart_lie": "multipart answer whose part claims more bytes than sent",
    "error500": "500 for every range request",
}


def _ranges(header, size):
    out = []
    for part in header.replace("bytes=", "").split(","):
        a, b = part.strip().split("-")
        if a == "":
            n = min(int(b), size)
            out.append((size - n, size - 1))
        else:
            out.append((int(a), min(int(b), size - 1)))
    return out


class Handler(BaseHTTPRequestHandler):
    root = None

    def log_message(self, *args):
        pass

    def _file(self):
        m = re.match(r"^/(\w+)/(.*)$", self.path)
        if not m or m.group(1) not in MODES:
            return None, None
        p = self.root / m.group(2)
        return m.group(1), (p.read_bytes() if p.is_file() else None)

    def _send(self, code, body=b"", headers=()):
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        mode, data = self._file()
        if data is None:
            return self._send(404, b"not found")
        rng = self.headers.get("Range")
        size = len(data)
        if not rng or mode == "norange":
            return self._send(200, data)
        spans = _ranges(rng, size)
        if mode == "error500":
            return self._send(500, b"boom")
        if mode == "multipart_lie" or (mode == "ok" and len(spans) > 1):
            parts = b""
            for a, b in spans:
                claim = b + 64 if mode == "multipart_lie" else b
                parts += (f"--XYZ\r\nContent-Type: application/octet-stream\r\n"
                          f"Content-Range: bytes {a}-{claim}/{size}\r\n\r\n").encode()
                parts += data[a:b + 1] + b"\r\n"
            parts += b"--XYZ--\r\n"
            return self._send(206, parts, [("Content-Type", "multipart/byteranges; boundary=XYZ")])
        a, b = spans[0]
        body = data[a:b + 1]
        cr = f"bytes {a}-{b}/{size}"
        if mode == "shifted":
            a, b = min(a + 1, size - 1), min(b + 1, size - 1)
            body, cr = data[a:b + 1], f"bytes {a}-{b}/{size}"
        elif mode == "short":
            body = body[: max(0, len(body) - 7)]
        elif mode == "lying_total":
            cr = f"bytes {a}-{b}/{b}"
        elif mode == "garbage":
            cr = "bytes banana"
        return self._send(206, body, [("Content-Range", cr)])


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    data = make_data(SHAPE, seed=3)
    root = tmp_path_factory.mktemp("hostile") / "s.zarr"
    write_sharded_store(root, data, SHARD, INNER)
    Handler.root = root
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with config_option("GDAL_HTTP_TIMEOUT", "10"), config_option("GDAL_HTTP_MAX_RETRY", "0"):
            yield f"http://127.0.0.1:{server.server_address[1]}", data
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("multirange", [None, "SINGLE_GET"])
@pytest.mark.parametrize("mode", sorted(MODES))
def test_misbehaving_range_answers(hostile, mode, multirange):
    base, data = hostile
    gdal.VSICurlClearCache()
    url = f"/vsicurl/{base}/{mode}"
    with config_option("GDAL_HTTP_MULTIRANGE", multirange):
        ds = gdal.OpenEx(f'ZARR3:"{url}"', gdal.OF_MULTIDIM_RASTER)
        assert ds is not None, gdal.GetLastErrorMsg()
        md = ds.GetRootGroup().OpenMDArray(ds.GetRootGroup().GetMDArrayNames()[0])
        # Inner chunks 0,1 and 4,5 of shard c/0/0: two separate byte ranges.
        got, msg = value_or_error(lambda: md.ReadAsArray(array_start_idx=[0, 0], count=[128, 128]))
    if got is None:
        assert mode not in ("ok", "norange"), msg
        assert f"/{mode}/c/0/0" in msg, msg
    else:
        assert np.array_equal(got, data[0:128, 0:128]), f"{mode}: wrong values"
    print(f"\n{mode}/{multirange}: {'values exact' if got is not None else 'error: ' + msg[:120]}")
