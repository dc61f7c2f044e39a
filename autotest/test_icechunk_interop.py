"""Icechunk repositories written by the real Icechunk, read through GDAL + the Zarr3 plugin (issue 29).

The repositories are written by scripts/icechunk/ (npm @earthmover/icechunk 2.2.x in the Debian 13
chroot, see scripts/icechunk/fixtures_lib.sh) when scripts/interop.sh runs; it exports
ZARR3_ICECHUNK_FIXTURES, the folder holding fixtures.json.  Skipped when that variable is unset.
Each fixture NAME has NAME.icechunk (the repository) and NAME.expected/: expected.json (branches,
tags, history, snapshot times, AS_OF selectors) and values/<snapshot>_<array>.npy, plus plain/<id>/:
every key of that snapshot as Icechunk's own store returns it (a plain Zarr store).

Groups (-k):
  test_fixture_*    the fixtures themselves are right: Icechunk's dump and GDAL's netCDF driver give
                    the expected values through the existing plain-store reader (pass without the
                    Icechunk reader)
  test_open_* / test_select_* / test_as_of_* / test_unknown_*   versions and open syntaxes
  test_shard_* / test_inline_* / test_split_* / test_virtual_* / test_spec1_*  chunk kinds, split
                    manifests and format versions
  test_object_store_*  a repository on /vsis3/ (the session nginx), s3:// virtual references into it
  test_gdal_translate_cli_* / test_gdalmdiminfo_* / test_rioxarray_* / test_qgis_*  the applications:
                    the gdal_translate and gdalmdiminfo programs, rioxarray and QGIS (headless, in a
                    child process) read every selector bit-exact; rioxarray and QGIS missing is a
                    failure, not a skip (the apps leg installs them before the interop leg)
The open option that allows virtual chunk containers is VIRTUAL_ALLOWED_PREFIXES (the name is
defined here once: ALLOW_OPTION).
"""
import importlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from osgeo import gdal

from conftest import config_option, value_or_error
from nginx_fixture import nginx, object_store  # noqa: F401  (nginx: session fixture)
from qgis_child import qgis_importable, run_qgis

FIXTURES = os.environ.get("ZARR3_ICECHUNK_FIXTURES")
pytestmark = pytest.mark.skipif(not FIXTURES, reason="Icechunk fixtures are written by scripts/interop.sh "
                                "(ZARR3_ICECHUNK_FIXTURES unset)")
ALLOW_OPTION = "VIRTUAL_ALLOWED_PREFIXES"
ALLOW_CONFIG = "ZARR3_VIRTUAL_ALLOWED_PREFIXES"  # the configuration option, used when the open option is absent
NAMES = ["rect", "shard", "inline", "virtual", "virtual_undeclared", "spec1", "split"]
MAGIC = "ICE\N{ICE CUBE}CHUNK".encode()  # every Icechunk metadata file; spec version at byte 36


# ------------------------------------------------------------------ fixture data
def _load():
    if not FIXTURES:
        return {}
    listing = Path(FIXTURES) / "fixtures.json"
    if not listing.exists():
        return {}
    out = {}
    for f in json.loads(listing.read_text())["fixtures"]:
        exp = json.loads(Path(f["expected"]).read_text())
        exp["_dir"] = Path(f["expected"]).parent
        out[f["name"]] = exp
    return out


FX = _load()


def fx(name):
    if name not in FX:
        pytest.fail(f"fixture {name} missing: {FIXTURES}/fixtures.json absent or incomplete "
                    "(writing the fixtures failed? see the interop log)")
    return FX[name]


def repo(name):
    return fx(name)["repo"]


def expected(name, snapshot, array):
    e = fx(name)
    snap = next(s for s in e["snapshots"] if s["id"] == snapshot)
    return np.load(e["_dir"] / snap["values"][array])


def head(name, branch="main"):
    return fx(name)["branches"][branch]


def snapshot_cases(name):
    """(snapshot id, array) for every snapshot holding arrays, known at collection time."""
    e = FX.get(name)
    if not e:
        return [pytest.param(None, None, id=f"{name}-missing")]
    # ids by commit order (snapshot ids differ from run to run)
    return [pytest.param(s["id"], a, id=f"{name}-commit{k + 1}{a}")
            for k, s in enumerate(e["snapshots"]) for a in s["values"]]


def version(name, kind):
    """(open options, snapshot id) choosing a version of fixture `name` by selector kind: default (the
    head of main), branch (the head of the other branch), tag, snapshot (the first commit), as_of
    (main: the earliest snapshot with data that is not the head) or branch_as_of (the other branch,
    else main: the latest such snapshot). Older versions than the heads where the fixture has them,
    so that a selector ignored fails."""
    e = fx(name)
    if kind == "default":
        return {}, head(name)
    if kind == "branch":
        branch = next(b for b in sorted(e["branches"]) if b != "main")
        return {"BRANCH": branch}, head(name, branch)
    if kind == "tag":
        if not e["tags"]:
            pytest.fail(f"fixture {name} has no tag")
        tag = sorted(e["tags"])[0]
        return {"TAG": tag}, e["tags"][tag]
    if kind == "snapshot":
        sid = e.get("commits", {}).get("c1", head(name))
        return {"SNAPSHOT": sid}, sid
    branch = "main" if kind == "as_of" else next((b for b in sorted(e["branches"]) if b != "main"), "main")
    with_values = {s["id"] for s in e["snapshots"] if s["values"]}
    sels = [s for s in e["as_of"] if s["branch"] == branch and s["expect"] in with_values]
    older = [s for s in sels if s["expect"] != head(name, branch)]
    sel = (older[0] if kind == "as_of" else older[-1]) if older else sels[0]
    opts = {"AS_OF": sel["as_of"]} if kind == "as_of" else {"BRANCH": branch, "AS_OF": sel["as_of"]}
    return opts, sel["expect"]


def only_array(name):
    arrays = list(fx(name)["arrays"])
    assert len(arrays) == 1, arrays
    return arrays[0]


def icechunk_uri(path, opts):
    """GDAL 3.14's ICECHUNK:<repo>?key=value&... form of open options."""
    query = "&".join(f"{k.lower()}={v}" for k, v in opts.items())
    return f"ICECHUNK:{path}" + (f"?{query}" if query else "")


