"""bench/many_writers.py (issue 43, the many-writers rows of `make bench`) at a smoke-test size: the
script starts moto on 127.0.0.1, writes a plain store from one process and runs the dask job of
disjoint windows into a repository with 1 and 2 worker processes (each read back bit-exact), prints
the rows as ratios, and its section replaces the old one in RESULTS.md. The bench itself (a
4096x4096 array) runs only in scripts/bench.sh. Skipped without python3-distributed or an S3 server
that honours If-Match, and under the ASan preload (worker processes)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BUILD = os.environ["GDAL_DRIVER_PATH"]
sys.path.insert(0, str(REPO / "bench"))
import many_writers  # noqa: E402


def test_small_run_prints_the_rows_as_ratios(tmp_path, monkeypatch):
    pytest.importorskip("distributed")
    if "asan" in os.environ.get("LD_PRELOAD", ""):
        pytest.skip("dask workers are not run under the ASan preload")
    out = tmp_path / "writers.json"
    p = subprocess.run([sys.executable, str(REPO / "bench" / "many_writers.py"), "--plugin-dir", BUILD,
                        "--size", "128", "--block", "64", "--window", "64x128", "--reps", "1",
                        "--json", str(out)], capture_output=True, text=True, timeout=300)
    res = json.loads(out.read_text()) if out.exists() else {}
    if res.get("error", "").startswith("NoServer"):
        pytest.skip(res["error"])
    assert p.returncode == 0, p.stdout + p.stderr[-3000:]
    assert res["windows"] == 2 and all(res[k] > 0 for k in ("plain_s", "job1_s", "job2_s")), res
    assert "| job, 2 worker processes, repository |" in p.stdout and "| 2 workers / 1 worker |" in p.stdout
    md = tmp_path / "RESULTS.md"
    md.write_text("# R\n\n## Many writers\n\nOLDROWS\n\n## Absolute times\n\ny\n")
    monkeypatch.setattr(sys, "argv", ["many_writers.py", "--report", str(out), str(md)])
    assert many_writers.main() == 0
    text = md.read_text()
    assert "OLDROWS" not in text and "128x128 float32" in text and text.endswith("y\n")


def test_failure_is_a_section_not_a_crash():
    assert "(failed: boom)" in "\n".join(many_writers.section({"error": "boom"}))
    assert "(not run)" in "\n".join(many_writers.section(None))
