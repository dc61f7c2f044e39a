"""The `gdal` command line (GDAL >= 3.11: the sid leg) with the plugin: `gdal raster info`,
`gdal raster convert --of Zarr3 --co ...` (and `--overwrite` replacing a store), `gdal mdim info`,
`gdal mdim convert`, and an Icechunk version through `--oo` (issue 32, issue 29); on GDAL >= 3.12
the zarr3 tool's verbs as GDAL driver algorithms, `gdal driver zarr3 VERB` (issue 32).

Skipped where the `gdal` program is missing or older than 3.11 (Debian 12 and 13), the driver
algorithms where GDAL is older than 3.12.
"""
import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from osgeo import gdal

from conftest import REPO

GDAL = shutil.which("gdal")


def gdal_version():
    if not GDAL:
        return (0, 0)
    out = subprocess.run([GDAL, "--version"], capture_output=True, text=True, timeout=60).stdout
    digits = out.split("GDAL", 1)[-1].strip().split(",")[0].split(".")
    try:
        return (int(digits[0]), int(digits[1]))
    except (ValueError, IndexError):
        return (0, 0)


pytestmark = pytest.mark.skipif(gdal_version() < (3, 11), reason="no `gdal` program of GDAL >= 3.11")


def run(*args):
    p = subprocess.run([GDAL, *map(str, args)], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ))
    assert p.returncode == 0, f"gdal {' '.join(map(str, args))}: {p.stderr}"
    return p.stdout


@pytest.fixture
def sample(tmp_path):
    dst = tmp_path / "daily.zarr"
    shutil.copytree(REPO / "data" / "daily_t2m_2023.zarr", dst)
    return dst


def test_raster_info_json(sample):
    info = json.loads(run("raster", "info", "--format", "json", sample))
    assert info["driverShortName"] == "Zarr3"
    assert info["size"] == [64, 32] and len(info["bands"]) == 365


def test_raster_convert_with_creation_options_and_overwrite(sample, tmp_path):
    tif = tmp_path / "day1.tif"
    run("raster", "convert", "--of", "GTiff", f'ZARR3:"{sample}":/t2m', tif)
    out = tmp_path / "out.zarr"
    run("raster", "convert", "--of", "Zarr3", "--co", "COMPRESS=ZSTD", "--co", "BLOCKSIZE=16", tif, out)
    ds = gdal.Open(str(out))
    assert ds.GetRasterBand(1).GetBlockSize() == [16, 16]
    want = gdal.Open(str(tif)).ReadAsArray()
    assert np.array_equal(ds.ReadAsArray(), want)
    ds = None
    # A re-run with --overwrite replaces the store.
    run("raster", "convert", "--overwrite", "--of", "Zarr3", "--co", "BLOCKSIZE=32", tif, out)
    assert gdal.Open(str(out)).GetRasterBand(1).GetBlockSize() == [32, 32]


def test_mdim_info_and_convert(sample, tmp_path):
    info = json.loads(run("mdim", "info", sample))
    assert "t2m" in json.dumps(info["arrays"]) if "arrays" in info else "t2m" in json.dumps(info)
    out = tmp_path / "copy.zarr"
    run("mdim", "convert", "--of", "Zarr3", sample, out)
    a = gdal.OpenEx(str(sample), gdal.OF_MULTIDIM_RASTER).GetRootGroup().OpenMDArray("t2m")
    b = gdal.OpenEx(str(out), gdal.OF_MULTIDIM_RASTER).GetRootGroup().OpenMDArray("t2m")
    assert np.array_equal(a.ReadAsArray(), b.ReadAsArray())


def test_icechunk_version_through_open_options(tmp_path):
    repo = tmp_path / "q1.icechunk"
    shutil.copytree(REPO / "data" / "t2m_2023q1.icechunk", repo)
    info = json.loads(run("raster", "info", "--format", "json", "--oo", "TAG=january", repo))
    assert len(info["bands"]) == 31
    out = tmp_path / "jan.tif"
    run("raster", "convert", "--oo", "TAG=january", repo, out)
    want = gdal.OpenEx(str(repo), gdal.OF_RASTER, open_options=["TAG=january"]).ReadAsArray()
    assert np.array_equal(gdal.Open(str(out)).ReadAsArray(), want)


# ---------------------------------------------------------------- gdal driver zarr3 VERB (GDAL >= 3.12)
driver_algorithms = pytest.mark.skipif(
    gdal_version() < (3, 12), reason="`gdal driver NAME VERB` (driver algorithms) needs GDAL >= 3.12")


def run_rc(*args):
    return subprocess.run([GDAL, *map(str, args)], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ))


def zarr3_tool(*args):
    exe = Path(os.environ["GDAL_DRIVER_PATH"]) / "zarr3"
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=300)


