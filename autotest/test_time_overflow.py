"""Time values keep their stored value (issue 33, point 16): a numpy.timedelta64 / datetime64 array with
scale_factor 10 holding its largest value 922337203685477579 (x 10 ms fits int64 by 17) reads back
exactly through GDAL, multidim and classic, and its band metadata gives the exact count (a double
rounds it to 922337203685477632, which x 10 ms overflows int64: a reader converting units gets NaT).
Appends never cast an out-of-range coordinate value into an integer coordinate (INT64_MIN = NaT)."""
import json
import os

import numpy as np
import pytest
from osgeo import gdal

LARGEST = 922337203685477579  # int64 max // 10
SMALLEST = -922337203685477580
NAT = np.iinfo(np.int64).min


def write_array(root, path, shape, data_type, values, dims, fill=0, attrs=None):
    """A Zarr v3 array written by hand (one chunk, bytes codec): the format is simple."""
    folder = os.path.join(root, path)
    os.makedirs(os.path.join(folder, "c", *["0"] * (len(shape) - 1)), exist_ok=True)
    meta = {"zarr_format": 3, "node_type": "array", "shape": shape, "data_type": data_type,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": shape}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": fill, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "attributes": attrs or {}, "dimension_names": dims}
    with open(os.path.join(folder, "zarr.json"), "w") as f:
        json.dump(meta, f)
    np.ascontiguousarray(values).astype(values.dtype.newbyteorder("<")).tofile(
        os.path.join(folder, "c", *["0"] * len(shape)))


def time_store(tmp_path, kind):
    root = str(tmp_path / f"{kind}.zarr")
    os.makedirs(root)
    with open(os.path.join(root, "zarr.json"), "w") as f:
        json.dump({"zarr_format": 3, "node_type": "group", "attributes": {}}, f)
    dt = {"name": f"numpy.{kind}", "configuration": {"unit": "ms", "scale_factor": 10}}
    write_array(root, "time", [4], dt, np.array([0, 1, LARGEST, SMALLEST], np.int64), ["time"], "NaT")
    write_array(root, "data", [4, 2, 3], "uint8", np.arange(24, dtype=np.uint8).reshape(4, 2, 3),
                ["time", "y", "x"])
    return root


@pytest.mark.parametrize("kind", ["timedelta64", "datetime64"])
def test_largest_value_reads_exactly_multidim(tmp_path, kind):
    root = time_store(tmp_path, kind)
    arr = gdal.OpenEx(root, gdal.OF_MULTIDIM_RASTER).GetRootGroup().OpenMDArray("time")
    assert arr.GetDataType().GetNumericDataType() == gdal.GDT_Int64
    values = arr.ReadAsArray()
    assert values.tolist() == [0, 1, LARGEST, SMALLEST]
    assert NAT not in values.tolist()
    # In numpy's own unit the value is a time, not NaT, and converts to ms without overflow.
    td = values.view(f"{'m' if kind == 'timedelta64' else 'M'}8[10ms]")
    assert not np.isnat(td).any()
    assert td[2].astype(f"{'m' if kind == 'timedelta64' else 'M'}8[ms]").astype(np.int64) == LARGEST * 10


def test_largest_timedelta_in_band_metadata(tmp_path):
    root = time_store(tmp_path, "timedelta64")
    ds = gdal.Open(f'ZARR3:"{root}":/data')
    assert ds.RasterCount == 4
    band = ds.GetRasterBand(3)
    assert band.GetMetadataItem("time") == f"{LARGEST} 10ms"
    # The exact stored count, not a rounded double (922337203685477632 x 10 ms > int64: NaT).
    assert band.GetMetadataItem("NETCDF_DIM_time") == str(LARGEST)
    assert ds.GetRasterBand(4).GetMetadataItem("NETCDF_DIM_time") == str(SMALLEST)
    assert ds.GetMetadataItem("NETCDF_DIM_time_VALUES") == f"{{0,1,{LARGEST},{SMALLEST}}}"
    assert ds.GetMetadataItem("time#units") == "10 milliseconds"
    # A consumer converting the item to milliseconds (numpy, as pandas/xarray do) gets the value.
    ms = np.array([int(band.GetMetadataItem("NETCDF_DIM_time"))], "m8[10ms]").astype("m8[ms]")
    assert not np.isnat(ms).any() and ms.astype(np.int64)[0] == LARGEST * 10


