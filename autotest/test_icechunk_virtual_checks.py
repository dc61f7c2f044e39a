"""Virtual chunk references that carry a checksum (issue 29, "Virtual chunks are safe"): a
reference records the ETag or the last-modified time of the object it points into; when the object
has changed since, the read fails naming the chunk and the URL, and never returns the new bytes as
if they were the old (the check: GdalVirtualResolver in driver/storage/icechunk_virtual_reader.cpp).
Locally through a file:// container (the file's mtime), remotely through nginx, whose ETag is
"<mtime>-<size>" in hex and whose Last-Modified is the file's mtime.
"""
import email.utils
import os
import urllib.request
import uuid

import numpy as np
import pytest
from osgeo import gdal

from icechunk_build import build_repo, zarr_json
from nginx_fixture import nginx  # noqa: F401  (session fixture)

DATA = bytes(range(100, 120))  # the referenced object: chunk 0 at offset 2, chunk 1 at offset 8
OLD = np.array(list(DATA[2:6]) + list(DATA[8:12]), dtype=np.uint8)


def refs(url, **checksum):
    """Chunk 0 with the checksum given, chunk 1 without one."""
    return [{"index": [0], "location": url, "offset": 2, "length": 4, **checksum},
            {"index": [1], "location": url, "offset": 8, "length": 4}]


def repo_with(tmp_path, url, container, **checksum):
    return build_repo(tmp_path / "repo.icechunk",
                      [{"path": "/a", "zarr_json": zarr_json([8], [4]), "refs": refs(url, **checksum)}],
                      containers=[container])


def read(repo, count=8, allowed=None):
    opts = [f"VIRTUAL_ALLOWED_PREFIXES={allowed}"] if allowed else []
    ds = gdal.OpenEx(f'ZARR3:"{repo}":/a', gdal.OF_MULTIDIM_RASTER, open_options=opts)
    arr = ds.GetRootGroup().OpenMDArrayFromFullname("/a")
    return arr.ReadAsArray(array_start_idx=[0], count=[count])


def read_error(repo, allowed=None):
    """The error of reading chunk 0; fails the test when the read returns values."""
    try:
        got = read(repo, 4, allowed)
    except RuntimeError as e:
        return str(e)
    pytest.fail(f"the read returned {got} instead of failing")


def set_mtime(path, seconds):
    os.utime(path, (seconds, seconds))