def app_module(name):
    """An application's python module; missing is a failure (the apps leg installs it, before the
    interop leg: .ci/run)."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        pytest.fail(f"{name} not importable ({e}): scripts/install-apps.sh installs it")


def assert_bit_exact(got, want, what):
    assert got is not None, f"{what}: nothing read"
    got = np.asarray(got)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    if not np.array_equal(got.view(np.uint8), want.view(np.uint8)):
        bad = np.argwhere(got != want)
        raise AssertionError(f"{what}: {len(bad)} values differ, first at {bad[0].tolist()}: "
                             f"{got[tuple(bad[0])]} != {want[tuple(bad[0])]}")


# ------------------------------------------------------------------ GDAL helpers
def open_options(**kw):
    return [f"{k}={v}" for k, v in kw.items()]


def md_read(path, array, **opts):
    ds = gdal.OpenEx(path, gdal.OF_MULTIDIM_RASTER, open_options=open_options(**opts))
    assert ds is not None, f"{path}: not opened"
    arr = ds.GetRootGroup().OpenMDArrayFromFullname(array)
    assert arr is not None, f"{path}: no {array}"
    return arr.ReadAsArray()


def classic(path, **opts):
    ds = gdal.OpenEx(path, gdal.OF_RASTER, open_options=open_options(**opts))
    assert ds is not None, f"{path}: not opened"
    assert ds.GetDriver().ShortName == "Zarr3", f"{path}: opened by {ds.GetDriver().ShortName}"
    return ds


def sub(name, array):
    return f'ZARR3:"{repo(name)}":{array}'


def error_of(fn):
    """The GDAL error message of a failing call (fails the test when the call succeeds)."""
    got, err = value_or_error(fn)
    assert got is None, "expected an error, got a result"
    assert err, "failed without an error message"
    return err


def all_metadata(ds):
    out = {}
    for dom in (ds.GetMetadataDomainList() or []):
        md = ds.GetMetadata(dom)
        if isinstance(md, dict):
            out.update({f"{dom}:{k}": v for k, v in md.items()})
        elif md:
            out.update({f"{dom}:{i}": v for i, v in enumerate(md)})
    return out


# ------------------------------------------------------------------ the fixtures themselves
def test_fixture_list_complete():
    listing = json.loads((Path(FIXTURES) / "fixtures.json").read_text())
    assert listing["icechunk"].startswith("2.2."), listing["icechunk"]
    assert sorted(f["name"] for f in listing["fixtures"]) == sorted(NAMES)
    for name in NAMES:
        r = Path(repo(name))
        if fx(name)["spec_version"] == 2:
            assert (r / "repo").is_file(), f"{r}: spec 2 repository without a repo file"
        else:
            assert (r / "refs" / "branch.main" / "ref.json").is_file(), f"{r}: spec 1 without refs/"
        assert (r / "snapshots").is_dir()
        for f in (r / "snapshots").iterdir():
            head = f.read_bytes()[:40]
            assert head[:12] == MAGIC and head[36] == fx(name)["spec_version"], f"{f}: header {head!r}"
    assert not (Path(repo("spec1")) / "repo").exists(), "spec1 has the spec-2 repo file"


@pytest.mark.parametrize("name", [n for n in NAMES if n != "virtual_undeclared"])
def test_fixture_icechunk_dump_matches_expected(name):
    """Icechunk's own store output (plain/<id>) read by the plain-store reader = the expected values:
    validates the fixture encoding, the HDF5 chunk offsets and the expected files."""
    e = fx(name)
    checked = 0
    for s in e["snapshots"]:
        plain = e["_dir"] / "plain" / s["id"]
        if not plain.exists():
            continue
        for array in s["values"]:
            got = md_read(str(plain), array)
            assert_bit_exact(got, expected(name, s["id"], array), f"{name} {s['id']} {array} (dump)")
            checked += 1
    assert checked >= 1


def netcdf_months(name="virtual"):
    """GDAL's netCDF driver reading the monthly files one by one, concatenated along time."""
    parts, gts = [], set()
    for f in fx(name)["netcdf_files"]:
        ds = gdal.Open(f'NETCDF:"{f}":t2m')
        assert ds.GetDriver().ShortName == "netCDF"
        parts.append(ds.ReadAsArray())
        gts.add(ds.GetGeoTransform())
        nodata = ds.GetRasterBand(1).GetNoDataValue()
    assert len(gts) == 1
    return np.concatenate(parts), gts.pop(), nodata


def test_fixture_netcdf_driver_matches_expected():
    if gdal.GetDriverByName("netCDF") is None:
        pytest.skip("GDAL built without the netCDF driver")
    values, _, _ = netcdf_months()
    e = fx("virtual")
    assert values.shape == (90, 8, 10)
    assert_bit_exact(values, expected("virtual", head("virtual"), "/t2m"), "netCDF driver")
    assert e["arrays"]["/t2m"]["chunk_grid"]["configuration"]["chunk_shapes"][0] == [31, 28, 31]


# ------------------------------------------------------------------ opening a repository
def test_open_classic_default_branch_main():
    ds = classic(repo("rect"))
    assert (ds.RasterCount, ds.RasterYSize, ds.RasterXSize) == (5, 6, 9)
    assert_bit_exact(ds.ReadAsArray(), expected("rect", head("rect"), "/t2m"), "rect main (classic)")
    assert ds.GetGeoTransform() == (500000.0, 1000.0, 0.0, 5000000.0, 0.0, -1000.0)
    assert ds.GetSpatialRef().GetAuthorityCode(None) == "32632"
    assert ds.GetRasterBand(1).GetNoDataValue() == -9999.0


def test_open_multidim_default_branch_main():
    ds = gdal.OpenEx(repo("rect"), gdal.OF_MULTIDIM_RASTER)
    assert ds.GetDriver().ShortName == "Zarr3"
    rg = ds.GetRootGroup()
    assert rg.GetMDArrayNames() == ["t2m"]
    arr = rg.OpenMDArray("t2m")
    assert [d.GetName() for d in arr.GetDimensions()] == ["time", "y", "x"]
    assert_bit_exact(arr.ReadAsArray(), expected("rect", head("rect"), "/t2m"), "rect main (multidim)")


def test_open_subdataset_syntax():
    ds = classic(sub("rect", "/t2m"))
    assert_bit_exact(ds.ReadAsArray(), expected("rect", head("rect"), "/t2m"), "ZARR3:rect:/t2m")
    ds = classic(sub("inline", "/grids/mixed"))
    assert_bit_exact(ds.ReadAsArray(), expected("inline", head("inline"), "/grids/mixed"), "ZARR3:inline:/grids/mixed")


def test_open_group_lists_subdatasets():
    ds = gdal.Open(repo("virtual"))
    names = [v for k, v in ds.GetMetadata("SUBDATASETS").items() if k.endswith("_NAME")]
    for array in ("/t2m", "/t2m_checked", "/t2m_s3"):
        assert sub("virtual", array) in names, names


