"""pytest setup: load the freshly built plugin before GDAL registers its drivers.

GDAL_DRIVER_PATH defaults to <repo>/build (override with the environment
variable, e.g. GDAL_DRIVER_PATH=/path/to/build-x). The conformance corpus is
testdata/conformance in the repository (override: ZARR3_CONFORMANCE; testdata/README.md says
where the test data came from).
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
os.environ.setdefault("GDAL_DRIVER_PATH", str(REPO / "build"))
os.environ["GDAL_DRIVER_PATH"] = str(Path(os.environ["GDAL_DRIVER_PATH"]).resolve())

from osgeo import gdal  # noqa: E402  (must follow the environment set-up)

gdal.UseExceptions()
gdal.AllRegister()

TESTDATA = REPO / "testdata"
CONFORMANCE = Path(os.environ.get("ZARR3_CONFORMANCE", TESTDATA / "conformance")).resolve()
ICECHUNK_UPSTREAM = Path(os.environ.get("ZARR3_ICECHUNK_UPSTREAM",
                                        TESTDATA / "icechunk" / "upstream-test-repos")).resolve()


def pytest_report_header(config):
    drv = gdal.GetDriverByName("Zarr3")
    return [
        f"GDAL {gdal.__version__}, GDAL_DRIVER_PATH={os.environ['GDAL_DRIVER_PATH']}",
        f"Zarr3 driver: {'loaded' if drv else 'NOT LOADED'}; conformance: {CONFORMANCE}",
    ]


@pytest.fixture(scope="session")
def driver_path():
    return os.environ["GDAL_DRIVER_PATH"]


@pytest.fixture(scope="session")
def exe(driver_path):
    """The zarr3 tool beside the plugin (ZARR3_CLI overrides)."""
    p = Path(os.environ.get("ZARR3_CLI", Path(driver_path) / "zarr3"))
    if not p.exists():
        pytest.fail(f"the zarr3 tool is not built at {p}")
    return p


@pytest.fixture(scope="session")
def conformance_dir():
    if not (CONFORMANCE / "cases.txt").exists():
        pytest.fail(f"conformance corpus not found at {CONFORMANCE} (set ZARR3_CONFORMANCE)")
    return CONFORMANCE


def conformance_cases():
    """Case names from cases.txt (empty when the corpus is missing)."""
    f = CONFORMANCE / "cases.txt"
    if not f.exists():
        return []
    return [line.strip() for line in f.read_text().splitlines() if line.strip() and not line.startswith("#")]


@pytest.fixture
def copy_store(tmp_path):
    """copy_store(src_dir, name=None) -> Path of a private copy under tmp_path."""

    def _copy(src, name=None):
        src = Path(src)
        dst = tmp_path / (name or src.name)
        shutil.copytree(src, dst)
        return dst

    return _copy


@pytest.fixture
def run_tool(driver_path):
    """Run a GDAL command-line tool with the plugin on GDAL_DRIVER_PATH."""

    def _run(*args, env_extra=None, check=False):
        env = dict(os.environ, GDAL_DRIVER_PATH=driver_path)
        env.update(env_extra or {})
        p = subprocess.run([str(a) for a in args], env=env, capture_output=True, text=True, timeout=300)
        if check and p.returncode != 0:
            sys.stderr.write(p.stdout + p.stderr)
            raise AssertionError(f"{args[0]} failed with {p.returncode}: {p.stderr}")
        return p

    return _run


class config_option:
    """Context manager setting a GDAL config option (gdal.config_option is GDAL >= 3.7)."""

    def __init__(self, key, value):
        self.key, self.value = key, value

    def __enter__(self):
        self.old = gdal.GetConfigOption(self.key)
        gdal.SetConfigOption(self.key, self.value)
        return self

    def __exit__(self, *exc):
        gdal.SetConfigOption(self.key, self.old)
        return False


def value_or_error(fn):
    """Calls fn(); returns (its value, "") or (None, the GDAL error message),
    whether or not gdal.UseExceptions() is in effect."""
    gdal.ErrorReset()
    try:
        got = fn()
        return got, ("" if got is not None else gdal.GetLastErrorMsg())
    except RuntimeError as e:
        return None, str(e)


def drop_consolidated(store):
    """Removes the consolidated metadata the plugin writes by default from the root zarr.json of
    `store` (a local folder). For tests that edit or break a node's zarr.json by hand, as a store
    without consolidated metadata (older versions of the plugin, other writers) would show it: with
    it, a read-only open reads the consolidated copy of the node, as zarr-python does."""
    import json
    p = Path(store) / "zarr.json"
    root = json.loads(p.read_text())
    assert "consolidated_metadata" in root, f"{p}: no consolidated metadata to drop"
    del root["consolidated_metadata"]
    p.write_text(json.dumps(root, indent=2))
