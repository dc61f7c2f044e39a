"""An S3 server on 127.0.0.1 for the object-storage commit tests: moto (`moto_server`), started
from env ZARR3_MOTO_SERVER (a command line, e.g. "chroot /work/chroot-sid moto_server") or
`moto_server` on PATH; the tests that use it SKIP, saying so, where neither exists, or where the
server ignores If-Match (Debian 13's python3-moto 5.1; the sid compat leg has 5.2, which answers 412
to both If-Match and If-None-Match: * on PutObject). The server binds 127.0.0.1 on a free port, is waited for (at
most 60 s), and is stopped by its process group at the end of the module.

`ConditionProxy` sits between GDAL and moto (a thread of the test process, 127.0.0.1): it records
each request's method, path and condition headers, and can drop If-Match headers, which makes a
storage that ignores the precondition a commit needs (Debian 13's moto 5.1 is one)."""
import contextlib
import http.client
import os
import shlex
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


def stop_group(proc):
    """Stops a server started in its own process group (start_new_session): SIGTERM, then SIGKILL."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def moto_command():
    cmd = os.environ.get("ZARR3_MOTO_SERVER")
    if cmd:
        return shlex.split(cmd)
    exe = shutil.which("moto_server")
    return [exe] if exe else None


class Moto:
    def __init__(self, port):
        self.port = port

    def make_bucket(self):
        name = "b" + uuid.uuid4().hex[:12]
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/{name}", method="PUT")
        urllib.request.urlopen(req, timeout=30).read()
        return name

    def keys(self, bucket, prefix=""):
        """Every key under `prefix` (ListObjectsV2, straight to the server)."""
        import xml.etree.ElementTree as ET
        url = f"http://127.0.0.1:{self.port}/{bucket}?list-type=2&max-keys=10000&prefix={prefix}"
        root = ET.fromstring(urllib.request.urlopen(url, timeout=30).read())
        return sorted(e.text for e in root.iter() if e.tag.endswith("}Key") or e.tag == "Key")

    def env(self, port=None, **extra):
        """The configuration a GDAL process needs to reach the server (or a proxy at `port`)."""
        return dict(os.environ, AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
                    AWS_S3_ENDPOINT=f"127.0.0.1:{port or self.port}", AWS_HTTPS="NO",
                    AWS_VIRTUAL_HOSTING="FALSE", AWS_REGION="us-east-1",
                    CPL_VSIL_CURL_ALLOWED_EXTENSIONS="", GDAL_HTTP_MAX_RETRY="2", **extra)


PROBE = r"""
import sys
from osgeo import gdal
path = sys.argv[1]
f = gdal.VSIFOpenL(path, "wb")
gdal.VSIFWriteL(b"a", 1, 1, f)
assert gdal.VSIFCloseL(f) == 0, "the first PUT failed"
gdal.PushErrorHandler("CPLQuietErrorHandler")
f = gdal.VSIFOpenExL(path, "wb", False, ['If-Match="0123456789abcdef0123456789abcdef"'])
gdal.VSIFWriteL(b"b", 1, 1, f)
print("IGNORED" if gdal.VSIFCloseL(f) == 0 else "HONOURED")
"""


def honours_if_match(port):
    """Whether the server refuses a PutObject whose If-Match names another ETag, sent as the plugin
    sends it (GDAL's signed /vsis3/ PUT with the header as an option)."""
    m = Moto(port)
    r = subprocess.run(["/usr/bin/python3", "-c", PROBE, f"/vsis3/{m.make_bucket()}/probe"],
                       env=m.env(), capture_output=True, text=True, timeout=120)
    if r.returncode != 0 or r.stdout.strip() not in ("IGNORED", "HONOURED"):
        raise RuntimeError(f"probing the S3 server for If-Match failed: {r.stderr[-500:]}")
    return r.stdout.strip() == "HONOURED"


class NoServer(Exception):
    """No S3 server here, or one that ignores If-Match (the message says which and what to do)."""


@contextlib.contextmanager
def running_moto():
    """A moto server on 127.0.0.1 (a `Moto`) while the block runs, stopped by its process group
    after; NoServer when there is none or it ignores If-Match. The fixture below and
    bench/many_writers.py use it."""
    cmd = moto_command()
    if not cmd:
        raise NoServer("no S3 server: set ZARR3_MOTO_SERVER (e.g. 'chroot /work/chroot-sid moto_server') "
                       "or put moto_server (Debian's python3-moto) on PATH")
    port = free_port()
    log = open(os.devnull, "w")
    proc = subprocess.Popen(cmd + ["-H", "127.0.0.1", "-p", str(port)], stdout=log, stderr=log,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2).read()
                break
            except Exception:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{cmd}: the S3 server did not answer on 127.0.0.1:{port}")
                time.sleep(0.2)
        if not honours_if_match(port):
            raise NoServer(f"{' '.join(cmd)} ignores If-Match on PutObject (Debian 13's moto 5.1 does): "
                           "the commit tests need a server that honours it (sid's moto 5.2)")
        yield Moto(port)
    finally:
        stop_group(proc)
        log.close()


@pytest.fixture(scope="module")
def moto():
    with contextlib.ExitStack() as stack:
        try:
            server = stack.enter_context(running_moto())
        except NoServer as e:
            pytest.skip(str(e))
        yield server


class ConditionProxy:
    """A forwarding proxy to the server at `upstream_port`; `drop` lists header names it removes."""
    CONDITIONS = ("if-match", "if-none-match")

    def __init__(self, upstream_port, drop=()):
        self.upstream = upstream_port
        self.drop = {d.lower() for d in drop}
        self.log = []  # (method, path, {condition header: value})
        self.lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def forward(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in proxy.drop}
                with proxy.lock:
                    proxy.log.append((self.command, self.path.split("?")[0],
                                      {k.lower(): v for k, v in self.headers.items()
                                       if k.lower() in proxy.CONDITIONS}))
                c = http.client.HTTPConnection("127.0.0.1", proxy.upstream, timeout=60)
                c.request(self.command, self.path, body=body, headers=headers)
                r = c.getresponse()
                data = r.read()
                self.send_response(r.status)
                for k, v in r.getheaders():
                    if k.lower() not in ("transfer-encoding", "content-length", "connection"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                c.close()

            do_GET = do_PUT = do_HEAD = do_DELETE = do_POST = forward

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)
