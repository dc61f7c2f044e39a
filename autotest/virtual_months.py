"""The done-when files of issue 42 (`zarr3 virtualize`), shared by test_cli_virtualize.py (GDAL),
test_qgis.py and test_rioxarray.py (the applications): 4 monthly NetCDF-4 files of 31/28/31/30 days
written with python3-netcdf4, each with
- t2m float32, shuffle + deflate, HDF5 chunks of one month x 16 x 32 (lat 20, lon 40: the spatial edge
  chunks overhang, as in a regular grid),
- sp int16 packed (scale_factor, add_offset, _FillValue), deflate, one chunk per month,
- tp float32, deflate, chunks of 10 days: months of 31 and 28 days end in a padded HDF5 chunk,
  which the tool copies (decoded by libhdf5),
- time in "hours since <first of the month>" (converted to the first file's unit), lat, lon and a
  CF grid mapping variable crs (EPSG:4326).
They are written in the test's own folder (never /tmp/gdal-zarr3-archive).
"""
import subprocess

import numpy as np
from osgeo import gdal, osr

import netCDF4  # python3-netcdf4 (scripts/install-deps.sh)

MONTHS = [(1, 31), (2, 28), (3, 31), (4, 30)]
NLAT, NLON = 20, 40
TP_CHUNK = 10


def write_month(path, month, ndays, seed=0, nlat=NLAT, first_hour=12.0, **extra):
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(4326)
    rng = np.random.default_rng(seed + month)
    ds = netCDF4.Dataset(str(path), "w", format="NETCDF4")
    ds.Conventions = "CF-1.8"
    ds.title = "zarr3 virtualize test"
    ds.createDimension("time", None)
    ds.createDimension("lat", nlat)
    ds.createDimension("lon", NLON)
    t = ds.createVariable("time", "f8", ("time",))
    t.units = f"hours since 2023-{month:02d}-01"
    t.calendar = "standard"
    t.standard_name = "time"
    t[:] = np.arange(ndays) * 24.0 + first_hour
    lat = ds.createVariable("lat", "f8", ("lat",))
    lat.units, lat.standard_name = "degrees_north", "latitude"
    lat[:] = 60 - np.arange(nlat) * 0.5 - 0.25
    lon = ds.createVariable("lon", "f8", ("lon",))
    lon.units, lon.standard_name = "degrees_east", "longitude"
    lon[:] = -10 + np.arange(NLON) * 0.5 + 0.25
    crs = ds.createVariable("crs", "i4", ())
    crs.grid_mapping_name = "latitude_longitude"
    crs.semi_major_axis, crs.inverse_flattening = 6378137.0, 298.257223563
    crs.crs_wkt = srs.ExportToWkt()
    a = ds.createVariable("t2m", "f4", ("time", "lat", "lon"), zlib=True, complevel=4, shuffle=True,
                          chunksizes=(ndays, 16, 32), fill_value=np.float32(-9999), **extra)
    a.units, a.long_name, a.grid_mapping = "K", "2 m air temperature", "crs"
    a[:] = (270 + rng.random((ndays, nlat, NLON)) * 20).astype("f4")
    a[0, 0, 0] = np.ma.masked
    p = ds.createVariable("sp", "i2", ("time", "lat", "lon"), zlib=True, chunksizes=(ndays, nlat, NLON),
                          fill_value=np.int16(-32767))
    p.scale_factor, p.add_offset, p.units, p.grid_mapping = 0.5, 100000.0, "Pa", "crs"
    p.set_auto_maskandscale(False)
    p[:] = rng.integers(-30000, 30000, (ndays, nlat, NLON)).astype("i2")
    r = ds.createVariable("tp", "f4", ("time", "lat", "lon"), zlib=True,
                          chunksizes=(TP_CHUNK, 16, 16))
    r.units, r.grid_mapping = "m", "crs"
    r[:] = rng.random((ndays, nlat, NLON)).astype("f4")
    ds.close()


def write_months(folder):
    """The 4 monthly files in folder (created): their paths, in time order."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for m, n in MONTHS:
        write_month(folder / f"t2m_2023-{m:02d}.nc", m, n)
        out.append(folder / f"t2m_2023-{m:02d}.nc")
    return out


def run(exe, *args):
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=300)


def virtualize(exe, repo, files, *opts):
    r = run(exe, "virtualize", repo, *files, "--concat-dim", "time", *opts)
    assert r.returncode == 0, r.stderr
    return r.stdout


def virtual_months_archive(folder, exe):
    """The done-when archive: the 4 monthly files (31/28/31/30 days; packed int16 sp, shuffle + deflate
    t2m, tp in 10-day chunks) written in folder/nc and virtualized by `zarr3 virtualize` into
    folder/v.icechunk: (repository, files)."""
    files = write_months(folder / "nc")
    virtualize(exe, folder / "v.icechunk", files)
    return folder / "v.icechunk", files


def netcdf_values(files, var):
    """The variable of the files as GDAL's netCDF driver reads them, concatenated on time."""
    return np.concatenate([gdal.Open(f'NETCDF:"{f}":{var}').ReadAsArray() for f in files])
