"""Overviews and appends (issue 40, item 6), through the GDAL programs and rasterio, on a plain store
and an Icechunk repository:

- an append (gdal_translate -co APPEND_DIM=time) extends every overview level in the same append
  (a repository: the same commit) with the values a fresh gdaladdo gives; a level whose resampling
  is unknown makes the append remove the pyramid, with a warning naming the level;
- gdaladdo on a store that has levels replaces them (no ovr_2x_1 beside ovr_2x);
- gdaladdo -clean works after appends (a repository: one commit);
- stale levels (an append by an older version) are ignored with one warning; the base opens with
  all its bands (gdalinfo, rasterio count), also with extra level groups left beside them."""
import importlib.util
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from osgeo import gdal

BUILD = Path(os.environ["GDAL_DRIVER_PATH"])
ENV = dict(os.environ, GDAL_DRIVER_PATH=str(BUILD))
W, H = 37, 23  # odd sizes: the levels' edge pixels average fewer source pixels
KEEP = [] if int(gdal.VersionInfo()) < 3070000 else ["-co", "APPEND_SUBDATASET=YES"]


def run(*args, check=True):
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, env=ENV, timeout=300)
    if check:
        assert p.returncode == 0, p.stderr
    return p


def day_tif(tmp_path, d):
    path = tmp_path / f"day{d}.tif"
    ds = gdal.GetDriverByName("GTiff").Create(str(path), W, H, 1, gdal.GDT_Float32)
    ds.SetGeoTransform([0, 1, 0, 50, 0, -1])
    v = (np.arange(W * H, dtype="f4").reshape(H, W) * (d + 0.37)) % 97.5
    ds.GetRasterBand(1).WriteArray(v)
    ds = None
    return str(path)


def append(tmp_path, store, d, *extra, check=True):
    return run("gdal_translate", "-q", "-of", "Zarr3", "-co", "APPEND_DIM=time", "-co",
               f"APPEND_COORD=2024-01-{d:02d}", *KEEP, *extra, day_tif(tmp_path, d), store, check=check)


def series(tmp_path, name, days, icechunk=False):
    store = str(tmp_path / name)
    for d in range(1, days + 1):
        append(tmp_path, store, d, *(["-co", "ICECHUNK=YES"] if icechunk and d == 1 else []))
    return store


def levels(store, resampling="average"):
    """[(w, h, cube of every band)] of the overviews, finest first."""
    ds = gdal.Open(store)
    b = ds.GetRasterBand(1)
    out = []
    for i in range(b.GetOverviewCount()):
        o = b.GetOverview(i)
        cube = np.stack([ds.GetRasterBand(k).GetOverview(i).ReadAsArray() for k in range(1, ds.RasterCount + 1)])
        out.append((o.XSize, o.YSize, cube))
    return out


def fresh_levels(tmp_path, days, resampling, factors=("2", "4")):
    """The levels a fresh gdaladdo gives on a store of the same days."""
    ref = series(tmp_path, f"ref{days}{resampling}.zarr", days)
    run("gdaladdo", "-q", "-r", resampling, ref, *factors)
    return levels(ref)


def layout_assets(store):
    return [lv["asset"] for lv in json.loads((Path(store) / "zarr.json").read_text())
            ["attributes"]["multiscales"]["layout"]]


HAVE_RASTERIO = importlib.util.find_spec("rasterio") is not None


def rasterio_view(store):
    """(count, overview factors of band 1) as rasterio sees the store (a child: rasterio's own GDAL).
    The chroot legs (GDAL 3.10, 3.13) have no rasterio: there GDAL's own view of the same."""
    if not HAVE_RASTERIO:
        ds = gdal.Open(str(store))
        b = ds.GetRasterBand(1)
        levels = [b.GetOverview(i).XSize for i in range(b.GetOverviewCount())]
        return ds.RasterCount, "[" + ", ".join(str(round(ds.RasterXSize / x)) for x in levels) + "]"
    code = ("import rasterio,sys\nwith rasterio.open(sys.argv[1]) as d: print(d.count, d.overviews(1))")
    p = run("/usr/bin/python3", "-c", code, store)
    count, ovr = p.stdout.strip().split(" ", 1)
    return int(count), ovr


