"""Writing Icechunk repositories through GDAL (issue 30, driver side): update access commits when the
dataset closes, -co ICECHUNK=YES / ICECHUNK: outputs create a repository whose first commit holds the
whole copy, killed copies leave the branch where it was, object stores without a checked
condition are refused (commits on /vsis3/: test_icechunk_object_storage.py).

The repository format is checked by core's gtests (test_icechunk_write.cpp); here the values, the
history (`zarr3 log`) and the files beside the repository are checked through GDAL and its tools."""
import gc
import os
import sys
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from osgeo import gdal, osr

from test_permission_errors import as_plain_user, make_read_only, writable_again  # noqa: F401

BUILD = Path(os.environ["GDAL_DRIVER_PATH"])
ZARR3 = BUILD / "zarr3"
ENV = dict(os.environ, GDAL_DRIVER_PATH=str(BUILD))


def run(*args, env=None, check=True):
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, env=env or ENV)
    if check:
        assert p.returncode == 0, p.stderr
    return p


def history(repo, branch="main"):
    """[(snapshot id, message)] of `branch`, newest first (zarr3 log)."""
    out = run(ZARR3, "log", repo, "--branch", branch).stdout
    part = out.split("history of branch", 1)[1]
    rows = []
    for line in part.splitlines()[1:]:
        m = re.match(r"^([0-9A-Z]{20})\s+\S+\s+(?:\(\S+\)\s+)?(.*)$", line.strip())
        if m:
            rows.append((m.group(1), m.group(2)))
    return rows


def source_tif(path, value_scale=1.0, w=40, h=30, bands=2):
    ds = gdal.GetDriverByName("GTiff").Create(str(path), w, h, bands, gdal.GDT_Float32)
    ds.SetGeoTransform([10, 0.5, 0, 50, 0, -0.5])
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(4326)
    ds.SetSpatialRef(srs)
    for b in range(1, bands + 1):
        ds.GetRasterBand(b).WriteArray((np.arange(w * h, dtype="f4").reshape(h, w) * b) * value_scale)
    ds = None
    return str(path)


def errors_of(fn):
    """The CE_Failure messages emitted while running fn()."""
    got = []

    def handler(cls, _no, msg):
        if cls >= gdal.CE_Failure:
            got.append(msg)

    # GDAL >= 3.7's bindings with exceptions on turn an error raised while a dataset is
    # released (ds = None) into an "unraisable" exception instead of calling the handler.
    def unraisable(info):
        got.append(str(info.exc_value))

    old_hook = sys.unraisablehook
    sys.unraisablehook = unraisable
    gdal.PushErrorHandler(handler)
    try:
        fn()
        gc.collect()
    except RuntimeError as e:
        got.append(str(e))
    finally:
        gdal.PopErrorHandler()
        sys.unraisablehook = old_hook
    return got


@pytest.fixture
def repo(tmp_path):
    src = source_tif(tmp_path / "src.tif")
    out = tmp_path / "r.icechunk"
    run("gdal_translate", "-q", "-of", "Zarr3", "-co", "ICECHUNK=YES", "-co", "COMMIT_MESSAGE=first copy",
        "-co", "BLOCKSIZE=16", src, out)
    return str(out)


# ------------------------------------------------------------------ step 2: create
def test_translate_creates_a_repository_whose_first_commit_holds_the_copy(repo, tmp_path):
    h = history(repo)
    assert [m for _, m in h] == ["first copy", "Repository initialized"]
    ds = gdal.Open(repo)
    assert ds.GetMetadataItem("SNAPSHOT_ID", "ICECHUNK") == h[0][0]
    assert ds.RasterCount == 2 and ds.RasterXSize == 40 and ds.RasterYSize == 30
    assert ds.GetGeoTransform() == (10, 0.5, 0, 50, 0, -0.5)
    assert ds.GetSpatialRef().GetAuthorityCode(None) == "4326"
    src = gdal.Open(str(tmp_path / "src.tif"))
    assert np.array_equal(ds.ReadAsArray(), src.ReadAsArray())
    # Nothing but the repository beside the source: the staging folder is gone.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.icechunk", "src.tif"]
    assert {"chunks", "manifests", "repo", "snapshots"} <= {p.name for p in Path(repo).iterdir()}


@pytest.mark.parametrize("layout", [
    ["-co", "CHUNK_SHAPES=[[10,20],[16,24]]"],
    ["-co", "SHARD_CHUNK_SHAPE=8", "-co", "BLOCKSIZE=16"],
    ["-co", "COMPRESS=GZIP"],
    ["-co", "COMPRESS=BLOSC", "-co", "BLOCKSIZE=8"],
])
def test_every_layout_copies_bit_exact(tmp_path, layout):
    src = source_tif(tmp_path / "src.tif")
    out = str(tmp_path / "l.icechunk")
    run("gdal_translate", "-q", "-of", "Zarr3", "-co", "ICECHUNK=YES", *layout, src, out)
    ds = gdal.Open(out)
    assert np.array_equal(ds.ReadAsArray(), gdal.Open(src).ReadAsArray())
    assert len(history(out)) == 2


def test_icechunk_output_name_and_rerun_is_a_new_commit_keeping_history(tmp_path):
    src = source_tif(tmp_path / "src.tif")
    out = tmp_path / "n.icechunk"
    run("gdal_translate", "-q", "-of", "Zarr3", src, f"ICECHUNK:{out}")
    first = history(out)
    src2 = source_tif(tmp_path / "src2.tif", value_scale=3.0, w=20, h=10, bands=1)
    p = run("gdal_translate", "-q", "-of", "Zarr3", "-co", "COMMIT_MESSAGE=again", src2, f"ICECHUNK:{out}")
    assert "not deleted" in p.stderr  # GDAL's QuietDelete: a repository keeps its history
    h = history(out)
    assert [m for _, m in h] == ["again"] + [m for _, m in first]
    ds = gdal.Open(str(out))
    assert (ds.RasterXSize, ds.RasterCount) == (20, 1)
    assert np.array_equal(ds.ReadAsArray(), gdal.Open(src2).ReadAsArray())
    old = gdal.OpenEx(str(out), open_options=[f"SNAPSHOT={first[0][0]}"])
    assert (old.RasterXSize, old.RasterCount) == (40, 2)
    assert np.array_equal(old.ReadAsArray(), gdal.Open(src).ReadAsArray())
    # The same with -co ICECHUNK=YES and the plain folder name.
    run("gdal_translate", "-q", "-of", "Zarr3", "-co", "ICECHUNK=YES", src, out)
    assert len(history(out)) == len(h) + 1
    assert gdal.Open(str(out)).RasterXSize == 40