@driver_algorithms
def test_driver_zarr3_lists_the_tools_verbs():
    out = run("driver", "zarr3", "--help")
    for verb in ("info", "verify", "compact", "log", "tag", "branch", "trim", "reset", "expire",
                 "gc"):
        assert f"  {verb} " in out or f"- {verb}:" in out or f"\n{verb}" in out, out
    assert "Re-chunk an array along one dimension" in out, out
    compact = run("driver", "zarr3", "compact", "--help")
    assert "--dim" in compact and "--edges" in compact and "--coord" in compact, compact


@driver_algorithms
def test_driver_zarr3_verify_and_info_print_what_the_tool_prints(sample):
    out = run("driver", "zarr3", "verify", sample)
    assert "5 array(s), every stored chunk reads, none lies outside the extent" in out, out
    assert out == zarr3_tool("verify", sample).stdout
    info = run("driver", "zarr3", "info", sample / "t2m")
    assert info == zarr3_tool("info", sample / "t2m").stdout
    assert "365" in info and "shard" in info, info


@driver_algorithms
def test_driver_zarr3_verify_fails_naming_a_chunk_outside_the_extent(sample):
    (sample / "t2m" / "c" / "12" / "0").mkdir(parents=True)
    shutil.copy(sample / "t2m" / "c" / "3" / "0" / "0", sample / "t2m" / "c" / "12" / "0" / "0")
    p = run_rc("driver", "zarr3", "verify", sample)
    assert p.returncode != 0, p.stdout
    assert "t2m/c/12/0/0: stored chunk outside the array's extent" in p.stderr, p.stderr
    assert "every stored chunk reads" not in p.stdout


@driver_algorithms
def test_driver_zarr3_compact_rechunks_and_keeps_the_values(sample):
    before = gdal.Open(str(sample)).ReadAsArray()
    out = run("driver", "zarr3", "compact", sample / "t2m", "--dim", "time", "--edges", "73")
    assert "axis 0 (time)" in out and "-> 73" in out, out
    meta = json.loads((sample / "t2m" / "zarr.json").read_text())
    assert meta["chunk_grid"]["configuration"]["chunk_shapes"][0] == [[73, 5]]  # an even axis as a list (issue 40.5)
    chunks = [p for p in (sample / "t2m").rglob("*") if p.is_file() and p.name != "zarr.json"]
    assert len(chunks) == 5, chunks
    assert np.array_equal(gdal.Open(str(sample)).ReadAsArray(), before)
    # A missing required option is refused by GDAL's own argument checking.
    p = run_rc("driver", "zarr3", "compact", sample / "t2m", "--dim", "time")
    assert p.returncode != 0 and "edges" in p.stderr, p.stderr


@driver_algorithms
def test_driver_zarr3_log_lists_branches_tags_and_history(tmp_path):
    repo = tmp_path / "q1.icechunk"
    shutil.copytree(REPO / "data" / "t2m_2023q1.icechunk", repo)
    out = run("driver", "zarr3", "log", repo, "--branch", "qc")
    assert out == zarr3_tool("log", repo, "--branch", "qc").stdout
    assert "branches:" in out and "tag: january" in out and "history of branch qc" in out, out
    p = run_rc("driver", "zarr3", "log", tmp_path / "missing")
    assert p.returncode != 0 and "missing" in p.stderr, p.stderr
    p = run_rc("driver", "zarr3", "info", "/vsis3/bucket/x.zarr")
    assert p.returncode != 0 and "zarr3: /vsis3" not in p.stderr, p.stderr
    assert "info: /vsis3/bucket/x.zarr: zarr3 info works on local folders only" in p.stderr, p.stderr


@driver_algorithms
def test_driver_zarr3_tag_and_branch_add_references(tmp_path):
    """`gdal driver zarr3 tag|branch REPO NAME [SNAPSHOT]`: the tool's positional arguments."""
    repo = tmp_path / "q1.icechunk"
    shutil.copytree(REPO / "data" / "t2m_2023q1.icechunk", repo)
    out = run("driver", "zarr3", "tag", repo, "v1", "january")
    assert "tag v1 -> " in out, out
    run("driver", "zarr3", "branch", repo, "work")
    log = zarr3_tool("log", repo).stdout
    assert "  v1 -> " in log and "  work -> " in log, log
    jan = gdal.OpenEx(str(repo), gdal.OF_RASTER, open_options=["TAG=january"]).ReadAsArray()
    assert np.array_equal(gdal.OpenEx(str(repo), gdal.OF_RASTER, open_options=["TAG=v1"]).ReadAsArray(), jan)
    p = run_rc("driver", "zarr3", "tag", repo, "v1")
    assert p.returncode != 0 and "already exists" in p.stderr, p.stderr


