"""Direct HTTP reads against a server that answers byte ranges wrongly.

A small threaded HTTP server on 127.0.0.1 (stopped by the fixture) serves a
sharded store correctly for whole-object GETs and HEADs, and misbehaves on
Range requests in one way per URL prefix. Every read must either return the
exact values or fail with an error naming the object: never wrong values,
never a crash or a hang.
"""
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from osgeo import gdal

from bounded_run import ASAN, run_script
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


# ------------------------------------------------ claimed sizes (issue 33 #11)

CLAIM = 1 << 31  # Content-Length: 2147483648
CHUNK = 8192  # the chunk really holds 8 KiB (bytes codec: exactly 8192 bytes)

CLAIM_META = {
    "zarr_format": 3,
    "node_type": "array",
    "shape": [2, CHUNK],
    "data_type": "uint8",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1, CHUNK]}},
    "chunk_key_encoding": {"name": "default"},
    "fill_value": 0,
    "codecs": [{"name": "bytes"}],
    "dimension_names": ["y", "x"],
}


class ClaimingHandler(BaseHTTPRequestHandler):
    """Serves zarr.json; every chunk claims 2 GiB (HEAD, GET, ranges) and
    sends its 8 KiB before closing the connection."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        if self.path.endswith("/zarr.json"):
            body = json.dumps(CLAIM_META).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
            return
        if "/c/" not in self.path:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        data = bytes(range(256)) * (CHUNK // 256)
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes=") and "," not in rng:
            a, b = rng[6:].split("-")
            a = int(a) if a else CLAIM - int(b)
            b = int(b) if (b and rng[6] != "-") else CLAIM - 1
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {a}-{b}/{CLAIM}")
            self.send_header("Content-Length", str(b - a + 1))
            body = data[a : b + 1] if a < CHUNK else b""
        else:
            self.send_response(200)
            self.send_header("Content-Length", str(CLAIM))
            body = data
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            try:
                self.wfile.write(body)
            except OSError:
                pass
        self.close_connection = True


CLAIM_SCRIPT = r"""
import json, sys
from osgeo import gdal
gdal.UseExceptions()
url, rows = sys.argv[1], int(sys.argv[2])
for kv in sys.argv[3:]:
    k, v = kv.split("=", 1)
    gdal.SetConfigOption(k, v)
out = {"errors": []}
gdal.PushErrorHandler(lambda c, n, m: out["errors"].append(m) if c >= gdal.CE_Failure else None)
try:
    ds = gdal.Open('ZARR3:"/vsicurl/' + url + '"')
    out["value"] = ds.GetRasterBand(1).ReadRaster(0, 0, 64, rows) is not None
    out["exception"] = None
except RuntimeError as e:
    out["exception"] = str(e)
print("RESULT:" + json.dumps(out))
"""


@pytest.fixture(scope="module")
def claiming():
    server = ThreadingHTTPServer(("127.0.0.1", 0), ClaimingHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/claim.zarr"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.skipif(ASAN, reason="needs the address-space limit")
@pytest.mark.parametrize("rows", [1, 2])  # one chunk (its own bound), two (read ahead)
@pytest.mark.parametrize("direct", ["YES", "NO"])
def test_content_length_claim_is_refused_before_allocating(claiming, rows, direct):
    r, elapsed = run_script(
        CLAIM_SCRIPT,
        [claiming, rows, f"ZARR3_HTTP_DIRECT={direct}", "GDAL_HTTP_TIMEOUT=10",
         "GDAL_HTTP_MAX_RETRY=0"],
        3 << 29,  # 1.5 GiB of address space: an allocation of the claim fails
        120,
    )
    text = "\n".join([r.get("exception") or ""] + r["errors"])
    assert r["exception"], r
    assert "/c/0/0" in text, text
    assert str(CLAIM) in text, text
    assert "out of memory" not in text and "bad_alloc" not in text, text
    if rows == 1:
        assert f"limit of {CHUNK} bytes" in text, text
    assert elapsed < 60