def test_copy_into_a_plain_store_name_is_refused(tmp_path):
    src = source_tif(tmp_path / "src.tif")
    plain = tmp_path / "plain.zarr"
    run("gdal_translate", "-q", "-of", "Zarr3", src, plain)
    p = run("gdal_translate", "-q", "-of", "Zarr3", "-co", "ICECHUNK=YES", src, plain, check=False)
    if p.returncode == 0:
        # GDAL 3.13's gdal_translate first removes an existing target through the driver's Delete
        # (GDALDriver::QuietDelete, as for every format): the plain store is replaced whole by a
        # repository, nothing of it mixed in (test_lifecycle: the same for plain re-runs).
        assert int(gdal.VersionInfo()) >= 3110000, p.stderr
        assert (plain / "repo").exists() and not (plain / "zarr.json").exists()
        assert len(history(plain)) == 2  # the repository's first commit and the copy
        assert np.array_equal(gdal.Open(str(plain)).ReadAsArray(), gdal.Open(src).ReadAsArray())
        return
    assert "plain Zarr store is there" in p.stderr, p.stderr
    assert gdal.Open(str(plain)).RasterCount == 2  # untouched
    assert not (plain / "repo").exists()


def test_plain_copy_onto_a_repository_names_the_option(repo, tmp_path):
    """Issue 39, noted extra: without -co ICECHUNK=YES, the error says a repository is there and
    names the option (it listed the repository's files as foreign content); nothing changes."""
    src = source_tif(tmp_path / "src2.tif", w=20, h=10, bands=1)
    before = history(repo)
    files = sorted(str(p.relative_to(repo)) for p in Path(repo).rglob("*"))
    p = run("gdal_translate", "-q", "-of", "Zarr3", src, repo, check=False)
    assert p.returncode != 0
    assert "Icechunk repository" in p.stderr and "-co ICECHUNK=YES" in p.stderr, p.stderr
    assert "holds what a Zarr store does not" not in p.stderr, p.stderr
    assert history(repo) == before
    assert sorted(str(p.relative_to(repo)) for p in Path(repo).rglob("*")) == files


def test_gdaladdo_on_a_repository_is_one_commit(repo):
    before = history(repo)
    run("gdaladdo", "-q", repo, "2", "4")
    h = history(repo)
    assert len(h) == len(before) + 1 and h[1] == before[0]
    ds = gdal.Open(repo)
    b = ds.GetRasterBand(1)
    assert b.GetOverviewCount() == 2 and b.GetOverview(0).XSize == 20
    old = gdal.OpenEx(repo, open_options=[f"SNAPSHOT={before[0][0]}"])
    assert old.GetRasterBand(1).GetOverviewCount() == 0


def node_names(repo, snapshot=None):
    """Every group and array path of the repository (multidimensional view)."""
    opts = [f"SNAPSHOT={snapshot}"] if snapshot else []
    ds = gdal.OpenEx(repo, gdal.OF_MULTIDIM_RASTER, open_options=opts)
    out, todo = set(), [("", ds.GetRootGroup())]
    while todo:
        path, g = todo.pop()
        out.update(f"{path}/{a}" for a in g.GetMDArrayNames() or [])
        for name in g.GetGroupNames() or []:
            out.add(f"{path}/{name}")
            todo.append((f"{path}/{name}", g.OpenGroup(name)))
    return out


def test_gdaladdo_clean_on_a_repository_is_one_commit_and_nothing_beside(repo):
    """Issue 39, point 4: -clean removed folders named <repo>@main/<level> beside the repository
    (the session's uri used as a path) and left the levels in the branch."""
    before_nodes = node_names(repo)
    run("gdaladdo", "-q", repo, "2", "4")
    built = history(repo)
    levels = node_names(repo) - before_nodes
    assert levels, node_names(repo)
    decoys = []
    for level in levels:  # plain store content, where a path built from the uri points
        d = Path(f"{repo}@main{level}")
        d.mkdir(parents=True, exist_ok=True)
        (d / "zarr.json").write_text('{"zarr_format": 3, "node_type": "group"}')
        decoys.append(d / "zarr.json")
    run("gdaladdo", "-q", "-clean", repo)
    assert all(d.exists() for d in decoys), [str(d) for d in decoys if not d.exists()]
    h = history(repo)
    assert len(h) == len(built) + 1 and h[1] == built[0]
    assert node_names(repo) == before_nodes
    assert gdal.Open(repo).GetRasterBand(1).GetOverviewCount() == 0
    # the snapshot with the levels keeps them
    assert node_names(repo, built[0][0]) == before_nodes | levels
    old = gdal.OpenEx(repo, open_options=[f"SNAPSHOT={built[0][0]}"])
    assert old.GetRasterBand(1).GetOverviewCount() == 2


