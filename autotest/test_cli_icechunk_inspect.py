"""zarr3 info / verify on Icechunk repositories (issue 40, item 9): every branch tip by default (each
named with its snapshot), or --branch NAME / --tag NAME; verify reads every chunk, virtual ones in
the repository's file:// containers included, and names the version, array and chunk of a problem
(a missing chunk object, a virtual object changed since its reference): exit 1."""
import os
import re
import subprocess

import pytest
from osgeo import gdal

from icechunk_build import build_repo, zarr_json
from test_icechunk_write import source_tif


def run(exe, *args):
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=120)


@pytest.fixture
def repo(tmp_path, run_tool):
    out = tmp_path / "r.icechunk"
    p = run_tool("gdal_translate", "-q", "-of", "Zarr3", "-co", "ICECHUNK=YES", "-co", "BLOCKSIZE=16",
                 source_tif(tmp_path / "src.tif"), out)
    assert p.returncode == 0, p.stderr
    return out


def tips(text):
    return re.findall(r"\[branch (\S+) \(snapshot ([0-9A-Z]{20})\)\]", text)


def test_info_and_verify_read_every_branch_tip_or_the_one_named(exe, repo):
    assert run(exe, "branch", repo, "qc").returncode == 0
    assert run(exe, "tag", repo, "v1").returncode == 0
    r = run(exe, "info", repo)
    assert r.returncode == 0, r.stderr
    assert [b for b, _ in tips(r.stdout)] == ["main", "qc"], r.stdout
    assert r.stdout.count("shape       [2, 30, 40]") == 2, r.stdout
    r = run(exe, "verify", repo)
    assert r.returncode == 0, r.stderr
    assert [b for b, _ in tips(r.stdout)] == ["main", "qc"], r.stdout
    assert "every stored chunk reads" in r.stdout
    r = run(exe, "info", repo, "--branch", "qc")
    assert r.returncode == 0 and [b for b, _ in tips(r.stdout)] == ["qc"], r.stdout + r.stderr
    r = run(exe, "verify", repo, "--tag", "v1")
    assert r.returncode == 0 and "[tag v1 (snapshot " in r.stdout, r.stdout + r.stderr
    r = run(exe, "verify", repo, "--branch", "nope")
    assert r.returncode == 1 and "nope" in r.stderr, r.stderr


def test_verify_names_the_chunk_whose_object_is_missing(exe, repo):
    victim = sorted((repo / "chunks").iterdir())[0]
    victim.unlink()
    r = run(exe, "verify", repo)
    assert r.returncode == 1, r.stdout
    # the object removed may hold a chunk of the data array or of a 1-D coordinate array (x, y)
    m = re.search(r"\[branch main \(snapshot [0-9A-Z]{20}\)\] (\S+/c(?:/\d+)+): .*"
                  + re.escape(f"chunks/{victim.name}") + " is missing", r.stderr)
    assert m, r.stderr
    assert "1 bad chunk(s)" in r.stderr
    r = run(exe, "info", repo)  # info reads no chunk
    assert r.returncode == 0, r.stderr


def test_verify_reads_virtual_chunks_and_their_checks(exe, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    f = data / "jan.bin"
    f.write_bytes(bytes(range(100, 120)))
    os.utime(f, (1_700_000_000, 1_700_000_000))
    url = f"file://{f}"
    refs = [{"index": [0], "location": url, "offset": 2, "length": 4, "last_modified": 1_700_000_000},
            {"index": [1], "location": url, "offset": 8, "length": 4}]
    repo = build_repo(tmp_path / "v.icechunk", [{"path": "/a", "zarr_json": zarr_json([8], [4]),
                                                 "refs": refs}], containers=[f"file://{data}/"])
    r = run(exe, "verify", repo)
    assert r.returncode == 0 and "1 array(s), every stored chunk reads" in r.stdout, r.stderr
    os.utime(f, (1_700_000_100, 1_700_000_100))  # the object changed after the reference
    r = run(exe, "verify", repo)
    assert r.returncode == 1, r.stdout
    assert "a/c/0" in r.stderr and url in r.stderr and "modified after" in r.stderr, r.stderr
    f.unlink()
    r = run(exe, "verify", repo)
    assert r.returncode == 1 and "a/c/1" in r.stderr and "does not exist" in r.stderr, r.stderr


def test_plain_store_options_refused(exe, tmp_path):
    src = source_tif(tmp_path / "src.tif")
    gdal.Translate(str(tmp_path / "p.zarr"), src, format="Zarr3")
    r = run(exe, "info", tmp_path / "p.zarr", "--branch", "main")
    assert r.returncode == 2 and "apply to Icechunk repositories only" in r.stderr, r.stderr
