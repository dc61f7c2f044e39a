"""bench/many_groups.py (issue 39, the gdalmdiminfo row of many groups) at a smoke-test size: the
script writes the same tree as an Icechunk repository (through the plugin) and as a plain Zarr v2
store (for GDAL's own driver), both readers list every group, and its section replaces the old one
in RESULTS.md. The bench itself (20,000 groups) runs only in scripts/bench.sh."""
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BUILD = os.environ["GDAL_DRIVER_PATH"]
sys.path.insert(0, str(REPO / "bench"))
import many_groups  # noqa: E402


def test_small_run_lists_the_same_tree_with_both_drivers(tmp_path, monkeypatch):
    out = tmp_path / "groups.json"
    p = subprocess.run([sys.executable, str(REPO / "bench" / "many_groups.py"), "--plugin-dir", BUILD,
                        "--groups", "250", "--reps", "1", "--json", str(out), "--work", str(tmp_path / "w")],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    res = json.loads(out.read_text())
    for kind in ("plugin", "gdal"):
        assert "error" not in res[kind], res
        assert {k: res[kind][k] for k in ("groups", "inner", "arrays")} == many_groups.expected(250)
    assert "| Zarr3 plugin, Icechunk repository |" in p.stdout
    assert "| GDAL's Zarr driver, plain store (v2) |" in p.stdout
    md = tmp_path / "RESULTS.md"
    md.write_text("# R\n\n## Many groups\n\nOLDROWS\n\n## Absolute times\n\ny\n")
    monkeypatch.setattr(sys, "argv", ["many_groups.py", "--report", str(out), str(md)])
    assert many_groups.main() == 0
    text = md.read_text()
    assert "OLDROWS" not in text and "250 groups" in text and text.endswith("y\n")


def test_failure_is_a_section_not_a_crash():
    assert "(failed: boom)" in "\n".join(many_groups.section({"error": "boom"}))
    assert "(not run)" in "\n".join(many_groups.section(None))