def test_open_gdal_translate(tmp_path):
    out = tmp_path / "dev.tif"
    gdal.Translate(str(out), gdal.OpenEx(repo("rect"), gdal.OF_RASTER, open_options=["BRANCH=dev"]))
    assert_bit_exact(gdal.Open(str(out)).ReadAsArray(), expected("rect", head("rect", "dev"), "/t2m"),
                     "gdal_translate BRANCH=dev")


def test_open_snapshot_shown_in_metadata():
    e = fx("rect")
    for opts, sid in (({}, head("rect")), ({"TAG": "v1"}, e["tags"]["v1"])):
        md = all_metadata(classic(repo("rect"), **opts))
        snap = next(s for s in e["snapshots"] if s["id"] == sid)
        values = " ".join(md.values())
        assert sid in values, f"{opts}: snapshot id {sid} not in the metadata {md}"
        assert snap["message"] in values, f"{opts}: message {snap['message']!r} not in the metadata"
        assert snap["written_at"][:19] in values, f"{opts}: time {snap['written_at']} not in the metadata"


# ------------------------------------------------------------------ choosing a version
@pytest.mark.parametrize("branch", ["main", "dev"])
def test_select_branch(branch):
    want = expected("rect", head("rect", branch), "/t2m")
    assert_bit_exact(md_read(repo("rect"), "/t2m", BRANCH=branch), want, f"BRANCH={branch} (multidim)")
    assert_bit_exact(classic(repo("rect"), BRANCH=branch).ReadAsArray(), want, f"BRANCH={branch} (classic)")


def test_select_tag():
    sid = fx("rect")["tags"]["v1"]
    assert sid == fx("rect")["commits"]["c2"]
    want = expected("rect", sid, "/t2m")
    assert_bit_exact(md_read(repo("rect"), "/t2m", TAG="v1"), want, "TAG=v1 (multidim)")
    assert_bit_exact(classic(sub("rect", "/t2m"), TAG="v1").ReadAsArray(), want, "TAG=v1 (ZARR3:)")


@pytest.mark.parametrize("sid,array", snapshot_cases("rect"))
def test_select_snapshot(sid, array):
    assert_bit_exact(md_read(repo("rect"), array, SNAPSHOT=sid), expected("rect", sid, array), f"SNAPSHOT={sid}")


def test_select_snapshot_initial_has_no_array():
    init = fx("rect")["history"]["main"][-1]
    assert next(s for s in fx("rect")["snapshots"] if s["id"] == init)["values"] == {}
    err = error_of(lambda: gdal.OpenEx(sub("rect", "/t2m"), gdal.OF_RASTER, open_options=[f"SNAPSHOT={init}"]))
    assert "t2m" in err, err


@pytest.mark.parametrize("form", ["as_of", "as_of_seconds", "offset"])
def test_as_of(form):
    e = fx("rect")
    checked = 0
    for sel in e["as_of"]:
        when = sel["as_of_seconds"] if form == "as_of_seconds" else sel["as_of"]
        if when is None or sel["expect"] is None:
            continue
        if form == "offset":  # the same instant written as +01:00
            from datetime import datetime, timedelta, timezone
            t = datetime.fromisoformat(when.replace("Z", "+00:00"))
            when = t.astimezone(timezone(timedelta(hours=1))).isoformat()
        snap = next(s for s in e["snapshots"] if s["id"] == sel["expect"])
        if not snap["values"]:
            continue  # the initial snapshot: covered by test_as_of_before_first_commit
        got = md_read(repo("rect"), "/t2m", BRANCH=sel["branch"], AS_OF=when)
        assert_bit_exact(got, expected("rect", sel["expect"], "/t2m"), f"BRANCH={sel['branch']} AS_OF={when}")
        checked += 1
    assert checked >= 5  # main: c1 c2 c4, dev: c1 c2 c3 (less with as_of_seconds only if too close)


def test_as_of_default_branch_is_main():
    sel = next(s for s in fx("rect")["as_of"] if s["branch"] == "main" and s["expect"] == fx("rect")["commits"]["c2"])
    got = md_read(repo("rect"), "/t2m", AS_OF=sel["as_of"])
    assert_bit_exact(got, expected("rect", sel["expect"], "/t2m"), f"AS_OF={sel['as_of']}")


def test_as_of_before_first_commit():
    sel = next(s for s in fx("rect")["as_of"] if s["branch"] == "main" and s["expect"] is None)
    err = error_of(lambda: md_read(repo("rect"), "/t2m", AS_OF=sel["as_of"]))
    assert sel["as_of"][:10] in err or "AS_OF" in err, err


def test_as_of_not_a_timestamp():
    err = error_of(lambda: md_read(repo("rect"), "/t2m", AS_OF="yesterday"))
    assert "AS_OF" in err and "yesterday" in err, err


@pytest.mark.parametrize("query,ref", [("", ("branches", "main")), ("?branch=dev", ("branches", "dev")),
                                       ("?tag=v1", ("tags", "v1"))])
def test_icechunk_connection_syntax(query, ref):
    sid = fx("rect")[ref[0]][ref[1]]
    name = f"ICECHUNK:{repo('rect')}{query}"
    ds = gdal.OpenEx(name, gdal.OF_RASTER)
    assert ds.GetDriver().ShortName == "Zarr3"
    assert_bit_exact(ds.ReadAsArray(), expected("rect", sid, "/t2m"), name)
    assert_bit_exact(md_read(name, "/t2m"), expected("rect", sid, "/t2m"), f"{name} (multidim)")


def test_unknown_branch_lists_valid_names():
    err = error_of(lambda: md_read(repo("rect"), "/t2m", BRANCH="nope"))
    assert "nope" in err and "main" in err and "dev" in err, err
    err = error_of(lambda: gdal.OpenEx(f"ICECHUNK:{repo('rect')}?branch=nope", gdal.OF_RASTER))
    assert "nope" in err and "main" in err and "dev" in err, err


def test_unknown_tag_lists_valid_names():
    err = error_of(lambda: md_read(repo("rect"), "/t2m", TAG="v9"))
    assert "v9" in err and "v1" in err, err


