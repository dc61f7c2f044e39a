"""Cloud-native reads through GDAL's VSI layer (/vsicurl/, /vsis3/, /vsizip/,
/vsimem/), with the HTTP requests counted in a real nginx's access log.

Request model: on /vsicurl/ URLs and object stores (/vsis3/, /vsigs/, /vsiaz/,
/vsioss/, signed by GDAL) the driver reads objects with its own GETs through
CPLHTTPFetch (GDAL_HTTP_* settings apply), never a HEAD: GDAL's /vsicurl/ would
first learn every object's size. A missing object is a GET answered 404 (=
absent chunk). Folders are never listed.
  - opening an array path = GET zarr.json, nothing else
  - one inner chunk of a shard = GET index (suffix range, whose Content-Range
    gives the shard size) + GET data (exact byte range)
  - several adjacent inner chunks = GET index + one GET (merged range)
  - again, same or new dataset = no index request (process-wide index cache);
    the data range is fetched again (no byte cache besides GDAL's block cache)
ZARR3_HTTP_DIRECT=NO reads through GDAL's /vsicurl/ instead (HEAD per object,
16 KiB blocks cached by GDAL). Chained paths (/vsizip//vsicurl/...) always do.
"""
import contextlib
import json
import os
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest
from osgeo import gdal

from conftest import CONFORMANCE, config_option, value_or_error
from nginx_fixture import nginx  # noqa: F401  (session fixture)
from sharded_writer import make_data, write_sharded_store

GDAL_NUM = int(gdal.VersionInfo("VERSION_NUM"))

