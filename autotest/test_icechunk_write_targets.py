"""Where a write into an Icechunk repository lands (issue 39, points 6-8):
- a branch in an output name (ICECHUNK:repo?branch=dev) is honoured by every writer (CreateCopy
  classic and multidimensional, Create, appends, update opens); a branch that does not exist is refused naming
  `zarr3 branch` (writers never create branches); a tag, a snapshot or as_of in an output name is
  refused (versions are read-only), nothing written;
- any valid branch name (a&b, q?x) is committed to and reopened: the command's exit code is what
  was committed;
- the repository's own write policy (spec 2's repo file): a status other than Online refuses every
  writer, naming the status (the tool's part is in test_cli_icechunk.py).
"""
import re
import urllib.parse

import numpy as np
import pytest
from osgeo import gdal

from icechunk_build import edit_repo
import test_icechunk_write
from test_icechunk_write import (ZARR3, append, day_tif, errors_of, files_of, repo,  # noqa: F401
                                 run, series, source_tif)


def history(repo, branch="main"):
    """[(snapshot id, message)] of `branch`, newest first, without the refs' names."""
    return [(i, re.sub(r"^\([^)]*\)\s+", "", m)) for i, m in test_icechunk_write.history(repo, branch)]


def branch(repo, name):
    run(ZARR3, "branch", repo, name)


def quoted(name):
    return urllib.parse.quote(name, safe="")


def write(kind, tmp_path, target):
    """Writes into output name `target` with writer `kind`; the completed process."""
    if kind == "copy":
        return run("gdal_translate", "-q", "-of", "Zarr3", "-co", "COMMIT_MESSAGE=w",
                   source_tif(tmp_path / "w.tif", value_scale=2), target, check=False)
    if kind == "mdim":
        return run("gdalmdimtranslate", "-q", "-of", "Zarr3", "-co", "COMMIT_MESSAGE=w",
                   source_tif(tmp_path / "w.tif", value_scale=2), target, check=False)
    if kind == "append":
        return run("gdal_translate", "-q", "-of", "Zarr3", "-co", "APPEND_DIM=time", "-co",
                   "APPEND_COORD=2024-01-02", "-co", "COMMIT_MESSAGE=w", day_tif(tmp_path, 2), target,
                   check=False)
    if kind == "update":
        code = ("import sys; import numpy as np; from osgeo import gdal; gdal.UseExceptions()\n"
                "ds = gdal.OpenEx(sys.argv[1], gdal.OF_RASTER | gdal.OF_UPDATE,"
                " open_options=['COMMIT_MESSAGE=w'])\n"
                "ds.GetRasterBand(1).WriteArray(np.full((1, 1), 5, 'f4'), 0, 0); ds = None\n")
        return run("/usr/bin/python3", "-c", code, target, check=False)
    code = ("import sys; from osgeo import gdal; gdal.UseExceptions()\n"
            "ds = gdal.GetDriverByName('Zarr3').Create(sys.argv[1], 4, 3, 1, gdal.GDT_Byte,"
            " options=['COMMIT_MESSAGE=w'])\n"
            "ds.GetRasterBand(1).Fill(9); ds = None\n")
    return run("/usr/bin/python3", "-c", code, target, check=False)


WRITERS = ["copy", "mdim", "create", "append", "update"]


@pytest.mark.parametrize("kind", WRITERS)
def test_every_writer_commits_on_the_branch_its_output_name_gives(tmp_path, series, kind):
    repo = series
    branch(repo, "dev")
    main = history(repo)
    p = write(kind, tmp_path, f"ICECHUNK:{repo}?branch=dev")
    assert p.returncode == 0, p.stderr
    assert history(repo) == main  # main untouched
    dev = history(repo, "dev")
    assert dev[0][1] == "w" and dev[1][0] == main[0][0]
    ds = gdal.OpenEx(repo, gdal.OF_RASTER, open_options=["BRANCH=dev"])
    if kind == "append":
        assert ds.RasterCount == 2 and ds.GetRasterBand(2).ReadAsArray()[0, 0] == 2
    elif kind == "create":
        assert (ds.ReadAsArray() == 9).all()
    elif kind == "copy":
        assert ds.ReadAsArray()[1, 0, 1] == 4  # band 2, value_scale 2
    elif kind == "update":
        assert ds.ReadAsArray()[0, 0] == 5 and gdal.Open(repo).ReadAsArray()[0, 0] == 1