def test_unknown_snapshot_is_an_error():
    bad = "0" * 20
    err = error_of(lambda: md_read(repo("rect"), "/t2m", SNAPSHOT=bad))
    assert bad in err, err
    for sid in [s["id"] for s in fx("rect")["snapshots"]]:  # the valid ids, the heads among them
        assert sid in err, f"valid snapshot {sid} not listed: {err}"
    err = error_of(lambda: md_read(repo("rect"), "/t2m", SNAPSHOT="not-an-id"))
    assert "not-an-id" in err and "is not a snapshot id" in err, err
    for sid in [s["id"] for s in fx("rect")["snapshots"]]:  # a malformed id lists them too
        assert sid in err, f"valid snapshot {sid} not listed: {err}"


def test_log_lists_branches_tags_history(driver_path):
    exe = Path(os.environ.get("ZARR3_CLI", Path(driver_path) / "zarr3"))
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    p = subprocess.run([str(exe), "log", repo("rect")], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    e = fx("rect")
    for sid in e["history"]["main"]:
        assert sid in p.stdout
    for s in e["snapshots"]:
        if s["id"] in e["history"]["main"]:
            assert s["message"] in p.stdout
    assert "dev" in p.stdout and "v1" in p.stdout


# ------------------------------------------------------------------ chunk kinds
def test_shard_grid_values_and_layout():
    want = expected("shard", head("shard"), "/dem")
    assert_bit_exact(md_read(repo("shard"), "/dem"), want, "shard (multidim)")
    ds = classic(repo("shard"))
    band = ds.GetRasterBand(1)
    assert_bit_exact(band.ReadAsArray(), want, "shard (classic)")
    assert band.GetBlockSize() == [5, 4]  # the inner chunk (x, y)
    assert band.GetNoDataValue() == -32768
    assert ds.GetGeoTransform() == (500000.0, 1000.0, 0.0, 5000000.0, 0.0, -1000.0)
    # the absent shard and the empty inner chunk read as the fill value
    assert (want[0:4, 15:20] == -32768).all() and (want[8:12, 5:10] == -32768).all()


def test_shard_window_reads():
    want = expected("shard", head("shard"), "/dem")
    ds = classic(repo("shard"))  # kept: a band does not keep its dataset alive
    band = ds.GetRasterBand(1)
    for x, y, w, h in ((3, 2, 9, 7), (14, 5, 6, 7), (0, 11, 20, 1)):
        assert_bit_exact(band.ReadAsArray(x, y, w, h), want[y:y + h, x:x + w], f"window {x},{y},{w},{h}")


def test_inline_native_and_absent_chunks():
    e = fx("inline")
    assert e["native_chunk_files"] == 2
    want = expected("inline", head("inline"), "/grids/mixed")
    assert (want[34:40, 10:20] == 65535).all()
    assert_bit_exact(md_read(repo("inline"), "/grids/mixed"), want, "inline (multidim)")
    ds = classic(sub("inline", "/grids/mixed"))
    assert ds.GetRasterBand(1).GetNoDataValue() == 65535
    assert_bit_exact(ds.ReadAsArray(), want, "inline (classic)")


def test_split_manifests_values():
    e = fx("split")
    assert len(e["manifests"]) == 4 and all(m["chunk_refs"] == 3 for m in e["manifests"])
    want = expected("split", head("split"), "/t2m")
    assert_bit_exact(md_read(repo("split"), "/t2m"), want, "split (multidim)")
    ds = classic(repo("split"))
    assert_bit_exact(ds.ReadAsArray(), want, "split (classic)")
    assert_bit_exact(ds.ReadAsArray(3, 5, 9, 6), want[5:11, 3:12], "split window across 3 manifests")


def manifest_gets(server, since):
    got = {}
    for r in server.requests(since):
        if r.method == "GET" and "/manifests/" in r.uri:
            got[r.uri] = got.get(r.uri, 0) + 1
    return got


def test_split_reads_only_needed_manifests(nginx):
    """Over HTTP: a window inside the first row of chunks fetches one manifest; a full read fetches
    each of the four once (classic)."""
    dst = nginx.root / "ice" / "split.icechunk"
    if not dst.exists():
        shutil.copytree(repo("split"), dst)
    url = f"/vsicurl/{nginx.url}/ice/split.icechunk"
    want = expected("split", head("split"), "/t2m")
    gdal.VSICurlClearCache()
    mark = nginx.mark()
    # The multidimensional API reads exactly the window; a classic band reads whole blocks
    # (here 5x3, which cross the first chunk row's 2 rows).
    ds = gdal.OpenEx(url, gdal.OF_MULTIDIM_RASTER)
    arr = ds.GetRootGroup().OpenMDArrayFromFullname("/t2m")
    window = np.frombuffer(arr.Read(array_start_idx=[0, 0], count=[2, 16]), dtype=want.dtype)
    assert_bit_exact(window.reshape(2, 16), want[0:2], "first chunk row over HTTP")
    arr = None
    gets = manifest_gets(nginx, mark)
    assert len(gets) == 1 and list(gets.values()) == [1], gets
    ds = None
    gdal.VSICurlClearCache()
    mark = nginx.mark()
    ds = classic(url)
    assert_bit_exact(ds.ReadAsArray(), want, "full read over HTTP")
    gets = manifest_gets(nginx, mark)
    ids = sorted(m["id"] for m in fx("split")["manifests"])
    assert sorted(u.rsplit("/", 1)[1] for u in gets) == ids and set(gets.values()) == {1}, gets


# ------------------------------------------------------------------ virtual references
def test_virtual_local_repository_follows_its_file_container():
    """A local repository may follow the file:// container it declares (issue 29's default)."""
    want = expected("virtual", head("virtual"), "/t2m")
    assert_bit_exact(md_read(repo("virtual"), "/t2m"), want, "virtual /t2m (multidim)")
    ds = classic(sub("virtual", "/t2m"))
    assert ds.RasterCount == 90
    assert_bit_exact(ds.ReadAsArray(), want, "virtual /t2m (classic)")


def test_virtual_allowed_by_option():
    prefix = fx("virtual")["file_prefix"]
    want = expected("virtual", head("virtual"), "/t2m")
    got = md_read(repo("virtual"), "/t2m", **{ALLOW_OPTION: prefix})
    assert_bit_exact(got, want, f"{ALLOW_OPTION}={prefix}")


def test_virtual_coordinates_native_chunks():
    ds = gdal.OpenEx(repo("virtual"), gdal.OF_MULTIDIM_RASTER)
    arr = ds.GetRootGroup().OpenMDArray("t2m")
    assert [d.GetName() for d in arr.GetDimensions()] == ["time", "lat", "lon"]
    for name in ("time", "lat", "lon"):
        assert_bit_exact(md_read(repo("virtual"), f"/{name}"), expected("virtual", head("virtual"), f"/{name}"), name)
    assert arr.GetBlockSize()[1:] == [4, 10]


def test_virtual_equals_netcdf_driver():
    """The virtual array = GDAL's netCDF driver reading the 3 monthly files one by one."""
    if gdal.GetDriverByName("netCDF") is None:
        pytest.skip("GDAL built without the netCDF driver")
    values, gt, nodata = netcdf_months()
    ds = classic(sub("virtual", "/t2m"))
    assert_bit_exact(ds.ReadAsArray(), values, "Zarr3 virtual vs netCDF")
    assert ds.GetGeoTransform() == gt
    assert ds.GetRasterBand(1).GetNoDataValue() == nodata
    # one band per day, the same pixel in both drivers for the last day of February
    nc_feb = gdal.Open(f'NETCDF:"{fx("virtual")["netcdf_files"][1]}":t2m')
    assert_bit_exact(ds.GetRasterBand(59).ReadAsArray(), nc_feb.GetRasterBand(28).ReadAsArray(), "band 59 vs Feb 28")


def test_virtual_time_chunks_are_the_months():
    assert fx("virtual")["arrays"]["/t2m"]["chunk_grid"]["configuration"]["chunk_shapes"] == [[31, 28, 31], [4, 4], [10]]
    md = classic(sub("virtual", "/t2m")).GetMetadata("ZARR3")
    grid = json.loads(md["CHUNK_GRID"])
    assert grid["name"] == "rectilinear" and grid["configuration"]["chunk_shapes"][0] == [31, 28, 31], md
    assert json.loads(md["CODECS"])[1:] == [{"name": "numcodecs.shuffle", "configuration": {"elementsize": 4}},
                                            {"name": "numcodecs.zlib", "configuration": {"level": 4}}], md


@pytest.fixture
def served_virtual(nginx):
    dst = nginx.root / "ice" / "virtual.icechunk"
    if not dst.exists():
        shutil.copytree(repo("virtual"), dst)
    return f"/vsicurl/{nginx.url}/ice/virtual.icechunk"


def test_virtual_remote_repository_needs_permission(served_virtual):
    """A repository read over HTTP may not reach file:// paths unless the user lists the prefix."""
    prefix = fx("virtual")["file_prefix"]
    err = error_of(lambda: md_read(served_virtual, "/t2m"))
    assert prefix in err and ALLOW_OPTION in err, err
    got = md_read(served_virtual, "/t2m", **{ALLOW_OPTION: prefix})
    assert_bit_exact(got, expected("virtual", head("virtual"), "/t2m"), "remote repo, allowed prefix")


def test_virtual_remote_repository_allowed_by_config_option(served_virtual):
    """The same permission through the configuration option ZARR3_VIRTUAL_ALLOWED_PREFIXES."""
    prefix = fx("virtual")["file_prefix"]
    want = expected("virtual", head("virtual"), "/t2m")
    with config_option(ALLOW_CONFIG, "file:///elsewhere/"):  # a prefix that does not cover the files
        err = error_of(lambda: md_read(served_virtual, "/t2m"))
        assert prefix in err and ALLOW_OPTION in err, err
    with config_option(ALLOW_CONFIG, prefix):
        assert_bit_exact(md_read(served_virtual, "/t2m"), want, f"remote repo, {ALLOW_CONFIG}={prefix}")
        ds = classic(f'ZARR3:"{served_virtual}":/t2m')
        assert_bit_exact(ds.ReadAsArray(), want, f"remote repo, {ALLOW_CONFIG} (classic)")
    err = error_of(lambda: md_read(served_virtual, "/t2m"))  # unset again: refused again
    assert prefix in err, err


def test_virtual_undeclared_container_refused():
    """References into a container the repository does not declare are never followed."""
    prefix = fx("virtual_undeclared")["file_prefix"]
    for opts in ({}, {ALLOW_OPTION: prefix}):
        err = error_of(lambda: md_read(repo("virtual_undeclared"), "/t2m", **opts))
        assert prefix in err or ("file://" in err and "t2m_2023-01.nc" in err), f"{opts}: {err}"


def test_virtual_s3_container_not_allowed_by_default():
    s3 = fx("virtual")["s3"]
    err = error_of(lambda: md_read(repo("virtual"), s3["array"]))
    assert s3["prefix"] in err and ALLOW_OPTION in err, err


def test_virtual_changed_file_fails_last_modified_check():
    c = fx("virtual")["checked"]
    path = c["url"][len("file://"):]
    want = expected("virtual", head("virtual"), "/t2m_checked")
    assert_bit_exact(md_read(repo("virtual"), c["array"]), want, "t2m_checked before the change")
    st = os.stat(path)
    try:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 86400 * 10**9))
        err = error_of(lambda: md_read(repo("virtual"), c["array"]))
        assert c["url"] in err and "t2m_checked" in err, err
    finally:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


