"""Copies of a Zarr3 array keep its layout (issue 40.7): chunk grid (rectilinear edges exact), sharding,
codecs, dimension names, the time coordinate and CF attributes, through gdalmdimtranslate, gdal_translate
and the Python API; creation options override the part they name; subsets fall back where the layout no
longer applies; the copy compacts with `zarr3 compact` and reads back bit-exact."""
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from osgeo import gdal

gdal.UseExceptions()

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "daily_t2m_2023.zarr"
MONTHS = [31, 28, 31, 30, 31, 30, [31, 2], 30, 31, 30, 31]


def zjson(path):
    return json.loads((Path(path) / "zarr.json").read_text())


def grid_of(m):
    """The chunk grid with every rectilinear axis as a list (a bare integer N of one chunk is [N])."""
    g = json.loads(json.dumps(m["chunk_grid"]))
    if g["name"] == "rectilinear":
        g["configuration"]["chunk_shapes"] = [a if isinstance(a, list) else [a]
                                              for a in g["configuration"]["chunk_shapes"]]
    return g


def src_meta():
    return zjson(SAMPLE / "t2m")


def src_values():
    ds = gdal.OpenEx(str(SAMPLE), gdal.OF_MULTIDIM_RASTER)
    return ds.GetRootGroup().OpenMDArray("t2m").ReadAsArray()


def assert_layout_kept(m, array_name="t2m"):
    s = src_meta()
    assert grid_of(m) == grid_of(s), m["chunk_grid"]
    assert m["codecs"] == s["codecs"]
    assert m["dimension_names"] == ["time", "lat", "lon"]
    assert m["fill_value"] == s["fill_value"]
    assert m["attributes"]["units"] == "K"


