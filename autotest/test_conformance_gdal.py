"""Every array of every conformance case reads back bit-exact through GDAL's
multidimensional API, served by the Zarr3 plugin."""
import json

import numpy as np
import pytest
from osgeo import gdal

from conftest import CONFORMANCE, conformance_cases

GDAL_NUM = int(gdal.VersionInfo("VERSION_NUM"))


def _params():
    out = []
    for case in conformance_cases():
        meta = json.loads((CONFORMANCE / case / "case.json").read_text())
        for arr in meta["arrays"]:
            out.append(pytest.param(case, meta["store"], arr, id=f"{case}/{arr['path']}"))
    return out


PARAMS = _params()


def test_corpus_present(conformance_dir):
    assert len(PARAMS) >= 14, "expected the full conformance corpus"


def expected_as_gdal(arr, case):
    """Expected values converted to the type GDAL exposes for the Zarr type."""
    exp = np.fromfile(CONFORMANCE / case / arr["expected"], dtype=np.dtype(arr["numpy_dtype"]))
    exp = exp.reshape(arr["shape"])
    dt = arr["data_type"]
    if dt == "bool":
        return exp.view(np.uint8)
    if dt == "float16" and GDAL_NUM < 3110000:
        return exp.astype(np.float32)
    if dt == "int8" and GDAL_NUM < 3070000:
        return exp.astype(np.int16)
    return exp


def same_bits(a, b):
    a = np.ascontiguousarray(a)
    b = np.ascontiguousarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def open_array(case, store, arr):
    path = str(CONFORMANCE / case / store)
    ds = gdal.OpenEx(path, gdal.OF_MULTIDIM_RASTER)
    assert ds is not None
    assert ds.GetDriver().ShortName == "Zarr3"
    rg = ds.GetRootGroup()
    md = rg.OpenMDArrayFromFullname("/" + arr["path"])
    assert md is not None, arr["path"]
    return ds, md


@pytest.mark.parametrize("case,store,arr", PARAMS)
def test_read_bit_exact(case, store, arr):
    ds, md = open_array(case, store, arr)
    assert [d.GetSize() for d in md.GetDimensions()] == arr["shape"]
    exp = expected_as_gdal(arr, case)
    if exp.size == 0:
        # Nothing to read; GDAL refuses zero-sized requests, so check the shape only.
        assert md.GetTotalElementsCount() == 0
        return
    got = md.ReadAsArray()
    got = np.asarray(got).reshape(exp.shape)
    assert same_bits(got, exp), f"{case}/{arr['path']}: values differ"


@pytest.mark.parametrize("case,store,arr", [p for p in PARAMS if len(p.values[2]["shape"]) >= 1])
def test_read_window_with_steps(case, store, arr):
    """A strided, reversed window (negative step on the first axis) matches numpy slicing."""
    ds, md = open_array(case, store, arr)
    exp = expected_as_gdal(arr, case)
    if exp.size == 0:
        return
    shape = arr["shape"]
    start, count, step, slices = [], [], [], []
    for i, n in enumerate(shape):
        if i == 0:  # walk backwards from the last element, every 2nd
            c = (n + 1) // 2
            start.append(n - 1)
            count.append(c)
            step.append(-2)
            slices.append(slice(n - 1, None, -2))
        else:  # skip the first element, then every 3rd
            s0 = 1 if n > 1 else 0
            c = max(1, (n - s0 + 2) // 3)
            start.append(s0)
            count.append(c)
            step.append(3)
            slices.append(slice(s0, s0 + 3 * (c - 1) + 1, 3))
    got = md.ReadAsArray(array_start_idx=start, count=count, array_step=step)
    want = exp[tuple(slices)]
    assert same_bits(np.asarray(got).reshape(want.shape), want)


@pytest.mark.parametrize(
    "case,store,arr",
    [p for p in PARAMS if p.values[2]["data_type"] not in ("bool",) and not p.values[2]["data_type"].startswith("complex")],
)
def test_read_converted_to_float64(case, store, arr):
    """Reading into another buffer type converts every element (GDAL copy rules)."""
    ds, md = open_array(case, store, arr)
    exp = expected_as_gdal(arr, case)
    if exp.size == 0:
        return
    got = md.ReadAsArray(buffer_datatype=gdal.ExtendedDataType.Create(gdal.GDT_Float64))
    want = exp.astype(np.float64)
    got = np.asarray(got).reshape(want.shape)
    assert got.dtype == np.float64
    assert np.array_equal(got, want, equal_nan=True)