def test_multidim_create_and_mdimtranslate(tmp_path):
    out = str(tmp_path / "md.icechunk")
    ds = gdal.GetDriverByName("Zarr3").CreateMultiDimensional(out, options=["ICECHUNK=YES", "COMMIT_MESSAGE=mdc"])
    rg = ds.GetRootGroup()
    x = rg.CreateDimension("x", None, None, 5)
    ar = rg.CreateMDArray("v", [x], gdal.ExtendedDataType.Create(gdal.GDT_Int16))
    ar.Write(np.arange(5, dtype="i2") * 3)
    del ar, x, rg
    ds = None
    assert [m for _, m in history(out)] == ["mdc", "Repository initialized"]
    ds = gdal.OpenEx(out, gdal.OF_MULTIDIM_RASTER)
    assert list(ds.GetRootGroup().OpenMDArray("v").ReadAsArray()) == [0, 3, 6, 9, 12]
    out2 = str(tmp_path / "md2.icechunk")
    run("gdalmdimtranslate", "-q", "-of", "Zarr3", "-co", "ICECHUNK=YES", "-co", "COMMIT_MESSAGE=mdt", out, out2)
    assert [m for _, m in history(out2)] == ["mdt", "Repository initialized"]
    ds = gdal.OpenEx(out2, gdal.OF_MULTIDIM_RASTER)
    assert list(ds.GetRootGroup().OpenMDArray("v").ReadAsArray()) == [0, 3, 6, 9, 12]


def test_multidim_create_into_a_repository_replaces_the_branch(tmp_path, repo):
    """As classic Create and copies: a new multidimensional dataset is a commit replacing what
    the branch held (it used to add to it: the old arrays stayed beside the new ones)."""
    before = history(repo)
    ds = gdal.GetDriverByName("Zarr3").CreateMultiDimensional(repo, options=["ICECHUNK=YES"])
    rg = ds.GetRootGroup()
    x = rg.CreateDimension("x", None, None, 4)
    ar = rg.CreateMDArray("w", [x], gdal.ExtendedDataType.Create(gdal.GDT_Byte))
    ar.Write(np.arange(4, dtype="u1") + 1)
    del ar, x, rg
    ds = None
    h = history(repo)
    assert len(h) == len(before) + 1 and h[0][1] == "gdal-zarr3: create" and h[1] == before[0]
    rg = gdal.OpenEx(repo, gdal.OF_MULTIDIM_RASTER).GetRootGroup()
    assert rg.GetMDArrayNames() == ["w"] and not rg.GetGroupNames()
    assert list(rg.OpenMDArray("w").ReadAsArray()) == [1, 2, 3, 4]
    old = gdal.OpenEx(repo, open_options=[f"SNAPSHOT={before[0][0]}"])
    assert np.array_equal(old.ReadAsArray(), gdal.Open(str(tmp_path / "src.tif")).ReadAsArray())


@pytest.mark.parametrize("step", ["icechunk-chunks", "icechunk-snapshot", "icechunk-repo"])
def test_killed_copy_leaves_main_where_it_was(tmp_path, repo, step):
    src2 = source_tif(tmp_path / "src2.tif", value_scale=5.0)
    before = history(repo)
    env = dict(ENV, ZARR3_TEST_KILL_AT=step)
    p = run("gdal_translate", "-q", "-of", "Zarr3", "-co", "ICECHUNK=YES", src2, repo, env=env, check=False)
    assert p.returncode != 0
    assert history(repo) == before
    ds = gdal.Open(repo)
    assert np.array_equal(ds.ReadAsArray(), gdal.Open(str(tmp_path / "src.tif")).ReadAsArray())
    # A fresh repository killed in its first commit: main is the initial, empty commit.
    fresh = tmp_path / "fresh.icechunk"
    p = run("gdal_translate", "-q", "-of", "Zarr3", "-co", "ICECHUNK=YES", src2, fresh, env=env, check=False)
    assert p.returncode != 0
    if fresh.exists():
        assert [m for _, m in history(fresh)] == ["Repository initialized"]
    # The next run (no kill) succeeds over what was left.
    run("gdal_translate", "-q", "-of", "Zarr3", "-co", "ICECHUNK=YES", src2, fresh)
    assert np.array_equal(gdal.Open(str(fresh)).ReadAsArray(), gdal.Open(src2).ReadAsArray())
    # The copy is written into the repository's session: nothing was left beside the repository.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fresh.icechunk", "r.icechunk", "src.tif",
                                                          "src2.tif"]
    run("gdal_translate", "-q", "-of", "Zarr3", "-co", "ICECHUNK=YES", src2, repo)
    assert history(repo)[1] == before[0]


def test_classic_create_makes_one_commit_at_close(tmp_path):
    """Driver.Create with ICECHUNK=YES (rasterio's and gdal_create's path): a dataset over a session;
    what is written before the close is one commit."""
    out = str(tmp_path / "c.icechunk")
    ds = gdal.GetDriverByName("Zarr3").Create(out, 6, 4, 2, gdal.GDT_Int16,
                                              options=["ICECHUNK=YES", "COMMIT_MESSAGE=cc", "BLOCKSIZE=1,2,3"])
    ds.SetGeoTransform([100, 10, 0, 200, 0, -10])
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(32631)
    ds.SetSpatialRef(srs)
    ds.GetRasterBand(1).SetNoDataValue(-1)
    values = np.arange(24, dtype="i2").reshape(4, 6)
    ds.GetRasterBand(1).WriteArray(values)
    ds.GetRasterBand(2).WriteArray(values * 2)
    assert [m for _, m in history(out)] == ["Repository initialized"]  # nothing before the close
    ds = None
    assert [m for _, m in history(out)] == ["cc", "Repository initialized"]
    ds = gdal.Open(out)
    assert ds.GetGeoTransform() == (100, 10, 0, 200, 0, -10)
    assert ds.GetSpatialRef().GetAuthorityCode(None) == "32631"
    assert ds.GetRasterBand(1).GetNoDataValue() == -1
    assert np.array_equal(ds.ReadAsArray(), np.stack([values, values * 2]))
    assert not [p.name for p in tmp_path.iterdir() if p.name != "c.icechunk"]  # no staging folder


