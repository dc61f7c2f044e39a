"""Appends take their dates from the source itself when -co APPEND_COORD is absent (issue 40.3): a
netCDF file's own time coordinate (band item NETCDF_DIM_time, dataset items time#units and
time#calendar) or GRIB valid times (GRIB_VALID_TIME), converted into the store's CF units exactly; a
multi-step source appends all its steps in one append; a store created from such a source gets a real
time coordinate array in the source's units; a calendar whose dates are not Gregorian is refused with
nothing written."""
import hashlib

import numpy as np
from osgeo import gdal

from test_append import KEEP, append, meta, read_time

DRV = "Zarr3"
W, H = 8, 4


def nc_days(path, values, units, calendar="gregorian", dim="time", base=280.0):
    """A netCDF file of len(values) steps along `dim` (its own coordinate), step i = base + i."""
    mem = gdal.GetDriverByName("MEM").Create("", W, H, len(values), gdal.GDT_Float32)
    mem.SetGeoTransform((0, 1, 0, H, 0, -1))
    md = {"NETCDF_DIM_EXTRA": "{%s}" % dim, "NETCDF_DIM_%s_DEF" % dim: "{%d,6}" % len(values),
          "NETCDF_DIM_%s_VALUES" % dim: "{" + ",".join(str(v) for v in values) + "}",
          f"{dim}#units": units, f"{dim}#standard_name": "time"}
    if calendar:
        md[f"{dim}#calendar"] = calendar
    mem.SetMetadata(md)
    for i, v in enumerate(values):
        b = mem.GetRasterBand(i + 1)
        b.WriteArray(np.full((H, W), base + i, np.float32))
        b.SetMetadata({f"NETCDF_DIM_{dim}": str(v)})
    gdal.GetDriverByName("netCDF").CreateCopy(str(path), mem)
    return path


