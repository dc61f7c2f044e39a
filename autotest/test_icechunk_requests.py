"""Requests an Icechunk repository costs over HTTP (issue 29, "Fast"): the `repo` file is fetched
once per open (the detection's GET is reused by the open, icechunk_open.cpp TakeRepoFileSeen), and
a later open reads it again (a new version of the repository is seen). On the upstream
compatibility repository test-repo-v2 (../shared/icechunk/upstream-test-repos), served by nginx.
"""
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from osgeo import gdal

from conftest import REPO
from nginx_fixture import nginx  # noqa: F401

UPSTREAM = Path(os.environ.get("ZARR3_ICECHUNK_UPSTREAM",
                               REPO.parent / "shared" / "icechunk" / "upstream-test-repos"))
pytestmark = pytest.mark.skipif(not (UPSTREAM / "test-repo-v2" / "repo").exists(),
                                reason=f"no upstream Icechunk repositories in {UPSTREAM}")
ARRAY = "/group1/big_chunks"


@pytest.fixture
def served(nginx):  # noqa: F811
    dst = nginx.root / "req" / "test-repo-v2"
    if not dst.exists():
        shutil.copytree(UPSTREAM / "test-repo-v2", dst)
    return f"/vsicurl/{nginx.url}/req/test-repo-v2"


def repo_file_requests(nginx, since):  # noqa: F811
    return [r for r in nginx.requests(since) if r.uri.endswith("/test-repo-v2/repo")]


@pytest.mark.parametrize("api", ["classic", "multidim"])
def test_remote_open_fetches_repo_file_once(nginx, served, api):  # noqa: F811
    gdal.VSICurlClearCache()
    mark = nginx.mark()
    if api == "classic":
        ds = gdal.Open(f'ZARR3:"{served}":{ARRAY}')
        got = ds.ReadAsArray(0, 5, 10, 5)
    else:
        # ZARR3: name: GDAL >= 3.13 fails an unprefixed /vsicurl/ folder whose listing the
        # server refuses (nginx without autoindex: 403) before asking any driver.
        ds = gdal.OpenEx(f'ZARR3:"{served}"', gdal.OF_MULTIDIM_RASTER)
        arr = ds.GetRootGroup().OpenMDArrayFromFullname(ARRAY)
        got = arr.ReadAsArray(array_start_idx=[5, 0], count=[5, 10])
    # rows 5-9 hold native chunks only (chunk 0,1 is a virtual reference not allowed here)
    assert got.shape == (5, 10) and np.all(got == 42.0), got
    reqs = repo_file_requests(nginx, mark)
    assert [(r.method, r.range) for r in reqs] == [("GET", "")], reqs


def test_second_open_reads_repo_file_again(nginx, served):  # noqa: F811
    """The file kept from the detection serves one open only: a later open asks the server."""
    for _ in range(2):
        gdal.VSICurlClearCache()
        mark = nginx.mark()
        ds = gdal.Open(f'ZARR3:"{served}":{ARRAY}')
        assert ds is not None
        ds = None
        assert len(repo_file_requests(nginx, mark)) == 1
