"""bench/virtualize.py (issue 42, the virtual-archive rows of `make bench`) at a smoke-test size: the
script writes daily NetCDF-4 files, times `zarr3 virtualize` and the full read of the virtual array
against GDAL's netCDF driver (checked equal), prints the rows as ratios, and its section replaces the
old one in RESULTS.md. The bench itself (100 daily files) runs only in scripts/bench.sh."""
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BUILD = os.environ["GDAL_DRIVER_PATH"]
sys.path.insert(0, str(REPO / "bench"))
import virtualize  # noqa: E402


def test_small_run_prints_the_rows_as_ratios(tmp_path, monkeypatch):
    out = tmp_path / "virtualize.json"
    p = subprocess.run([sys.executable, str(REPO / "bench" / "virtualize.py"), "--plugin-dir", BUILD,
                        "--files", "3", "--nlat", "20", "--nlon", "40", "--chunk", "10", "--reps", "1",
                        "--json", str(out), "--work", str(tmp_path / "w")],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    res = json.loads(out.read_text())
    assert "error" not in res, res
    assert res["refs"] == 3 * 2 * 4 and res["copied"] == 0, res  # 2 x 4 chunks of 10 x 10 per file
    assert res["read_ratio"] == res["read_plugin_s"] / res["read_netcdf_s"] > 0
    assert res["per_ref_ms"] == 1000 * res["virtualize_s"] / res["refs"]
    assert "| zarr3 virtualize |" in p.stdout and "| full read, virtual array (plugin) |" in p.stdout
    md = tmp_path / "RESULTS.md"
    md.write_text("# R\n\n## Virtual archives\n\nOLDROWS\n\n## Absolute times\n\ny\n")
    monkeypatch.setattr(sys, "argv", ["virtualize.py", "--report", str(out), str(md)])
    assert virtualize.main() == 0
    text = md.read_text()
    assert "OLDROWS" not in text and "3 daily NetCDF-4 files" in text and text.endswith("y\n")


def test_failure_is_a_section_not_a_crash():
    assert "(failed: boom)" in "\n".join(virtualize.section({"error": "boom"}))
    assert "(not run)" in "\n".join(virtualize.section(None))
