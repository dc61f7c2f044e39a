"""`gdal driver zarr3 virtualize` of remote NetCDF-4 files (issue 42, GDAL >= 3.12): /vsicurl/ and
/vsis3/ files read through GDAL's multidimensional API (GDALMDArray::GetRawBlockInfo for the chunk
index), served by the project's nginx (autotest/nginx_fixture.py; /vsis3/ through its unsigned S3
emulation). The archive reads like GDAL's netCDF driver on the local files (values, dates,
georeferencing), and its references are those `zarr3 virtualize` writes for the local files but for
the URL prefix. The `zarr3` program (no GDAL) refuses remote files naming them and what to use.

Skipped, saying why, where the `gdal` program is older than 3.12 (no driver algorithms, no raw
block information).
"""
import os
import shutil
import struct
import subprocess

import numpy as np
import pytest
from osgeo import gdal

import icechunk_files as icf
from conftest import config_option
from nginx_fixture import nginx, object_store_options  # noqa: F401 (session fixture)
from virtual_months import MONTHS, netcdf_values, run, virtualize, write_month, write_months

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


pytestmark = pytest.mark.skipif(
    gdal_version() < (3, 12),
    reason="remote sources need `gdal driver zarr3 virtualize` and GDALMDArray::GetRawBlockInfo "
           "(GDAL >= 3.12)")


def gdal_virtualize(*args, env=None):
    return subprocess.run([GDAL, "driver", "zarr3", "virtualize", *map(str, args)], capture_output=True,
                          text=True, timeout=300, env={**os.environ, **(env or {})})


@pytest.fixture
def served(nginx, tmp_path):  # noqa: F811
    """The 4 monthly files written locally and copied under the server (a folder of their own):
    (local files, the served folder's name)."""
    files = write_months(tmp_path / "nc")
    name = "arch-" + tmp_path.name.replace("_", "-").lower()  # also a bucket name (/vsis3/)
    (nginx.root / name).mkdir()
    for f in files:
        shutil.copy2(f, nginx.root / name / f.name)
    yield files, name
    shutil.rmtree(nginx.root / name, ignore_errors=True)


def chunk_refs(repo):
    """Every virtual reference of the repository's manifests: sorted (chunk index, offset, length,
    location, ETag, last modified). ChunkRef fields (core/icechunk/schemas/manifest.fbs): index 0,
    offset 2, length 3, location 5, checksum_etag 6, checksum_last_modified 7."""
    out = []
    for path in sorted((repo / "manifests").iterdir()):
        _, buf = icf.read(path)
        fb = icf.Flatbuffer(buf)
        for array in fb.tables(fb.root(), 1):
            for ref in fb.tables(array, 1):
                if fb.field(ref, 5) is None:
                    continue  # a native chunk
                iv = fb.target(ref, 0)
                index = tuple(fb.u32(iv + 4 + 4 * k) for k in range(fb.u32(iv)))
                u64 = [struct.unpack_from("<Q", buf, p)[0] if p is not None else 0
                       for p in (fb.field(ref, 2), fb.field(ref, 3))]
                etag = fb.string(ref, 6) if fb.field(ref, 6) is not None else ""
                lm = fb.field(ref, 7)
                out.append((index, u64[0], u64[1], fb.string(ref, 5), etag, fb.u32(lm) if lm else 0))
    return sorted(out)


def summary(out):
    """The tool's report without the repository path and the commit line."""
    return out.split(": ", 1)[1].split("  commit ")[0]


def open_archive(repo, var, prefix):
    return gdal.OpenEx(f'ZARR3:"{repo}":/{var}', gdal.OF_RASTER,
                       open_options=[f"VIRTUAL_ALLOWED_PREFIXES={prefix}"])


def check_like_netcdf(repo, files, prefix):
    """Values, nodata, packing, georeferencing and dates equal GDAL's netCDF driver on the files."""
    for var in ("t2m", "sp", "tp"):
        ds = open_archive(repo, var, prefix)
        nc = gdal.Open(f'NETCDF:"{files[0]}":{var}')
        np.testing.assert_array_equal(ds.ReadAsArray(), netcdf_values(files, var), err_msg=var)
        assert ds.GetGeoTransform() == pytest.approx(nc.GetGeoTransform()), var
        assert ds.GetSpatialRef().IsSame(nc.GetSpatialRef()), var
        b, nb = ds.GetRasterBand(1), nc.GetRasterBand(1)
        assert b.GetNoDataValue() == nb.GetNoDataValue(), var
        assert (b.GetScale(), b.GetOffset()) == (nb.GetScale(), nb.GetOffset()), var
    ds = open_archive(repo, "t2m", prefix)
    band = 1
    for f in files:
        nc = gdal.Open(f'NETCDF:"{f}":t2m')
        start = np.datetime64(nc.GetMetadataItem("time#units").split("since ")[1].strip()[:10])
        for i in range(nc.RasterCount):
            want = start + np.timedelta64(int(float(nc.GetRasterBand(i + 1).GetMetadataItem("NETCDF_DIM_time"))), "h")
            md = ds.GetRasterBand(band).GetMetadata()
            assert md["time#units"] == "hours since 2023-01-01"
            got = np.datetime64("2023-01-01") + np.timedelta64(int(float(md["NETCDF_DIM_time"])), "h")
            assert got == want, (band, f)
            band += 1
    assert band - 1 == sum(n for _, n in MONTHS)