def test_classic_create_into_a_repository_is_a_new_commit(tmp_path, repo):
    before = history(repo)
    ds = gdal.GetDriverByName("Zarr3").Create(f"ICECHUNK:{repo}", 3, 2, 1, gdal.GDT_Byte)
    ds.GetRasterBand(1).Fill(9)
    ds = None
    h = history(repo)
    assert len(h) == len(before) + 1 and h[0][1] == "gdal-zarr3: create" and h[1] == before[0]
    ds = gdal.Open(repo)
    assert (ds.RasterXSize, ds.RasterYSize, ds.RasterCount) == (3, 2, 1)
    assert (ds.ReadAsArray() == 9).all()
    old = gdal.OpenEx(repo, open_options=[f"SNAPSHOT={before[0][0]}"])
    assert np.array_equal(old.ReadAsArray(), gdal.Open(str(tmp_path / "src.tif")).ReadAsArray())


def test_classic_create_that_fails_commits_nothing(repo):
    before = history(repo)
    errs = errors_of(lambda: gdal.GetDriverByName("Zarr3").Create(
        repo, 4, 4, 1, gdal.GDT_Byte, options=["ICECHUNK=YES", "ARRAY_NAME=zarr.json"]))
    assert any("ARRAY_NAME" in e for e in errs), errs
    gc.collect()
    assert history(repo) == before


def test_gdal_create_makes_a_repository(tmp_path):
    out = tmp_path / "g.icechunk"
    run("gdal_create", "-q", "-of", "Zarr3", "-co", "ICECHUNK=YES", "-outsize", "5", "3", "-bands", "1",
        "-ot", "Byte", "-burn", "7", "-a_srs", "EPSG:4326", "-a_ullr", "0", "3", "5", "0", out)
    assert [m for _, m in history(out)] == ["gdal-zarr3: create", "Repository initialized"]
    ds = gdal.Open(str(out))
    assert (ds.ReadAsArray() == 7).all() and ds.GetGeoTransform() == (0, 1, 0, 3, 0, -1)


# ------------------------------------------------------------------ step 1: update = commit
def test_update_commits_once_when_the_dataset_closes(repo):
    before = history(repo)
    ds = gdal.OpenEx(repo, gdal.OF_RASTER | gdal.OF_UPDATE, open_options=["COMMIT_MESSAGE=patch"])
    ds.GetRasterBand(1).WriteArray(np.full((2, 3), -7, "f4"), 0, 0)
    ds.GetRasterBand(2).WriteArray(np.full((1, 1), -9, "f4"), 39, 29)
    ds.FlushCache()
    assert history(repo) == before  # a flush does not commit
    ds = None
    h = history(repo)
    assert [m for _, m in h[:2]] == ["patch", "first copy"]
    a = gdal.Open(repo).ReadAsArray()
    assert (a[0, :2, :3] == -7).all() and a[0, 2, 0] == 80 and a[1, 29, 39] == -9
    old = gdal.OpenEx(repo, open_options=[f"SNAPSHOT={before[0][0]}"]).ReadAsArray()
    assert old[0, 0, 0] == 0 and old[1, 29, 39] == 2 * 1199


def test_update_without_changes_commits_nothing_and_default_message(repo):
    before = history(repo)
    gdal.OpenEx(repo, gdal.OF_RASTER | gdal.OF_UPDATE).ReadAsArray()
    assert history(repo) == before
    ds = gdal.OpenEx(repo, gdal.OF_RASTER | gdal.OF_UPDATE)
    ds.SetMetadataItem("foo", "bar")
    ds = None
    assert history(repo)[0][1] == "gdal-zarr3: update"
    assert gdal.Open(repo).GetMetadataItem("foo") == "bar"


def test_no_aux_xml_is_written_for_a_repository(repo, tmp_path):
    ds = gdal.OpenEx(repo, gdal.OF_RASTER | gdal.OF_UPDATE)
    ds.GetRasterBand(1).ComputeStatistics(False)
    ds.GetRasterBand(1).SetDescription("t2m")
    ds = None
    assert not list(tmp_path.rglob("*.aux.xml"))


def test_update_of_a_tag_snapshot_or_as_of_is_refused(repo):
    snap = history(repo)[0][0]
    for opt in (f"SNAPSHOT={snap}", "TAG=v1", "AS_OF=2030-01-01T00:00:00Z"):
        errs = errors_of(lambda: gdal.OpenEx(repo, gdal.OF_RASTER | gdal.OF_UPDATE, open_options=[opt]))
        assert any("writing to a tag or a snapshot" in e for e in errs), (opt, errs)
    errs = errors_of(lambda: gdal.OpenEx(f'ICECHUNK:"{repo}?snapshot={snap}"', gdal.OF_RASTER | gdal.OF_UPDATE))
    assert any("writing to a tag or a snapshot" in e for e in errs), errs
    errs = errors_of(lambda: gdal.OpenEx(repo, gdal.OF_RASTER | gdal.OF_UPDATE, open_options=["BRANCH=nope"]))
    assert errs and "nope" in errs[-1], errs


def test_multidim_update_commits(repo):
    ds = gdal.OpenEx(repo, gdal.OF_MULTIDIM_RASTER | gdal.OF_UPDATE, open_options=["COMMIT_MESSAGE=md"])
    rg = ds.GetRootGroup()
    arr = rg.OpenMDArray("r")
    assert arr is not None, rg.GetMDArrayNames()
    arr.Write(np.full((1, 1, 1), 42, "f4"), array_start_idx=[1, 0, 0], count=[1, 1, 1])
    rg.CreateAttribute("note", [], gdal.ExtendedDataType.CreateString()).Write("hi")
    del arr, rg
    ds = None
    assert history(repo)[0][1] == "md"
    assert gdal.Open(repo).ReadAsArray()[1, 0, 0] == 42


