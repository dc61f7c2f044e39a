"""Interop of time-series stores with zarr-python's development line (../shared/zarr-python-dev, run
with its zp.sh in a Debian 13 chroot): 40 daily GeoTIFF appends through gdal_translate (one run of
40 one-day chunks) and the same store compacted into months read back exactly, values and time.

Runs in the interop leg (ZARR3_INTEROP=1, scripts/interop.sh). The command running zp.sh:
  ZARR3_ZP_CMD           e.g. "chroot /tmp/zarr3-trixie-1 /usr/bin/env -i PATH=/usr/bin:/bin sh
                         /work/shared/zarr-python-dev/zp.sh"; when unset it is derived from a
                         ZARR3_ZARR_PYTHON_CMD of the form "chroot <root> ..."; otherwise skipped.
  ZARR3_INTEROP_TMP      folder visible inside the chroot at the same path (else pytest's tmp_path).
"""
import os
import shlex
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

from test_append import build_cube, days_of, expected_day, meta
from test_compact import cli

pytestmark = pytest.mark.skipif(os.environ.get("ZARR3_INTEROP") != "1",
                                reason="interop tests run via scripts/interop.sh (ZARR3_INTEROP=1)")

REPO = Path(__file__).resolve().parents[1]
ZP_SH = (REPO.parent / "shared" / "zarr-python-dev" / "zp.sh").resolve()

READER = r"""
import sys, numpy as np, zarr
g = zarr.open_group(sys.argv[1], mode="r")
np.save(sys.argv[2], g["cube"][...])
np.save(sys.argv[3], g["time"][...])
print(type(g["cube"].metadata.chunk_grid).__name__, g["cube"].shape)
"""


def zp_cmd():
    """The command prefix running zp.sh, or skip."""
    cmd = os.environ.get("ZARR3_ZP_CMD")
    if cmd:
        return shlex.split(cmd)
    words = shlex.split(os.environ.get("ZARR3_ZARR_PYTHON_CMD", ""))
    if len(words) >= 2 and words[0] == "chroot":
        return ["chroot", words[1], "/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "LANG=C.UTF-8",
                "HOME=/root", "PYTHONDONTWRITEBYTECODE=1", "sh", str(ZP_SH)]
    pytest.skip("no chroot for zarr-python dev: set ZARR3_ZP_CMD (see the module docstring)")


@pytest.fixture
def work(tmp_path):
    base = os.environ.get("ZARR3_INTEROP_TMP")
    if not base:
        return tmp_path
    d = Path(tempfile.mkdtemp(prefix="ts-", dir=base))
    os.chmod(d, 0o755)
    return d


def zp_read(work, store):
    script = work / "read_ts.py"
    script.write_text(READER)
    data, time = work / "data.npy", work / "time.npy"
    p = subprocess.run(zp_cmd() + [str(script), str(store), str(data), str(time)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    return np.load(data), np.load(time), p.stdout


def check(work, store):
    data, time, out = zp_read(work, store)
    assert "(40, 10, 20)" in out, out
    assert data.dtype == np.float32 and data.shape == (40, 10, 20)
    for d in range(1, 41):
        np.testing.assert_array_equal(data[d - 1], expected_day(d))
    assert time.tolist() == [days_of(d) for d in range(1, 41)]
    return out


def test_zarr_python_dev_reads_forty_daily_appends_and_their_compaction(work, run_tool, exe):
    store = build_cube(work, run_tool, 40)
    # Whole one-day chunks keep the grid regular (issue 40.4): every reader opens the daily store.
    assert meta(store, "cube")["chunk_grid"] == {"name": "regular",
                                                 "configuration": {"chunk_shape": [1, 10, 20]}}
    out = check(work, store)
    assert "regular" in out.lower(), out
    p = cli(exe, "compact", store / "cube", "--dim", "time", "--edges", "monthly")
    assert p.returncode == 0, p.stderr
    assert meta(store, "cube")["chunk_grid"]["configuration"]["chunk_shapes"][0] == [31, 9]
    out = check(work, store)
    assert "rectilinear" in out.lower(), out