# ------------------------------------------------------------------ spec version 1
@pytest.mark.parametrize("opts,which", [({}, ("branches", "main")), ({"BRANCH": "dev"}, ("branches", "dev")),
                                        ({"TAG": "v1"}, ("tags", "v1"))])
def test_spec1_refs(opts, which):
    sid = fx("spec1")[which[0]][which[1]]
    assert_bit_exact(md_read(repo("spec1"), "/t2m", **opts), expected("spec1", sid, "/t2m"), f"spec1 {opts}")
    ds = classic(repo("spec1"), **opts)
    assert_bit_exact(ds.ReadAsArray(), expected("spec1", sid, "/t2m"), f"spec1 {opts} (classic)")
    srs = ds.GetSpatialRef()
    assert srs is not None and srs.GetAuthorityCode(None) == "32632"


@pytest.mark.parametrize("sid,array", snapshot_cases("spec1"))
def test_spec1_snapshot(sid, array):
    assert_bit_exact(md_read(repo("spec1"), array, SNAPSHOT=sid), expected("spec1", sid, array), f"spec1 {sid}")


def test_spec1_as_of():
    e = fx("spec1")
    sel = next(s for s in e["as_of"] if s["branch"] == "dev" and s["expect"] == e["commits"]["c1"])
    got = md_read(repo("spec1"), "/t2m", BRANCH="dev", AS_OF=sel["as_of"])
    assert_bit_exact(got, expected("spec1", sel["expect"], "/t2m"), f"spec1 dev AS_OF={sel['as_of']}")


def test_spec1_unknown_branch_lists_valid_names():
    err = error_of(lambda: md_read(repo("spec1"), "/t2m", BRANCH="nope"))
    assert "nope" in err and "main" in err and "dev" in err, err