def test_conflicting_commit_fails_the_close_and_leaves_the_winner(repo):
    a = gdal.OpenEx(repo, gdal.OF_RASTER | gdal.OF_UPDATE, open_options=["COMMIT_MESSAGE=A"])
    b = gdal.OpenEx(repo, gdal.OF_RASTER | gdal.OF_UPDATE, open_options=["COMMIT_MESSAGE=B"])
    a.GetRasterBand(1).WriteArray(np.full((1, 1), 1, "f4"), 0, 0)
    b.GetRasterBand(1).WriteArray(np.full((1, 1), 2, "f4"), 1, 0)  # same chunk
    a = None
    assert history(repo)[0][1] == "A"

    def close_b():
        nonlocal b
        b = None

    errs = errors_of(close_b)
    assert any(repo in e and "failed" in e and "branch" in e for e in errs), errs
    assert history(repo)[0][1] == "A"
    v = gdal.Open(repo).ReadAsArray()
    assert v[0, 0, 0] == 1 and v[0, 0, 1] == 1


@pytest.mark.skipif(not hasattr(gdal.Dataset, "Close"), reason="Dataset.Close(): GDAL >= 3.8 bindings")
@pytest.mark.parametrize("api", ["classic", "multidim"])
def test_a_failed_commit_is_what_close_returns(repo, api):
    """GDAL >= 3.7 (RFC 91): the commit runs in the dataset's Close(), so a lost race is the result of
    Close() (an exception in Python; GDALClose returns CE_Failure), reported once."""
    a = gdal.OpenEx(repo, gdal.OF_RASTER | gdal.OF_UPDATE, open_options=["COMMIT_MESSAGE=A"])
    if api == "classic":
        b = gdal.OpenEx(repo, gdal.OF_RASTER | gdal.OF_UPDATE, open_options=["COMMIT_MESSAGE=B"])
        b.GetRasterBand(1).WriteArray(np.full((1, 1), 2, "f4"), 1, 0)  # the same chunk as A's
    else:
        b = gdal.OpenEx(repo, gdal.OF_MULTIDIM_RASTER | gdal.OF_UPDATE, open_options=["COMMIT_MESSAGE=B"])
        arr = b.GetRootGroup().OpenMDArray("r")
        arr.Write(np.full((1, 1, 1), 2, "f4"), array_start_idx=[0, 0, 1], count=[1, 1, 1])
        del arr
    a.GetRasterBand(1).WriteArray(np.full((1, 1), 1, "f4"), 0, 0)
    a.Close()  # A wins
    assert history(repo)[0][1] == "A"
    # GDAL 3.8-3.12 bindings raise from Close() before they forget the closed dataset, which is
    # then freed again when released (a crash; fixed in 3.13 with try/finally): there Close() runs
    # with exceptions off and its result is read instead.
    if int(gdal.VersionInfo()) >= 3130000:
        with pytest.raises(RuntimeError, match="failed, the branch is unchanged") as e:
            b.Close()
        errs = [str(e.value)]
    else:
        rc = []
        with gdal.ExceptionMgr(useExceptions=False):
            errs = errors_of(lambda: rc.append(b.Close()))
        assert rc == [gdal.CE_Failure], rc
    assert any(repo in m and "failed, the branch is unchanged" in m for m in errs), errs

    def release():
        nonlocal b
        b = None

    assert errors_of(release) == []  # the session's release does not commit or report again
    assert history(repo)[0][1] == "A"
    v = gdal.Open(repo).ReadAsArray()
    assert v[0, 0, 0] == 1 and v[0, 0, 1] == 1


def test_disjoint_commits_are_rebased(repo):
    a = gdal.OpenEx(repo, gdal.OF_RASTER | gdal.OF_UPDATE, open_options=["COMMIT_MESSAGE=A"])
    b = gdal.OpenEx(repo, gdal.OF_RASTER | gdal.OF_UPDATE, open_options=["COMMIT_MESSAGE=B"])
    a.GetRasterBand(1).WriteArray(np.full((1, 1), 1, "f4"), 0, 0)
    b.GetRasterBand(1).WriteArray(np.full((1, 1), 2, "f4"), 39, 29)  # another chunk
    a = None
    b = None
    assert [m for _, m in history(repo)[:2]] == ["B", "A"]
    v = gdal.Open(repo).ReadAsArray()
    assert v[0, 0, 0] == 1 and v[0, 29, 39] == 2


@pytest.mark.parametrize("edit", [("--move", "/r", "/moved"), ("--delete", "/r")])
@pytest.mark.parametrize("metadata", [False, True])
def test_an_update_over_a_moved_or_deleted_array_fails_naming_it(repo, edit, metadata):
    """Another writer (as the real Icechunk's moveNode, or a delete) changes the branch while an
    update is open: the commit at close is a conflict naming the node and commits nothing (it used
    to commit without the written chunks, and crash at close when metadata changed too). Run in a
    child process: the crash it guards against would take pytest down."""
    code = f"""
import subprocess, sys
import numpy as np
from osgeo import gdal
from icechunk_build import edit_repo
errs = []
gdal.PushErrorHandler(lambda c, n, m: errs.append(m) if c >= gdal.CE_Failure else None)
ds = gdal.OpenEx({repo!r}, gdal.OF_RASTER | gdal.OF_UPDATE, open_options=["COMMIT_MESSAGE=mine"])
ds.GetRasterBand(1).WriteArray(np.full((2, 2), -5, "f4"), 0, 0)
if {metadata}:
    ds.SetMetadataItem("k", "v")
ds.FlushCache()
edit_repo({repo!r}, *{edit!r})
ds = None
print("\\n".join(errs))
sys.exit(1 if errs else 0)
"""
    p = run("/usr/bin/python3", "-c", code, check=False,
            env=dict(ENV, PYTHONPATH=str(Path(__file__).parent)))
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    why = "was moved to /moved" if edit[0] == "--move" else "was deleted"
    assert "node /r " + why in p.stdout and "conflict" in p.stdout, p.stdout
    assert [m for _, m in history(repo)[:2]] == [("move /r" if edit[0] == "--move" else "delete /r"),
                                                 "first copy"]
    root = gdal.OpenEx(repo, gdal.OF_MULTIDIM_RASTER).GetRootGroup()
    assert "r" not in (root.GetMDArrayNames() or [])
    if edit[0] == "--move":
        v = root.OpenMDArray("moved").ReadAsArray()
        assert v[0, 0, 0] == 0 and v[0, 0, 1] == 1  # the copy's values, not the lost update's


