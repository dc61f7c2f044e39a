"""Runs a Python script that reads a store in a child process with bounded
memory and time, and returns the JSON it prints on a line starting with
"RESULT:" (hostile-input tests: a crash, an abort or runaway memory in the
child fails the test instead of killing pytest)."""

import json
import os
import resource
import subprocess
import sys
import time

ASAN = "asan" in os.environ.get("LD_PRELOAD", "")


def limiter(memory_bytes):
    """A preexec_fn bounding the child's address space (not under ASan,
    which reserves far more address space than it uses)."""

    def limit():
        if not ASAN:
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

    return limit


def run_script(script, args, memory_bytes, timeout):
    """Returns (result dict, elapsed seconds)."""
    t0 = time.monotonic()
    p = subprocess.run(
        [sys.executable, "-c", script, *[str(a) for a in args]],
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=limiter(memory_bytes),
        env=dict(os.environ),
    )
    elapsed = time.monotonic() - t0
    assert p.returncode >= 0, f"reader killed by signal {-p.returncode}: {p.stderr[-3000:]}"
    assert p.returncode == 0, f"exit {p.returncode}: {p.stderr[-3000:]}"
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT:")]
    assert line, p.stdout[-2000:] + p.stderr[-2000:]
    return json.loads(line[0][len("RESULT:"):]), elapsed
