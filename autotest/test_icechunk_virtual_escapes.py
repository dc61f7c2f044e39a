"""Virtual chunk references never reach outside what the user allowed (issue 39, points 1 and 2):
a reference is checked against its container after symbolic links are resolved (the guard is rooted
at the container, or at the narrower prefix the user allowed, never at the referenced file's own
folder), and a file:// URL whose path GDAL would read through one of its virtual file systems
(/vsicurl/, /vsimem/, /vsis3/, ...) or as a relative path is refused naming the reference, before
any request. The checks: VirtualAccess (core/src/icechunk/icechunk_virtual.cpp) and
GdalVirtualResolver (driver/storage/icechunk_virtual_reader.cpp).
"""
import os
import uuid

import numpy as np
import pytest
from osgeo import gdal

from icechunk_build import build_repo, zarr_json
from nginx_fixture import nginx  # noqa: F401  (session fixture)

SECRET = bytes(range(200, 216))
PUBLIC = bytes(range(16))


def repo_with(path, url, container):
    return build_repo(path, [{"path": "/a", "zarr_json": zarr_json([8], [8]),
                              "refs": [{"index": [0], "location": url, "offset": 0, "length": 8}]}],
                      containers=[container])


def read(repo, allowed=None):
    opts = [f"VIRTUAL_ALLOWED_PREFIXES={allowed}"] if allowed else []
    ds = gdal.OpenEx(f'ZARR3:"{repo}":/a', gdal.OF_MULTIDIM_RASTER, open_options=opts)
    return ds.GetRootGroup().OpenMDArrayFromFullname("/a").ReadAsArray()


def read_error(repo, allowed=None):
    """The error of reading /a; fails the test when the read returns values."""
    try:
        got = read(repo, allowed)
    except RuntimeError as e:
        return str(e)
    pytest.fail(f"the read returned {got} instead of failing")


def copy_to_vsimem(built):
    """The repository copied into /vsimem/: its name and the files written."""
    mem = f"/vsimem/{uuid.uuid4().hex}/repo.icechunk"
    written = []
    for dirpath, _dirs, files in os.walk(built):
        for name in files:
            rel = os.path.relpath(os.path.join(dirpath, name), built)
            written.append(f"{mem}/{rel}")
            with open(os.path.join(dirpath, name), "rb") as f:
                gdal.FileFromMemBuffer(written[-1], f.read())
    return mem, written


@pytest.fixture
def planted(tmp_path):
    """vdata/ (the container) holding pub.bin, and vdata/sub, a link to a folder outside it."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.bin").write_bytes(SECRET)
    vdata = tmp_path / "vdata"
    vdata.mkdir()
    (vdata / "pub.bin").write_bytes(PUBLIC)
    (vdata / "sub").symlink_to(outside)
    return vdata


# ------------------------------------------------------------------ point 1: folder links
def test_folder_link_out_of_the_container_is_refused_locally(tmp_path, planted):
    container = f"file://{planted}/"
    repo = repo_with(tmp_path / "r.icechunk", f"{container}sub/secret.bin", container)
    err = read_error(repo)
    assert f"{container}sub/secret.bin" in err and "leading outside" in err, err
    # The same repository layout with a reference to a plain file of the container reads.
    ok = repo_with(tmp_path / "ok.icechunk", f"{container}pub.bin", container)
    np.testing.assert_array_equal(read(ok), np.frombuffer(PUBLIC[:8], np.uint8))


def test_folder_link_out_of_the_allowed_prefix_is_refused_from_vsimem(tmp_path, planted):
    """A /vsimem/ repository declaring the whole file system, opened with
    VIRTUAL_ALLOWED_PREFIXES naming only vdata/: the link under vdata/ does not widen that."""
    allowed = f"file://{planted}/"
    built = repo_with(tmp_path / "r.icechunk", f"{allowed}sub/secret.bin", "file:///")
    mem, written = copy_to_vsimem(built)
    try:
        err = read_error(mem, allowed=allowed)
        assert f"{allowed}sub/secret.bin" in err and "leading outside" in err, err
    finally:
        for name in written:
            gdal.Unlink(name)


def test_link_inside_the_container_still_reads(tmp_path, planted):
    """A link that resolves inside the container is followed (only escapes are refused)."""
    (planted / "inner").mkdir()
    (planted / "inner" / "data.bin").write_bytes(PUBLIC)
    (planted / "alias").symlink_to(planted / "inner")
    container = f"file://{planted}/"
    repo = repo_with(tmp_path / "r.icechunk", f"{container}alias/data.bin", container)
    np.testing.assert_array_equal(read(repo), np.frombuffer(PUBLIC[:8], np.uint8))


# ------------------------------------------------------------------ point 2: /vsi paths in file://
def test_file_url_naming_vsimem_is_refused(tmp_path):
    """Another dataset's /vsimem/ file, reached through a file:// URL of a local repository."""
    other = f"/vsimem/{uuid.uuid4().hex}/secret.bin"
    gdal.FileFromMemBuffer(other, SECRET)
    try:
        url = f"file://{other}"
        repo = repo_with(tmp_path / "r.icechunk", url, "file:///")
        err = read_error(repo)
        assert url in err and "a/c/0" in err and "virtual file systems" in err, err
    finally:
        gdal.Unlink(other)


def test_file_url_naming_vsicurl_makes_no_request(tmp_path, nginx):  # noqa: F811
    rel = f"escape/{uuid.uuid4().hex}"
    (nginx.root / rel).mkdir(parents=True)
    (nginx.root / rel / "secret.bin").write_bytes(SECRET)
    url = f"file:///vsicurl/{nginx.url}/{rel}/secret.bin"
    repo = repo_with(tmp_path / "r.icechunk", url, "file:///")
    gdal.VSICurlClearCache()
    mark = nginx.mark()
    err = read_error(repo)
    assert url in err and "virtual file systems" in err, err
    assert [r for r in nginx.requests(mark) if rel in r.uri] == []


@pytest.mark.parametrize("path,why", [("vsimem/x/secret.bin", "no absolute path"),
                                      ("/VSIMEM/x/secret.bin", "virtual file systems")])
def test_file_url_with_a_relative_or_vsi_path_is_refused(tmp_path, path, why):
    url = f"file://{path}"
    repo = repo_with(tmp_path / "r.icechunk", url, "file://")
    err = read_error(repo)
    assert url in err and why in err and "refused" in err, err
