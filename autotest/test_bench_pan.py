"""bench/pan.py (issue 44, the pan rows of `make bench`) at a smoke-test size: the script writes the
sharded and the regular store, times random windows and the same window again at 1 thread and
ALL_CPUS, asks whether the same window read again after another process replaced the chunk under it
gives the new values, and its section replaces the old one in RESULTS.md. The bench itself (a
4096x4096 array, against GDAL 3.13's own driver in the sid chroot) runs only in scripts/bench.sh."""
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BUILD = os.environ["GDAL_DRIVER_PATH"]
PAN = str(REPO / "bench" / "pan.py")


def run(*args):
    p = subprocess.run([sys.executable, PAN, *args], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr[-3000:]
    return p.stdout


def test_small_run_prints_the_rows_and_the_plugin_is_never_stale(tmp_path):
    work, out = tmp_path / "work", tmp_path / "plugin.json"
    small = ["--size", "512", "--windows", "8", "--again", "3", "--reps", "1"]
    run("--prepare", "--work", str(work), "--plugin-dir", BUILD, *small)
    run("--work", str(work), "--driver", "Zarr3", "--plugin-dir", BUILD, "--json", str(out), *small)
    res = json.loads(out.read_text())
    assert set(res["rows"]) == {"sharded/1", "sharded/ALL_CPUS", "regular/1", "regular/ALL_CPUS"}
    for key, row in res["rows"].items():
        assert row.get("window_ms", 0) > 0 and row.get("again_ms", 0) > 0, (key, row)
    assert res["stale"] == {"stale": False}, res["stale"]
    md = tmp_path / "RESULTS.md"
    md.write_text("# R\n\n## Pan and zoom\n\nOLDROWS\n\n## Absolute times\n\ny\n")
    run("--report", str(out), str(tmp_path / "no-peer.json"), str(md))
    text = md.read_text()
    assert "OLDROWS" not in text and text.endswith("y\n")
    assert "| regular, same window again | ALL_CPUS |" in text
    assert "the plugin gives the new values" in text
