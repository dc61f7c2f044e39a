"""The Icechunk samples of data/ (scripts/icechunk/make_samples.sh; t2m_2023q1 written by the real Icechunk,
archive.icechunk by `zarr3 virtualize`), shared by
test_icechunk_samples.py (GDAL), test_qgis.py and test_rioxarray.py (the applications):

- data/t2m_2023q1.icechunk: the first 90 days of data/daily_t2m_2023.zarr's /t2m in three monthly
  commits on main, tag `january`, branch `qc` with one correction.
- data/archive.icechunk: one virtual array over data/archive/t2m_2023-0{1,2,3}.nc. Its references name
  file:///tmp/gdal-zarr3-archive/, so placed_archive_files() copies the files there (and removes only
  what it copied).
"""
import contextlib
import datetime
import filecmp
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from osgeo import gdal

from conftest import REPO

DATA = REPO / "data"
ARCHIVE_DIR = Path("/tmp/gdal-zarr3-archive")
MONTHS = [31, 28, 31]
# branch qc: 2023-02-14 (day index 44), lat rows 0-15, lon columns 0-31, -1.5 K
QC = (44, slice(0, 16), slice(0, 32), np.float32(-1.5))
NC_FILES = [f"t2m_2023-0{m}.nc" for m in (1, 2, 3)]
# The modules whose tests use ARCHIVE_DIR (a folder shared by every process on the machine) run their
# tests in one pytest-xdist worker, one after the other: `pytestmark = ARCHIVE_GROUP`.
ARCHIVE_GROUP = pytest.mark.xdist_group("tmp-gdal-zarr3-archive")


def zarr3_log(exe, repo, branch=None):
    """`zarr3 log REPO [--branch BRANCH]` (exe: the conftest fixture of the tool)."""
    p = subprocess.run([str(exe), "log", str(repo)] + (["--branch", branch] if branch else []),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout


@dataclass
class Commit:
    id: str
    time: datetime.datetime  # aware, UTC
    labels: str
    message: str


def history(log):
    """[Commit] of the history part of `zarr3 log`, newest first."""
    out = []
    for line in log.split("history of branch", 1)[1].splitlines()[1:]:
        m = re.match(r"^([0-9A-Z]{20})  (\S+)  (?:\(([^)]*)\)  )?(.*)$", line)
        assert m, f"unexpected zarr3 log line: {line!r}"
        when = datetime.datetime.fromisoformat(m.group(2).replace("Z", "+00:00"))
        out.append(Commit(m.group(1), when, m.group(3) or "", m.group(4)))
    return out


def days_and_qc(message):
    """What a commit of the sample holds, from its message."""
    for prefix, days in (("January 2023 created", 31), ("February 2023 appended", 59), ("March 2023 appended", 90)):
        if message.startswith(prefix):
            return days, False
    if message.startswith("qc: 2023-02-14"):
        return 90, True
    return None


def between(older, newer):
    """An ISO 8601 time strictly between two commits (their midpoint, to the microsecond)."""
    assert older.time < newer.time, (older, newer)
    mid = older.time + (newer.time - older.time) / 2
    assert older.time < mid < newer.time, (older, newer, mid)
    return mid.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@contextlib.contextmanager
def placed_archive_files():
    """The .nc files where data/archive.icechunk's virtual references point (ARCHIVE_DIR): copies only
    the missing ones, and removes afterwards only what it copied (and the folder when it made it).
    Skips with the reason when a file there differs from data/archive/ or the folder cannot be made."""
    made = not ARCHIVE_DIR.exists()
    copied = []
    try:
        try:
            ARCHIVE_DIR.mkdir(exist_ok=True)
            for name in NC_FILES:
                dst = ARCHIVE_DIR / name
                if dst.exists():
                    if not filecmp.cmp(dst, DATA / "archive" / name, shallow=False):
                        pytest.skip(f"{dst} exists and differs from data/archive/{name}: not overwritten")
                    continue
                shutil.copy(DATA / "archive" / name, dst)
                copied.append(dst)
        except OSError as e:
            pytest.skip(f"cannot put the .nc files in {ARCHIVE_DIR} (the virtual chunk container of "
                        f"data/archive.icechunk): {e}")
        yield ARCHIVE_DIR
    finally:
        for f in copied:
            f.unlink(missing_ok=True)
        if made:
            with contextlib.suppress(OSError):  # not when something else was put there meanwhile
                ARCHIVE_DIR.rmdir()


def netcdf_months():
    """The 90 days of the three monthly files, read one by one by GDAL's netCDF driver (the files must be
    in ARCHIVE_DIR: placed_archive_files())."""
    parts = []
    for name in NC_FILES:
        ds = gdal.OpenEx(f'NETCDF:"{ARCHIVE_DIR / name}":t2m', gdal.OF_RASTER | gdal.OF_READONLY)
        assert ds.GetDriver().ShortName == "netCDF"
        assert ds.GetGeoTransform() == (-20.0, 1.0, 0.0, 72.0, 0.0, -1.0)
        parts.append(ds.ReadAsArray())
    assert [p.shape[0] for p in parts] == MONTHS
    return np.concatenate(parts)
