"""Monthly NetCDF-4 files of the virtual archive sample (data/archive/, see make_samples.sh); run with
Debian 13's python3, python3-netcdf4, python3-h5py in the chroot.

usage: python3 make_sample_netcdf.py SRC OUT
SRC holds the source values (check_samples.py source). Writes OUT/archive/t2m_2023-01.nc, -02.nc,
-03.nc: t2m(time, lat, lon) float32 of 31, 28, 31 days, HDF5 chunks of one month x 16 lat x 32 lon,
shuffle + zlib level 4, with the source's coordinates and CRS (a `spatial_ref` grid-mapping variable),
and OUT/archive/chunks.json: each file's HDF5 chunks of t2m (element offset, byte offset, stored size,
from h5py's get_chunk_info through make_netcdf.chunk_table), kept in the stage as a record: the
archive's virtual references are written by `zarr3 virtualize` on the host (make_samples.sh).
"""
import json
import sys
from pathlib import Path

import netCDF4
import numpy as np

from make_netcdf import chunk_table  # the HDF5 chunk offsets, shared with the fixture writer

CLAT, CLON = 16, 32
NAMES = ["2023-01", "2023-02", "2023-03"]
GRID_MAPPING_KEYS = ["crs_wkt", "spatial_ref", "grid_mapping_name", "GeoTransform"]


def load(src):
    doc = json.loads((src / "source.json").read_text())
    arrays = {}
    for name, a in doc["arrays"].items():
        arrays[name] = np.frombuffer((src / f"{name}.bin").read_bytes(), a["dtype"]).reshape(a["shape"])
    return doc, arrays


def set_attrs(var, attrs, keys):
    for k in keys:
        if k in attrs:
            var.setncattr(k, attrs[k])


def write_month(path, doc, arrays, first, ndays):
    at = {k: v["attributes"] for k, v in doc["arrays"].items()}
    nlat, nlon = arrays["lat"].size, arrays["lon"].size
    with netCDF4.Dataset(path, "w", format="NETCDF4") as nc:
        nc.setncatts({k: v for k, v in doc["group_attributes"].items() if isinstance(v, str)})
        nc.createDimension("time", ndays)
        nc.createDimension("lat", nlat)
        nc.createDimension("lon", nlon)
        t = nc.createVariable("time", "i8", ("time",))
        set_attrs(t, at["time"], ["units", "calendar", "standard_name", "axis"])
        t[:] = arrays["time"][first:first + ndays]
        for name in ("lat", "lon"):
            v = nc.createVariable(name, "f8", (name,))
            set_attrs(v, at[name], ["units", "standard_name", "axis"])
            v[:] = arrays[name]
        crs = nc.createVariable("spatial_ref", "i4", ())
        set_attrs(crs, at["spatial_ref"], GRID_MAPPING_KEYS)
        crs.assignValue(int(arrays["spatial_ref"]))
        v = nc.createVariable("t2m", "f4", ("time", "lat", "lon"), zlib=True, shuffle=True, complevel=4,
                              chunksizes=(ndays, CLAT, CLON), endian="little", fill_value=np.float32("nan"))
        set_attrs(v, at["t2m"], ["long_name", "standard_name", "units", "grid_mapping"])
        v[:] = arrays["t2m"][first:first + ndays]


def main():
    src, out = Path(sys.argv[1]), Path(sys.argv[2]) / "archive"
    out.mkdir(parents=True, exist_ok=True)
    doc, arrays = load(src)
    files, first = [], 0
    for name, ndays in zip(NAMES, doc["months"]):
        path = out / f"t2m_{name}.nc"
        write_month(str(path), doc, arrays, first, ndays)
        files.append({"name": path.name, "first_day": first, "ndays": ndays,
                      "chunk_shape": [ndays, CLAT, CLON], "chunks": chunk_table(str(path))["items"]})
        first += ndays
    (out / "chunks.json").write_text(json.dumps({"files": files}, indent=1))
    print(f"netcdf: {len(files)} files, {sum(len(f['chunks']) for f in files)} HDF5 chunks in {out}")


if __name__ == "__main__":
    main()