def compact_and_check(exe, store, array, values):
    p = subprocess.run([str(exe), "compact", str(Path(store) / array), "--dim", "time", "--edges", "monthly"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    ds = gdal.OpenEx(str(store), gdal.OF_MULTIDIM_RASTER)
    got = ds.GetRootGroup().OpenMDArray(array).ReadAsArray()
    assert got.tobytes() == values.tobytes()


def test_mdimtranslate_keeps_the_layout(tmp_path, run_tool, exe):
    out = tmp_path / "m.zarr"
    p = run_tool("gdalmdimtranslate", SAMPLE, out, "-of", "Zarr3")
    assert p.returncode == 0, p.stderr
    assert_layout_kept(zjson(out / "t2m"))
    t = zjson(out / "time")
    assert t["attributes"]["units"] == "days since 2023-01-01"
    assert t["attributes"]["calendar"] == "proleptic_gregorian"
    values = src_values()
    compact_and_check(exe, out, "t2m", values)


def test_python_multidimtranslate_keeps_the_layout(tmp_path):
    out = tmp_path / "m.zarr"
    gdal.MultiDimTranslate(str(out), str(SAMPLE), format="Zarr3")
    assert_layout_kept(zjson(out / "t2m"))


def test_python_multidim_createcopy_keeps_the_layout(tmp_path):
    src = gdal.OpenEx(str(SAMPLE), gdal.OF_MULTIDIM_RASTER)
    out = gdal.GetDriverByName("Zarr3").CreateCopy(str(tmp_path / "m.zarr"), src)
    out = None
    assert_layout_kept(zjson(tmp_path / "m.zarr" / "t2m"))


def test_mdimtranslate_options_override_the_part_they_name(tmp_path, run_tool):
    out = tmp_path / "m.zarr"
    p = run_tool("gdalmdimtranslate", SAMPLE, out, "-of", "Zarr3", "-co", "ARRAY:COMPRESS=ZSTD")
    assert p.returncode == 0, p.stderr
    m = zjson(out / "t2m")
    assert grid_of(m) == grid_of(src_meta())
    shard = m["codecs"][0]
    assert shard["name"] == "sharding_indexed"
    assert shard["configuration"]["chunk_shape"] == [1, 16, 32]
    assert [c["name"] for c in shard["configuration"]["codecs"]] == ["bytes", "zstd"]
    out2 = tmp_path / "m2.zarr"
    p = run_tool("gdalmdimtranslate", SAMPLE, out2, "-of", "Zarr3", "-co", "ARRAY:IF(DIM=3):BLOCKSIZE=5,32,64")
    assert p.returncode == 0, p.stderr
    m = zjson(out2 / "t2m")
    assert m["chunk_grid"]["name"] == "regular"
    assert m["chunk_grid"]["configuration"]["chunk_shape"] == [5, 32, 64]
    assert src_values().tobytes() == gdal.OpenEx(str(out2), gdal.OF_MULTIDIM_RASTER).GetRootGroup() \
        .OpenMDArray("t2m").ReadAsArray().tobytes()


def test_mdimtranslate_subset_falls_back_without_error(tmp_path, run_tool):
    out = tmp_path / "m.zarr"
    p = run_tool("gdalmdimtranslate", SAMPLE, out, "-of", "Zarr3", "-subset", "time(10,50)")
    assert p.returncode == 0, p.stderr
    ds = gdal.OpenEx(str(out), gdal.OF_MULTIDIM_RASTER)
    got = ds.GetRootGroup().OpenMDArray("t2m").ReadAsArray()
    assert got.tobytes() == src_values()[10:51].tobytes()


def test_gdal_translate_keeps_the_layout_and_the_time_axis(tmp_path, run_tool, exe):
    out = tmp_path / "c.zarr"
    p = run_tool("gdal_translate", SAMPLE, out, "-of", "Zarr3")
    assert p.returncode == 0, p.stderr
    names = [n for n in (out).iterdir() if (n / "zarr.json").exists()]
    m = zjson(out / "c")
    assert_layout_kept(m)
    t = zjson(out / "time")
    assert t["shape"] == [365]
    assert t["attributes"]["units"] == "days since 2023-01-01"
    assert t["attributes"]["calendar"] == "proleptic_gregorian"
    src_t = gdal.OpenEx(str(SAMPLE), gdal.OF_MULTIDIM_RASTER).GetRootGroup().OpenMDArray("time").ReadAsArray()
    got_t = gdal.OpenEx(str(out), gdal.OF_MULTIDIM_RASTER).GetRootGroup().OpenMDArray("time").ReadAsArray()
    assert got_t.tolist() == src_t.tolist(), names
    # The bands' dates come from the copied coordinate, not from stored copies of the source's items.
    assert not any(k.startswith("NETCDF_DIM_") or k.startswith("time#") for k in m["attributes"])
    src, got = gdal.Open(str(SAMPLE)), gdal.Open(str(out))
    for b in (1, 200, 365):
        assert got.GetRasterBand(b).GetDescription() == src.GetRasterBand(b).GetDescription() != ""
    compact_and_check(exe, out, "c", src_values())


def test_python_createcopy_classic_keeps_the_layout(tmp_path):
    src = gdal.Open(str(SAMPLE))
    out = gdal.GetDriverByName("Zarr3").CreateCopy(str(tmp_path / "c.zarr"), src)
    out = None
    assert_layout_kept(zjson(tmp_path / "c.zarr" / "c"))
    assert (tmp_path / "c.zarr" / "time" / "zarr.json").exists()


def test_gdal_translate_options_override_the_part_they_name(tmp_path, run_tool):
    out = tmp_path / "c.zarr"
    p = run_tool("gdal_translate", SAMPLE, out, "-of", "Zarr3", "-co", "COMPRESS=NONE",
                 "-co", "DIMENSION_NAMES=day,lat,lon")
    assert p.returncode == 0, p.stderr
    m = zjson(out / "c")
    assert grid_of(m) == grid_of(src_meta())
    assert [c["name"] for c in m["codecs"][0]["configuration"]["codecs"]] == ["bytes"]
    assert m["dimension_names"] == ["day", "lat", "lon"]
    out2 = tmp_path / "c2.zarr"
    p = run_tool("gdal_translate", SAMPLE, out2, "-of", "Zarr3", "-co", "BLOCKSIZE=1,32,64")
    assert p.returncode == 0, p.stderr
    m = zjson(out2 / "c2")
    assert m["chunk_grid"] == {"name": "regular", "configuration": {"chunk_shape": [1, 32, 64]}}


@pytest.mark.parametrize("args, edges, sharded", [
    (["-srcwin", "3", "2", "40", "20"], MONTHS, True),  # regular lat/lon keep their edges
    (["-b", "30", "-b", "31", "-b", "32", "-b", "33"], [[2, 2]], True),  # days 30-33: 2 of Jan, 2 of Feb
    (["-b", "1", "-b", "3"], None, False),  # not consecutive: the defaults
    (["-b", "5"], None, False),  # one band of many: a 2-D copy, the defaults
])
def test_gdal_translate_subsets_keep_what_still_applies(tmp_path, run_tool, args, edges, sharded):
    out = tmp_path / "c.zarr"
    p = run_tool("gdal_translate", SAMPLE, out, "-of", "Zarr3", *args)
    assert p.returncode == 0, p.stderr
    src = gdal.Open(str(SAMPLE))
    got = gdal.Open(str(out))
    if args[0] == "-srcwin":
        want = src.ReadAsArray(3, 2, 40, 20)
    else:
        want = src.ReadAsArray(band_list=[int(b) for b in args[1::2]])
    assert got.ReadAsArray().tobytes() == want.tobytes()
    m = zjson(out / "c")
    if edges is None:
        assert m["chunk_grid"]["name"] == "regular"
        return
    assert m["chunk_grid"]["configuration"]["chunk_shapes"][0] == edges
    assert (m["codecs"][0]["name"] == "sharding_indexed") == sharded
    if args[0] == "-b":
        t = gdal.OpenEx(str(out), gdal.OF_MULTIDIM_RASTER).GetRootGroup().OpenMDArray("time").ReadAsArray()
        assert t.tolist() == [int(b) - 1 for b in args[1::2]]
        for i, b in enumerate(args[1::2]):
            assert got.GetRasterBand(i + 1).GetDescription() == src.GetRasterBand(int(b)).GetDescription()
        assert got.GetMetadataItem("NETCDF_DIM_time_VALUES") == "{29,30,31,32}"
