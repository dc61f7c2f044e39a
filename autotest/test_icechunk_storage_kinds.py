"""An Icechunk repository on /vsis3/, /vsigs/ and /vsiaz/ (issue 29, "from every storage the
plugin supports"), each pointed at a local nginx serving a folder: Icechunk keys are direct, so no
listing is needed. GDAL 3.6 options: S3 with AWS_S3_ENDPOINT + AWS_VIRTUAL_HOSTING=FALSE +
AWS_NO_SIGN_REQUEST; GCS with CPL_GS_ENDPOINT + GS_NO_SIGN_REQUEST; Azure either with
AZURE_STORAGE_CONNECTION_STRING (BlobEndpoint=http://127.0.0.1:port/acct; GDAL 3.6 takes a
connection string only with an AccountKey, so a dummy one signs requests nginx ignores) or unsigned
with AZURE_STORAGE_ACCOUNT + AZURE_NO_SIGN_REQUEST + CPL_AZURE_ENDPOINT. Virtual references with
s3://, gs:// and az:// URLs go to /vsis3/, /vsigs/ and /vsiaz/ on the same endpoint.
"""
import uuid

import numpy as np
import pytest
from osgeo import gdal

from icechunk_build import build_repo, zarr_json
from nginx_fixture import nginx, object_store as options  # noqa: F401  (nginx: session fixture)

SHAPE, CHUNKS = (4, 6), (2, 3)
WANT = (np.arange(24, dtype=np.uint16).reshape(SHAPE) * 257).astype(np.uint16)  # both bytes vary
VIRTUAL = bytes(range(7)) + WANT.tobytes()  # the virtual array's object: 7 bytes, then the data


def chunk_bytes(i, j):
    return WANT[2 * i:2 * i + 2, 3 * j:3 * j + 3].astype("<u2").tobytes()


VSI = {"s3": "/vsis3/", "gs": "/vsigs/", "az": "/vsiaz/", "az_unsigned": "/vsiaz/"}
SCHEME = {"s3": "s3://", "gs": "gs://", "az": "az://", "az_unsigned": "az://"}
# The URL path each kind's requests reach nginx with (Azure: under the account of BlobEndpoint).
URL_ROOT = {"s3": "/", "gs": "/", "az": "/acct/", "az_unsigned": "/acct/"}


@pytest.fixture(scope="module")
def bucket(nginx):  # noqa: F811
    """Bucket `bkt` in nginx's folder (also reachable as /acct/bkt for Azure) holding, per kind,
    a repository whose /g/a has inline and native chunks and /g/v virtual references into
    bkt/<id>/data.bin through that kind's URL scheme."""
    (nginx.root / "bkt").mkdir(exist_ok=True)
    if not (nginx.root / "acct").exists():
        (nginx.root / "acct").mkdir()
        (nginx.root / "acct" / "bkt").symlink_to(nginx.root / "bkt")
    out = {}
    for kind in VSI:
        rid = uuid.uuid4().hex
        (nginx.root / "bkt" / rid).mkdir()
        (nginx.root / "bkt" / rid / "data.bin").write_bytes(VIRTUAL)
        url = f"{SCHEME[kind]}bkt/{rid}/data.bin"
        native = [{"index": [i, j], **({"inline": list(chunk_bytes(i, j))} if (i + j) % 2 == 0
                                       else {"native": list(chunk_bytes(i, j))})}
                  for i in range(2) for j in range(2)]
        # /g/v: one chunk per row of the object (rows are contiguous there): chunk (i, j) of
        # a [4, 6] uint16 array with chunks [1, 6] at 7 + 12 * i.
        virtual = [{"index": [i, 0], "location": url, "offset": 7 + 12 * i, "length": 12}
                   for i in range(4)]
        build_repo(nginx.root / "bkt" / rid / "repo.icechunk",
                   [{"path": "/g/a", "zarr_json": zarr_json(SHAPE, CHUNKS, "uint16"), "refs": native},
                    {"path": "/g/v", "zarr_json": zarr_json(SHAPE, (1, 6), "uint16"), "refs": virtual}],
                   groups=["/g"], containers=[f"{SCHEME[kind]}bkt/{rid}/"])
        out[kind] = rid
    return out


@pytest.mark.parametrize("kind", list(VSI))
@pytest.mark.parametrize("form", ["zarr3", "icechunk"])
def test_repository_on_object_store_reads_bit_exact(nginx, bucket, kind, form):  # noqa: F811
    rid = bucket[kind]
    repo = f"{VSI[kind]}bkt/{rid}/repo.icechunk"
    name = f'ZARR3:"{repo}":/g/a' if form == "zarr3" else f'ICECHUNK:"{repo}":/g/a'
    with options(kind, nginx.port):
        gdal.VSICurlClearCache()
        mark = nginx.mark()
        got = gdal.Open(name).ReadAsArray()
        reqs = nginx.requests(mark)
    assert got.dtype == np.uint16 and np.array_equal(got, WANT), got
    base = f"{URL_ROOT[kind]}bkt/{rid}/repo.icechunk/"
    assert all(r.uri.startswith(base) and r.method == "GET" for r in reqs), reqs
    assert not [r for r in reqs if "list" in r.args or "prefix" in r.args or "comp=" in r.args], reqs
    keys = sorted(r.uri[len(base):].split("/")[0] for r in reqs)
    want = ["chunks", "chunks", "manifests", "repo", "snapshots"] + (["zarr.json"] if form == "zarr3" else [])
    assert keys == want, reqs
    assert [r.status for r in reqs if r.uri.endswith("/zarr.json")] == ([404] if form == "zarr3" else [])


@pytest.mark.parametrize("kind", list(VSI))
def test_virtual_references_through_the_same_endpoint(nginx, bucket, kind):  # noqa: F811
    rid = bucket[kind]
    repo = f"{VSI[kind]}bkt/{rid}/repo.icechunk"
    prefix = f"{SCHEME[kind]}bkt/{rid}/"
    with options(kind, nginx.port):
        gdal.VSICurlClearCache()
        # Not allowed by the user: refused naming the prefix and the option.
        ds = gdal.OpenEx(f'ZARR3:"{repo}":/g/v', gdal.OF_RASTER)
        with pytest.raises(RuntimeError) as e:
            ds.ReadAsArray()
        assert f"{prefix}data.bin" in str(e.value) and "VIRTUAL_ALLOWED_PREFIXES" in str(e.value)
        mark = nginx.mark()
        ds = gdal.OpenEx(f'ZARR3:"{repo}":/g/v', gdal.OF_RASTER,
                         open_options=[f"VIRTUAL_ALLOWED_PREFIXES={prefix}"])
        got = ds.ReadAsArray()
        reqs = nginx.requests(mark)
    assert np.array_equal(got, WANT), got
    data = [r for r in reqs if r.uri == f"{URL_ROOT[kind]}bkt/{rid}/data.bin"]
    assert sorted(r.range for r in data) == sorted(f"bytes={7 + 12 * i}-{18 + 12 * i}" for i in range(4)), reqs
