"""Overviews never cost data (issue 33, defects 2, 3, 4, 12, 13, 14).

- `gdaladdo -clean` removes only the levels of the cleaned array's own
  pyramid that the reader accepted as its overviews: never the base (a level
  opened by name refuses), never an array a broken or hostile `multiscales`
  lists but the reader refused, never anything reached through a symbolic
  link (inside or outside the store).
- Several pyramids in one group (one per variable) are kept apart: building
  the overviews of a second variable keeps the first one's, and the arrays of
  the group that are no level stay subdatasets.
- A pyramid laid out as groups (`0/data`, `1/data`) is refused by gdaladdo
  and -clean before anything changes.
- The driver's other deletes (Delete, replacing an incomplete store, a failed
  copy's cleanup) remove only what they verified as store content and never
  follow symbolic links.
"""
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from osgeo import gdal

from test_overviews import (array_pyramid, level, multiscales, overview_summary, write_array,
                            write_group)

DRV = "Zarr3"


def tree(root):
    """Every file under `root` (relative paths), links not followed."""
    out = set()
    for d, dirs, files in os.walk(root):
        for n in files + [x for x in dirs if os.path.islink(os.path.join(d, x))]:
            out.add(os.path.relpath(os.path.join(d, n), root))
    return out


def layout_of(root, group=""):
    attrs = json.loads((Path(root) / group / "zarr.json").read_text())["attributes"]
    return attrs.get("multiscales", {}).get("layout")


def clean(run_tool, name):
    return run_tool("gdaladdo", "-clean", name)


# ------------------------------------------------------------------ -clean


def test_clean_on_a_level_opened_by_name_keeps_the_base(tmp_path, run_tool):
    """#2: -clean on ZARR3:"x.zarr":/data_2 deleted the full resolution."""
    root = array_pyramid(tmp_path)
    before = tree(root)
    p = clean(run_tool, f'ZARR3:"{root}":/data_2')
    assert p.returncode != 0
    assert "not its base" in p.stderr and "/data" in p.stderr, p.stderr
    assert tree(root) == before
    ds = gdal.Open(str(root))
    assert (ds.GetRasterBand(1).ReadAsArray() == 1).all()
    assert overview_summary(ds) == [(32, 32), (16, 16)]


@pytest.mark.parametrize("bad", ["type", "missing_level", "cycle_free_sibling"])
def test_clean_keeps_arrays_the_reader_refused(tmp_path, run_tool, bad):
    """#3: -clean trusted the raw layout, deleting arrays the reader refused."""
    root = array_pyramid(tmp_path)
    write_array(root, "precip", np.full((16, 16), 7, np.uint8))
    if bad == "type":  # data_4 is no overview (another type): the pyramid is refused
        write_array(root, "data_4", np.full((16, 16), 4, np.int16))
    elif bad == "missing_level":  # a listed level is missing: the pyramid is refused
        layout = [level("data", shape=[64, 64]), level("data_2", "data", 2.0, [32, 32]),
                  level("precip", "data_2", 2.0, [16, 16]), level("gone", "precip", 2.0)]
        write_group(root, "", multiscales(layout))
    else:  # a sibling listed as a level with a spatial:shape it does not have
        layout = [level("data", shape=[64, 64]), level("data_2", "data", 2.0, [32, 32]),
                  level("precip", "data_2", 2.0, [17, 17])]
        write_group(root, "", multiscales(layout))
    before = {f for f in tree(root) if f != "zarr.json"}
    ds = gdal.Open(f'ZARR3:"{root}":/data')
    assert ds.GetRasterBand(1).GetOverviewCount() == 0
    ds = None
    assert clean(run_tool, f'ZARR3:"{root}":/data').returncode == 0
    assert {f for f in tree(root) if f != "zarr.json"} == before
    assert (gdal.Open(f'ZARR3:"{root}":/precip').ReadAsArray() == 7).all()


