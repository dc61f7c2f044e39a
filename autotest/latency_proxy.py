#!/usr/bin/python3
"""An HTTP proxy on 127.0.0.1 that delays every request by a set time before
forwarding it to an upstream server (the nginx fixture), to measure reads as
they behave against a distant object store. Standard library only (asyncio:
one event loop, responses relayed as they arrive, so the proxy adds latency
and little else).

    latency_proxy.py --upstream 127.0.0.1:PORT [--delay-ms 50] [--max-seconds 1800]

Prints "PORT <n>" on its first line once it listens. Stops by itself after
--max-seconds (a bounded run even when its starter dies) or on SIGTERM.
Requests on one connection are handled in turn (no pipelining); bodies of
requests are not supported (GET and HEAD only). Control paths (answered at
once, neither delayed nor counted):
  /__stats   JSON: requests (count), max_in_flight, log ([method, path, range]),
             times ([start, end] of each request of log, seconds on the proxy's
             monotonic clock: from its head being read to its answer relayed)
  /__reset   clears the counts
  /__delay?ms=N  sets the delay
"""
import argparse
import asyncio
import json
import signal
import sys
import time
from urllib.parse import parse_qs, urlsplit

CHUNK = 1 << 22


class Stats:
    def __init__(self, delay):
        self.delay = delay
        self.reset()

    def reset(self):
        self.count = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.log = []
        self.times = []

    def snapshot(self):
        return {"requests": self.count, "max_in_flight": self.max_in_flight,
                "delay_ms": self.delay * 1000, "log": self.log, "times": self.times}


def parse_head(head):
    """(first line, {lower-case name: value}) of an HTTP message head."""
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    return lines[0], headers


class Proxy:
    def __init__(self, upstream, stats):
        self.host, port = upstream.rsplit(":", 1)
        self.port = int(port)
        self.stats = stats

    async def control(self, path, writer):
        url = urlsplit(path)
        if url.path == "/__reset":
            self.stats.reset()
            body = b"{}"
        elif url.path == "/__delay":
            self.stats.delay = float(parse_qs(url.query)["ms"][0]) / 1000.0
            body = b"{}"
        else:
            body = json.dumps(self.stats.snapshot()).encode()
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()

    async def relay(self, method, head, up, writer):
        """Sends `head` upstream and relays the answer; False when the
        upstream connection is to be dropped afterwards."""
        up_reader, up_writer = up
        up_writer.write(head)
        await up_writer.drain()
        resp_head = await up_reader.readuntil(b"\r\n\r\n")
        status_line, headers = parse_head(resp_head)
        writer.write(resp_head)
        status = int(status_line.split()[1])
        keep = headers.get("connection", "").lower() != "close"
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            await writer.drain()
            return keep
        if "content-length" not in headers:  # to the end of the connection
            while data := await up_reader.read(CHUNK):
                writer.write(data)
                await writer.drain()
            return False
        left = int(headers["content-length"])
        while left > 0:
            data = await up_reader.read(min(CHUNK, left))
            if not data:
                raise ConnectionError("upstream closed mid-answer")
            left -= len(data)
            writer.write(data)
            await writer.drain()
        return keep

    async def handle(self, reader, writer):
        up = None
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                    return
                first, headers = parse_head(head)
                method, path = first.split()[:2]
                if path.startswith("/__"):
                    await self.control(path, writer)
                    continue
                s = self.stats
                s.count += 1
                s.in_flight += 1
                s.max_in_flight = max(s.max_in_flight, s.in_flight)
                s.log.append([method, urlsplit(path).path, headers.get("range", "")])
                span = [time.monotonic(), None]
                s.times.append(span)
                try:
                    await asyncio.sleep(s.delay)
                    if up is None:
                        up = await asyncio.open_connection(self.host, self.port, limit=CHUNK)
                    if not await self.relay(method, head, up, writer):
                        up[1].close()
                        up = None
                finally:
                    span[1] = time.monotonic()
                    s.in_flight -= 1
        except (ConnectionError, asyncio.IncompleteReadError, OSError):
            pass
        finally:
            if up is not None:
                up[1].close()
            writer.close()


async def serve(args):
    stats = Stats(args.delay_ms / 1000.0)
    proxy = Proxy(args.upstream, stats)
    server = await asyncio.start_server(proxy.handle, "127.0.0.1", args.port, backlog=512)
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    stop = lambda: done.done() or done.set_result(None)  # noqa: E731
    loop.add_signal_handler(signal.SIGTERM, stop)
    loop.call_later(args.max_seconds, stop)
    print(f"PORT {server.sockets[0].getsockname()[1]}", flush=True)
    await done
    server.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--upstream", required=True, help="HOST:PORT")
    ap.add_argument("--delay-ms", type=float, default=50.0)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--max-seconds", type=float, default=1800.0)
    asyncio.run(serve(ap.parse_args()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