def rio_factors(*factors):
    """rasterio's overview factors: the width ratio of base and level, rounded."""
    return "[" + ", ".join(str(round(W / -(-W // int(f)))) for f in factors) + "]"


@pytest.mark.parametrize("resampling", ["average", "nearest", "cubic"])
def test_append_extends_every_level_as_a_fresh_gdaladdo(tmp_path, resampling):
    store = series(tmp_path, "s.zarr", 3)
    run("gdaladdo", "-q", "-r", resampling, store, "2", "4")
    p = append(tmp_path, store, 4)
    assert "overview" not in p.stderr, p.stderr
    info = run("gdalinfo", store)
    assert "opened without overviews" not in info.stderr, info.stderr
    assert "Overviews: 19x12, 10x6" in info.stdout, info.stdout
    got, want = levels(store), fresh_levels(tmp_path, 4, resampling)
    assert [(w, h, c.shape) for w, h, c in got] == [(w, h, c.shape) for w, h, c in want]
    for (_, _, g), (_, _, r) in zip(got, want):
        np.testing.assert_array_equal(g, r)
    assert layout_assets(store) == ["s", "ovr_2x", "ovr_4x"]
    assert rasterio_view(store) == (4, "[2, 4]")


def test_append_of_several_steps_extends_the_levels(tmp_path):
    store = series(tmp_path, "s.zarr", 2)
    run("gdaladdo", "-q", "-r", "average", store, "2", "4")
    two = str(tmp_path / "two.tif")
    vrt = gdal.BuildVRT("", [day_tif(tmp_path, 3), day_tif(tmp_path, 4)], separate=True)
    gdal.Translate(two, vrt)
    run("gdal_translate", "-q", "-of", "Zarr3", "-co", "APPEND_DIM=time", "-co",
        "APPEND_COORD=2024-01-03,2024-01-04", *KEEP, two, store)
    got, want = levels(store), fresh_levels(tmp_path, 4, "average")
    assert len(got) == len(want) == 2
    for (_, _, g), (_, _, r) in zip(got, want):
        np.testing.assert_array_equal(g, r)


@pytest.mark.parametrize("step", ["append-chunks", "append-coord"])
def test_killed_append_leaves_levels_readers_accept(tmp_path, step):
    """Killed after the levels' new steps (append-chunks) or after their switch, before the base's
    (append-coord): the store reads as before the append, with its overviews and no warning; the
    next append gives the levels a fresh gdaladdo gives."""
    store = series(tmp_path, "s.zarr", 3)
    run("gdaladdo", "-q", "-r", "average", store, "2", "4")
    env = dict(ENV, ZARR3_TEST_KILL_AT=step)
    p = subprocess.run(["gdal_translate", "-q", "-of", "Zarr3", "-co", "APPEND_DIM=time", "-co",
                        "APPEND_COORD=2024-01-04", *KEEP, day_tif(tmp_path, 9), store],
                       capture_output=True, text=True, env=env)
    assert p.returncode != 0
    info = run("gdalinfo", store)
    assert "Warning" not in info.stderr and "Overviews: 19x12, 10x6" in info.stdout, info.stderr
    assert "Band 3" in info.stdout and "Band 4" not in info.stdout
    append(tmp_path, store, 4)
    got, want = levels(store), fresh_levels(tmp_path, 4, "average")
    assert len(got) == len(want) == 2
    for (_, _, g), (_, _, r) in zip(got, want):
        np.testing.assert_array_equal(g, r)


def test_append_with_an_unknown_resampling_removes_the_pyramid(tmp_path):
    store = series(tmp_path, "s.zarr", 2)
    run("gdaladdo", "-q", store, "2", "4")
    root = Path(store) / "zarr.json"
    j = json.loads(root.read_text())
    j["attributes"]["multiscales"]["layout"][2]["resampling_method"] = "bespoke"
    root.write_text(json.dumps(j))
    p = append(tmp_path, store, 3)
    assert re.search(r"ovr_4x.*bespoke.*removed", p.stderr), p.stderr
    assert "multiscales" not in json.loads(root.read_text())["attributes"]
    assert not (Path(store) / "ovr_2x").exists() and not (Path(store) / "ovr_4x").exists()
    info = run("gdalinfo", store)
    assert "Warning" not in info.stderr and "Band 3" in info.stdout


def make_stale(tmp_path, store, d):
    """An append as versions before issue 40.6 made it: the levels keep their length."""
    saved = {p: p.read_text() for p in Path(store).glob("ovr_*/s/zarr.json")}
    append(tmp_path, store, d)
    for p, text in saved.items():
        p.write_text(text)


def test_stale_levels_are_ignored_with_one_warning_and_all_bands(tmp_path):
    store = series(tmp_path, "s.zarr", 3)
    run("gdaladdo", "-q", store, "2", "4")
    make_stale(tmp_path, store, 4)
    info = run("gdalinfo", store)
    warnings = [l for l in info.stderr.splitlines() if "Warning" in l]
    assert len(warnings) == 1 and "stale" in warnings[0] and "gdaladdo" in warnings[0], info.stderr
    assert "Band 4" in info.stdout and "Overviews" not in info.stdout
    assert rasterio_view(store)[0] == 4


@pytest.mark.parametrize("factors", [("2", "4"), ("2", "8"), ("3",)])
def test_gdaladdo_on_stale_levels_replaces_them(tmp_path, factors):
    store = series(tmp_path, "s.zarr", 3)
    run("gdaladdo", "-q", "-r", "average", store, "2", "4")
    make_stale(tmp_path, store, 4)
    p = run("gdaladdo", "-q", "-r", "average", store, *factors)
    names = sorted(p.name for p in Path(store).iterdir() if p.name.startswith("ovr_"))
    assert names == sorted(f"ovr_{f}x" for f in factors), names
    assert layout_assets(store) == ["s"] + [f"ovr_{f}x" for f in factors]
    info = run("gdalinfo", store)
    assert "Warning" not in info.stderr, info.stderr
    assert rasterio_view(store) == (4, rio_factors(*factors))
    for (_, _, g), (_, _, r) in zip(levels(store), fresh_levels(tmp_path, 4, "average", factors)):
        np.testing.assert_array_equal(g, r)


def test_gdaladdo_again_with_current_levels_replaces_them(tmp_path):
    store = series(tmp_path, "s.zarr", 2)
    run("gdaladdo", "-q", store, "2", "4")
    run("gdaladdo", "-q", store, "2", "8")
    names = sorted(p.name for p in Path(store).iterdir() if p.name.startswith("ovr_"))
    assert names == ["ovr_2x", "ovr_8x"] and layout_assets(store) == ["s", "ovr_2x", "ovr_8x"]
    assert rasterio_view(store) == (2, rio_factors(2, 8))


def test_clean_after_stale_append(tmp_path):
    store = series(tmp_path, "s.zarr", 3)
    run("gdaladdo", "-q", store, "2", "4")
    make_stale(tmp_path, store, 4)
    run("gdaladdo", "-q", "-clean", store)
    assert not list(Path(store).glob("ovr_*"))
    assert "multiscales" not in json.loads((Path(store) / "zarr.json").read_text())["attributes"]
    info = run("gdalinfo", store)
    assert "Warning" not in info.stderr and "Band 4" in info.stdout


def test_extra_level_groups_left_beside_do_not_hide_the_bands(tmp_path):
    """What versions before issue 40.6 left after gdaladdo on stale levels: ovr_2x_1/ovr_4x_1 in the
    layout, the old ovr_2x/ovr_4x beside it."""
    store = series(tmp_path, "s.zarr", 2)
    run("gdaladdo", "-q", store, "2", "4")
    root = Path(store)
    for f in ("2", "4"):
        shutil.copytree(root / f"ovr_{f}x", root / f"ovr_{f}x_1")
    j = json.loads((root / "zarr.json").read_text())
    for lv in j["attributes"]["multiscales"]["layout"][1:]:
        lv["asset"] += "_1"
        if lv["derived_from"] != "s":
            lv["derived_from"] += "_1"
    (root / "zarr.json").write_text(json.dumps(j))
    info = run("gdalinfo", store)
    assert "SUBDATASET" not in info.stdout and "Band 2" in info.stdout, info.stdout
    assert rasterio_view(store) == (2, "[2, 4]")
    run("gdaladdo", "-q", store, "2", "4")
    assert rasterio_view(store) == (2, "[2, 4]")


# ------------------------------------------------------------------ repositories


def history(repo):
    out = run(BUILD / "zarr3", "log", repo).stdout
    return [l for l in out.split("history of branch", 1)[1].splitlines()[1:] if re.match(r"^\s*[0-9A-Z]{20}", l)]


def test_repository_append_extends_the_levels_in_the_same_commit(tmp_path):
    repo = series(tmp_path, "r.icechunk", 3, icechunk=True)
    run("gdaladdo", "-q", "-r", "average", repo, "2", "4")
    before = history(repo)
    p = append(tmp_path, repo, 4)
    assert "overview" not in p.stderr, p.stderr
    assert len(history(repo)) == len(before) + 1
    info = run("gdalinfo", repo)
    assert "Warning" not in info.stderr and "Overviews: 19x12, 10x6" in info.stdout, info.stderr
    for (_, _, g), (_, _, r) in zip(levels(repo), fresh_levels(tmp_path, 4, "average")):
        np.testing.assert_array_equal(g, r)
    assert rasterio_view(repo) == (4, "[2, 4]")
    # gdaladdo again replaces the levels; -clean removes them in one commit.
    run("gdaladdo", "-q", "-r", "average", repo, "2", "8")
    assert rasterio_view(repo) == (4, rio_factors(2, 8))
    built = history(repo)
    run("gdaladdo", "-q", "-clean", repo)
    assert len(history(repo)) == len(built) + 1
    info = run("gdalinfo", repo)
    assert "Warning" not in info.stderr and "Overviews" not in info.stdout and "Band 4" in info.stdout


def test_append_on_stale_levels_removes_the_pyramid(tmp_path):
    store = series(tmp_path, "s.zarr", 2)
    run("gdaladdo", "-q", store, "2", "4")
    make_stale(tmp_path, store, 3)
    p = append(tmp_path, store, 4)
    assert re.search(r"ovr_\dx.*stale.*removed", p.stderr), p.stderr
    assert not list(Path(store).glob("ovr_*"))
    info = run("gdalinfo", store)
    assert "Warning" not in info.stderr and "Band 4" in info.stdout, info.stderr


# ------------------------------------------- replacing levels: failure modes
def files_of(folder):
    return {p.relative_to(folder): p.read_bytes() for p in Path(folder).rglob("*") if p.is_file()}


@pytest.fixture
def series_on_small_disk(tmp_path):
    """Two days with levels 2 and 4, on a 4 MiB tmpfs (skipped where this process may not mount)."""
    from test_store_safety import Tmpfs
    with Tmpfs(tmp_path / "disk", "4m") as disk:
        store = series(Path(disk.path), "s.zarr", 2)
        run("gdaladdo", "-q", store, "2", "4")
        yield disk, store


def test_replacing_levels_on_a_read_only_disk_changes_nothing(series_on_small_disk):
    disk, store = series_on_small_disk
    before = files_of(store)
    disk.remount_ro()
    p = run("gdaladdo", "-q", store, "2", "8", check=False)
    assert p.returncode != 0 and "Read-only file system" in p.stderr, p.stderr
    assert files_of(store) == before
    assert rasterio_view(store) == (2, rio_factors(2, 4))


def test_replacing_levels_on_a_full_disk_keeps_the_bands_and_a_pyramid_that_holds(
        series_on_small_disk, tmp_path):
    from test_store_safety import fill_disk
    disk, store = series_on_small_disk
    bands = gdal.Open(store).ReadAsArray()
    fill_disk(disk.path)
    p = run("gdaladdo", "-q", store, "2", "8", check=False)
    assert p.returncode != 0 and "No space left on device" in p.stderr, p.stderr
    # The bands are whole; the overviews GDAL opens are the old or the new ones, or none, and
    # whatever opens reads (no warning about a level that does not hold together).
    info = run("gdalinfo", store)
    assert "Warning" not in info.stderr, info.stderr
    np.testing.assert_array_equal(gdal.Open(store).ReadAsArray(), bands)
    for _, _, cube in levels(store):
        assert np.isfinite(cube).all()
    os.unlink(os.path.join(disk.path, "filler"))
    run("gdaladdo", "-q", store, "2", "8")
    assert rasterio_view(store) == (2, rio_factors(2, 8))
    for (_, _, g), (_, _, r) in zip(levels(store), fresh_levels(tmp_path, 2, "nearest", ("2", "8"))):
        np.testing.assert_array_equal(g, r)


def test_replacing_levels_never_deletes_what_a_hostile_layout_names(tmp_path):
    """The layout names the base and a folder outside the store as levels: gdaladdo replacing the
    levels removes only the levels the reader accepted, never those."""
    store = series(tmp_path, "s.zarr", 2)
    run("gdaladdo", "-q", store, "2", "4")
    outside = tmp_path / "outside"
    (outside / "s").mkdir(parents=True)
    (outside / "s" / "keep.bin").write_bytes(b"precious")
    os.symlink(outside, Path(store) / "ovr_link")
    root = Path(store) / "zarr.json"
    j = json.loads(root.read_text())
    j["attributes"]["multiscales"]["layout"].append(
        {"asset": "ovr_link", "derived_from": "ovr_4x", "transform": {"scale": [1.0, 2.0, 2.0]}})
    root.write_text(json.dumps(j))
    bands = gdal.Open(store).ReadAsArray()
    p = run("gdaladdo", "-q", store, "2", "8", check=False)
    assert (outside / "s" / "keep.bin").read_bytes() == b"precious"
    assert (Path(store) / "ovr_link").is_symlink()
    np.testing.assert_array_equal(gdal.Open(store).ReadAsArray(), bands)
    if p.returncode == 0:
        assert rasterio_view(store)[0] == 2