@pytest.mark.parametrize("step", ["icechunk-chunks", "icechunk-snapshot", "icechunk-repo"])
def test_update_killed_while_committing_leaves_the_branch(repo, step):
    before = history(repo)
    code = ("from osgeo import gdal; import numpy as np; gdal.UseExceptions();"
            f"ds = gdal.OpenEx({repo!r}, gdal.OF_RASTER | gdal.OF_UPDATE);"
            "ds.GetRasterBand(1).WriteArray(np.full((3, 3), 5, 'f4'), 0, 0); ds = None")
    p = run("/usr/bin/python3", "-c", code, env=dict(ENV, ZARR3_TEST_KILL_AT=step), check=False)
    assert p.returncode != 0
    assert history(repo) == before
    assert gdal.Open(repo).ReadAsArray()[0, 0, 0] == 0


def test_a_failed_write_commits_nothing(repo):
    """A chunk that cannot be stored (here: chunks/ replaced by a file) fails the close, which then
    commits none of the other changes."""
    before = history(repo)
    chunks = Path(repo) / "chunks"
    chunks.rename(Path(repo) / "chunks.aside")
    chunks.write_text("not a folder")
    try:
        ds = gdal.OpenEx(repo, gdal.OF_RASTER | gdal.OF_UPDATE)
        ds.SetMetadataItem("changed", "yes")
        werrs = errors_of(lambda: ds.GetRasterBand(1).WriteArray(np.full((16, 16), 5, "f4"), 0, 0))
        assert any("Not a directory" in e for e in werrs), werrs

        def close():
            nonlocal ds
            ds = None

        errs = errors_of(close)
    finally:
        chunks.unlink()
        (Path(repo) / "chunks.aside").rename(chunks)
    assert any("nothing was committed" in e and repo in e for e in errs), errs
    assert history(repo) == before
    ds = gdal.Open(repo)
    assert ds.GetMetadataItem("changed") is None and ds.ReadAsArray()[0, 0, 0] == 0


def test_repository_in_vsimem(tmp_path):
    src = source_tif(tmp_path / "src.tif")
    out = "/vsimem/test_icechunk_write/m.icechunk"
    try:
        gdal.Translate(out, src, format="Zarr3", creationOptions=["ICECHUNK=YES"])
        ds = gdal.OpenEx(out, gdal.OF_RASTER | gdal.OF_UPDATE, open_options=["COMMIT_MESSAGE=mem"])
        ds.GetRasterBand(2).WriteArray(np.full((1, 1), -3, "f4"), 5, 5)
        ds = None
        ds = gdal.Open(out)
        assert ds.GetMetadataItem("SNAPSHOT_MESSAGE", "ICECHUNK") == "mem"
        assert ds.ReadAsArray()[1, 5, 5] == -3 and ds.ReadAsArray()[1, 5, 6] == 2 * 206
        assert not [n for n in gdal.ReadDir("/vsimem/test_icechunk_write") or [] if "staging" in n]
    finally:
        for name in gdal.ReadDirRecursive("/vsimem/test_icechunk_write") or []:
            if not name.endswith("/"):
                gdal.Unlink("/vsimem/test_icechunk_write/" + name)


# ------------------------------------------------------------------ step 4: object stores
def test_object_stores_without_a_checked_condition_are_refused_before_anything_is_written(tmp_path):
    """/vsis3/ and /vsiaz/ commit with If-Match (test_icechunk_object_storage.py), after a probe that
    the storage honours it: a storage that cannot be probed (nothing answers here) is refused, nothing
    written; /vsigs/ (GDAL's V2-signed URLs cannot carry x-goog-if-generation-match) is refused
    outright."""
    src = source_tif(tmp_path / "src.tif")
    env = dict(ENV, AWS_NO_SIGN_REQUEST="YES", AWS_S3_ENDPOINT="127.0.0.1:9", AWS_HTTPS="NO",
               CPL_VSIL_CURL_ALLOWED_EXTENSIONS="none", GDAL_HTTP_MAX_RETRY="0")
    p = run("gdal_translate", "-q", "-of", "Zarr3", "-co", "ICECHUNK=YES", src, "/vsis3/bucket/x.icechunk",
            env=env, check=False)
    assert p.returncode != 0
    assert "/vsis3/bucket/x.icechunk" in p.stderr and "conditional" in p.stderr, p.stderr
    assert "nothing was written" in p.stderr
    p = run("gdal_translate", "-q", "-of", "Zarr3", "-co", "ICECHUNK=YES", src, "/vsigs/bucket/x.icechunk",
            env=dict(env, GS_NO_SIGN_REQUEST="YES", CPL_GS_ENDPOINT="http://127.0.0.1:9/"), check=False)
    assert p.returncode != 0
    assert "/vsigs/bucket/x.icechunk" in p.stderr and "conditional" in p.stderr, p.stderr
    assert "nothing was written" in p.stderr
    errs = errors_of(lambda: gdal.GetDriverByName("Zarr3").CreateMultiDimensional(
        "/vsigs/bucket/y.icechunk", options=["ICECHUNK=YES"]))
    assert any("conditional" in e and "/vsigs/bucket/y.icechunk" in e for e in errs), errs


# ------------------------------------------------------------------ step 3: appends as commits
def day_tif(tmp_path, d, w=20, h=10):
    path = tmp_path / f"day{d}.tif"
    ds = gdal.GetDriverByName("GTiff").Create(str(path), w, h, 1, gdal.GDT_Float32)
    ds.SetGeoTransform([0, 1, 0, 10, 0, -1])
    ds.GetRasterBand(1).WriteArray(np.full((h, w), d, "f4"))
    ds = None
    return str(path)


def date_of(d):
    return f"2024-01-{d:02d}"