# ------------------------------------------------------------------ a repository on an object store
def served_s3(nginx, name, bucket="interop"):  # noqa: F811
    """A copy of fixture `name` in bucket `bucket` of the session nginx: its /vsis3/ path."""
    dst = nginx.root / bucket / f"{name}.icechunk"
    if not dst.exists():
        shutil.copytree(repo(name), dst)
    return f"/vsis3/{bucket}/{name}.icechunk"


@pytest.mark.parametrize("kind,form", [("default", "path"), ("tag", "path"), ("tag", "icechunk"),
                                       ("branch_as_of", "path")])
def test_object_store_repository_vsis3(nginx, kind, form):  # noqa: F811
    """rect.icechunk (written by Icechunk) read through /vsis3/ from nginx, bit-exact."""
    path = served_s3(nginx, "rect")
    opts, sid = version("rect", kind)
    name, oo = (icechunk_uri(path, opts), {}) if form == "icechunk" else (path, opts)
    want = expected("rect", sid, "/t2m")
    with object_store("s3", nginx.port):
        gdal.VSICurlClearCache()
        mark = nginx.mark()
        assert_bit_exact(md_read(name, "/t2m", **oo), want, f"{name} {oo} (multidim)")
        assert_bit_exact(classic(name, **oo).ReadAsArray(), want, f"{name} {oo} (classic)")
        reqs = nginx.requests(mark)
    got = {r.uri for r in reqs if r.method == "GET" and r.status in (200, 206)}
    for key in ("repo", f"snapshots/{sid}"):
        assert f"/interop/rect.icechunk/{key}" in got, reqs


def test_object_store_virtual_s3_references(nginx):  # noqa: F811
    """/t2m_s3's virtual references name s3://zarr3-icechunk-fixture/t2m_2023-01.nc: with the NetCDF
    files in that bucket of nginx and the prefix allowed, the array reads bit-exact (January of /t2m,
    the same HDF5 chunks as /t2m_checked)."""
    e = fx("virtual")
    arr, prefix = e["s3"]["array"], e["s3"]["prefix"]
    assert prefix.startswith("s3://") and prefix.endswith("/"), prefix
    urls = {r["url"] for r in e["virtual_refs"] if r["key"].startswith(arr[1:] + "/")}
    assert urls and all(u.startswith(prefix) for u in urls), urls
    nc_dir = Path(e["netcdf_files"][0]).parent
    bucket_dir = nginx.root / prefix[len("s3://"):]
    for url in urls:
        key = url[len(prefix):]
        (bucket_dir / key).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(nc_dir / key, bucket_dir / key)
    want = expected("virtual", head("virtual"), "/t2m_checked")
    assert_bit_exact(want, expected("virtual", head("virtual"), "/t2m")[:want.shape[0]], "January")
    with object_store("s3", nginx.port):
        gdal.VSICurlClearCache()
        err = error_of(lambda: md_read(repo("virtual"), arr))
        assert prefix in err and ALLOW_OPTION in err, err
        mark = nginx.mark()
        assert_bit_exact(md_read(repo("virtual"), arr, **{ALLOW_OPTION: prefix}), want, f"{arr} (multidim)")
        ds = classic(sub("virtual", arr), **{ALLOW_OPTION: prefix})
        assert_bit_exact(ds.ReadAsArray(), want, f"{arr} (classic)")
        with config_option(ALLOW_CONFIG, prefix):
            assert_bit_exact(md_read(repo("virtual"), arr), want, f"{arr} ({ALLOW_CONFIG})")
        reqs = nginx.requests(mark)
    data = {"/" + u[len("s3://"):] for u in urls}
    served = [r for r in reqs if r.uri in data]
    assert served and all(r.method == "GET" and r.status == 206 for r in served), reqs


# ------------------------------------------------------------------ applications
def translate_cli(run_tool, tmp_path, src, oo=None, config=None):
    """gdal_translate (the program) of `src` to a GeoTIFF, opened."""
    out = tmp_path / "out.tif"
    args = ["gdal_translate", "-q", "-of", "GTiff"]
    for k, v in (oo or {}).items():
        args += ["-oo", f"{k}={v}"]
    for k, v in (config or {}).items():
        args += ["--config", k, v]
    p = run_tool(*args, src, out)
    assert p.returncode == 0, f"{' '.join(args)} {src}: {p.stderr}"
    return gdal.Open(str(out))


def assert_translated(ds, name, sid, array, what):
    want = expected(name, sid, array)
    assert_bit_exact(ds.ReadAsArray(), want, what)
    fill = fx(name)["arrays"][array]["fill_value"]
    assert all(ds.GetRasterBand(b).GetNoDataValue() == fill for b in range(1, ds.RasterCount + 1)), what


@pytest.mark.parametrize("name,kind,form", [
    ("rect", "tag", "oo"), ("rect", "snapshot", "oo"), ("rect", "as_of", "oo"), ("rect", "branch_as_of", "oo"),
    ("rect", "branch", "oo"), ("rect", "tag", "icechunk"), ("rect", "snapshot", "icechunk"),
    ("rect", "branch_as_of", "icechunk"),
    ("shard", "default", "oo"), ("shard", "snapshot", "oo"), ("shard", "as_of", "icechunk"),
    ("shard", "tag", "oo"), ("shard", "tag", "icechunk"),
])
def test_gdal_translate_cli_versions(run_tool, tmp_path, name, kind, form):
    """gdal_translate -oo TAG= / SNAPSHOT= / [BRANCH= ]AS_OF= and ICECHUNK:repo?tag=...: bit-exact."""
    opts, sid = version(name, kind)
    array = only_array(name)
    if form == "icechunk":
        ds = translate_cli(run_tool, tmp_path, icechunk_uri(repo(name), opts))
    else:
        ds = translate_cli(run_tool, tmp_path, repo(name), oo=opts)
    assert_translated(ds, name, sid, array, f"gdal_translate {name} {form} {opts}")


@pytest.mark.parametrize("src", ["zarr3", "icechunk"])
def test_gdal_translate_cli_inline(run_tool, tmp_path, src):
    name = sub("inline", "/grids/mixed") if src == "zarr3" else f'ICECHUNK:"{repo("inline")}":/grids/mixed'
    assert_translated(translate_cli(run_tool, tmp_path, name), "inline", head("inline"), "/grids/mixed", name)