def test_vsicurl_sources_reference_the_urls_like_local_files(exe, served, nginx, tmp_path):  # noqa: F811
    files, name = served
    prefix = f"{nginx.url}/{name}/"
    urls = [f"/vsicurl/{prefix}{f.name}" for f in files]
    remote, local = tmp_path / "remote.icechunk", tmp_path / "local.icechunk"
    p = gdal_virtualize(remote, *urls, "--concat-dim", "time")
    assert p.returncode == 0, p.stderr
    out = p.stdout
    tool = virtualize(exe, local, files)
    # the same plan: arrays, references, copied chunks (padded edges of tp) and why
    assert summary(out) == summary(tool), (out, tool)
    assert "4 file(s), 3 virtual array(s)" in out and "padded edge chunk" in out, out
    got, want = chunk_refs(remote), chunk_refs(local)
    assert len(got) == len(want) > 0
    local_prefix = f"file://{files[0].parent}/"
    for g, w in zip(got, want):
        assert g[:3] == w[:3], (g, w)  # chunk index, offset, length
        assert g[3] == prefix + w[3][len(local_prefix):], (g, w)
        assert g[4], g  # the server's ETag recorded
    check_like_netcdf(remote, files, prefix)


def test_changed_remote_file_is_refused_at_read_naming_it(served, nginx, tmp_path):  # noqa: F811
    files, name = served
    prefix = f"{nginx.url}/{name}/"
    repo = tmp_path / "remote.icechunk"
    p = gdal_virtualize(repo, *[f"/vsicurl/{prefix}{f.name}" for f in files], "--concat-dim", "time")
    assert p.returncode == 0, p.stderr
    write_month(nginx.root / name / files[1].name, 2, 28, seed=7)  # other values, other ETag
    gdal.VSICurlClearCache()
    ds = open_archive(repo, "t2m", prefix)
    with pytest.raises(RuntimeError, match=r"t2m_2023-02\.nc.*changed since the reference"):
        ds.ReadAsArray()


def test_vsis3_sources_reference_s3_urls(served, nginx, tmp_path):  # noqa: F811
    """/vsis3/BUCKET/KEY through the server's unsigned S3 emulation: references name
    s3://BUCKET/KEY and the repository declares that container."""
    files, bucket = served
    opts = object_store_options("s3", nginx.port)
    repo = tmp_path / "s3.icechunk"
    p = gdal_virtualize(repo, *[f"/vsis3/{bucket}/{f.name}" for f in files], "--concat-dim", "time",
                        env=opts)
    assert p.returncode == 0, p.stderr
    refs = chunk_refs(repo)
    assert refs and all(r[3].startswith(f"s3://{bucket}/t2m_2023-0") for r in refs), refs[:2]
    with config_option("AWS_S3_ENDPOINT", opts["AWS_S3_ENDPOINT"]), \
            config_option("AWS_HTTPS", "NO"), config_option("AWS_VIRTUAL_HOSTING", "FALSE"), \
            config_option("AWS_NO_SIGN_REQUEST", "YES"), config_option("AWS_REGION", "us-east-1"):
        check_like_netcdf(repo, files, f"s3://{bucket}/")


def test_remote_sources_refused_where_they_cannot_be_read(exe, served, nginx, tmp_path):  # noqa: F811
    files, name = served
    url = f"/vsicurl/{nginx.url}/{name}/{files[0].name}"
    # the zarr3 program has no GDAL: refused naming the file and what to use instead
    r = run(exe, "virtualize", tmp_path / "a.icechunk", url, "--concat-dim", "time")
    assert r.returncode == 1 and url in r.stderr and "gdal driver zarr3 virtualize" in r.stderr, r.stderr
    # local and remote files together; a file system references cannot name
    for args in ([files[0], url], ["/vsigs/bucket/a.nc"], ["/vsimem/a.nc"]):
        p = gdal_virtualize(tmp_path / "b.icechunk", *args, "--concat-dim", "time")
        assert p.returncode != 0 and str(args[-1]) in p.stderr, p.stderr
    # a file the server does not have
    missing = f"/vsicurl/{nginx.url}/{name}/missing.nc"
    p = gdal_virtualize(tmp_path / "c.icechunk", missing, "--concat-dim", "time")
    assert p.returncode != 0 and missing in p.stderr, p.stderr
    assert not list(tmp_path.glob("[abc].icechunk*"))
