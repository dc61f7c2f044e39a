"""Icechunk repositories through GDAL, on the upstream compatibility repositories
(testdata/icechunk/upstream-test-repos, written by Icechunk itself; see test_can_read_old.py.txt
there). Repositories written by the real Icechunk in the interop leg: test_icechunk_interop.py.

Each test copies what it opens to a temporary folder: nothing is written beside the repository's copies (testdata/).
"""
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from osgeo import gdal

from conftest import ICECHUNK_UPSTREAM

UPSTREAM = ICECHUNK_UPSTREAM

pytestmark = pytest.mark.skipif(not (UPSTREAM / "test-repo-v2" / "repo").exists(),
                                reason=f"no upstream Icechunk repositories in {UPSTREAM}")


@pytest.fixture
def v2(tmp_path):
    dst = tmp_path / "test-repo-v2"
    shutil.copytree(UPSTREAM / "test-repo-v2", dst)
    return str(dst)


@pytest.fixture
def v1(tmp_path):
    dst = tmp_path / "test-repo-v1"
    shutil.copytree(UPSTREAM / "test-repo-v1", dst)
    return str(dst)


def error_of(fn):
    gdal.ErrorReset()
    gdal.PushErrorHandler("CPLQuietErrorHandler")
    try:
        got = fn()
    except RuntimeError as e:
        return str(e)
    finally:
        gdal.PopErrorHandler()
    assert got is None, "expected an error"
    return gdal.GetLastErrorMsg()


def md_array(path, name, **opts):
    ds = gdal.OpenEx(path, gdal.OF_MULTIDIM_RASTER, open_options=[f"{k}={v}" for k, v in opts.items()])
    arr = ds.GetRootGroup().OpenMDArrayFromFullname(name)
    assert arr is not None, name
    return ds, arr


def test_repository_folder_opens_its_one_raster(v2):
    """The repository's one 2-D array (/group1/big_chunks) is the raster; the version is shown."""
    ds = gdal.Open(v2)
    assert ds.GetDriver().ShortName == "Zarr3"
    assert (ds.RasterXSize, ds.RasterYSize) == (10, 10)
    assert len(ds.GetMetadataItem("SNAPSHOT_ID", "ICECHUNK")) == 20
    assert ds.GetMetadataItem("ICECHUNK_SNAPSHOT_ID") == ds.GetMetadataItem("SNAPSHOT_ID", "ICECHUNK")
    assert ds.GetMetadataItem("VERSION", "ICECHUNK") == "branch 'main'"
    ds = gdal.OpenEx(v2, gdal.OF_MULTIDIM_RASTER, open_options=["BRANCH=my-branch"])
    assert ds.GetRootGroup().OpenGroupFromFullname("/group2/group3/group4/group5") is not None


def test_inline_chunks_and_a_deleted_chunk_read_as_icechunk_says(v2):
    """main: every chunk 84 (inline chunks); my-branch deleted the last chunk (the fill value, 8)."""
    ds, arr = md_array(v2, "/group1/small_chunks")
    assert arr.ReadAsArray().tolist() == [84, 84, 84, 84, 84]
    ds, arr = md_array(v2, "/group1/small_chunks", BRANCH="my-branch")
    assert arr.ReadAsArray().tolist() == [84, 84, 84, 84, 8]


def test_native_chunks_read_and_the_undeclared_virtual_chunk_is_refused(v2):
    ds = gdal.Open(f'ZARR3:"{v2}":/group1/big_chunks')
    # Rows 5-9 hold only native chunks.
    assert np.all(ds.ReadAsArray(0, 5, 10, 5) == 42.0)
    ds = None
    # Chunk 0,1 is a virtual reference into s3://testbucket/..., which the user has not allowed.
    ds, arr = md_array(v2, "/group1/big_chunks")
    err = error_of(lambda: arr.ReadAsArray())
    assert "s3://testbucket" in err and "VIRTUAL_ALLOWED_PREFIXES" in err, err


def test_branches_and_tags(v2):
    for opts in ({"BRANCH": "my-branch"}, {"TAG": "it works!"}, {"TAG": "it also works!"}):
        ds, arr = md_array(v2, "/group1/small_chunks", **opts)
        assert arr.ReadAsArray().shape == (5,)
    # The valid names are listed (quoted: the folder name or the one asked for cannot satisfy these).
    err = error_of(lambda: gdal.OpenEx(v2, gdal.OF_RASTER, open_options=["TAG=deleted"]))
    assert "'deleted'" in err and "'it works!'" in err and "'it also works!'" in err, err
    err = error_of(lambda: gdal.OpenEx(v2, gdal.OF_RASTER, open_options=["BRANCH=nope"]))
    assert "'nope'" in err and "'main'" in err and "'my-branch'" in err, err