SHAPE = (2048, 2048)
SHARD = (512, 512)
INNER = (128, 128)
INDEX_BYTES = 16 * (SHARD[0] // INNER[0]) * (SHARD[1] // INNER[1]) + 4  # + crc32c
BUCKET = "data"


@pytest.fixture(scope="module")
def big():
    """The large sharded store, written once, with its values."""
    return make_data(SHAPE)


@pytest.fixture(scope="module")
def served(nginx, big, tmp_path_factory):  # noqa: F811
    """nginx serving /data/: big.zarr plus aliases (fresh URLs = cold caches),
    and copies of conformance stores. Returns (server, local big.zarr path)."""
    www = nginx.root / BUCKET
    www.mkdir(exist_ok=True)
    local = tmp_path_factory.mktemp("big") / "big.zarr"
    write_sharded_store(local, big, SHARD, INNER)
    shutil.copytree(local, www / "big.zarr")
    for i in range(1, 16):
        os.symlink(www / "big.zarr", www / f"big{i}.zarr")
    for case in ("shard_regular_zstd", "rect_missing_chunks", "geo_group"):
        shutil.copytree(CONFORMANCE / case / "store.zarr", www / f"{case}.zarr")
    with config_option("GDAL_HTTP_MAX_RETRY", "0"), config_option("CPL_VSIL_CURL_USE_HEAD", None):
        yield nginx, local


def vsicurl(server, name):
    return f"/vsicurl/{server.url}/{BUCKET}/{name}"


def open_md(path):
    ds = gdal.OpenEx(path, gdal.OF_MULTIDIM_RASTER)
    assert ds is not None and ds.GetDriver().ShortName == "Zarr3", path
    rg = ds.GetRootGroup()
    names = rg.GetMDArrayNames()
    assert names, path
    return ds, rg.OpenMDArray(names[0])


def read(md, y0, x0, h, w):
    return md.ReadAsArray(array_start_idx=[y0, x0], count=[h, w])


def split_gmac(reqs):
    """GDAL's GDALMDArray::Read looks once per array object for a
    "<filename>.gmac" cache (/vsicurl/: a HEAD, 404; /vsis3/: a GET, 404, and
    a listing of "<filename>.gmac/"; /vsiaz/: a HEAD and two listings): not
    the driver's doing."""
    gmac = [r for r in reqs if r.uri.endswith(".gmac") or ".gmac" in r.args]
    assert len(gmac) <= 3 and all(r.status in (301, 403, 404) for r in gmac), gmac
    return [r for r in reqs if r not in gmac]


def shard_requests(reqs, store, key):
    return [r for r in reqs if r.uri == f"/{BUCKET}/{store}/{key}"]


def classify(reqs, size):
    """Splits requests to one shard into (heads, index GETs, data GETs). The
    index is a suffix range (direct reads) or a range ending at the last byte
    (GDAL's /vsicurl/)."""
    heads = [r for r in reqs if r.method == "HEAD"]
    gets = [r for r in reqs if r.method == "GET"]
    index = [r for r in gets if r.range == f"bytes=-{INDEX_BYTES}" or r.range.endswith(f"-{size - 1}")]
    data = [r for r in gets if r not in index]
    return heads, index, data


def shard_index(path):
    raw = Path(path).read_bytes()[-INDEX_BYTES:-4]
    return np.frombuffer(raw, dtype="<u8").reshape(-1, 2)


def ranges_cover(reqs, spans):
    """True when every (offset, nbytes) span lies inside one request's range."""
    got = []
    for r in reqs:
        a, b = r.range.replace("bytes=", "").split("-")
        got.append((int(a), int(b)))
    return all(any(a <= o and o + n - 1 <= b for a, b in got) for o, n in spans)


def without_repo_probe(reqs):
    """The requests without the one GET of an Icechunk `repo` file (404 on a plain store) that a
    prefixed open sends together with the GET of zarr.json (icechunk_open.cpp ReadPrefixedRoot);
    asserts there is exactly one such probe."""
    probes = [r for r in reqs if r.uri.endswith("/repo")]
    assert [(r.method, r.status) for r in probes] == [("GET", 404)], reqs
    return [r for r in reqs if r not in probes]


def only_zarr_json(reqs):
    return all(r.uri.endswith("/zarr.json") for r in reqs)


def s3_options(server, **extra):
    """/vsis3/ on nginx: path-style URLs on 127.0.0.1, plain HTTP."""
    return {"AWS_S3_ENDPOINT": f"127.0.0.1:{server.port}", "AWS_HTTPS": "NO",
            "AWS_VIRTUAL_HOSTING": "FALSE", "AWS_REGION": "us-east-1", **extra}


def window_via(server, path, opts):
    """With the config options `opts`, opens `path` and reads inner chunks 1, 2
    of shard c/2/2; returns (values, the requests of the read)."""
    with contextlib.ExitStack() as stack:
        for k, v in opts.items():
            stack.enter_context(config_option(k, v))
        ds, md = open_md(path)
        m = server.mark()
        got = read(md, 1024, 1024 + 128, 64, 256)
        return got, split_gmac(server.requests(m))


# --- opening --------------------------------------------------------------


def test_open_prefixed_array_path_reads_only_zarr_json(served):
    server, _ = served
    m = server.mark()
    ds, md = open_md(f'ZARR3:"{vsicurl(server, "big1.zarr")}"')
    reqs = server.requests(m)
    assert md.GetDimensionCount() == 2 and [d.GetSize() for d in md.GetDimensions()] == list(SHAPE)
    # No listing, no probing of sibling files, no HEAD: one GET of zarr.json, and in flight
    # with it the GET of an Icechunk `repo` file (a 404 here; a repository is told apart in
    # the same round trip, ReadPrefixedRoot in icechunk_open.cpp).
    assert sorted((r.method, r.uri, r.range, r.status) for r in reqs) == [
        ("GET", f"/{BUCKET}/big1.zarr/repo", "", 404),
        ("GET", f"/{BUCKET}/big1.zarr/zarr.json", "", 200),
    ], reqs


def test_open_plain_url_no_listing(served):
    """Unprefixed URL: GDALOpenInfo itself stats the folder URL (HEAD x.zarr ->
    301, HEAD x.zarr/ -> 403 on nginx); the driver asks for zarr.json once."""
    server, _ = served
    m = server.mark()
    ds, md = open_md(vsicurl(server, "big2.zarr"))
    reqs = server.requests(m)
    folder = [r for r in reqs if not r.uri.endswith("/zarr.json")]
    ours = [r for r in reqs if r.uri.endswith("/zarr.json")]
    # GDALOpenInfo's own probes: HEADs of the folder; GDAL 3.13 also GETs the parent
    # folder listing (403 on nginx). None of them comes from the driver.
    gdal_own = {("HEAD", f"/{BUCKET}/big2.zarr"), ("GET", f"/{BUCKET}")}
    assert all((r.method, r.uri.rstrip("/")) in gdal_own for r in folder), reqs
    assert len([r for r in folder if r.method == "HEAD"]) <= 2, reqs
    assert len([r for r in folder if r.method == "GET"]) <= (1 if GDAL_NUM >= 3130000 else 0), reqs
    assert [r.method for r in ours] == ["GET"], reqs
    assert not any(r.args for r in reqs), reqs  # no S3-style listing either


# --- partial shard reads ----------------------------------------------------


def test_one_inner_chunk_is_index_plus_one_range(served, big):
    server, local = served
    ds, md = open_md(f'ZARR3:"{vsicurl(server, "big3.zarr")}"')
    size = (local / "c/0/0").stat().st_size
    idx = shard_index(local / "c/0/0")
    m = server.mark()
    got = read(md, 0, 0, 100, 120)  # inside inner chunk 0 of shard c/0/0
    reqs = split_gmac(server.requests(m))
    assert np.array_equal(got, big[0:100, 0:120])
    # Exactly 2 requests: the index (suffix range) and the inner chunk's bytes.
    assert len(reqs) == 2 and len(shard_requests(reqs, "big3.zarr", "c/0/0")) == 2, reqs
    heads, index, data = classify(reqs, size)
    assert heads == [] and len(index) == 1 and len(data) == 1, reqs
    assert index[0].range == f"bytes=-{INDEX_BYTES}" and index[0].body_bytes == INDEX_BYTES
    o, n = (int(v) for v in idx[0])
    assert data[0].range == f"bytes={o}-{o + n - 1}" and data[0].body_bytes == n
    assert all(r.status == 206 for r in index + data)

    # Again, same dataset: the index and the decoded inner chunk from the caches; one request for
    # one byte confirms the shard's version (ETag), none for its data.
    m = server.mark()
    assert np.array_equal(read(md, 0, 0, 100, 120), big[0:100, 0:120])
    again = split_gmac(server.requests(m))
    assert [r.range for r in again] == ["bytes=0-0"] and again[0].body_bytes <= 1, again

    # Without the cache of decoded chunks: the index from its cache, the inner chunk's range again.
    with config_option("ZARR3_CHUNK_CACHE", "NO"):
        ds1, md1 = open_md(f'ZARR3:"{vsicurl(server, "big3.zarr")}"')
    m = server.mark()
    assert np.array_equal(read(md1, 0, 0, 100, 120), big[0:100, 0:120])
    assert [r.range for r in split_gmac(server.requests(m))] == [f"bytes={o}-{o + n - 1}"]

    # New dataset after clearing GDAL's HTTP caches: no index request.
    gdal.VSICurlClearCache()
    ds2, md2 = open_md(f'ZARR3:"{vsicurl(server, "big3.zarr")}"')
    m = server.mark()
    assert np.array_equal(read(md2, 0, 0, 100, 120), big[0:100, 0:120])
    reqs = split_gmac(server.requests(m))
    heads, index, data = classify(reqs, size)
    assert index == [] and heads == [] and len(data) == 1, reqs


def test_adjacent_inner_chunks_one_merged_range(served, big):
    server, local = served
    ds, md = open_md(f'ZARR3:"{vsicurl(server, "big4.zarr")}"')
    size = (local / "c/1/1").stat().st_size
    idx = shard_index(local / "c/1/1")
    m = server.mark()
    got = read(md, 512 + 10, 512, 100, 3 * 128)  # inner chunks 0, 1, 2 of shard c/1/1
    reqs = split_gmac(server.requests(m))
    assert np.array_equal(got, big[522:622, 512:896])
    heads, index, data = classify(reqs, size)
    assert len(reqs) == 2 and heads == [] and len(index) == 1 and len(data) == 1, reqs
    assert ranges_cover(data, [tuple(idx[k]) for k in (0, 1, 2)])
    # Exactly the three chunks' bytes (they are stored back to back).
    assert data[0].body_bytes == sum(int(idx[k][1]) for k in (0, 1, 2))


def test_coalesce_gap_option(served, big):
    """A 2x2 block of inner chunks is two runs in the file (chunks 0,1 and
    4,5) separated by chunks 2,3 (~47 KB): two ranges with the default 16 KiB
    gap, one with ZARR3_COALESCE_GAP=1000000."""
    server, local = served
    size = (local / "c/0/1").stat().st_size
    idx = shard_index(local / "c/0/1")
    gap = int(idx[4][0] - (idx[1][0] + idx[1][1]))
    assert gap > 16384
    # Several ranges are parallel GETs, exact bytes; with
    # GDAL_HTTP_MULTIRANGE=SINGLE_GET one multi-range GET (nginx answers
    # multipart/byteranges), as GDAL's own /vsicurl/ does.
    cases = (("big5.zarr", None, None, 2), ("big6.zarr", "1000000", None, 1),
             ("big10.zarr", None, "SINGLE_GET", 1))
    for name, opt, multi, ndata in cases:
        with config_option("ZARR3_COALESCE_GAP", opt), config_option("GDAL_HTTP_MULTIRANGE", multi):
            ds, md = open_md(f'ZARR3:"{vsicurl(server, name)}"')
            m = server.mark()
            got = read(md, 0, 512, 256, 256)
        reqs = split_gmac(server.requests(m))
        assert np.array_equal(got, big[0:256, 512:768])
        heads, index, data = classify(reqs, size)
        assert heads == [] and len(index) == 1 and len(data) == ndata, (opt, reqs)
        if multi:
            assert data[0].range.count(",") == 1, data
            whole = [(0, int(idx[1][0] + idx[1][1])), (int(idx[4][0]), int(idx[5][0] + idx[5][1] - idx[4][0]))]
            assert data[0].range == "bytes=" + ",".join(f"{o}-{o + n - 1}" for o, n in whole), data
        else:
            assert ranges_cover(data, [tuple(idx[k]) for k in (0, 1, 4, 5)])


def test_window_512_report(served, big):
    """Request count and bytes for 512x512 windows via /vsicurl/ next to the
    bytes a local read takes from disk (index + merged inner-chunk ranges,
    computed from the shard indexes, what the store asks for)."""
    server, local = served
    lines = []
    for label, (y0, x0), name in (("aligned", (512, 512), "big7.zarr"), ("unaligned", (256, 256), "big8.zarr")):
        # Local: the same read through the driver, then the bytes it implies.
        lds, lmd = open_md(f'ZARR3:"{local}"')
        local_vals = read(lmd, y0, x0, 512, 512)
        ds, md = open_md(f'ZARR3:"{vsicurl(server, name)}"')
        m = server.mark()
        got = read(md, y0, x0, 512, 512)
        reqs = split_gmac(server.requests(m))
        assert np.array_equal(got, big[y0 : y0 + 512, x0 : x0 + 512])
        assert np.array_equal(local_vals, got)
        local_bytes, local_reads = _local_bytes(local, y0, x0)
        http_bytes = sum(r.body_bytes for r in reqs)
        n = {m_: sum(r.method == m_ for r in reqs) for m_ in ("HEAD", "GET")}
        lines.append(
            f"512x512 {label} at ({y0},{x0}): /vsicurl/ {len(reqs)} requests "
            f"({n['HEAD']} HEAD, {n['GET']} GET), {http_bytes} body bytes; "
            f"local: {local_reads} reads, {local_bytes} bytes"
        )
        if label == "aligned":  # whole shard: one GET of the whole object
            assert n == {"HEAD": 0, "GET": 1}, reqs
        else:  # 4 shards x (index + 2 data runs)
            assert n == {"HEAD": 0, "GET": 12}, reqs
        assert len(reqs) == local_reads
        assert http_bytes == local_bytes  # exact ranges: not a byte more than a local read
    print("\n" + "\n".join(lines))


def _local_bytes(local, y0, x0, gap=16384):
    """Bytes and read calls the core's partial-read plan takes for a 512x512 window."""
    total = calls = 0
    cps = SHARD[1] // INNER[1]
    for sy in range(y0 // SHARD[0], (y0 + 511) // SHARD[0] + 1):
        for sx in range(x0 // SHARD[1], (x0 + 511) // SHARD[1] + 1):
            path = local / f"c/{sy}/{sx}"
            lo_y, hi_y = max(y0, sy * 512), min(y0 + 512, sy * 512 + 512)
            lo_x, hi_x = max(x0, sx * 512), min(x0 + 512, sx * 512 + 512)
            chunks = [
                (iy * cps + ix)
                for iy in range((lo_y - sy * 512) // 128, (hi_y - 1 - sy * 512) // 128 + 1)
                for ix in range((lo_x - sx * 512) // 128, (hi_x - 1 - sx * 512) // 128 + 1)
            ]
            if len(chunks) == cps * cps:
                total += path.stat().st_size
                calls += 1
                continue
            idx = shard_index(path)
            spans = sorted(tuple(int(v) for v in idx[k]) for k in chunks)
            runs = []
            for o, n in spans:
                if runs and o - runs[-1][1] <= gap:
                    runs[-1][1] = max(runs[-1][1], o + n)
                else:
                    runs.append([o, o + n])
            total += INDEX_BYTES + sum(b - a for a, b in runs)
            calls += 1 + len(runs)
    return total, calls


# --- missing objects, other file systems ------------------------------------


def expected(case, arr_path="a"):
    import json

    meta = json.loads((CONFORMANCE / case / "case.json").read_text())
    a = next(x for x in meta["arrays"] if x["path"] == arr_path)
    return np.fromfile(CONFORMANCE / case / a["expected"], dtype=a["numpy_dtype"]).reshape(a["shape"])


def classic(name):
    ds = gdal.Open(name)
    assert ds is not None and ds.GetDriver().ShortName == "Zarr3", name
    return ds


def test_missing_chunk_404_reads_fill(served):
    """A regular (unsharded) store with missing chunks: each is one GET
    answered 404 and reads as the fill value; no listing, no retry, no HEAD.
    The array's zarr.json is asked once more, after the chunks: a read that
    returns the fill value checks that the array was not compacted since."""
    server, _ = served
    m = server.mark()
    ds = classic(f'ZARR3:"{vsicurl(server, "rect_missing_chunks.zarr")}":/a')
    got = ds.GetRasterBand(1).ReadAsArray()
    reqs = server.requests(m)
    exp = expected("rect_missing_chunks")
    assert got.shape == exp.shape and got.tobytes() == exp.tobytes()
    reqs = without_repo_probe(reqs)
    missing = [r for r in reqs if r.status == 404]
    assert len(missing) == 4 and all(r.method == "GET" and "/a/c/" in r.uri for r in missing), reqs
    assert not [r for r in reqs if r.method == "HEAD"], reqs
    assert not [r for r in reqs if r.status not in (200, 206, 404)], reqs
    assert all(not r.uri.endswith("/") for r in reqs), reqs  # never a folder URL
    meta = [i for i, r in enumerate(reqs) if r.uri.endswith("/a/zarr.json")]
    assert len(meta) == 2 and meta[1] == len(reqs) - 1, reqs  # at the open, then after the chunks
    again = reqs[:-1]
    assert len({(r.method, r.uri) for r in again}) == len(again), reqs  # nothing else asked twice


def test_prefixed_array_form_on_group(served):
    """ZARR3:"/vsicurl/...":/a opens the array by its zarr.json (no listing)."""
    server, _ = served
    url = vsicurl(server, "shard_regular_zstd.zarr")
    m = server.mark()
    ds = classic(f'ZARR3:"{url}":/a')
    got = ds.GetRasterBand(1).ReadAsArray()
    reqs = without_repo_probe(server.requests(m))
    assert got.tobytes() == expected("shard_regular_zstd").tobytes()
    meta = [r for r in reqs if r.uri.endswith("zarr.json")]
    assert {r.uri for r in meta} == {f"/{BUCKET}/shard_regular_zstd.zarr/zarr.json",
                                     f"/{BUCKET}/shard_regular_zstd.zarr/a/zarr.json"}, reqs
    assert all(r.uri.startswith(f"/{BUCKET}/shard_regular_zstd.zarr/a/c/") for r in reqs if r not in meta), reqs


def test_vsis3_against_nginx(served, big):
    server, local = served
    got, reqs = window_via(server, f'ZARR3:"/vsis3/{BUCKET}/big9.zarr"',
                           s3_options(server, AWS_NO_SIGN_REQUEST="YES"))
    assert np.array_equal(got, big[1024:1088, 1152:1408])
    assert all(r.uri == f"/{BUCKET}/big9.zarr/c/2/2" and not r.args for r in reqs), reqs
    # No probe of the first 16 KiB block (GDAL's /vsis3/ way to learn the
    # size): the index and one merged data range, unsigned (no-sign mode).
    heads, index, data = classify(reqs, (local / "c/2/2").stat().st_size)
    assert len(reqs) == 2 and heads == [] and len(index) == 1 and len(data) == 1, reqs


def _zip_store(src, zpath, prefix="store.zarr"):
    with zipfile.ZipFile(zpath, "w", compression=zipfile.ZIP_STORED) as z:
        for f in sorted(Path(src).rglob("*")):
            if f.is_file():
                z.write(f, f"{prefix}/{f.relative_to(src).as_posix()}")


def test_vsizip_local_and_over_http(served, tmp_path):
    server, _ = served
    zpath = tmp_path / "srz.zip"
    _zip_store(CONFORMANCE / "shard_regular_zstd" / "store.zarr", zpath)
    exp = expected("shard_regular_zstd")
    shutil.copy(zpath, server.root / BUCKET / "srz.zip")
    for root in (f"/vsizip/{zpath}/store.zarr", f"/vsizip//vsicurl/{server.url}/{BUCKET}/srz.zip/store.zarr"):
        ds = classic(f'ZARR3:"{root}":/a')
        assert ds.GetRasterBand(1).ReadAsArray().tobytes() == exp.tobytes(), root
        win = ds.GetRasterBand(1).ReadAsArray(35, 15, 30, 20)
        assert np.array_equal(win, exp[15:35, 35:65]), root
        # The unprefixed store path opens its only array as the raster.
        whole = classic(root)
        assert whole.GetMetadata("SUBDATASETS") == {}
        assert whole.GetRasterBand(1).ReadAsArray().tobytes() == exp.tobytes(), root


def test_vsimem_store():
    src = CONFORMANCE / "shard_regular_zstd" / "store.zarr"
    root = "/vsimem/zarr3_vsi_test/store.zarr"
    names = [f"{root}/{f.relative_to(src).as_posix()}" for f in src.rglob("*") if f.is_file()]
    try:
        for n in names:
            gdal.FileFromMemBuffer(n, (src / n[len(root) + 1 :]).read_bytes())
        ds = classic(f'ZARR3:"{root}":/a')
        win = ds.GetRasterBand(1).ReadAsArray(45, 55, 20, 30)
        assert np.array_equal(win, expected("shard_regular_zstd")[55:85, 45:65])
        ds = None
    finally:
        for n in names:
            gdal.Unlink(n)


def test_multidim_over_http_opens_arrays_by_name(served):
    """HTTP folders cannot be listed: OpenMDArray reads the array's zarr.json directly."""
    server, _ = served
    ds = gdal.OpenEx(vsicurl(server, "shard_regular_zstd.zarr"), gdal.OF_MULTIDIM_RASTER)
    assert ds is not None and ds.GetDriver().ShortName == "Zarr3"
    rg = ds.GetRootGroup()
    assert rg.OpenMDArray("a").ReadAsArray().tobytes() == expected("shard_regular_zstd").tobytes()
    assert rg.OpenMDArrayFromFullname("/a") is not None
    try:
        missing = rg.OpenMDArray("no_such_array")
    except RuntimeError:  # with gdal.UseExceptions()
        missing = None
    assert missing is None
    geo = gdal.OpenEx(vsicurl(server, "geo_group.zarr"), gdal.OF_MULTIDIM_RASTER).GetRootGroup()
    air = geo.OpenMDArray("air")
    local = gdal.OpenEx(str(CONFORMANCE / "geo_group" / "store.zarr"), gdal.OF_MULTIDIM_RASTER)
    assert air.ReadAsArray().tobytes() == \
        local.GetRootGroup().OpenMDArray("air").ReadAsArray().tobytes()


# --- direct HTTP reads: configuration, fallbacks, errors ---------------------


def test_direct_off_reads_through_vsicurl(served, big):
    """ZARR3_HTTP_DIRECT=NO: GDAL's /vsicurl/ (a HEAD per object), same values."""
    server, local = served
    with config_option("ZARR3_HTTP_DIRECT", "NO"):
        ds, md = open_md(f'ZARR3:"{vsicurl(server, "big11.zarr")}"')
        m = server.mark()
        got = read(md, 0, 0, 100, 120)
    reqs = split_gmac(server.requests(m))
    assert np.array_equal(got, big[0:100, 0:120])
    heads, index, data = classify(reqs, (local / "c/0/0").stat().st_size)
    assert len(heads) == 1 and len(index) == 1 and len(data) == 1, reqs


def test_headers_forwarded_and_connections_reused(served, big):
    """GDAL_HTTP_HEADERS reaches every request, also the parallel range GETs
    made from helper threads and when set thread-locally; requests of one
    thread share a kept-alive connection."""
    server, _ = served
    gdal.SetThreadLocalConfigOption("GDAL_HTTP_HEADERS", "X-Zarr3-Probe: hello")
    try:
        m = server.mark()
        ds, md = open_md(f'ZARR3:"{vsicurl(server, "big12.zarr")}"')
        got = read(md, 0, 512, 256, 256)  # index + 2 data ranges (parallel)
        got2 = read(md, 0, 0, 100, 120)  # another shard: index + 1 range
        reqs = split_gmac(server.requests(m))
    finally:
        gdal.SetThreadLocalConfigOption("GDAL_HTTP_HEADERS", None)
    assert np.array_equal(got, big[0:256, 512:768]) and np.array_equal(got2, big[0:100, 0:120])
    assert len(reqs) >= 6 and all(r.probe == "hello" for r in reqs), reqs
    assert len({r.connection for r in reqs}) < len(reqs), [r.connection for r in reqs]


def test_vsis3_signed_requests(served, big):
    """With credentials, object-store reads use the URL GDAL signs for the path."""
    server, _ = served
    opts = s3_options(server, AWS_NO_SIGN_REQUEST="NO", AWS_ACCESS_KEY_ID="AKIDEXAMPLE",
                      AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    got, reqs = window_via(server, f'ZARR3:"/vsis3/{BUCKET}/big13.zarr"', opts)
    assert np.array_equal(got, big[1024:1088, 1152:1408])
    assert len(reqs) == 2 and all(r.method == "GET" for r in reqs), reqs
    assert all("X-Amz-Signature=" in r.args and "AKIDEXAMPLE" in r.args for r in reqs), reqs


def test_server_ignoring_ranges(served, big):
    """A server that answers Range with 200 and the whole object: the driver
    cuts what it needs out of it (values exact, no error)."""
    server, _ = served
    url = f"/vsicurl/{server.url}/norange/{BUCKET}/big14.zarr"
    ds, md = open_md(f'ZARR3:"{url}"')
    m = server.mark()
    got = read(md, 0, 512, 256, 256)
    reqs = split_gmac(server.requests(m))
    assert np.array_equal(got, big[0:256, 512:768])
    assert reqs and all(r.status == 200 for r in reqs), reqs


def test_truncated_shard_over_http_is_an_error(served, tmp_path):
    """A shard shorter than its index: a clear error naming the object."""
    server, local = served
    bad = server.root / BUCKET / "truncated.zarr"
    shutil.copytree(local, bad, dirs_exist_ok=True)
    (bad / "c/0/0").write_bytes((local / "c/0/0").read_bytes()[:100])
    ds, md = open_md(f'ZARR3:"{vsicurl(server, "truncated.zarr")}"')
    got, msg = value_or_error(lambda: md.ReadAsArray(array_start_idx=[0, 0], count=[10, 10]))
    assert got is None
    assert "truncated.zarr/c/0/0" in msg and "larger than the file (100 bytes)" in msg, msg


def test_consolidated_metadata_over_http(served):
    """A group with inline consolidated metadata: listing and opening its
    arrays over HTTP reads the root zarr.json only (no child zarr.json)."""
    import json

    server, _ = served
    src = CONFORMANCE / "geo_group" / "store.zarr"
    dst = server.root / BUCKET / "geo_consolidated.zarr"
    shutil.copytree(src, dst)
    root = json.loads((dst / "zarr.json").read_text())
    children = {p.parent.name: json.loads(p.read_text()) for p in dst.glob("*/zarr.json")}
    root["consolidated_metadata"] = {"kind": "inline", "must_understand": False, "metadata": children}
    (dst / "zarr.json").write_text(json.dumps(root))

    m = server.mark()
    ds = gdal.OpenEx(f'ZARR3:"{vsicurl(server, "geo_consolidated.zarr")}"', gdal.OF_MULTIDIM_RASTER)
    rg = ds.GetRootGroup()
    assert sorted(rg.GetMDArrayNames()) == sorted(children)
    arrays = {n: rg.OpenMDArray(n) for n in children}
    assert [d.GetSize() for d in arrays["air"].GetDimensions()] == [12, 18, 36]
    reqs = without_repo_probe(server.requests(m))
    assert [(r.method, r.uri) for r in reqs] == [("GET", f"/{BUCKET}/geo_consolidated.zarr/zarr.json")], reqs

    m = server.mark()
    got = arrays["air"].ReadAsArray()
    reqs = split_gmac(server.requests(m))
    assert got.tobytes() == expected("geo_group", "air").tobytes()
    assert reqs and all("/air/c" in r.uri and r.method == "GET" for r in reqs), reqs


@pytest.mark.parametrize("fs", ["vsigs", "vsiaz"])
def test_other_object_stores(served, big, fs):
    """/vsigs/ (unsigned, custom endpoint) and /vsiaz/ (signed with a storage
    key: GDAL's SAS URL) reach nginx with direct GETs only."""
    server, local = served
    if fs == "vsigs":
        opts = {"CPL_GS_ENDPOINT": f"{server.url}/", "GS_NO_SIGN_REQUEST": "YES"}
        name, signed = "big15.zarr", False
    else:
        acct = server.root / "devstoreaccount1"
        if not acct.exists():
            os.symlink(server.root, acct)
        key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
        opts = {
            "AZURE_STORAGE_CONNECTION_STRING": "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;"
            f"AccountKey={key};BlobEndpoint={server.url}/devstoreaccount1",
            "AZURE_NO_SIGN_REQUEST": "NO",
        }
        name, signed = "big14.zarr", True
    got, reqs = window_via(server, f'ZARR3:"/{fs}/{BUCKET}/{name}"', opts)
    assert np.array_equal(got, big[1024:1088, 1152:1408])
    heads, index, data = classify(reqs, (local / "c/2/2").stat().st_size)
    assert len(reqs) == 2 and heads == [] and len(index) == 1 and len(data) == 1, reqs
    assert all(("sig=" in r.args) == signed for r in reqs), reqs


# ------------------------------------------------------------------ stores the plugin writes
def _written(www, name, options=()):
    src = gdal.GetDriverByName("MEM").Create("", 48, 32, 3, gdal.GDT_Float32)
    src.SetGeoTransform([10.0, 0.5, 0.0, 50.0, 0.0, -0.5])
    for b in range(3):
        src.GetRasterBand(b + 1).WriteArray(np.full((32, 48), b + 1.5, np.float32))
    gdal.Translate(str(www / name), src, format="Zarr3", creationOptions=list(options))
    return src


def test_store_written_by_gdal_translate_opens_over_http_with_its_bands(served):
    """Issue 41: `gdalinfo /vsicurl/.../t2m.zarr` of a store written by gdal_translate showed no band
    (no listing over HTTP, no consolidated metadata). The plugin writes consolidated metadata by
    default, so the store opens over HTTP as it does locally."""
    nginx, _ = served
    www = nginx.root / BUCKET
    src = _written(www, "written.zarr")
    root = json.loads((www / "written.zarr" / "zarr.json").read_text())
    assert "written" in root["consolidated_metadata"]["metadata"]
    info = gdal.Info(vsicurl(nginx, "written.zarr"))
    assert "Band 3" in info, info
    ds = gdal.Open(vsicurl(nginx, "written.zarr"))
    assert ds.RasterCount == 3 and ds.GetGeoTransform() == src.GetGeoTransform()
    np.testing.assert_array_equal(ds.ReadAsArray(), src.ReadAsArray())


def test_remote_group_without_listing_or_consolidated_metadata_says_so(served):
    """CREATE_CONSOLIDATED_METADATA=NO (the opt-out): over HTTP the group cannot be listed; the
    open warns naming the URL and both ways to open the array."""
    nginx, _ = served
    www = nginx.root / BUCKET
    _written(www, "plain.zarr", ["CREATE_CONSOLIDATED_METADATA=NO"])
    assert "consolidated_metadata" not in json.loads((www / "plain.zarr" / "zarr.json").read_text())
    url = vsicurl(nginx, "plain.zarr")
    messages = []
    gdal.PushErrorHandler(lambda cls, num, msg: messages.append(msg))
    try:
        ds = gdal.Open(url)
    finally:
        gdal.PopErrorHandler()
    assert ds.RasterCount == 0
    said = " ".join(messages)
    assert url in said and "CREATE_CONSOLIDATED_METADATA=YES" in said, messages
    assert f'ZARR3:"{url}":/array' in said, messages
    # the way named works
    assert gdal.Open(f'ZARR3:"{url}":/plain').RasterCount == 3
    # a local open of the same store lists it: no warning
    messages.clear()
    gdal.PushErrorHandler(lambda cls, num, msg: messages.append(msg))
    try:
        assert gdal.Open(str(www / "plain.zarr")).RasterCount == 3
    finally:
        gdal.PopErrorHandler()
    assert not messages, messages