# ------------------------------------------------------------------ local (file://)
@pytest.fixture
def local(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    f = data / "jan.bin"
    f.write_bytes(DATA)
    set_mtime(f, 1_700_000_000)
    return f, f"file://{f}", f"file://{data}/"


def test_local_last_modified_unchanged_reads_bit_exact(tmp_path, local):
    f, url, container = local
    repo = repo_with(tmp_path, url, container, last_modified=1_700_000_000)
    np.testing.assert_array_equal(read(repo), OLD)
    # A reference written after the file's last change (a later time) reads as well.
    repo2 = build_repo(tmp_path / "later.icechunk",
                       [{"path": "/a", "zarr_json": zarr_json([8], [4]),
                         "refs": refs(url, last_modified=1_700_000_500)}], containers=[container])
    np.testing.assert_array_equal(read(repo2), OLD)


def test_local_file_touched_after_the_reference_fails_naming_url(tmp_path, local):
    f, url, container = local
    repo = repo_with(tmp_path, url, container, last_modified=1_700_000_000)
    np.testing.assert_array_equal(read(repo), OLD)
    set_mtime(f, 1_700_000_100)
    err = read_error(repo)
    assert url in err and "a/c/0" in err and "modified after" in err, err
    assert "1700000100" in err and "1700000000" in err, err
    # The chunk without a checksum cannot be checked: it reads what is there.
    ds = gdal.OpenEx(f'ZARR3:"{repo}":/a', gdal.OF_MULTIDIM_RASTER)
    got = ds.GetRootGroup().OpenMDArrayFromFullname("/a").ReadAsArray(array_start_idx=[4], count=[4])
    np.testing.assert_array_equal(got, OLD[4:])
    # Back to the recorded time: the same reference reads again (the time decided, nothing else).
    set_mtime(f, 1_700_000_000)
    np.testing.assert_array_equal(read(repo), OLD)


def test_repository_in_vsimem_cannot_reach_local_files_unasked(tmp_path, local):
    """A /vsimem/ repository is bytes a program was handed (an upload): it counts as remote, so
    its declared file:// containers (here the whole file system) need the user's permission."""
    f, url, _ = local
    built = repo_with(tmp_path, url, "file:///", last_modified=1_700_000_000)
    mem = f"/vsimem/{uuid.uuid4().hex}/repo.icechunk"
    written = []
    try:
        for dirpath, _dirs, files in os.walk(built):
            for name in files:
                rel = os.path.relpath(os.path.join(dirpath, name), built)
                written.append(f"{mem}/{rel}")
                gdal.FileFromMemBuffer(written[-1], open(os.path.join(dirpath, name), "rb").read())
        err = read_error(mem)
        assert "file:///" in err and "VIRTUAL_ALLOWED_PREFIXES" in err, err
        np.testing.assert_array_equal(read(mem, allowed=f"file://{f.parent}/"), OLD)
        np.testing.assert_array_equal(read(built), OLD)  # the same repository in a local folder
    finally:
        for name in written:
            gdal.Unlink(name)


def test_local_file_rewritten_never_returns_the_new_bytes(tmp_path, local):
    f, url, container = local
    repo = repo_with(tmp_path, url, container, last_modified=1_700_000_000)
    np.testing.assert_array_equal(read(repo), OLD)
    f.write_bytes(bytes(reversed(DATA)))  # same size, new content, mtime now
    err = read_error(repo)
    assert url in err and "modified after" in err, err


# ------------------------------------------------------------------ remote (nginx)
def head(nginx, rel):  # noqa: F811
    req = urllib.request.Request(f"{nginx.url}/{rel}", method="HEAD")
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.headers["ETag"], r.headers["Last-Modified"]


@pytest.fixture
def remote(nginx):  # noqa: F811
    rel = f"virt/{uuid.uuid4().hex}"
    folder = nginx.root / rel
    folder.mkdir(parents=True)
    f = folder / "jan.bin"
    f.write_bytes(DATA)
    set_mtime(f, 1_700_000_000)
    gdal.VSICurlClearCache()
    etag, modified = head(nginx, f"{rel}/jan.bin")
    container = f"{nginx.url}/{rel}/"
    return f, f"{container}jan.bin", container, etag, modified, rel


def test_remote_etag_unchanged_reads_then_changed_fails(tmp_path, nginx, remote):  # noqa: F811
    f, url, container, etag, _, rel = remote
    assert etag.startswith('"') and etag.endswith('"'), etag
    repo = repo_with(tmp_path, url, container, etag=etag)
    np.testing.assert_array_equal(read(repo, allowed=container), OLD)
    set_mtime(f, 1_700_000_100)  # nginx's ETag follows the mtime
    new_etag, _ = head(nginx, f"{rel}/jan.bin")
    assert new_etag != etag
    gdal.VSICurlClearCache()
    err = read_error(repo, allowed=container)
    assert url in err and "a/c/0" in err and "changed since the reference was written" in err, err
    assert etag.strip('"') in err and new_etag.strip('"') in err, err


def test_remote_etag_of_rewritten_object_fails(tmp_path, nginx, remote):  # noqa: F811
    f, url, container, etag, _, rel = remote
    repo = repo_with(tmp_path, url, container, etag=etag)
    np.testing.assert_array_equal(read(repo, allowed=container), OLD)
    f.write_bytes(DATA + b"more")  # size and mtime change
    gdal.VSICurlClearCache()
    err = read_error(repo, allowed=container)
    assert url in err and "changed since the reference was written" in err, err


def test_remote_repository_and_object_etag_checked(nginx, remote):  # noqa: F811
    """The repository itself on nginx too (the remote form a user meets)."""
    f, url, container, etag, _, rel = remote
    repo = build_repo(nginx.root / rel / "repo.icechunk",
                      [{"path": "/a", "zarr_json": zarr_json([8], [4]),
                        "refs": refs(url, etag=etag)}], containers=[container])
    served = f"/vsicurl/{nginx.url}/{rel}/repo.icechunk"
    assert repo
    np.testing.assert_array_equal(read(served, allowed=container), OLD)
    set_mtime(f, 1_700_000_200)
    gdal.VSICurlClearCache()
    err = read_error(served, allowed=container)
    assert url in err and "changed since the reference was written" in err, err


def test_remote_last_modified_checked(tmp_path, nginx, remote):  # noqa: F811
    f, url, container, _, modified, rel = remote
    seconds = int(email.utils.parsedate_to_datetime(modified).timestamp())
    assert seconds == 1_700_000_000
    repo = repo_with(tmp_path, url, container, last_modified=seconds)
    np.testing.assert_array_equal(read(repo, allowed=container), OLD)
    set_mtime(f, 1_700_000_100)
    gdal.VSICurlClearCache()
    err = read_error(repo, allowed=container)
    assert url in err and "modified after" in err and "1700000100" in err, err


# ------------------------------------------------------------------ exit codes as GDAL's own drivers
def test_missing_virtual_file_gdallocationinfo_exits_as_for_a_truncated_geotiff(tmp_path):
    """Issue 41: a virtual chunk whose file is missing gives a clear error, and gdallocationinfo's
    exit code is what the same GDAL gives for a GeoTIFF whose tile cannot be read (truncated):
    GDAL 3.6's gdallocationinfo reports a failed read on stderr and exits 0 for both; a GDAL
    whose gdallocationinfo exits non-zero on a failed read does so for both."""
    import subprocess
    data = tmp_path / "data"
    data.mkdir()
    gone = data / "gone.bin"
    repo = build_repo(tmp_path / "repo.icechunk",
                      [{"path": "/a", "zarr_json": zarr_json([2, 4], [2, 4]),
                        "refs": [{"index": [0, 0], "location": f"file://{gone}", "offset": 0,
                                  "length": 8}]}],
                      containers=[f"file://{data}/"])
    tif = str(tmp_path / "t.tif")
    src = gdal.GetDriverByName("GTiff").Create(tif, 64, 64, 1, gdal.GDT_Byte,
                                                options=["TILED=YES", "COMPRESS=DEFLATE"])
    src.GetRasterBand(1).WriteArray(np.random.default_rng(1).integers(0, 255, (64, 64), np.uint8))
    src = None
    whole = open(tif, "rb").read()
    truncated = str(tmp_path / "truncated.tif")
    open(truncated, "wb").write(whole[:len(whole) - 2000])
    env = dict(os.environ)

    def locate(name):
        return subprocess.run(["gdallocationinfo", name, "0", "0"], capture_output=True, text=True,
                              env=env, timeout=60)

    ours = locate(f'ZARR3:"{repo}":/a')
    gtiff = locate(truncated)
    assert "ERROR" in gtiff.stderr, gtiff.stderr  # the GeoTIFF read did fail
    assert "ERROR" in ours.stderr and str(gone) in ours.stderr, ours.stderr
    assert ours.returncode == gtiff.returncode, (ours, gtiff)
