"""The latency proxy (latency_proxy.py) as a test fixture: started on
127.0.0.1 in front of the nginx fixture, stopped by its pid at the end of the
module (and by itself after --max-seconds in any case).

Usage in a test module:  from latency_fixture import latency_proxy  (module
fixture; needs the nginx session fixture imported too).
"""
import http.client
import json
import select
import subprocess
import sys
from pathlib import Path

import pytest

PROXY = Path(__file__).with_name("latency_proxy.py")


class LatencyProxy:
    def __init__(self, upstream_port, delay_ms=50, max_seconds=1800):
        self.upstream_port = upstream_port
        self.delay_ms = delay_ms
        self.max_seconds = max_seconds
        self.proc = None
        self.port = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        self.proc = subprocess.Popen(
            [sys.executable, str(PROXY), "--upstream", f"127.0.0.1:{self.upstream_port}",
             "--delay-ms", str(self.delay_ms), "--max-seconds", str(self.max_seconds)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        ready, _, _ = select.select([self.proc.stdout], [], [], 15)
        line = self.proc.stdout.readline() if ready else ""
        if not line.startswith("PORT "):
            self.stop()
            raise RuntimeError("the latency proxy did not start")
        self.port = int(line.split()[1])
        # Ready when it answers. (Reads measured on this busy 2-core machine
        # ran about twice as long when the proxy had answered nothing before
        # them; the cause was not found, and this keeps runs comparable.)
        self.stats()
        return self

    def _control(self, path):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request("GET", path)
            return json.loads(conn.getresponse().read())
        finally:
            conn.close()

    def stats(self):
        """{'requests': n, 'max_in_flight': n, 'log': [[method, path, range], ...]}"""
        return self._control("/__stats")

    def reset(self):
        self._control("/__reset")

    def set_delay(self, ms):
        self._control(f"/__delay?ms={ms}")

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc.stdout.close()
        self.proc = None


@pytest.fixture(scope="module")
def latency_proxy(nginx):
    proxy = LatencyProxy(nginx.port).start()
    try:
        yield proxy
    finally:
        proxy.stop()
