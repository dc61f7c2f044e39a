"""Appends that keep a time series clean (issue 32, point 8): every check runs before anything is
written (a refused append leaves every file of the store as it was, no chunk past the array's end);
duplicate and out-of-order steps are refused naming both values (dates for a CF time coordinate); the
source's band description and its metadata about its own position (time=, time#units, DIM_*_INDEX,
NETCDF_DIM_*) are not copied next to the new date, so every band is labelled by its date."""
import json

import pytest
from osgeo import gdal

from conftest import drop_consolidated
from test_append import DRV, KEEP, append, build_cube, day_tif, days_of, read_time

gdal.UseExceptions()


def files_of(store):
    """Every file of the store with its bytes (the listing a refused append must not change)."""
    return {str(p.relative_to(store)): p.read_bytes() for p in sorted(store.rglob("*")) if p.is_file()}


def attrs(store, name):
    return json.loads((store / name / "zarr.json").read_text())["attributes"]


def refused(run_tool, store, src, *extra):
    before = files_of(store)
    p = append(run_tool, src, store, *extra)
    assert p.returncode != 0, p.stderr
    assert files_of(store) == before, "a refused append changed the store"
    return p.stderr


@pytest.mark.parametrize("day,given,relation", [
    (3, None, "equal to"),                  # the last day again, from the source's TIFFTAG_DATETIME
    (2, None, "not after"),                 # an earlier day
    (9, "2024-01-03", "equal to"),          # APPEND_COORD names the last day
    (9, "2023-12-31", "not after"),
])
def test_duplicate_and_earlier_dates_are_refused_naming_both(tmp_path, run_tool, day, given, relation):
    store = build_cube(tmp_path, run_tool, 3)
    extra = ("-co", f"APPEND_COORD={given}") if given else ()
    err = refused(run_tool, store, day_tif(tmp_path / "x.tif", day), *extra)
    new = given or f"2024-01-0{day}"
    assert f"the new time value {new}" in err, err
    assert f"is {relation} the coordinate's last value 2024-01-03" in err, err
    assert "strictly increasing along time" in err and "cube.zarr/time" in err
    # An earlier day that is not stored yet can go in out of order: the error says how.
    assert ("-co APPEND_ORDER=ANY" in err) == (relation == "not after"), err
    assert read_time(store).tolist() == [days_of(d) for d in (1, 2, 3)]


def test_values_of_one_append_must_increase_too(tmp_path, run_tool):
    store = build_cube(tmp_path, run_tool, 1)
    src = tmp_path / "two.tif"
    gdal.Translate(str(src), str(store), format="GTiff", bandList=[1, 1])
    err = refused(run_tool, store, src, "-co", "APPEND_COORD=2024-01-05,2024-01-04")
    assert "the new time value 2024-01-04 is not after the previous new value 2024-01-05" in err, err
    # The first append (the store does not exist yet) is checked the same way, before creating it.
    first = tmp_path / "first.zarr"
    p = run_tool("gdal_translate", "-q", "-of", DRV, "-co", "APPEND_DIM=time", "-co",
                 "APPEND_COORD=2024-01-02,2024-01-02", src, first)
    assert p.returncode != 0 and "is equal to the previous new value 2024-01-02" in p.stderr, p.stderr
    assert not first.exists()


def test_numeric_coordinate_keeps_its_direction(tmp_path, run_tool):
    store = tmp_path / "lev.zarr"
    three = gdal.GetDriverByName("MEM").Create("", 4, 3, 3, gdal.GDT_Byte)
    one = tmp_path / "one.tif"
    gdal.GetDriverByName("GTiff").Create(str(one), 4, 3, 1, gdal.GDT_Byte)
    gdal.Translate(str(store), three, format=DRV, creationOptions=["APPEND_DIM=level", "APPEND_COORD=850,500,300"])
    keep = [a for k in KEEP for a in ("-co", k)]
    p = run_tool("gdal_translate", "-q", "-of", DRV, "-co", "APPEND_DIM=level", *keep, "-co",
                 "APPEND_COORD=200", one, store)
    assert p.returncode == 0, p.stderr
    before = files_of(store)
    p = run_tool("gdal_translate", "-q", "-of", DRV, "-co", "APPEND_DIM=level", *keep, "-co",
                 "APPEND_COORD=600", one, store)
    assert p.returncode != 0
    assert "the new level value 600 is not before the coordinate's last value 200" in p.stderr, p.stderr
    assert "strictly decreasing along level" in p.stderr
    assert files_of(store) == before
    ds = gdal.OpenEx(str(store), gdal.OF_MULTIDIM_RASTER)
    assert ds.GetRootGroup().OpenMDArray("level").ReadAsArray().tolist() == [850, 500, 300, 200]


