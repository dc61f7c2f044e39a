"""Monthly NetCDF-4 files for the virtual-reference Icechunk fixture (run with Debian 13's python3,
python3-netcdf4, python3-h5py; see scripts/icechunk/make_fixtures.sh).

usage: python3 make_netcdf.py OUTDIR
Writes OUTDIR/nc/t2m_2023-01.nc, t2m_2023-02.nc, t2m_2023-03.nc (31, 28, 31 days of a float32
t2m(time, lat, lon) variable, 8 x 10 cells, HDF5 chunks of one month x 4 lat x 10 lon, shuffle +
zlib level 4), OUTDIR/nc/checked/t2m_2023-01.nc (a copy of January, for the last-modified checksum
test) and OUTDIR/nc/chunks.json: for every file, the byte offset and size of every HDF5 chunk of t2m
(h5py's get_chunk_info), which write_fixtures.mjs turns into Icechunk virtual references. Also
OUTDIR/nc/t2m_expected.npy (the 90 days concatenated), time/lat/lon values.
"""
import json
import shutil
import sys
from pathlib import Path

import h5py
import netCDF4
import numpy as np

MONTHS = [("2023-01", 31), ("2023-02", 28), ("2023-03", 31)]
NLAT, NLON, CLAT = 8, 10, 4
FILL = np.float32(-9999.0)
LAT = 50.5 - np.arange(NLAT, dtype=np.float64)  # north-up, cell centres, 1 degree
LON = 5.5 + np.arange(NLON, dtype=np.float64)


def month_values(first_day, ndays):
    d = np.arange(first_day, first_day + ndays, dtype=np.float64)[:, None, None]
    y = np.arange(NLAT, dtype=np.float64)[None, :, None]
    x = np.arange(NLON, dtype=np.float64)[None, None, :]
    v = 270.0 + 0.25 * d + 0.5 * y - 0.125 * x + 0.03125 * ((d * 7 + y * 3 + x) % 11)
    v = v.astype(np.float32)
    v[0, 0, 0] = FILL  # one nodata cell per month (first day, north-west corner)
    return v


def write_month(path, first_day, values):
    ndays = values.shape[0]
    with netCDF4.Dataset(path, "w", format="NETCDF4") as nc:
        nc.createDimension("time", ndays)
        nc.createDimension("lat", NLAT)
        nc.createDimension("lon", NLON)
        t = nc.createVariable("time", "i4", ("time",))
        t.units = "days since 2023-01-01"
        t.calendar = "standard"
        t.standard_name = "time"
        t[:] = np.arange(first_day, first_day + ndays, dtype=np.int32)
        la = nc.createVariable("lat", "f8", ("lat",))
        la.units = "degrees_north"
        la.standard_name = "latitude"
        la[:] = LAT
        lo = nc.createVariable("lon", "f8", ("lon",))
        lo.units = "degrees_east"
        lo.standard_name = "longitude"
        lo[:] = LON
        v = nc.createVariable("t2m", "f4", ("time", "lat", "lon"), zlib=True, shuffle=True, complevel=4,
                              chunksizes=(ndays, CLAT, NLON), endian="little", fill_value=FILL)
        v.units = "K"
        v.long_name = "2 metre temperature"
        v[:] = values


def chunk_table(path, var="t2m"):
    """Every HDF5 chunk of `var` (little-endian float32, shuffle + deflate): element offset, byte offset,
    stored size (all filters applied), and the HDF5 chunk shape. Shared with make_sample_netcdf.py."""
    with h5py.File(path, "r") as f:
        ds = f[var]
        dcpl = ds.id.get_create_plist()
        filters = [dcpl.get_filter(i)[0] for i in range(dcpl.get_nfilters())]
        # H5Z_FILTER_SHUFFLE = 2, H5Z_FILTER_DEFLATE = 1, in pipeline (write) order
        if filters != [2, 1]:
            raise SystemExit(f"{path}: unexpected HDF5 filter pipeline {filters} (want shuffle, deflate)")
        if ds.dtype != np.dtype("<f4"):
            raise SystemExit(f"{path}: {var} is {ds.dtype}, want little-endian float32")
        out = []
        for i in range(ds.id.get_num_chunks()):
            info = ds.id.get_chunk_info(i)
            if info.filter_mask != 0:
                raise SystemExit(f"{path}: chunk {i} skipped a filter (mask {info.filter_mask})")
            out.append({"chunk_offset": [int(o) for o in info.chunk_offset],
                        "byte_offset": int(info.byte_offset), "size": int(info.size)})
        return {"chunks": ds.chunks, "items": out}


def main():
    out = Path(sys.argv[1]).resolve() / "nc"
    (out / "checked").mkdir(parents=True, exist_ok=True)
    table, all_values, first = [], [], 0
    for name, ndays in MONTHS:
        values = month_values(first, ndays)
        path = out / f"t2m_{name}.nc"
        write_month(str(path), first, values)
        info = chunk_table(str(path))
        table.append({"path": str(path), "month": name, "ndays": ndays, "first_day": first,
                      "hdf5_chunk_shape": list(info["chunks"]), "chunks": info["items"]})
        all_values.append(values)
        first += ndays
    shutil.copy2(out / "t2m_2023-01.nc", out / "checked" / "t2m_2023-01.nc")
    full = np.concatenate(all_values)
    np.save(out / "t2m_expected.npy", full)
    meta = {"files": table, "shape": list(full.shape), "fill_value": float(FILL),
            "lat": LAT.tolist(), "lon": LON.tolist(), "time": list(range(full.shape[0])),
            "checked_copy": str(out / "checked" / "t2m_2023-01.nc")}
    (out / "chunks.json").write_text(json.dumps(meta, indent=1))
    print(f"netcdf: {len(table)} files, {sum(len(t['chunks']) for t in table)} chunks, shape {full.shape}")


if __name__ == "__main__":
    main()