def append(tmp_path, repo, d, *extra, env=None, check=True):
    return run("gdal_translate", "-q", "-of", "Zarr3", "-co", "APPEND_DIM=time", "-co",
               f"APPEND_COORD={date_of(d)}", *extra, day_tif(tmp_path, d), repo, env=env, check=check)


def coordinate(repo, **opts):
    ds = gdal.OpenEx(repo, gdal.OF_MULTIDIM_RASTER, open_options=[f"{k}={v}" for k, v in opts.items()])
    return list(ds.GetRootGroup().OpenMDArray("time").ReadAsArray())


def files_of(repo):
    return {str(p.relative_to(repo)) for p in Path(repo).rglob("*") if p.is_file()}


@pytest.fixture
def series(tmp_path):
    repo = str(tmp_path / "ts.icechunk")
    append(tmp_path, repo, 1, "-co", "ICECHUNK=YES", "-co", "COMMIT_MESSAGE=day 1")
    return repo


def test_append_is_one_commit_and_old_snapshots_read_unchanged(tmp_path, series):
    first = history(series)
    reader = gdal.OpenEx(series, open_options=[f"SNAPSHOT={first[0][0]}"])
    before = files_of(series)
    append(tmp_path, series, 2, "-co", "COMMIT_MESSAGE=day 2")
    h = history(series)
    assert [m for _, m in h] == ["day 2", "day 1", "Repository initialized"]
    added = files_of(series) - before
    # The day's chunk and the coordinate's, one manifest per changed array, the snapshot, its
    # transaction log and the previous repo file: nothing else, no staging folder beside.
    kinds = sorted(p.split("/")[0] for p in added)
    assert kinds.count("chunks") == 2 and kinds.count("snapshots") == 1, added
    assert set(kinds) <= {"chunks", "manifests", "snapshots", "transactions", "overwritten"}, added
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    ds = gdal.Open(series)
    assert ds.RasterCount == 2
    assert [ds.GetRasterBand(b).ReadAsArray()[0, 0] for b in (1, 2)] == [1, 2]
    assert coordinate(series) == [19723, 19724]
    # The reader of the first snapshot, opened before the append, reads what it read.
    assert reader.RasterCount == 1 and reader.ReadAsArray()[0, 0] == 1
    assert coordinate(series, SNAPSHOT=first[0][0]) == [19723]
    # A second append adds the same kinds of objects (independent of the history).
    before = files_of(series)
    append(tmp_path, series, 3)
    kinds3 = sorted(p.split("/")[0] for p in files_of(series) - before)
    assert kinds3 == kinds
    # The default message names what was appended (issue 40.9).
    assert history(series)[0][1] == f"gdal-zarr3: append along time: {date_of(3)}"
    two = str(tmp_path / "two.tif")
    gdal.Translate(two, str(day_tif(tmp_path, 4)), format="GTiff", bandList=[1, 1])
    run("gdal_translate", "-q", "-of", "Zarr3", "-co", "APPEND_DIM=time", "-co",
        f"APPEND_COORD={date_of(4)},{date_of(5)}", two, series)
    assert history(series)[0][1] == \
        f"gdal-zarr3: append along time: {date_of(4)} to {date_of(5)} (2 steps)"


def test_refused_append_commits_nothing(tmp_path, series):
    before = history(series)
    p = run("gdal_translate", "-q", "-of", "Zarr3", "-co", "APPEND_DIM=time", "-co", "APPEND_COORD=2024-01-05",
            day_tif(tmp_path, 9, w=7), series, check=False)
    assert p.returncode != 0 and "ts.icechunk" in p.stderr
    p = append(tmp_path, series, 1, check=False)  # the date is already there
    assert p.returncode != 0
    assert history(series) == before


@pytest.mark.parametrize("step", ["icechunk-chunks", "icechunk-snapshot", "icechunk-repo"])
def test_killed_append_leaves_the_branch_where_it_was(tmp_path, series, step):
    before = history(series)
    p = append(tmp_path, series, 2, env=dict(ENV, ZARR3_TEST_KILL_AT=step), check=False)
    assert p.returncode != 0
    assert history(series) == before
    assert gdal.Open(series).RasterCount == 1 and coordinate(series) == [19723]
    append(tmp_path, series, 2)
    assert coordinate(series) == [19723, 19724]
    ds = gdal.Open(series)  # kept: GDAL 3.6's bands do not keep their dataset alive
    assert ds.GetRasterBand(2).ReadAsArray()[0, 0] == 2


def test_racing_appends_keep_every_day(tmp_path, series):
    """Two processes append at once, for 3 rounds: the loser of each commit retries on the new tip."""
    env = dict(ENV, CPL_DEBUG="Zarr3")
    retried = 0
    days = [1]
    for r in range(3):
        a, b = 2 + 2 * r, 3 + 2 * r
        procs = [subprocess.Popen(["gdal_translate", "-q", "-of", "Zarr3", "-co", "APPEND_DIM=time",
                                   "-co", f"APPEND_COORD={date_of(d)}", "-co", "APPEND_ORDER=ANY",
                                   day_tif(tmp_path, d), series], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for d in (a, b)]
        for p in procs:
            _, err = p.communicate(timeout=120)
            assert p.returncode == 0, err
            retried += err.count("lost to another commit")
        days += [a, b]
    h = history(series)
    assert len(h) == 2 + 6
    coord = coordinate(series)
    assert sorted(coord) == [19722 + d for d in days]
    ds = gdal.Open(series)
    assert ds.RasterCount == 7
    # Each step holds the values of its own day.
    for i, c in enumerate(coord):
        assert ds.GetRasterBand(i + 1).ReadAsArray()[0, 0] == c - 19722
    print(f"retries: {retried}")


# ------------------------------------------------------------------ hostile links, read-only repositories
def test_a_copy_writes_nothing_beside_the_repository(tmp_path, repo):
    """A copy into a repository goes straight into its session (no staging folder beside it, whose
    name a stale or planted link could hold): the folder around the repository is as it was, and
    a link planted at the name older versions staged in, and what it leads to, are left alone."""
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "file.txt").write_text("keep")
    (tmp_path / ".r.icechunk.icechunk-staging").symlink_to(precious)
    around = sorted(p.name for p in tmp_path.iterdir())
    before = history(repo)
    run("gdal_translate", "-q", "-of", "Zarr3", "-co", "ICECHUNK=YES", source_tif(tmp_path / "s2.tif"), repo)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(around + ["s2.tif"])
    assert (precious / "file.txt").read_text() == "keep"
    assert len(history(repo)) == len(before) + 1