@pytest.mark.parametrize("where", ["outside", "inside"])
def test_clean_never_follows_a_level_link(tmp_path, run_tool, where):
    """#4: a level that is a symbolic link to a folder elsewhere."""
    root = array_pyramid(tmp_path)
    target = tmp_path / "elsewhere" if where == "outside" else root / "kept" / "level"
    write_array(target.parent, target.name, np.full((32, 32), 2, np.uint8))
    (target / "keep.me").write_text("x")
    shutil.rmtree(root / "data_2")
    os.symlink(target, root / "data_2")
    before = tree(target)
    p = clean(run_tool, str(root))
    assert tree(target) == before
    assert (target / "keep.me").exists() and (target / "zarr.json").exists()
    assert (root / "data").exists()
    if where == "inside":  # the reader accepts it; -clean refuses before changing anything
        assert p.returncode != 0 and "symbolic link" in p.stderr, p.stderr
        assert (root / "data_4").exists() and layout_of(root)


def test_clean_removes_the_accepted_levels_and_their_empty_groups(tmp_path, run_tool):
    path = tmp_path / "a.zarr"
    gdal.Translate(str(path), gdal.GetDriverByName("MEM").Create("", 64, 64), format=DRV,
                   creationOptions=["BLOCKSIZE=16,16"])
    assert run_tool("gdaladdo", path, "2", "4").returncode == 0
    (path / "ovr_4x" / "notes.txt").write_text("mine")  # not a level: stays, and its group
    assert clean(run_tool, path).returncode == 0
    assert not (path / "ovr_2x").exists()
    assert sorted(os.listdir(path / "ovr_4x")) == ["notes.txt", "zarr.json"]
    assert (path / "a").exists() and layout_of(path) is None


# ------------------------------------------------------------------ several variables


def two_variables(tmp_path):
    root = tmp_path / "two.zarr"
    write_group(root, "", {})
    write_array(root, "temp", np.full((64, 64), 3, np.uint8))
    write_array(root, "precip", np.full((64, 64), 5, np.uint8))
    return root


def subdatasets(root):
    md = gdal.Open(str(root)).GetMetadata("SUBDATASETS")
    return sorted(v.rsplit(":", 1)[-1] for k, v in md.items() if k.endswith("_NAME"))


def test_overviews_of_one_variable_keep_the_others_visible(tmp_path, run_tool):
    """#13: after gdaladdo on /temp, /precip vanished from the subdatasets."""
    root = two_variables(tmp_path)
    assert run_tool("gdaladdo", f'ZARR3:"{root}":/temp', "2").returncode == 0
    assert subdatasets(root) == ["/precip", "/temp"]
    assert overview_summary(gdal.Open(f'ZARR3:"{root}":/temp')) == [(32, 32)]
    assert overview_summary(gdal.Open(f'ZARR3:"{root}":/precip')) == []


def test_pyramids_of_two_variables_are_kept_apart(tmp_path, run_tool):
    """#14: gdaladdo on a second variable rewrote the group's one layout."""
    root = two_variables(tmp_path)
    assert run_tool("gdaladdo", f'ZARR3:"{root}":/temp', "2", "4").returncode == 0
    p = run_tool("gdaladdo", f'ZARR3:"{root}":/precip', "2")
    assert p.returncode == 0, p.stderr
    temp = gdal.Open(f'ZARR3:"{root}":/temp')
    precip = gdal.Open(f'ZARR3:"{root}":/precip')
    assert overview_summary(temp) == [(32, 32), (16, 16)]
    assert overview_summary(precip) == [(32, 32)]
    assert (temp.GetRasterBand(1).GetOverview(1).ReadAsArray() == 3).all()
    assert (precip.GetRasterBand(1).GetOverview(0).ReadAsArray() == 5).all()
    assert subdatasets(root) == ["/precip", "/temp"]
    bases = [lv["asset"] for lv in layout_of(root) if "derived_from" not in lv]
    assert sorted(bases) == ["precip", "temp"]
    # Rebuilding one keeps the other; cleaning one keeps the other.
    assert run_tool("gdaladdo", f'ZARR3:"{root}":/temp', "2").returncode == 0
    assert overview_summary(gdal.Open(f'ZARR3:"{root}":/precip')) == [(32, 32)]
    assert clean(run_tool, f'ZARR3:"{root}":/temp').returncode == 0
    assert overview_summary(gdal.Open(f'ZARR3:"{root}":/temp')) == []
    precip = gdal.Open(f'ZARR3:"{root}":/precip')
    assert overview_summary(precip) == [(32, 32)]
    assert (precip.GetRasterBand(1).GetOverview(0).ReadAsArray() == 5).all()
    assert [lv["asset"] for lv in layout_of(root)][0] == "precip"
    assert (gdal.Open(f'ZARR3:"{root}":/temp').ReadAsArray() == 3).all()


