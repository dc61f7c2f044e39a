"""A real nginx (Debian nginx-light) on 127.0.0.1 serving a temporary folder,
with an access log the tests parse to count HTTP requests.

Usage in a test module:  from nginx_fixture import nginx  (a session fixture).
The server serves `server.root` (a folder under a temp dir): /PATH maps to
root/PATH, so it works for /vsicurl/http://127.0.0.1:PORT/PATH and, with
AWS_S3_ENDPOINT=127.0.0.1:PORT AWS_VIRTUAL_HOSTING=FALSE, for /vsis3/PATH.
Under /wbkt/ (bucket `wbkt`) the server also takes PUT and DELETE (nginx dav_methods), so
/vsis3/wbkt/... can be written; it lists nothing (no S3 ListObjects anywhere).
object_store(kind, port) sets the GDAL configuration options that point /vsis3/ ("s3"), /vsigs/
("gs") or /vsiaz/ ("az", "az_unsigned": account `acct`, so /acct/PATH) at the server, unsigned.
"""
import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

NGINX = os.environ.get("ZARR3_NGINX", "/usr/sbin/nginx")


@dataclass
class Request:
    method: str
    uri: str  # path without the query string
    args: str  # query string ("" when none)
    range: str  # Range header ("" when none)
    status: int
    body_bytes: int
    probe: str = ""  # X-Zarr3-Probe request header ("" when none)
    connection: int = 0  # nginx connection serial number (equal = reused)

    def __repr__(self):
        q = f"?{self.args}" if self.args else ""
        r = f" [{self.range}]" if self.range else ""
        return f"{self.method} {self.uri}{q}{r} -> {self.status} {self.body_bytes}B"