@driver_algorithms
def test_driver_zarr3_trim_and_reset(sample, tmp_path):
    """Undo (issue 40.8): `gdal driver zarr3 trim|reset` run the tool's verbs (options and the
    optional SNAPSHOT positional of reset)."""
    before = gdal.Open(f'ZARR3:"{sample}":/t2m').ReadAsArray()
    out = run("driver", "zarr3", "trim", sample / "t2m", "--dim", "time", "--length", "40")
    assert "time 365 -> 40" in out, out
    assert np.array_equal(gdal.Open(f'ZARR3:"{sample}":/t2m').ReadAsArray(), before[:40])
    p = run_rc("driver", "zarr3", "trim", sample / "t2m", "--dim", "time", "--length", "40")
    assert p.returncode != 0 and "cannot trim axis 0 to 40 elements" in p.stderr, p.stderr
    repo = tmp_path / "q1.icechunk"
    shutil.copytree(REPO / "data" / "t2m_2023q1.icechunk", repo)
    out = run("driver", "zarr3", "reset", repo, "--branch", "main", "--to-tag", "january")
    assert "branch main -> " in out and "(was " in out, out
    previous = out.split("(was ", 1)[1].split(";", 1)[0]
    out = run("driver", "zarr3", "reset", repo, previous, "--branch", "main")
    assert f"branch main -> {previous}" in out, out


@driver_algorithms
def test_driver_zarr3_expire_and_gc(tmp_path):
    """History expiry (issue 43): `gdal driver zarr3 expire|gc` run the tool's verbs; main and the
    tag january read the same after, the repository keeps fewer snapshots."""
    repo = tmp_path / "q1.icechunk"
    shutil.copytree(REPO / "data" / "t2m_2023q1.icechunk", repo)
    want = {opt: gdal.OpenEx(str(repo), gdal.OF_MULTIDIM_RASTER, open_options=[opt])
            .GetRootGroup().OpenMDArray("t2m").ReadAsArray() for opt in ("TAG=january", "BRANCH=main")}
    snapshots = len(os.listdir(repo / "snapshots"))
    out = run("driver", "zarr3", "expire", repo, "--older-than", "2100-01-01")
    assert "expired 1 snapshot(s)" in out, out
    out = run("driver", "zarr3", "gc", repo, "--grace", "0")
    assert "deleted " in out, out
    assert len(os.listdir(repo / "snapshots")) == snapshots - 1
    for opt, values in want.items():
        got = gdal.OpenEx(str(repo), gdal.OF_MULTIDIM_RASTER, open_options=[opt]) \
            .GetRootGroup().OpenMDArray("t2m").ReadAsArray()
        assert np.array_equal(got.view(np.uint32), values.view(np.uint32)), opt
    p = run_rc("driver", "zarr3", "expire", repo)
    assert p.returncode != 0 and "older-than" in p.stderr, p.stderr


@driver_algorithms
def test_driver_zarr3_virtualize_writes_what_the_tool_writes(tmp_path):
    """`gdal driver zarr3 virtualize` (issue 42): the tool's verb inside the plugin (libhdf5 linked
    there on GDAL >= 3.12): the 4 monthly files as one repository, the same summary and values as
    `zarr3 virtualize`; --append of a 5th file, --relocate given twice, --no-checksum; a refusal is a
    GDAL error naming the file."""
    from virtual_months import netcdf_values, write_month, write_months

    months = write_months(tmp_path / "nc")
    repo, tool_repo = tmp_path / "g.icechunk", tmp_path / "t.icechunk"
    out = run("driver", "zarr3", "virtualize", repo, *months, "--concat-dim", "time", "--no-checksum")
    tool = zarr3_tool("virtualize", tool_repo, *months, "--concat-dim", "time", "--no-checksum")
    assert tool.returncode == 0, tool.stderr
    assert "4 file(s), 3 virtual array(s)" in out and "no modification time recorded" in out, out
    strip = (lambda s: s.split("  commit ")[0].replace(str(repo), "R").replace(str(tool_repo), "R"))
    assert strip(out) == strip(tool.stdout)
    for var in ("t2m", "sp", "tp"):
        got = gdal.Open(f'ZARR3:"{repo}":/{var}').ReadAsArray()
        assert np.array_equal(got, netcdf_values(months, var)), var
    may = tmp_path / "more" / "t2m_2023-05.nc"
    may.parent.mkdir()
    write_month(may, 5, 31)
    out = run("driver", "zarr3", "virtualize", repo, may, "--concat-dim", "time", "--append")
    assert "1 file(s)" in out, out
    assert gdal.Open(f'ZARR3:"{repo}":/t2m').RasterCount == 151
    moved = tmp_path / "moved"
    shutil.move(tmp_path / "nc", moved)
    out = run("driver", "zarr3", "virtualize", repo, "--relocate", f"file://{tmp_path}/nc/",
              "--relocate", f"file://{moved}/")
    assert " reference(s) moved" in out, out
    files = [moved / f.name for f in months] + [may]
    assert np.array_equal(gdal.Open(f'ZARR3:"{repo}":/t2m').ReadAsArray(), netcdf_values(files, "t2m"))
    p = run_rc("driver", "zarr3", "virtualize", tmp_path / "x.icechunk", "/vsis3/bucket/a.nc",
               "--concat-dim", "time")
    assert p.returncode != 0 and "/vsis3/bucket/a.nc" in p.stderr and "zarr3: " not in p.stderr, p.stderr
    assert not (tmp_path / "x.icechunk").exists()