# ------------------------------------------------------------------ group layout


def group_pyramid(tmp_path):
    root = tmp_path / "grp.zarr"
    for name, n in (("0", 40), ("1", 20)):
        write_group(root, name, {})
        write_array(root, f"{name}/data", np.full((n, n), int(name) + 10, np.int16))
    write_group(root, "", multiscales([level("0"), level("1", "0", 2.0, [20, 20])]))
    return root


@pytest.mark.parametrize("args", [["2", "4"], ["-clean"]])
def test_group_layout_pyramid_is_refused_before_any_change(tmp_path, run_tool, args):
    """#12: gdaladdo wrote a broken multiscales into group 0, then failed."""
    root = group_pyramid(tmp_path)
    files = {f: (root / f).read_bytes() for f in tree(root)}
    p = run_tool("gdaladdo", *(["-clean"] if args == ["-clean"] else []), str(root),
                 *([] if args == ["-clean"] else args))
    assert p.returncode != 0
    assert "laid out as groups" in p.stderr and "nothing" in p.stderr, p.stderr
    assert {f: (root / f).read_bytes() for f in tree(root)} == files
    ds = gdal.Open(str(root))
    assert overview_summary(ds) == [(20, 20)]
    assert (ds.GetRasterBand(1).GetOverview(0).ReadAsArray() == 11).all()


# ------------------------------------------------------------------ the driver's other deletes


def small_store(path):
    src = gdal.GetDriverByName("MEM").Create("", 32, 32)
    src.GetRasterBand(1).Fill(9)
    gdal.Translate(str(path), src, format=DRV, creationOptions=["BLOCKSIZE=16,16"])
    return path


def test_delete_of_a_store_given_as_a_link_is_refused(tmp_path):
    store = small_store(tmp_path / "real.zarr")
    link = tmp_path / "link.zarr"
    os.symlink(store, link)
    before = tree(store)
    with pytest.raises(RuntimeError, match="symbolic link"):
        gdal.GetDriverByName(DRV).Delete(str(link))
    assert tree(store) == before and link.is_symlink()


def test_delete_removes_links_planted_as_store_keys_never_their_targets(tmp_path):
    store = small_store(tmp_path / "s.zarr")
    outside = tmp_path / "outside"
    (outside / "c").mkdir(parents=True)
    (outside / "zarr.json").write_text("{}")
    (outside / "c" / "0").write_text("data")
    array = store / "s"
    shutil.rmtree(array / "c")
    os.symlink(outside / "c", array / "c")  # a chunk folder that is a link
    os.symlink(outside, store / "t")  # a node folder that is a link: not store content
    with pytest.raises(RuntimeError, match="t"):
        gdal.GetDriverByName(DRV).Delete(str(store))
    os.unlink(store / "t")
    gdal.GetDriverByName(DRV).Delete(str(store))
    assert not store.exists()
    assert tree(outside) == {"zarr.json", "c/0"}


def test_replacing_an_incomplete_store_keeps_what_is_not_store_content(tmp_path):
    """The leftovers of a killed copy are replaced; links in it are not followed."""
    root = tmp_path / "left.zarr"
    (root / "s" / "c" / "0").mkdir(parents=True)
    (root / "s" / "c" / "0" / "0").write_bytes(b"\0" * 4)
    (root / ".zarr3-unfinished").write_text("otherhost 1\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "0").write_text("keep")
    os.symlink(outside, root / "s" / "c" / "1")  # named like a chunk folder
    small_store(root)
    assert gdal.Open(str(root)).RasterXSize == 32
    assert tree(outside) == {"0"}