CONFIG = """\
daemon off;
master_process on;
worker_processes 1;
{user}
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 256; }}
http {{
    log_format zarr3 '$request_method\\t$uri\\t$args\\t$http_range\\t$status\\t$body_bytes_sent\\t$http_x_zarr3_probe\\t$connection';
    access_log {tmp}/access.log zarr3;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    default_type application/octet-stream;
    sendfile on;
    keepalive_timeout 30;
    server {{
        listen 127.0.0.1:{port};
        server_name localhost;
        root {root};
        autoindex off;
        # The same files from a server that ignores Range (answers 200 + all).
        location /norange/ {{
            alias {root}/;
            max_ranges 0;
        }}
        # A writable bucket: /vsis3/wbkt/KEY is PUT and DELETEd as root/wbkt/KEY (GDAL writes
        # an object of less than its chunk size with one PUT); no listing (autoindex off).
        location /wbkt/ {{
            # CopyObject (a PUT naming its source; VSIRename on /vsis3/) is refused before
            # anything is touched: nginx would store the empty body.
            if ($http_x_amz_copy_source) {{ return 501; }}
            dav_methods PUT DELETE;
            create_full_put_path on;
            # S3 answers 200 to a PUT over a key, nginx 204, which GDAL 3.6 takes as a failed
            # PUT: a PUT first deletes its key (a subrequest run to its end before the PUT),
            # so nginx creates it (201). The key is absent between the two (not atomic).
            auth_request /__wbkt_unput;
            # GDAL's VSIMkdir on /vsis3/ PUTs an empty "KEY/" marker object, which S3 keeps
            # and nginx refuses (409, a collection): taken and dropped (the folder comes with
            # the first key PUT under it).
            location ~ /$ {{
                if ($request_method = PUT) {{ return 200; }}
            }}
        }}
        location = /__wbkt_unput {{
            internal;
            if ($request_method != PUT) {{ return 204; }}
            proxy_method DELETE;
            proxy_pass_request_body off;
            proxy_set_header Content-Length "";
            proxy_pass http://127.0.0.1:{port}/__wbkt_del$request_uri;
        }}
        location /__wbkt_del/ {{
            alias {root}/;
            dav_methods DELETE;
            error_page 404 = @wbkt_absent;
        }}
        location @wbkt_absent {{
            return 204;
        }}
    }}
}}
"""


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_listening(port, proc, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return True
        except OSError:
            time.sleep(0.05)
    return False


class NginxServer:
    def __init__(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="zarr3-nginx-"))
        self.root = self.tmp / "www"
        self.root.mkdir()
        self.proc = None
        self.port = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        if not os.path.exists(NGINX):
            raise RuntimeError(f"{NGINX} not found: install nginx-light (scripts/install-deps.sh)")
        user = "user root root;" if os.geteuid() == 0 else ""
        last_err = ""
        for _ in range(5):
            port = _free_port()
            conf = self.tmp / "nginx.conf"
            conf.write_text(CONFIG.format(user=user, tmp=self.tmp, port=port, root=self.root))
            (self.tmp / "access.log").write_text("")
            errf = open(self.tmp / "stderr.log", "wb")
            proc = subprocess.Popen(
                [NGINX, "-p", str(self.tmp), "-e", str(self.tmp / "error.log"), "-c", str(conf)],
                stdin=subprocess.DEVNULL, stdout=errf, stderr=errf,
            )
            errf.close()
            if _wait_listening(port, proc):
                self.proc, self.port = proc, port
                return self
            self._kill(proc)
            last_err = (self.tmp / "stderr.log").read_text() + (
                (self.tmp / "error.log").read_text() if (self.tmp / "error.log").exists() else "")
        raise RuntimeError(f"nginx did not start: {last_err}")

    @staticmethod
    def _kill(proc):
        if proc.poll() is None:
            proc.terminate()  # SIGTERM: fast shutdown of master and workers
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)

    def stop(self):
        if self.proc is not None:
            self._kill(self.proc)
            self.proc = None
        shutil.rmtree(self.tmp, ignore_errors=True)

    # --- access log -------------------------------------------------------
    def _lines(self):
        return (self.tmp / "access.log").read_text().splitlines()

    def mark(self):
        """Position in the access log; requests(since=mark) returns later ones."""
        # nginx writes each line with one write() as the request completes; a
        # short pause lets the last response's log line land.
        time.sleep(0.05)
        return len(self._lines())

    def requests(self, since=0):
        time.sleep(0.05)
        out = []
        for line in self._lines()[since:]:
            f = line.split("\t")
            if len(f) != 8:
                continue
            args = "" if f[2] == "-" else f[2]
            rng = "" if f[3] == "-" else f[3]
            probe = "" if f[6] == "-" else f[6]
            out.append(Request(f[0], f[1], args, rng, int(f[4]), int(f[5]), probe, int(f[7])))
        return out


def object_store_options(kind, port):
    ep = f"127.0.0.1:{port}"
    return {
        "s3": {"AWS_S3_ENDPOINT": ep, "AWS_HTTPS": "NO", "AWS_VIRTUAL_HOSTING": "FALSE",
               "AWS_NO_SIGN_REQUEST": "YES", "AWS_REGION": "us-east-1"},
        "gs": {"CPL_GS_ENDPOINT": f"http://{ep}/", "GS_NO_SIGN_REQUEST": "YES"},
        "az": {"AZURE_STORAGE_CONNECTION_STRING":
               f"DefaultEndpointsProtocol=http;AccountName=acct;AccountKey=ZHVtbXk=;BlobEndpoint=http://{ep}/acct"},
        "az_unsigned": {"AZURE_STORAGE_ACCOUNT": "acct", "AZURE_NO_SIGN_REQUEST": "YES",
                        "CPL_AZURE_ENDPOINT": f"http://{ep}/acct", "CPL_AZURE_USE_HTTPS": "NO"},
    }[kind]


@contextlib.contextmanager
def object_store(kind, port):
    """The configuration options of object_store_options(kind, port), set for the block."""
    from conftest import config_option  # here: bench/ imports this module without conftest

    with contextlib.ExitStack() as stack:
        for k, v in object_store_options(kind, port).items():
            stack.enter_context(config_option(k, v))
        yield


@pytest.fixture(scope="session")
def nginx():
    server = NginxServer()
    try:
        server.start()
        yield server
    finally:
        server.stop()