@pytest.mark.parametrize("kind", ["no_date", "invalid", "count", "bad_date"])
def test_refused_append_leaves_no_orphan_chunk(tmp_path, run_tool, kind):
    store = build_cube(tmp_path, run_tool, 3)
    src = day_tif(tmp_path / "x.tif", 4, with_date=kind != "no_date")
    extra = {"no_date": (), "invalid": ("-co", "APPEND_COORD=abc"),
             "count": ("-co", "APPEND_COORD=2024-01-04,2024-01-05"),
             "bad_date": ("-co", "APPEND_COORD=2024-13-40")}[kind]
    err = refused(run_tool, store, src, *extra)
    want = {"no_date": "no coordinate value for the new step", "invalid": 'coordinate value "abc"',
            "count": "expected 1 value(s), one per source band",
            "bad_date": 'coordinate value "2024-13-40"'}[kind]
    assert want in err, err
    assert sorted(p.name for p in (store / "cube" / "c").iterdir()) == ["0", "1", "2"]
    # The next correct append works and lands at index 3.
    p = append(run_tool, day_tif(tmp_path / "d4.tif", 4), store)
    assert p.returncode == 0, p.stderr
    assert read_time(store).tolist() == [days_of(d) for d in (1, 2, 3, 4)]


def zarr_band_source(tmp_path, run_tool):
    """A one-band GeoTIFF cut out of a time-series store (gdal_translate -b 2): it carries the
    store's band metadata about its position (time=, time#units, DIM_time_INDEX, NETCDF_DIM_time)
    and dataset items (NETCDF_DIM_EXTRA, NETCDF_DIM_time_VALUES, time#units) and a description."""
    cube = build_cube(tmp_path, run_tool, 3, "src.zarr")
    ds = gdal.Open(str(cube), gdal.GA_Update)
    ds.GetRasterBand(2).SetDescription("NDVI")
    ds = None
    src = tmp_path / "cut.tif"
    gdal.Translate(str(src), str(cube), format="GTiff", bandList=[2])
    s = gdal.Open(str(src))
    md = s.GetRasterBand(1).GetMetadata()
    assert md["time"] == str(int(days_of(2))) and md["DIM_time_INDEX"] == "1" and "NETCDF_DIM_time" in md
    assert s.GetRasterBand(1).GetDescription() == "NDVI"
    assert "NETCDF_DIM_time_VALUES" in s.GetMetadata()
    return src


def check_labelled_by_dates(store, dates):
    ds = gdal.Open(str(store))
    assert ds.RasterCount == len(dates)
    for b, date in enumerate(dates, start=1):
        band = ds.GetRasterBand(b)
        assert band.GetDescription() == f"time={date}"
        md = band.GetMetadata()
        assert md["DIM_time_INDEX"] == str(b - 1)
        assert md["time#units"] == "days since 1970-01-01"
        assert gdal.Open(str(store)).GetMetadata()["NETCDF_DIM_time_DEF"] == f"{{{len(dates)},6}}"


def test_source_position_metadata_and_description_are_not_copied(tmp_path, run_tool):
    src = zarr_band_source(tmp_path, run_tool)
    store = tmp_path / "s.zarr"
    for day in ("2024-05-01", "2024-05-02"):  # the first append creates the store, the second appends
        p = append(run_tool, src, store, "-co", f"APPEND_COORD={day}")
        assert p.returncode == 0, p.stderr
        assert "not written" not in p.stderr, p.stderr  # no refused derived items
    a = attrs(store, "s")
    assert "band_descriptions" not in a
    for key in ("NETCDF_DIM_EXTRA", "NETCDF_DIM_time_DEF", "NETCDF_DIM_time_VALUES", "time#units",
                "time#calendar", "TIFFTAG_DATETIME"):
        assert key not in a, key
    for md in a.get("band_metadata", []):
        assert not any(k == "time" or k.startswith(("time#", "DIM_", "NETCDF_DIM_")) for k in md), md
    check_labelled_by_dates(store, ["2024-05-01", "2024-05-02"])
    ds = gdal.Open(str(store))
    assert ds.GetRasterBand(2).GetMetadata()["time"] == str(int(days_of(123)))  # 2024-05-02
    assert ds.GetMetadata()["NETCDF_DIM_time_VALUES"] == f"{{{int(days_of(122))},{int(days_of(123))}}}"


def test_appended_band_is_labelled_by_its_date_after_a_described_first_band(tmp_path, run_tool):
    """A store whose first step kept a description: the appended band shows its date, not a copy
    of the source's description (the variable's name)."""
    store = build_cube(tmp_path, run_tool, 1)
    ds = gdal.Open(str(store), gdal.GA_Update)
    ds.GetRasterBand(1).SetDescription("first")
    ds = None
    src = tmp_path / "d2.tif"
    day_tif(src, 2)
    s = gdal.Open(str(src), gdal.GA_Update)
    s.GetRasterBand(1).SetDescription("NDVI")
    s = None
    p = append(run_tool, src, store)
    assert p.returncode == 0, p.stderr
    assert attrs(store, "cube")["band_descriptions"] == ["first", ""]
    ds = gdal.Open(str(store))
    assert ds.GetRasterBand(1).GetDescription() == "first"
    assert ds.GetRasterBand(2).GetDescription() == "time=2024-01-02"