@pytest.mark.parametrize("kind", WRITERS)
@pytest.mark.parametrize("version", ["tag=v1", "snapshot={snap}", "as_of=2030-01-01T00:00:00Z",
                                     "branch=nope"])
def test_a_version_or_a_missing_branch_in_an_output_name_is_refused(tmp_path, series, kind,
                                                                    version):
    repo = series
    run(ZARR3, "tag", repo, "v1")
    before, main = files_of(repo), history(repo)
    p = write(kind, tmp_path, f"ICECHUNK:{repo}?" + version.format(snap=main[0][0]))
    assert p.returncode != 0
    if version == "branch=nope":
        assert "no branch 'nope'" in p.stderr and "zarr3 branch" in p.stderr, p.stderr
    else:
        assert "versions are read-only" in p.stderr, p.stderr
    assert history(repo) == main and files_of(repo) == before


def test_a_branch_other_than_main_in_a_new_repository_is_refused(tmp_path):
    target = tmp_path / "new.icechunk"
    p = write("copy", tmp_path, f"ICECHUNK:{target}?branch=dev")
    assert p.returncode != 0 and "no branch 'dev'" in p.stderr, p.stderr
    assert not target.exists()


@pytest.mark.parametrize("name", ["a&b", "q?x", "50%"])
def test_an_append_to_any_branch_name_reopens_what_it_committed(tmp_path, series, name):
    branch(series, name)
    p = append(tmp_path, series, 2, "-co", f"BRANCH={name}", "-co", "COMMIT_MESSAGE=day 2",
               check=False)
    assert p.returncode == 0, p.stderr
    assert history(series, name)[0][1] == "day 2" and history(series)[0][1] == "day 1"
    # The same branch in the output name, its value %-escaped.
    target = f"ICECHUNK:{series}?branch={quoted(name)}"
    p = append(tmp_path, target, 3, "-co", "COMMIT_MESSAGE=day 3", check=False)
    assert p.returncode == 0, p.stderr
    assert [m for _, m in history(series, name)[:2]] == ["day 3", "day 2"]
    ds = gdal.Open(target)
    assert [ds.GetRasterBand(b).ReadAsArray()[0, 0] for b in (1, 2, 3)] == [1, 2, 3]
    # A retry of the same day is refused as already stored: nothing was half-done.
    p = append(tmp_path, series, 3, "-co", f"BRANCH={name}", check=False)
    assert p.returncode != 0 and len(history(series, name)) == 4


@pytest.mark.parametrize("status", ["read_only", "offline"])
def test_a_repository_not_online_refuses_every_writer(tmp_path, series, status):
    edit_repo(series, "--status", status, "gc running")
    word = {"read_only": "ReadOnly", "offline": "Offline"}[status]
    before, main = files_of(series), history(series)
    for kind in WRITERS:
        p = write(kind, tmp_path, series if kind in ("append", "update") else f"ICECHUNK:{series}")
        assert p.returncode != 0, kind
        assert f"status is {word} (gc running)" in p.stderr, (kind, p.stderr)
    errs = errors_of(lambda: gdal.OpenEx(series, gdal.OF_RASTER | gdal.OF_UPDATE))
    assert any(f"status is {word}" in e for e in errs), errs
    assert history(series) == main and files_of(series) == before
    edit_repo(series, "--status", "online")
    p = append(tmp_path, series, 2, check=False)
    assert p.returncode == 0, p.stderr
    assert gdal.Open(series).RasterCount == 2