@pytest.mark.parametrize("allow", ["local", "option"])
def test_gdal_translate_cli_virtual_local(run_tool, tmp_path, allow):
    """A local repository follows its file:// container; the open option allowing it changes nothing."""
    oo = {ALLOW_OPTION: fx("virtual")["file_prefix"]} if allow == "option" else None
    ds = translate_cli(run_tool, tmp_path, sub("virtual", "/t2m"), oo=oo)
    assert ds.RasterCount == 90
    assert_translated(ds, "virtual", head("virtual"), "/t2m", f"gdal_translate virtual ({allow})")


def test_gdal_translate_cli_virtual_remote(run_tool, tmp_path, served_virtual):
    """Over HTTP: refused (non-zero exit, no output) until -oo or --config allows the prefix."""
    prefix = fx("virtual")["file_prefix"]
    name = f'ZARR3:"{served_virtual}":/t2m'
    p = run_tool("gdal_translate", "-q", name, tmp_path / "refused.tif")
    assert p.returncode != 0 and prefix in p.stderr and ALLOW_OPTION in p.stderr, p.stderr
    assert not (tmp_path / "refused.tif").exists()
    ds = translate_cli(run_tool, tmp_path, name, oo={ALLOW_OPTION: prefix})
    assert_translated(ds, "virtual", head("virtual"), "/t2m", "gdal_translate remote virtual (-oo)")
    ds = translate_cli(run_tool, tmp_path, name, config={ALLOW_CONFIG: prefix})
    assert_translated(ds, "virtual", head("virtual"), "/t2m", "gdal_translate remote virtual (--config)")


def checksums(values):
    """GDAL's checksum of each band of `values` (bands first, or one 2-d band)."""
    a = values if values.ndim == 3 else values[np.newaxis]
    from osgeo import gdal_array
    mem = gdal.GetDriverByName("MEM").Create("", a.shape[2], a.shape[1], a.shape[0],
                                             gdal_array.NumericTypeCodeToGDALTypeCode(a.dtype))
    for b in range(a.shape[0]):
        mem.GetRasterBand(b + 1).WriteArray(a[b])
    return [mem.GetRasterBand(b + 1).Checksum() for b in range(a.shape[0])]


@pytest.mark.parametrize("name,kind,form", [
    ("rect", "default", "oo"), ("rect", "branch", "oo"), ("rect", "tag", "icechunk"), ("rect", "snapshot", "oo"),
    ("rect", "as_of", "icechunk"), ("rect", "branch_as_of", "oo"), ("shard", "tag", "oo"),
    ("shard", "as_of", "icechunk"),
])
def test_gdalinfo_cli_versions(run_tool, name, kind, form):
    """gdalinfo (the program) -checksum at each selector: every band's checksum equals that of the
    expected values of the version chosen, the nodata value is the fill value."""
    opts, sid = version(name, kind)
    args = ["gdalinfo", "-json", "-checksum", "-mdd", "ICECHUNK"]
    if form == "icechunk":
        args.append(icechunk_uri(repo(name), opts))
    else:
        for k, v in opts.items():
            args += ["-oo", f"{k}={v}"]
        args.append(repo(name))
    p = run_tool(*args)
    assert p.returncode == 0, p.stderr
    info = json.loads(p.stdout)
    array = only_array(name)
    want = expected(name, sid, array)
    assert [b["checksum"] for b in info["bands"]] == checksums(want), " ".join(args)
    assert {b["noDataValue"] for b in info["bands"]} == {fx(name)["arrays"][array]["fill_value"]}
    assert info["metadata"]["ICECHUNK"]["SNAPSHOT_ID"] == sid, info["metadata"].get("ICECHUNK")


@pytest.mark.parametrize("form", ["oo", "icechunk"])
def test_gdalmdiminfo_cli(run_tool, form):
    """gdalmdiminfo (the program) -oo TAG= / ICECHUNK:repo?tag=: the array, its dimensions and sizes,
    and (-detailed) its values, bit-exact."""
    opts, sid = version("rect", "tag")
    args = ["gdalmdiminfo", "-detailed"]
    if form == "icechunk":
        args.append(icechunk_uri(repo("rect"), opts))
    else:
        for k, v in opts.items():
            args += ["-oo", f"{k}={v}"]
        args.append(repo("rect"))
    p = run_tool(*args)
    assert p.returncode == 0, p.stderr
    info = json.loads(p.stdout)
    assert info["driver"] == "Zarr3"
    shape = fx("rect")["arrays"]["/t2m"]["shape"]
    names = ["time", "y", "x"]
    assert {d["name"]: d["size"] for d in info["dimensions"]} == dict(zip(names, shape)), info["dimensions"]
    arr = info["arrays"]["t2m"]
    assert arr["dimensions"] == [f"/{n}" for n in names] and arr["dimension_size"] == shape, arr
    assert_bit_exact(np.array(arr["values"], dtype=np.float32), expected("rect", sid, "/t2m"), " ".join(args))


@pytest.mark.parametrize("name,kind", [("rect", "branch"), ("rect", "tag"), ("rect", "snapshot"), ("rect", "as_of"),
                                       ("rect", "branch_as_of"), ("shard", "snapshot"), ("shard", "as_of"),
                                       ("shard", "tag")])
def test_rioxarray_versions(name, kind):
    """rioxarray.open_rasterio(repo, tag=... / snapshot=... / [branch=...,] as_of=...): bit-exact."""
    rioxarray = app_module("rioxarray")
    opts, sid = version(name, kind)
    array = only_array(name)
    want = expected(name, sid, array)
    with rioxarray.open_rasterio(repo(name), **{k.lower(): v for k, v in opts.items()}) as da:
        got, nodata = da.values, da.rio.nodata
    if want.ndim == 2:
        assert got.shape[0] == 1, got.shape
        got = got[0]
    assert_bit_exact(got, want, f"rioxarray {name} {opts}")
    assert nodata == fx(name)["arrays"][array]["fill_value"]


def test_rioxarray_unknown_tag_is_an_error():
    """The open options reach the plugin: an unknown tag fails the open, naming it."""
    rioxarray = app_module("rioxarray")
    with pytest.raises(Exception) as e:
        rioxarray.open_rasterio(repo("rect"), tag="v9")
    assert "v9" in str(e.value) and "v1" in str(e.value), e.value