def test_spec1_repository(v1):
    ds, arr = md_array(v1, "/group1/small_chunks", BRANCH="my-branch")
    assert arr.ReadAsArray().tolist() == [84, 84, 84, 84, 8]
    ds = gdal.Open(v1)
    assert ds.GetMetadataItem("SPEC_VERSION", "ICECHUNK") == "1"


def test_subdatasets_of_a_chosen_version_open_that_snapshot(v2):
    ds = gdal.OpenEx(v2, gdal.OF_RASTER, open_options=["BRANCH=my-branch"])
    sid = ds.GetMetadataItem("SNAPSHOT_ID", "ICECHUNK")
    names = [v for k, v in ds.GetMetadata("SUBDATASETS").items() if k.endswith("_NAME")]
    want = f'ICECHUNK:"{v2}?snapshot={sid}":/group1/big_chunks'
    assert want in names, names
    sub = gdal.Open(want)
    assert sub.GetMetadataItem("SNAPSHOT_ID", "ICECHUNK") == sid
    assert np.all(sub.ReadAsArray(0, 5, 10, 5) == 42.0)


def test_repository_in_vsimem(v2):
    base = "/vsimem/ice_v2"
    for dirpath, _, files in os.walk(v2):
        for f in files:
            rel = os.path.relpath(os.path.join(dirpath, f), v2)
            gdal.FileFromMemBuffer(f"{base}/{rel}", Path(dirpath, f).read_bytes())
    try:
        ds, arr = md_array(base, "/group1/small_chunks", BRANCH="my-branch")
        assert arr.ReadAsArray().tolist() == [84, 84, 84, 84, 8]
        ds = gdal.Open(f'ZARR3:"{base}":/group1/big_chunks')
        assert np.all(ds.ReadAsArray(0, 5, 10, 5) == 42.0)
    finally:
        for dirpath, _, files in os.walk(v2):
            for f in files:
                gdal.Unlink(f"{base}/{os.path.relpath(os.path.join(dirpath, f), v2)}")


def test_statistics_are_not_saved_beside_a_repository(v2, tmp_path):
    """One .aux.xml beside a repository would serve every version of it: none is written."""
    ds = gdal.Open(f'ZARR3:"{v2}":/group1/big_chunks')
    ds.GetRasterBand(1).SetMetadataItem("NOTE", "a change GDAL keeps in PAM")
    ds.SetMetadataItem("NOTE", "x")
    ds = None
    assert not list(tmp_path.rglob("*.aux.xml"))


def test_update_and_version_options_on_plain_stores_are_refused(v2, tmp_path):
    # Update is a commit on a branch (test_icechunk_write.py); a tag cannot be written.
    err = error_of(lambda: gdal.OpenEx(v2, gdal.OF_RASTER | gdal.OF_UPDATE, open_options=["TAG=it works!"]))
    assert "writing to a tag or a snapshot" in err, err
    plain = tmp_path / "plain.zarr"
    gdal.GetDriverByName("Zarr3").Create(str(plain), 4, 4, 1, gdal.GDT_Byte)
    err = error_of(lambda: gdal.OpenEx(str(plain), gdal.OF_RASTER, open_options=["TAG=v1"]))
    assert "plain Zarr store" in err, err


def test_icechunk_names(v2):
    ds = gdal.Open(f"ICECHUNK:{v2}?branch=my-branch")
    assert ds.GetMetadataItem("VERSION", "ICECHUNK") == "branch 'my-branch'"
    err = error_of(lambda: gdal.Open(f"ICECHUNK:{v2}?branch=main&tag=x"))
    assert "choose one" in err, err
    # (the error repeats the name, so "colour" alone would always be in it)
    err = error_of(lambda: gdal.Open(f"ICECHUNK:{v2}?colour=red"))
    assert "unknown selector 'colour'" in err, err


@pytest.mark.parametrize("damage", ["truncate", "magic", "garbage"])
def test_damaged_repo_file_is_an_error_naming_it(v2, damage):
    path = Path(v2) / "repo"
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "magic":
        path.write_bytes(b"NOTICECHUNK!" + data[12:])
    else:
        path.write_bytes(data[:39] + bytes(len(data) - 39))
    err = error_of(lambda: gdal.OpenEx(f"ICECHUNK:{v2}", gdal.OF_MULTIDIM_RASTER))
    # The file's full path ("repo" alone is in every path under the test's folder).
    assert f"{path}: " in err, err
    want = {"truncate": "truncated", "magic": "wrong magic", "garbage": "not a valid zstd frame"}[damage]
    assert want in err, err


def test_damaged_snapshot_is_an_error_naming_it(v2):
    ds = gdal.Open(v2)
    sid = ds.GetMetadataItem("SNAPSHOT_ID", "ICECHUNK")
    ds = None
    snap = Path(v2) / "snapshots" / sid
    data = snap.read_bytes()
    snap.write_bytes(data[:40] + bytes(reversed(data[40:])))
    err = error_of(lambda: gdal.OpenEx(v2, gdal.OF_MULTIDIM_RASTER))
    assert f"{snap}: " in err, err
