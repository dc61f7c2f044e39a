"""Time-aware views of a band axis with a CF time coordinate (issue 32, part): band descriptions carry ISO
dates (QGIS's band list, gdalinfo) while the band metadata keeps the stored number and its units, and the
dataset carries GDAL netCDF driver's NETCDF_DIM_* items, from which rioxarray builds a `time` dimension
(tested in test_rioxarray.py). A band description stored by the user still wins."""
import shutil
from pathlib import Path

import pytest
from osgeo import gdal

gdal.UseExceptions()

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "daily_t2m_2023.zarr"


def test_band_descriptions_are_dates():
    ds = gdal.Open(str(SAMPLE))
    assert ds.RasterCount == 365
    assert ds.GetRasterBand(1).GetDescription() == "time=2023-01-01"
    assert ds.GetRasterBand(32).GetDescription() == "time=2023-02-01"
    assert ds.GetRasterBand(365).GetDescription() == "time=2023-12-31"
    md = ds.GetRasterBand(32).GetMetadata()
    assert md["time"] == "31" and md["time#units"] == "days since 2023-01-01"
    assert md["NETCDF_DIM_time"] == "31"


def test_netcdf_dim_dataset_items():
    md = gdal.Open(str(SAMPLE)).GetMetadata()
    assert md["NETCDF_DIM_EXTRA"] == "{time}"
    assert md["NETCDF_DIM_time_DEF"] == "{365,6}"
    assert md["NETCDF_DIM_time_VALUES"] == "{" + ",".join(str(i) for i in range(365)) + "}"
    assert md["time#units"] == "days since 2023-01-01"
    assert md["time#calendar"] == "proleptic_gregorian"


def test_stored_band_description_wins(tmp_path):
    store = tmp_path / "s.zarr"
    shutil.copytree(SAMPLE, store)
    ds = gdal.Open(str(store), gdal.GA_Update)
    ds.GetRasterBand(2).SetDescription("holiday")
    ds = None
    ds = gdal.Open(str(store))
    assert ds.GetRasterBand(2).GetDescription() == "holiday"
    assert ds.GetRasterBand(3).GetDescription() == "time=2023-01-03"


def test_numbers_are_kept_when_units_are_not_a_time(tmp_path):
    src = gdal.GetDriverByName("MEM").Create("", 4, 3, 2, gdal.GDT_Byte)
    out = tmp_path / "lev.zarr"
    gdal.Translate(str(out), src, format="Zarr3", creationOptions=["APPEND_DIM=level", "APPEND_COORD=850,500"])
    ds = gdal.Open(str(out))
    assert ds.GetRasterBand(1).GetDescription() == "level=850"
    assert ds.GetMetadata()["NETCDF_DIM_level_VALUES"] == "{850,500}"