def tree_digest(store):
    h = hashlib.sha256()
    for p in sorted(store.rglob("*")):
        h.update(str(p.relative_to(store)).encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


def band_dates(store):
    ds = gdal.Open(str(store))
    return [ds.GetRasterBand(i + 1).GetDescription() for i in range(ds.RasterCount)]


def test_a_netcdf_file_of_three_days_creates_a_store_with_its_own_time_coordinate(tmp_path, run_tool):
    # ERA5-style: hours since 1900, 2023-01-26 .. 2023-01-28.
    src = nc_days(tmp_path / "x.nc", [1078800, 1078824, 1078848], "hours since 1900-01-01 00:00:00.0")
    store = tmp_path / "s.zarr"
    p = append(run_tool, src, store)
    assert p.returncode == 0, p.stderr
    arrays = [m for m in ("s", "x") if (store / m / "zarr.json").exists()]
    data = meta(store, arrays[0])
    assert data["shape"][0] == 3 and data["dimension_names"][0] == "time"
    t = meta(store, "time")
    assert t["attributes"]["units"] == "hours since 1900-01-01 00:00:00.0"
    assert t["attributes"]["calendar"] == "gregorian"
    assert read_time(store).tolist() == [1078800, 1078824, 1078848]  # the source's values, exact
    assert band_dates(store) == ["time=2023-01-26", "time=2023-01-27", "time=2023-01-28"]


def test_a_later_file_in_other_units_is_converted_exactly_and_appends_all_its_steps(tmp_path, run_tool):
    store = tmp_path / "s.zarr"
    first = nc_days(tmp_path / "a.nc", [1078800, 1078824, 1078848], "hours since 1900-01-01")
    assert append(run_tool, first, store).returncode == 0
    # The next two days in days since 1970 (2023-01-29 = 19386), and one more in seconds.
    p = append(run_tool, nc_days(tmp_path / "b.nc", [19386, 19387], "days since 1970-01-01",
                                 calendar="standard", base=290.0), store)
    assert p.returncode == 0, p.stderr
    p = append(run_tool, nc_days(tmp_path / "c.nc", [1675123200], "seconds since 1970-01-01 00:00:00",
                                 calendar="proleptic_gregorian", base=300.0), store)
    assert p.returncode == 0, p.stderr
    assert read_time(store).tolist() == [1078800 + 24 * i for i in range(6)]
    ds = gdal.Open(str(store))
    assert ds.RasterCount == 6
    assert [float(ds.GetRasterBand(i + 1).ReadAsArray()[0, 0]) for i in range(6)] == \
        [280, 281, 282, 290, 291, 300]
    assert band_dates(store)[-1] == "time=2023-01-31"


def test_source_dates_into_a_store_dated_by_append_coord(tmp_path, run_tool):
    store = tmp_path / "s.zarr"
    p = append(run_tool, nc_days(tmp_path / "a.nc", [0], "days since 2024-01-01"), store,
               "-co", "APPEND_COORD=2023-12-31")
    assert p.returncode == 0, p.stderr  # APPEND_COORD wins over the source's own date
    assert meta(store, "time")["attributes"]["units"] == "days since 1970-01-01"
    p = append(run_tool, nc_days(tmp_path / "b.nc", [0, 24], "hours since 2024-01-01"), store)
    assert p.returncode == 0, p.stderr
    assert read_time(store).tolist() == [19722.0, 19723.0, 19724.0]


def test_a_source_whose_dates_overlap_the_store_is_refused_naming_the_date(tmp_path, run_tool):
    store = tmp_path / "s.zarr"
    src = nc_days(tmp_path / "a.nc", [1078800, 1078824], "hours since 1900-01-01")
    assert append(run_tool, src, store).returncode == 0
    before = tree_digest(store)
    p = append(run_tool, src, store)
    assert p.returncode != 0
    assert "2023-01-26" in p.stderr, p.stderr
    assert tree_digest(store) == before


def test_a_calendar_without_gregorian_dates_is_refused_with_nothing_written(tmp_path, run_tool):
    store = tmp_path / "s.zarr"
    assert append(run_tool, nc_days(tmp_path / "a.nc", [0], "days since 2024-01-01"), store).returncode == 0
    before = tree_digest(store)
    p = append(run_tool, nc_days(tmp_path / "b.nc", [1, 2], "days since 2024-01-01", calendar="noleap"),
               store)
    assert p.returncode != 0
    assert "noleap" in p.stderr and "APPEND_COORD" in p.stderr and "b.nc" in p.stderr, p.stderr
    assert tree_digest(store) == before
    # The same file with the dates given explicitly appends.
    p = append(run_tool, tmp_path / "b.nc", store, "-co", "APPEND_COORD=2024-01-02,2024-01-03")
    assert p.returncode == 0, p.stderr
    assert read_time(store).tolist() == [0, 1, 2]


def test_grib_valid_times_date_the_steps(tmp_path):
    mem = gdal.GetDriverByName("MEM").Create("", W, H, 2, gdal.GDT_Float32)
    mem.SetGeoTransform((0, 1, 0, H, 0, -1))
    # 2024-03-01T06:00 and T12:00; the second as older GDAL versions write it.
    for i, v in enumerate(["1709272800", "  1709294400 sec UTC"]):
        b = mem.GetRasterBand(i + 1)
        b.WriteArray(np.full((H, W), i, np.float32))
        b.SetMetadataItem("GRIB_VALID_TIME", v)
    store = tmp_path / "g.zarr"
    gdal.Translate(str(store), mem, format=DRV, creationOptions=["APPEND_DIM=time", *KEEP])
    t = meta(store, "time")
    assert t["attributes"]["units"] == "seconds since 1970-01-01"
    assert read_time(store).tolist() == [1709272800, 1709294400]
    assert band_dates(store) == ["time=2024-03-01T06:00:00", "time=2024-03-01T12:00:00"]


def test_the_store_s_own_bands_date_a_copy_into_another_store(tmp_path, run_tool):
    """A Zarr3 store carries the same netCDF items: one store's days append into another dated."""
    a = tmp_path / "a.zarr"
    assert append(run_tool, nc_days(tmp_path / "a.nc", [10, 11], "days since 2024-01-01"), a).returncode == 0
    b = tmp_path / "b.zarr"
    assert append(run_tool, nc_days(tmp_path / "b.nc", [9], "days since 2024-01-01"), b).returncode == 0
    p = append(run_tool, str(a), b)
    assert p.returncode == 0, p.stderr
    assert read_time(b).tolist() == [9, 10, 11]
