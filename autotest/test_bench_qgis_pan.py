"""bench/qgis_pan.py (issue 44, the scripted QGIS pan) at a smoke-test size, plugin side only: the
store opens as a QGIS layer through the Zarr3 plugin, 40 frames render opaque, and its section replaces
the old one in RESULTS.md. GDAL 3.13's side (sid chroot) runs only in scripts/bench.sh.
Skipped when /usr/bin/python3 cannot import qgis.core."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from qgis_child import PYTHON, qgis_importable

REPO = Path(__file__).resolve().parent.parent
BUILD = os.environ["GDAL_DRIVER_PATH"]
SCRIPT = REPO / "bench" / "qgis_pan.py"
sys.path.insert(0, str(REPO / "bench"))
import qgis_pan  # noqa: E402


def test_extents_stay_inside_and_overlap():
    for n in (256, 4096):
        boxes = qgis_pan.frames(n)
        assert len(boxes) == 40
        assert all(d / 2 <= x <= n - d / 2 and d / 2 <= y <= n - d / 2 for x, y, d in boxes)
        assert sorted({round(d / boxes[0][2], 2) for _, _, d in boxes}) == [0.5, 1.0, 2.0]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """A 256x256 regular store and its GeoTIFF copy (--prepare)."""
    if not qgis_importable():
        pytest.skip("qgis.core is not importable by /usr/bin/python3")
    w = tmp_path_factory.mktemp("qgis-pan") / "w"
    p = subprocess.run([PYTHON, str(SCRIPT), "--prepare", "--work", str(w), "--plugin-dir", BUILD,
                        "--size", "256"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    return w


def test_small_pan_renders_through_the_plugin(work, tmp_path, monkeypatch):
    out = tmp_path / "plugin.json"
    p = subprocess.run([PYTHON, str(SCRIPT), "--work", str(work), "--driver", "Zarr3", "--plugin-dir",
                        BUILD, "--reps", "1", "--json", str(out)], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    res = json.loads(out.read_text())
    assert (res["driver"], res["frames"], res["size"], res["image"]) == ("Zarr3", 40, 256, 38)
    assert res["frame_ms"] > 0 and res["mean_gray"] > 0
    assert res["control"]["frame_ms"] > 0 and abs(res["control"]["mean_gray"] - res["mean_gray"]) < 0.5
    md = tmp_path / "RESULTS.md"
    md.write_text("# R\n\n## QGIS pan\n\nOLDROWS\n\n## Absolute times\n\ny\n")
    monkeypatch.setattr(sys, "argv", ["qgis_pan.py", "--report", str(out), str(tmp_path / "no.json"),
                                      str(md)])
    assert qgis_pan.main() == 0
    text = md.read_text()
    assert "OLDROWS" not in text and "regular 256x256 float32" in text and text.endswith("y\n")
    assert "| plugin (host) | " + res["qgis"] in text and "(not run)" in text


def test_wrong_driver_fails_loudly(work):
    p = subprocess.run([PYTHON, str(SCRIPT), "--work", str(work), "--driver", "Zarr", "--plugin-dir",
                        BUILD, "--reps", "1"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 1 and "opened by the driver Zarr3, not Zarr" in p.stdout


def test_section_says_the_qgis_versions_differ():
    side = {"qgis": "3.22.16", "gdal": "3.6.2", "driver": "Zarr3", "frame_ms": 20.0, "runs_ms": [20.0],
            "reps": 3, "load": "1.00 1.00 1.00", "mean_gray": 127.0, "size": 4096}
    peer = dict(side, qgis="3.44.15", gdal="3.13.3", driver="Zarr", frame_ms=50.0, runs_ms=[50.0])
    text = "\n".join(qgis_pan.section(side, peer))
    assert "**2.50**" in text and "different QGIS versions" in text and "1200x1200" in text
    assert "Control" not in text
    side["control"] = {"frame_ms": 10.0, "runs_ms": [10.0], "mean_gray": 127.0}
    peer["control"] = {"frame_ms": 20.0, "runs_ms": [20.0], "mean_gray": 127.0}
    text = "\n".join(qgis_pan.section(side, peer))
    assert "sid / host = 2.00" in text and "divided by it is 1.25" in text
    assert "| GeoTIFF copy, sid chroot (control) | 3.44.15 | 3.13.3 | GTiff | 20.0 |" in text
    assert "(failed: boom)" in "\n".join(qgis_pan.section(side, {"error": "boom", "load": "1"}))