@pytest.mark.skipif("asan" in os.environ.get("LD_PRELOAD", ""),
                    reason="setpriv'd GDAL tools cannot run under the ASan preload")
def test_update_of_a_read_only_repository_commits_nothing(repo, as_plain_user):
    """A repository whose folders are read-only (here: for a user without root's bypass): the close
    reports the permission problem, and the repository is byte for byte as it was."""
    files = {p: p.read_bytes() for p in Path(repo).rglob("*") if p.is_file()}
    before = history(repo)
    make_read_only(*[p for p in [Path(repo), *Path(repo).rglob("*")] if p.is_dir()])
    code = ("from osgeo import gdal; import numpy as np; gdal.UseExceptions();"
            f"ds = gdal.OpenEx({repo!r}, gdal.OF_RASTER | gdal.OF_UPDATE);"
            "ds.GetRasterBand(1).WriteArray(np.full((3, 3), 5, 'f4'), 0, 0); ds = None")
    try:
        p = as_plain_user("/usr/bin/python3", "-c", code)
    finally:
        writable_again(Path(repo))
    assert "Permission denied" in p.stderr and repo in p.stderr, p.stderr
    assert {p: p.read_bytes() for p in Path(repo).rglob("*") if p.is_file()} == files
    assert history(repo) == before


@pytest.mark.parametrize("kind", ["classic", "multidim"])
def test_a_cancelled_copy_commits_nothing(tmp_path, repo, kind):
    """A copy stopped part way (here: its progress callback cancels it) commits nothing, neither when
    the copy fails nor later when its session is released; the branch stays where it was."""
    before = history(repo)
    calls = []

    def cancel_midway(pct, _msg, _data):
        calls.append(pct)
        return 0 if pct > 0.3 else 1

    src = source_tif(tmp_path / "big.tif", w=600, h=500, bands=2)
    with pytest.raises(RuntimeError):
        if kind == "classic":
            gdal.Translate(repo, src, format="Zarr3", creationOptions=["ICECHUNK=YES", "BLOCKSIZE=1,50,50"],
                           callback=cancel_midway)
        else:
            gdal.MultiDimTranslate(repo, src, format="Zarr3", creationOptions=["ICECHUNK=YES"],
                                   callback=cancel_midway)
    gc.collect()
    assert calls and history(repo) == before
    assert np.array_equal(gdal.Open(repo).ReadAsArray(), gdal.Open(str(tmp_path / "src.tif")).ReadAsArray())


def appended_manifest_bytes(tmp_path, name, split):
    """Bytes of the manifests one gdal_translate append of a 1x1 day writes into a repository whose
    array holds 3,000 stored steps (1x1 chunks), written and appended with
    ZARR3_ICECHUNK_SPLIT_CHUNKS=`split`."""
    env = dict(os.environ, ZARR3_ICECHUNK_SPLIT_CHUNKS=str(split))
    plain, repo = tmp_path / f"{name}.zarr", tmp_path / f"{name}.icechunk"
    ds = gdal.GetDriverByName("Zarr3").CreateMultiDimensional(str(plain))
    rg = ds.GetRootGroup()
    dims = [rg.CreateDimension(n, None, None, s) for n, s in (("time", 3000), ("lat", 1), ("lon", 1))]
    a = rg.CreateMDArray("t2m", dims, gdal.ExtendedDataType.Create(gdal.GDT_Float32),
                         ["BLOCKSIZE=1,1,1"])
    a.Write(np.arange(3000, dtype=np.float32).reshape(3000, 1, 1))
    ds = None
    run("gdalmdimtranslate", "-q", "-of", "Zarr3", "-co", "ICECHUNK=YES", plain, repo, env=env)
    day = tmp_path / f"{name}_day.tif"
    t = gdal.GetDriverByName("GTiff").Create(str(day), 1, 1, 1, gdal.GDT_Float32)
    t.GetRasterBand(1).WriteArray(np.array([[7]], np.float32))
    t = None
    before = set(os.listdir(repo / "manifests"))
    run("gdal_translate", "-q", "-of", "Zarr3", "-co", "APPEND_DIM=time", day, repo, env=env)
    new = set(os.listdir(repo / "manifests")) - before
    got = gdal.OpenEx(str(repo), gdal.OF_MULTIDIM_RASTER).GetRootGroup().OpenMDArray("t2m").ReadAsArray()
    assert got.shape == (3001, 1, 1) and got[-1, 0, 0] == 7 and np.array_equal(
        got[:3000, 0, 0], np.arange(3000, dtype=np.float32))
    return len(new), sum((repo / "manifests" / m).stat().st_size for m in new)


def test_an_append_rewrites_only_the_last_manifest_split(tmp_path):
    """Issue 43 (commits whose size does not grow with history): with manifests split every 100 time
    steps, an append writes one manifest of the last split, under a tenth of what one manifest for the
    whole array (what an append wrote before) holds."""
    n_split, split_bytes = appended_manifest_bytes(tmp_path, "split", 100)
    n_whole, whole_bytes = appended_manifest_bytes(tmp_path, "whole", 1_000_000)
    print(f"append into 3,000 steps: {split_bytes} manifest bytes split every 100, {whole_bytes} unsplit")
    assert n_split == 1 and n_whole == 1
    assert split_bytes * 10 < whole_bytes, (split_bytes, whole_bytes)
