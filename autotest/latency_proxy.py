#!/usr/bin/python3
"""An HTTP proxy on 127.0.0.1 that delays every request by a set time before
forwarding it to an upstream server (the nginx fixture), to measure reads as
they behave against a distant object store. Standard library only.

    latency_proxy.py --upstream 127.0.0.1:PORT [--delay-ms 50] [--max-seconds 1800]

Prints "PORT <n>" on its first line once it listens. Stops by itself after
--max-seconds (a bounded run even when its starter dies) or on SIGTERM.
Control paths (answered at once, neither delayed nor counted):
  /__stats   JSON: requests (count), max_in_flight, log ([method, path, range])
  /__reset   clears the counts
  /__delay?ms=N  sets the delay
"""
import argparse
import http.client
import http.server
import json
import signal
import sys
import threading
import time
from urllib.parse import parse_qs, urlsplit

HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te",
              "trailer", "upgrade", "content-length"}


class Stats:
    def __init__(self, delay):
        self.lock = threading.Lock()
        self.delay = delay
        self.reset()

    def reset(self):
        with self.lock:
            self.count = 0
            self.in_flight = 0
            self.max_in_flight = 0
            self.log = []

    def enter(self, method, path, rng):
        with self.lock:
            self.count += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.log.append([method, path, rng])

    def leave(self):
        with self.lock:
            self.in_flight -= 1

    def snapshot(self):
        with self.lock:
            return {"requests": self.count, "max_in_flight": self.max_in_flight,
                    "delay_ms": self.delay * 1000, "log": list(self.log)}


def make_handler(upstream, stats):
    host, port = upstream.rsplit(":", 1)
    local = threading.local()

    def connection(fresh=False):
        if fresh or getattr(local, "conn", None) is None:
            local.conn = http.client.HTTPConnection(host, int(port), timeout=60)
        return local.conn

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_GET(self):
            self.forward("GET")

        def do_HEAD(self):
            self.forward("HEAD")

        def control(self):
            url = urlsplit(self.path)
            if url.path == "/__reset":
                stats.reset()
                body = b"{}"
            elif url.path == "/__delay":
                stats.delay = float(parse_qs(url.query)["ms"][0]) / 1000.0
                body = b"{}"
            else:
                body = json.dumps(stats.snapshot()).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def upstream_answer(self, method, headers):
            for attempt in (0, 1):  # a kept-alive upstream connection may have closed
                conn = connection(fresh=attempt == 1)
                try:
                    conn.request(method, self.path, headers=headers)
                    resp = conn.getresponse()
                    return resp, resp.read()
                except (http.client.HTTPException, OSError):
                    conn.close()
                    if attempt == 1:
                        raise
            raise RuntimeError("unreachable")

        def forward(self, method):
            if self.path.startswith("/__"):
                return self.control()
            stats.enter(method, urlsplit(self.path).path, self.headers.get("Range", ""))
            try:
                time.sleep(stats.delay)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
                try:
                    resp, body = self.upstream_answer(method, headers)
                except (http.client.HTTPException, OSError):
                    self.send_error(502)
                    return
                self.send_response(resp.status)
                for k, v in resp.getheaders():
                    if k.lower() not in HOP_BY_HOP:
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if method != "HEAD":
                    self.wfile.write(body)
            finally:
                stats.leave()

    return Handler


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512  # many connections at once without SYN retries


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--upstream", required=True, help="HOST:PORT")
    ap.add_argument("--delay-ms", type=float, default=50.0)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--max-seconds", type=float, default=1800.0)
    args = ap.parse_args()
    stats = Stats(args.delay_ms / 1000.0)
    server = Server(("127.0.0.1", args.port), make_handler(args.upstream, stats))
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    timer = threading.Timer(args.max_seconds, server.shutdown)
    timer.daemon = True
    timer.start()
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever(poll_interval=0.2)
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