def test_stale_stored_position_items_do_not_hide_the_coordinate(tmp_path, run_tool):
    """Stores written by older appends hold copies of a source's position items: the values the
    coordinate gives are shown instead."""
    store = build_cube(tmp_path, run_tool, 2)
    path = store / "cube" / "zarr.json"
    m = json.loads(path.read_text())
    m["attributes"]["band_metadata"] = [{"time": "0", "NETCDF_DIM_time": "0", "DIM_time_INDEX": "7", "keep": "a"},
                                        {"time#units": "days since 2000-01-01", "keep": "b"}]
    m["attributes"]["NETCDF_DIM_time_VALUES"] = "{0}"
    m["attributes"]["NETCDF_DIM_time_DEF"] = "{1,6}"
    path.write_text(json.dumps(m))
    drop_consolidated(store)  # as older appends wrote it
    ds = gdal.Open(str(store))
    md1, md2 = (ds.GetRasterBand(b).GetMetadata() for b in (1, 2))
    assert md1["time"] == str(int(days_of(1))) and md1["NETCDF_DIM_time"] == str(int(days_of(1)))
    assert md1["DIM_time_INDEX"] == "0" and md1["keep"] == "a"
    assert md2["time#units"] == "days since 1970-01-01" and md2["keep"] == "b"
    assert ds.GetMetadata()["NETCDF_DIM_time_VALUES"] == f"{{{int(days_of(1))},{int(days_of(2))}}}"
    assert ds.GetMetadata()["NETCDF_DIM_time_DEF"] == "{2,6}"


def test_any_order_accepts_earlier_steps_but_no_duplicate(tmp_path, run_tool):
    """-co APPEND_ORDER=ANY (concurrent writers of one series): an earlier date is accepted, a date
    already stored is still refused; an unknown value is refused naming the accepted ones."""
    store = build_cube(tmp_path, run_tool, 1)
    day_tif(tmp_path / "d5.tif", 5)
    assert append(run_tool, tmp_path / "d5.tif", store).returncode == 0
    p = append(run_tool, day_tif(tmp_path / "d3.tif", 3), store, "-co", "APPEND_ORDER=ANY")
    assert p.returncode == 0, p.stderr
    err = refused(run_tool, store, day_tif(tmp_path / "d1.tif", 1), "-co", "APPEND_ORDER=ANY")
    assert "the new time value 2024-01-01" in err and "is already in the coordinate" in err, err
    err = refused(run_tool, store, day_tif(tmp_path / "d7.tif", 7), "-co", "APPEND_ORDER=SOMETIMES")
    assert "APPEND_ORDER=SOMETIMES: expected STRICT or ANY" in err, err
    assert read_time(store).tolist() == [days_of(d) for d in (1, 5, 3)]


def test_append_failing_while_writing_removes_its_chunks(tmp_path, run_tool):
    """An append that fails after writing its chunks and before its switch (here cancelled from the
    progress callback, which runs after the pixels are written) removes them: the store's files are
    as before, and `zarr3 verify` would find no chunk past the end."""
    store = build_cube(tmp_path, run_tool, 3)
    before = files_of(store)
    src = day_tif(tmp_path / "d4.tif", 4)
    with pytest.raises(RuntimeError, match="append cancelled by the user"):
        gdal.Translate(str(store), str(src), format=DRV,
                       creationOptions=["APPEND_DIM=time", *KEEP], callback=lambda *a: 0)
    assert files_of(store) == before
    assert not [p for p in (store / "cube" / "c" / "3").rglob("*") if p.is_file()]
    assert append(run_tool, src, store).returncode == 0
    assert read_time(store).tolist() == [days_of(d) for d in (1, 2, 3, 4)]


def test_clean_up_of_a_failed_append_never_goes_through_a_link(tmp_path, run_tool):
    """The clean-up after a failed append removes chunk keys past the array's end: a symbolic link
    planted there (c/4 -> a folder outside the store laid out as chunks) is never followed; what it
    leads to stays."""
    store = build_cube(tmp_path, run_tool, 3)
    outside = tmp_path / "outside"
    (outside / "0").mkdir(parents=True)
    (outside / "0" / "0").write_bytes(b"precious")
    (store / "cube" / "c" / "4").symlink_to(outside)
    src = day_tif(tmp_path / "d4.tif", 4)
    with pytest.raises(RuntimeError):
        gdal.Translate(str(store), str(src), format=DRV,
                       creationOptions=["APPEND_DIM=time", *KEEP], callback=lambda *a: 0)
    assert (outside / "0" / "0").read_bytes() == b"precious"
    assert (store / "cube" / "c" / "4").is_symlink()
    assert not [p for p in (store / "cube" / "c" / "3").rglob("*") if p.is_file()]


def test_append_order_without_append_dim_is_refused(tmp_path):
    out = tmp_path / "out.zarr"
    src = day_tif(tmp_path / "d1.tif", 1)
    with pytest.raises(RuntimeError, match="creation option APPEND_ORDER needs APPEND_DIM"):
        gdal.Translate(str(out), str(src), format=DRV, creationOptions=["APPEND_ORDER=ANY"])
    assert not out.exists()