def test_largest_datetime_in_band_metadata(tmp_path):
    root = time_store(tmp_path, "datetime64")
    ds = gdal.Open(f'ZARR3:"{root}":/data')
    assert ds.GetRasterBand(2).GetMetadataItem("time") == "1970-01-01T00:00:00.010"
    # Past the calendar the text falls back to the stored count: never NaT, never wrapped.
    assert ds.GetRasterBand(3).GetMetadataItem("time") == str(LARGEST)
    assert ds.GetRasterBand(3).GetMetadataItem("NETCDF_DIM_time") == str(LARGEST)
    assert ds.GetMetadataItem("time#units") == "10 milliseconds since 1970-01-01T00:00:00"


def int_coordinate_store(tmp_path, data_type):
    root = str(tmp_path / f"{data_type}.zarr")
    os.makedirs(root)
    with open(os.path.join(root, "zarr.json"), "w") as f:
        json.dump({"zarr_format": 3, "node_type": "group", "attributes": {}}, f)
    write_array(root, "time", [1], data_type, np.array([5], np.dtype(data_type)), ["time"])
    write_array(root, "data", [1, 2, 3], "uint8", np.zeros((1, 2, 3), np.uint8), ["time", "y", "x"])
    return root


@pytest.mark.parametrize("data_type, coord", [
    *[(t, c) for t in ["int64", "int32", "uint32", "uint64"] for c in ["1e30", "-1e30", "1e300", "2.5"]],
    ("int64", "9223372036854775808"),  # 2^63: one past int64
    ("uint64", "18446744073709551616"),  # 2^64
    ("int32", "2147483648"),
    ("uint32", "-1"),
    ("uint32", "4294967296")])
def test_append_refuses_values_no_integer_coordinate_holds(tmp_path, run_tool, data_type, coord):
    root = int_coordinate_store(tmp_path, data_type)
    src = str(tmp_path / "step.tif")
    ds = gdal.GetDriverByName("GTiff").Create(src, 3, 2, 1, gdal.GDT_Byte)
    ds = None
    keep = [] if int(gdal.VersionInfo()) < 3070000 else ["-co", "APPEND_SUBDATASET=YES"]
    p = run_tool("gdal_translate", "-q", "-of", "Zarr3", "-co", "APPEND_DIM=time", "-co",
                 f"APPEND_COORD={coord}", *keep, src, root)
    assert p.returncode != 0
    assert f"cannot be stored as {data_type}" in p.stderr, p.stderr
    # Nothing written: the coordinate keeps its one value.
    arr = gdal.OpenEx(root, gdal.OF_MULTIDIM_RASTER).GetRootGroup().OpenMDArray("time")
    assert arr.ReadAsArray().tolist() == [5]


def test_append_keeps_largest_int64_coordinate_value(tmp_path, run_tool):
    root = int_coordinate_store(tmp_path, "int64")
    src = str(tmp_path / "step.tif")
    ds = gdal.GetDriverByName("GTiff").Create(src, 3, 2, 1, gdal.GDT_Byte)
    ds = None
    keep = [] if int(gdal.VersionInfo()) < 3070000 else ["-co", "APPEND_SUBDATASET=YES"]
    p = run_tool("gdal_translate", "-q", "-of", "Zarr3", "-co", "APPEND_DIM=time", "-co",
                 "APPEND_COORD=9223372036854774784", *keep, src, root)
    assert p.returncode == 0, p.stderr
    arr = gdal.OpenEx(root, gdal.OF_MULTIDIM_RASTER).GetRootGroup().OpenMDArray("time")
    assert arr.ReadAsArray().tolist() == [5, 9223372036854774784]