QGIS_BANDS = r"""
import json, re, sys
from qgis.core import QgsApplication, QgsRasterLayer
app = QgsApplication([], False)
app.initQgis()
out = {}
for uri in sys.argv[1:]:
    layer = QgsRasterLayer(uri, "layer", "gdal")
    if not layer.isValid():
        out[uri] = {"error": layer.error().summary()}
        continue
    p = layer.dataProvider()
    bands = []
    for b in range(1, layer.bandCount() + 1):
        block = p.block(b, layer.extent(), layer.width(), layer.height())
        w, h = block.width(), block.height()
        bands.append({"shape": [h, w], "data": bytes(block.data()).hex(),
                      "nodata": [i for i in range(w * h) if block.isNoData(i // w, i % w)]})
    html = re.sub(r"<[^>]+>", " ", p.htmlMetadata())
    out[uri] = {"bands": bands, "driver": bool(re.search(r"GDAL Driver Description\s+Zarr3\s", html))}
print(json.dumps(out))
"""
QGIS_CASES = [("shard", "default"), ("shard", "as_of"), ("shard", "tag"), ("rect", "tag"), ("rect", "as_of"), ("rect", "branch"),
              ("rect", "branch_as_of"), ("rect", "snapshot")]


def qgis_uri(root, name, kind):
    return icechunk_uri(str(root / f"{name}.icechunk"), version(name, kind)[0])


@pytest.fixture(scope="module")
def qgis_layers(tmp_path_factory, driver_path):
    """Every QGIS_CASES layer read whole by QGIS in one child process, from copies (QGIS may write
    .aux.xml files beside what it opens)."""
    if not qgis_importable():
        pytest.fail("QGIS (python3-qgis) not importable by /usr/bin/python3: scripts/install-apps.sh installs it")
    root = tmp_path_factory.mktemp("qgis")
    for name in {n for n, _ in QGIS_CASES}:
        shutil.copytree(repo(name), root / f"{name}.icechunk")
    uris = [qgis_uri(root, n, k) for n, k in QGIS_CASES]
    p = run_qgis(QGIS_BANDS, uris, driver_path, root / "home")
    assert p.returncode == 0, p.stderr
    return root, json.loads(p.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name,kind", QGIS_CASES)
def test_qgis_layer_bands_bit_exact(qgis_layers, name, kind):
    """A QgsRasterLayer (provider gdal) of ICECHUNK:repo[?as_of=|?tag=|?branch=&as_of=]: every band's
    block, read whole, holds the expected bytes; QGIS's no-data pixels are the fill value's."""
    root, layers = qgis_layers
    uri = qgis_uri(root, name, kind)
    got = layers[uri]
    assert "error" not in got, got
    assert got["driver"], f"{uri}: not opened by the Zarr3 driver"
    want = expected(name, version(name, kind)[1], only_array(name))
    if want.ndim == 2:
        want = want[None]
    fill = fx(name)["arrays"][only_array(name)]["fill_value"]
    assert len(got["bands"]) == want.shape[0], uri
    for b, band in enumerate(got["bands"]):
        assert band["shape"] == list(want.shape[1:]), (uri, b + 1, band["shape"])
        data = np.frombuffer(bytes.fromhex(band["data"]), dtype=want.dtype).reshape(want.shape[1:])
        assert_bit_exact(data, want[b], f"QGIS {uri} band {b + 1}")
        assert band["nodata"] == np.flatnonzero(want[b] == fill).tolist(), f"{uri} band {b + 1}: no-data pixels"


# ------------------------------------------------------------------ zarr3 virtualize, read by Icechunk
# scripts/icechunk/virtual_repo.sh (zarr3 virtualize: 4 monthly NetCDF-4 files, then a 5th with --append)
# and check_virtual.mjs (every key of each snapshot as the real Icechunk reads it, written as a plain
# store), run by icechunk_check_written in scripts/interop.sh (issue 42).
def virtual_written():
    return Path(FIXTURES).parent / "written" / "virtual"


def test_virtualize_written_read_by_icechunk():
    """Icechunk follows the references zarr3 virtualize wrote (and reads its copied chunks and
    coordinates): each snapshot's arrays equal GDAL's netCDF driver on the files it holds, and the
    snapshot before the --append still holds 4 months."""
    w = virtual_written()
    info = json.loads((w / "virtual.json").read_text())
    read = json.loads((w / "read.json").read_text())
    files = sorted((w / "nc").glob("t2m_2023-0*.nc"))
    assert len(files) == 5 and sorted(info["snapshots"].values()) == [4, 5], info
    for snap, months in info["snapshots"].items():
        assert read.get(snap), (snap, read)
        plain = w / "read" / snap
        days = 0
        for var in ("t2m", "sp", "tp"):
            ds = gdal.Open(f'ZARR3:"{plain}":/{var}')
            want = np.concatenate([gdal.Open(f'NETCDF:"{f}":{var}').ReadAsArray() for f in files[:months]])
            got = ds.ReadAsArray()
            assert got.shape == want.shape, (snap, var)
            assert np.array_equal(got, want), (snap, var)
            days = ds.RasterCount
        last = gdal.Open(f'NETCDF:"{files[months - 1]}":t2m')
        # the last band's date (ISO in its description) = the netCDF driver's last date of the last file
        t2m = gdal.Open(f'ZARR3:"{plain}":/t2m')  # kept: a band must not outlive its dataset
        desc = t2m.GetRasterBand(days).GetDescription()
        hours = float(last.GetRasterBand(last.RasterCount).GetMetadataItem("NETCDF_DIM_time"))
        month_start = np.datetime64(last.GetMetadataItem("time#units").split("since ")[1].strip()[:10])
        assert desc.startswith("time=") and (np.datetime64(desc[5:]) ==
                                             month_start + np.timedelta64(int(hours), "h")), (snap, desc)



def test_virtualize_sample_read_by_icechunk():
    """The committed data/archive.icechunk (written by zarr3 virtualize --no-checksum in
    make_samples.sh), its references moved by --relocate onto copies of data/archive/*.nc: the real
    Icechunk reads every key of its tip, and /t2m equals GDAL's netCDF driver on the three files."""
    w = virtual_written()
    read = json.loads((w / "sample_read.json").read_text())
    assert len(read) == 1 and list(read.values())[0] > 0, read
    plain = w / "sample_read" / next(iter(read))
    files = sorted((w / "sample_nc").glob("t2m_2023-0*.nc"))
    assert len(files) == 3, files
    ds = gdal.Open(f'ZARR3:"{plain}":/t2m')
    want = np.concatenate([gdal.Open(f'NETCDF:"{f}":t2m').ReadAsArray() for f in files])
    got = ds.ReadAsArray()
    assert got.shape == want.shape == (90, 32, 64) and np.array_equal(got, want)
    nc = gdal.Open(f'NETCDF:"{files[0]}":t2m')
    assert ds.GetGeoTransform() == nc.GetGeoTransform()