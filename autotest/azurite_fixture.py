"""An Azure Blob server on 127.0.0.1 for the object-storage commit tests: Azurite (npm `azurite`,
its blob service only, in memory), started from env ZARR3_AZURITE (a command line, e.g.
"/opt/azurite/node_modules/.bin/azurite-blob") or the install scripts/install-deps.sh makes under
the build folder (build/azurite) or /opt/azurite; the tests that use it SKIP, saying so, where
there is none. It binds 127.0.0.1 on a free port (--skipApiVersionCheck: GDAL may send a newer
x-ms-version than the emulator knows), is waited for (at most 60 s), and is stopped by its process
group at the end of the module.

GDAL reaches it through AZURE_STORAGE_CONNECTION_STRING with the emulator's well-known account
(devstoreaccount1) and an account SAS made here: GDAL signs URLs for an account key with a SAS of
version 2012-02-12, which Azurite 3 refuses (it checks every SAS in a later format), and the plugin
sends its conditional writes through GDAL's signed URLs. Containers are created with a PUT."""
import base64
import datetime
import hashlib
import hmac
import os
import shlex
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
import uuid
import xml.etree.ElementTree as ET

import pytest

from moto_fixture import free_port, stop_group

ACCOUNT = "devstoreaccount1"
# The emulator's published development key (not a secret).
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
HERE = os.path.dirname(os.path.abspath(__file__))


def azurite_command():
    cmd = os.environ.get("ZARR3_AZURITE")
    if cmd:
        return shlex.split(cmd)
    if shutil.which("node") is None:  # the npm install runs under node (not in every chroot)
        return None
    build = os.environ.get("ZARR3_BUILD_DIR", os.path.join(HERE, "..", "build"))
    for root in (os.path.join(build, "azurite"), "/opt/azurite"):
        exe = os.path.join(root, "node_modules", ".bin", "azurite-blob")
        if os.access(exe, os.X_OK):
            return [exe]
    return None


def account_sas():
    """An account SAS (version 2019-12-12) for the blob service: read, write, delete, list, add,
    create on containers and objects, valid two hours."""
    now = datetime.datetime.now(datetime.timezone.utc)
    fmt = "%Y-%m-%dT%H:%M:%SZ"
    f = dict(sv="2019-12-12", ss="b", srt="sco", sp="rwdlac",
             st=(now - datetime.timedelta(minutes=5)).strftime(fmt),
             se=(now + datetime.timedelta(hours=2)).strftime(fmt), spr="http")
    text = "\n".join([ACCOUNT, f["sp"], f["ss"], f["srt"], f["st"], f["se"], "", f["spr"], f["sv"],
                      ""])
    f["sig"] = base64.b64encode(hmac.new(base64.b64decode(KEY), text.encode(),
                                         hashlib.sha256).digest()).decode()
    return urllib.parse.urlencode(f)


class Azurite:
    def __init__(self, port):
        self.port = port
        self.sas = account_sas()

    def url(self, port=None):
        return f"http://127.0.0.1:{port or self.port}/{ACCOUNT}"

    def make_bucket(self):
        """A new container (the storage's bucket)."""
        name = "c" + uuid.uuid4().hex[:12]
        req = urllib.request.Request(f"{self.url()}/{name}?restype=container&{self.sas}",
                                     method="PUT")
        urllib.request.urlopen(req, timeout=30).read()
        return name

    def keys(self, bucket, prefix=""):
        """Every blob name under `prefix` (List Blobs, straight to the server)."""
        url = (f"{self.url()}/{bucket}?restype=container&comp=list&maxresults=5000"
               f"&prefix={urllib.parse.quote(prefix)}&{self.sas}")
        root = ET.fromstring(urllib.request.urlopen(url, timeout=30).read())
        return sorted(e.text for e in root.iter("Name") if e.text)

    def env(self, port=None, **extra):
        """The configuration a GDAL process needs to reach the server (or a proxy at `port`)."""
        cs = f"BlobEndpoint={self.url(port)};SharedAccessSignature={self.sas}"
        return dict(os.environ, AZURE_STORAGE_CONNECTION_STRING=cs,
                    CPL_VSIL_CURL_ALLOWED_EXTENSIONS="", GDAL_HTTP_MAX_RETRY="2", **extra)


@pytest.fixture(scope="module")
def azurite():
    cmd = azurite_command()
    if not cmd:
        pytest.skip("no Azure Blob emulator: set ZARR3_AZURITE to an azurite-blob command, or run "
                    "scripts/install-deps.sh (npm install of azurite into build/azurite; needs node)")
    port = free_port()
    log = open(os.devnull, "w")
    proc = subprocess.Popen(cmd + ["--blobHost", "127.0.0.1", "--blobPort", str(port),
                                   "--inMemoryPersistence", "--skipApiVersionCheck",
                                   "--disableTelemetry", "--silent"],
                            stdout=log, stderr=log, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{cmd}: Azurite did not answer on 127.0.0.1:{port}")
                time.sleep(0.2)
        yield Azurite(port)
    finally:
        stop_group(proc)
        log.close()
