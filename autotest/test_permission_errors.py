"""Permission errors name the permission problem (issue 32, point 6): an append into a store whose
chunk folder is read-only says which folder could not be created and `Permission denied` (it said
`writing the temporary file 0.tmp... failed (No such file or directory)`), a read-only store names its
lock file, a read-only parent folder names the store folder; each leaves the store as it was.

The tests run as root, which ignores file permissions: the commands run under `setpriv` with the
capabilities that bypass them (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER) dropped."""
import shutil
import stat
import subprocess

import os

import pytest

# The sanitizer leg preloads ASan into Python; tools started through setpriv then refuse to run
# ("ASan runtime does not come first"). The plain legs run these tests.
pytestmark = pytest.mark.skipif("asan" in os.environ.get("LD_PRELOAD", ""),
                                reason="setpriv'd GDAL tools cannot run under the ASan preload")

from test_append import DRV, KEEP, build_cube, day_tif, read_cube

SETPRIV = shutil.which("setpriv")
DROP = [SETPRIV, "--bounding-set=-dac_override,-dac_read_search,-fowner,-linux_immutable", "--"]


@pytest.fixture
def as_plain_user(tmp_path, driver_path):
    """Runs a command without the capabilities that bypass file permissions; skips when the
    permissions still do not apply (no setpriv, or a kernel/container that keeps the bypass)."""
    if SETPRIV is None:
        pytest.skip("setpriv (util-linux) is not installed: root would bypass the permissions")
    probe = tmp_path / "probe"
    probe.mkdir()
    probe.chmod(0o555)
    p = subprocess.run([*DROP, "touch", str(probe / "x")], capture_output=True, text=True)
    probe.chmod(0o755)
    if p.returncode == 0:
        pytest.skip("dropping CAP_DAC_OVERRIDE did not make a read-only folder read-only here")

    def run(*args):
        env = {"GDAL_DRIVER_PATH": driver_path, "PATH": "/usr/bin:/bin"}
        return subprocess.run([*DROP, *map(str, args)], capture_output=True, text=True, env=env,
                              timeout=120)

    return run


def files_of(store):
    return {str(p.relative_to(store)): p.read_bytes() for p in sorted(store.rglob("*")) if p.is_file()}


def append_args(src, store):
    keep = [a for k in KEEP for a in ("-co", k)]
    return ["gdal_translate", "-q", "-of", DRV, "-co", "APPEND_DIM=time", *keep, src, store]


def make_read_only(*folders):
    for f in folders:
        f.chmod(f.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def writable_again(root):
    for p in [root, *root.rglob("*")]:
        if p.is_dir():
            p.chmod(p.stat().st_mode | stat.S_IWUSR)


def test_append_into_read_only_chunk_folder_names_permission_denied(tmp_path, run_tool, as_plain_user):
    store = build_cube(tmp_path, run_tool, 2)
    before = files_of(store)
    make_read_only(store / "cube" / "c")
    try:
        p = as_plain_user(*append_args(day_tif(tmp_path / "d3.tif", 3), store))
    finally:
        writable_again(store)
    assert p.returncode != 0
    assert "cube/c/2/0: cannot create the folder (Permission denied)" in p.stderr, p.stderr
    assert "No such file or directory" not in p.stderr and "0.tmp" not in p.stderr, p.stderr
    assert files_of(store) == before
    assert read_cube(store)[1] == 2


def test_append_into_read_only_store_names_the_lock_file(tmp_path, run_tool, as_plain_user):
    store = build_cube(tmp_path, run_tool, 2)
    before = files_of(store)
    make_read_only(*[p for p in [store, *store.rglob("*")] if p.is_dir()])
    try:
        p = as_plain_user(*append_args(day_tif(tmp_path / "d3.tif", 3), store))
    finally:
        writable_again(store)
    assert p.returncode != 0
    assert "cube/zarr.json.lock: cannot create the lock file (Permission denied)" in p.stderr, p.stderr
    assert files_of(store) == before


def test_new_store_in_read_only_folder_names_permission_denied(tmp_path, as_plain_user):
    parent = tmp_path / "ro"
    parent.mkdir()
    make_read_only(parent)
    try:
        p = as_plain_user("gdal_translate", "-q", "-of", DRV, day_tif(tmp_path / "d1.tif", 1), parent / "new.zarr")
    finally:
        writable_again(parent)
    assert p.returncode != 0
    assert "new.zarr: cannot create the folder (Permission denied)" in p.stderr, p.stderr
    assert list(parent.iterdir()) == []
