"""The plugin loads, wins Zarr v3 stores over GDAL's built-in Zarr driver,
leaves v2 stores to it, honours ZARR3_PRECEDENCE, matches plugin.json and
reports bad input clearly."""
import ctypes
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from osgeo import gdal

from conftest import REPO, config_option
from zarr_meta_util import CS, DELETE, base_array_meta, mutate

V3_CASE = "geo_group"


def zarr3_driver():
    drv = gdal.GetDriverByName("Zarr3")
    assert drv is not None, f"Zarr3 not loaded from GDAL_DRIVER_PATH={os.environ.get('GDAL_DRIVER_PATH')}"
    return drv


@pytest.fixture
def v3_store(conformance_dir, copy_store):
    return copy_store(conformance_dir / V3_CASE / "store.zarr", "v3.zarr")


@pytest.fixture
def v2_store(tmp_path):
    """A Zarr v2 store written by hand: group + uncompressed 2x2 int16 array."""
    root = tmp_path / "v2.zarr"
    (root / "a").mkdir(parents=True)
    (root / ".zgroup").write_text(json.dumps({"zarr_format": 2}))
    (root / "a" / ".zarray").write_text(
        json.dumps(
            {
                "zarr_format": 2,
                "shape": [2, 2],
                "chunks": [2, 2],
                "dtype": "<i2",
                "compressor": None,
                "fill_value": 0,
                "order": "C",
                "filters": None,
            }
        )
    )
    (root / "a" / "0.0").write_bytes(np.array([[1, 2], [3, 4]], dtype="<i2").tobytes())
    return root


def open_ex(path, flags=0, **kw):
    """gdal.OpenEx returning None (instead of raising) when nothing opens it."""
    try:
        return gdal.OpenEx(str(path), flags, **kw)
    except RuntimeError:
        return None


def open_error(path, flags=0, **kw):
    """Message of the error raised when opening `path` fails."""
    with pytest.raises(RuntimeError) as e:
        gdal.OpenEx(str(path), flags, **kw)
    return str(e.value)


# ------------------------------------------------------------------ loading


def test_driver_loads():
    drv = zarr3_driver()
    assert drv.LongName.startswith("Zarr v3")
    assert drv.GetMetadataItem("ZARR3_VERSION")
    assert drv.GetMetadataItem(gdal.DCAP_MULTIDIM_RASTER) == "YES"


def test_registered_before_builtin_zarr():
    names = [gdal.GetDriver(i).ShortName for i in range(gdal.GetDriverCount())]
    if "Zarr" in names:
        assert names.index("Zarr3") < names.index("Zarr")


# ------------------------------------------------------------------ plugin.json


def option_names(xml_text):
    if not xml_text:
        return []
    return [o.get("name") for o in ET.fromstring(xml_text).iter("Option")]


def test_plugin_json_matches_driver(driver_path):
    manifest = json.loads((REPO / "plugin.json").read_text())
    drv = zarr3_driver()
    assert manifest["driver"] == drv.ShortName == "Zarr3"
    assert manifest["version"] == drv.GetMetadataItem("ZARR3_VERSION")
    assert manifest["library"] == "gdal_Zarr3.so"
    assert manifest["entry_point"] == "GDALRegister_Zarr3"
    lib = Path(driver_path) / manifest["library"]
    assert lib.exists(), lib
    assert hasattr(ctypes.CDLL(str(lib)), manifest["entry_point"])
    major, minor = (int(x) for x in manifest["min_gdal_version"].split(".")[:2])
    assert int(gdal.VersionInfo("VERSION_NUM")) >= major * 1000000 + minor * 10000

    # Every config option the manifest names is documented in the README.
    readme = (REPO / "README.md").read_text()
    assert all(f"`{o}`" in readme for o in manifest["config_options"]), manifest["config_options"]

    md = drv.GetMetadata()
    caps = {k for k, v in md.items() if (k.startswith("DCAP_") or k == "DMD_SUBDATASETS") and v == "YES"}
    assert set(manifest["capabilities"]) == caps
    for cap in ("DCAP_RASTER", "DCAP_MULTIDIM_RASTER", "DCAP_VIRTUALIO", "DCAP_CREATE", "DCAP_CREATECOPY",
                "DCAP_CREATE_MULTIDIMENSIONAL", "DMD_SUBDATASETS"):
        assert cap in caps
    assert manifest["open_options"] == option_names(md.get("DMD_OPENOPTIONLIST"))
    assert manifest["creation_options"] == option_names(md.get("DMD_CREATIONOPTIONLIST"))
    assert manifest.get("multidim_array_creation_options", []) == option_names(
        md.get("DMD_MULTIDIM_ARRAY_CREATIONOPTIONLIST")
    )
    assert manifest.get("multidim_dataset_creation_options", []) == option_names(
        md.get("DMD_MULTIDIM_DATASET_CREATIONOPTIONLIST")
    )
    assert md.get("DMD_EXTENSIONS") == "zarr"


# ------------------------------------------------------------------ precedence


def test_v3_store_served_by_zarr3(v3_store):
    ds = gdal.OpenEx(str(v3_store))
    assert ds.GetDriver().ShortName == "Zarr3"
    # One data array (the others are coordinates): it opens as the raster and
    # no subdatasets are listed (GDAL's own driver does the same).
    assert (ds.RasterXSize, ds.RasterYSize, ds.RasterCount) == (36, 18, 12)
    assert ds.GetMetadata("SUBDATASETS") == {}

    ds = gdal.OpenEx(str(v3_store), gdal.OF_MULTIDIM_RASTER)
    assert ds.GetDriver().ShortName == "Zarr3"
    rg = ds.GetRootGroup()
    assert sorted(rg.GetMDArrayNames()) == ["air", "lat", "lon", "spatial_ref", "time"]
    assert rg.GetAttribute("title").Read() == "conformance geo group"
    air = rg.OpenMDArray("air")
    assert [d.GetName() for d in air.GetDimensions()] == ["time", "lat", "lon"]
    assert air.GetDimensions()[1].GetIndexingVariable().GetName() == "lat"
    assert air.GetBlockSize() == [3, 12, 12]
    assert air.GetUnit() == "K"
    assert air.GetAttribute("grid_mapping").Read() == "spatial_ref"
    assert air.GetNoDataValueAsDouble() == 0.0


def test_v3_store_trailing_slash_and_zarr_json(v3_store):
    for name in (str(v3_store) + "/", str(v3_store / "zarr.json")):
        ds = gdal.OpenEx(name, gdal.OF_MULTIDIM_RASTER)
        assert ds.GetDriver().ShortName == "Zarr3"
        assert "air" in ds.GetRootGroup().GetMDArrayNames()


def test_gdalinfo_and_gdalmdiminfo(v3_store, run_tool):
    p = run_tool("gdalinfo", v3_store)
    assert p.returncode == 0, p.stderr
    assert "Driver: Zarr3/" in p.stdout
    assert "Size is 36, 18" in p.stdout  # the one data array, no subdataset list
    assert "SUBDATASET_" not in p.stdout
    p = run_tool("gdalmdiminfo", v3_store)
    assert p.returncode == 0, p.stderr
    info = json.loads(p.stdout)
    assert info["driver"] == "Zarr3"
    assert set(info["arrays"]) == {"air", "lat", "lon", "spatial_ref", "time"}
    assert info["arrays"]["air"]["dimension_size"] == [12, 18, 36]


def test_v2_store_goes_to_builtin_zarr(v2_store):
    if gdal.GetDriverByName("Zarr") is None:
        pytest.skip("GDAL built without its Zarr driver")
    ds = gdal.OpenEx(str(v2_store), gdal.OF_MULTIDIM_RASTER)
    assert ds.GetDriver().ShortName == "Zarr"
    a = ds.GetRootGroup().OpenMDArray("a")
    assert a.ReadAsArray().tolist() == [[1, 2], [3, 4]]
    ds = gdal.OpenEx(str(v2_store / "a"))
    assert ds.GetDriver().ShortName == "Zarr"
    assert ds.ReadAsArray().tolist() == [[1, 2], [3, 4]]


def test_v2_store_gdalinfo(v2_store, run_tool):
    if gdal.GetDriverByName("Zarr") is None:
        pytest.skip("GDAL built without its Zarr driver")
    p = run_tool("gdalinfo", v2_store / "a")
    assert p.returncode == 0, p.stderr
    assert "Driver: Zarr/" in p.stdout


def test_draft_v3_is_not_claimed(tmp_path):
    """Pre-final v3 draft: zarr.json with zarr_format as a URL. Not ours; declined silently."""
    root = tmp_path / "draft.zarr"
    root.mkdir()
    (root / "zarr.json").write_text(
        json.dumps(
            {
                "zarr_format": "https://purl.org/zarr/spec/protocol/core/3.0",
                "metadata_encoding": "https://purl.org/zarr/spec/protocol/core/3.0",
                "metadata_key_suffix": ".json",
                "extensions": [],
            }
        )
    )
    gdal.ErrorReset()
    msg = open_error(root, gdal.OF_MULTIDIM_RASTER, allowed_drivers=["Zarr3"])
    assert "not recognized" in msg
    ds = open_ex(root, gdal.OF_MULTIDIM_RASTER)
    assert ds is None or ds.GetDriver().ShortName != "Zarr3"


@pytest.mark.parametrize("value", ["NO", "FALSE", "OFF"])
def test_precedence_opt_out(v3_store, value):
    with config_option("ZARR3_PRECEDENCE", value):
        for flags in (0, gdal.OF_MULTIDIM_RASTER):
            ds = open_ex(v3_store, flags)
            assert ds is None or ds.GetDriver().ShortName != "Zarr3"
        # The prefix still selects the plugin.
        ds = gdal.OpenEx(f'ZARR3:"{v3_store}"', gdal.OF_MULTIDIM_RASTER)
        assert ds.GetDriver().ShortName == "Zarr3"
        ds = gdal.OpenEx(f"ZARR3:{v3_store}")
        assert ds.GetDriver().ShortName == "Zarr3"
    ds = gdal.OpenEx(str(v3_store), gdal.OF_MULTIDIM_RASTER)
    assert ds.GetDriver().ShortName == "Zarr3"


def test_precedence_opt_out_command_line(v3_store, run_tool):
    p = run_tool("gdalmdiminfo", v3_store, env_extra={"ZARR3_PRECEDENCE": "NO"})
    assert '"driver": "Zarr3"' not in p.stdout
    p = run_tool("gdalmdiminfo", "--config", "ZARR3_PRECEDENCE", "NO", f"ZARR3:{v3_store}")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["driver"] == "Zarr3"


# ------------------------------------------------------------------ names


def test_prefixed_names(v3_store):
    for name in (f'ZARR3:"{v3_store}"', f"ZARR3:{v3_store}", f'ZARR3:"{v3_store}":/', f"ZARR3:{v3_store}:/"):
        ds = gdal.OpenEx(name, gdal.OF_MULTIDIM_RASTER)
        assert ds.GetDriver().ShortName == "Zarr3", name
        assert "air" in ds.GetRootGroup().GetMDArrayNames()


def test_prefixed_name_errors(tmp_path):
    assert "closing quote" in open_error('ZARR3:"/no/such', gdal.OF_MULTIDIM_RASTER)
    assert "empty store path" in open_error('ZARR3:"":/a', gdal.OF_MULTIDIM_RASTER)
    missing = tmp_path / "missing.zarr"
    assert str(missing / "zarr.json") in open_error(f'ZARR3:"{missing}"', gdal.OF_MULTIDIM_RASTER)


def test_root_array_store(conformance_dir, copy_store):
    """A store whose root is an array: the root group holds it under the folder name."""
    root = copy_store(conformance_dir / "rect_2d_int32" / "store.zarr" / "a", "single.zarr")
    ds = gdal.OpenEx(str(root), gdal.OF_MULTIDIM_RASTER)
    assert ds.GetDriver().ShortName == "Zarr3"
    rg = ds.GetRootGroup()
    assert rg.GetMDArrayNames() == ["single"]
    got = rg.OpenMDArray("single").ReadAsArray()
    exp = np.fromfile(conformance_dir / "rect_2d_int32" / "expected" / "a.bin", dtype="<i4").reshape(60, 100)
    assert np.array_equal(got, exp)
    ds = gdal.OpenEx(str(root))
    assert ds.GetDriver().ShortName == "Zarr3"
    assert (ds.RasterXSize, ds.RasterYSize) == (100, 60)
    assert ds.GetMetadata("SUBDATASETS") == {}  # not even itself
    np.testing.assert_array_equal(ds.ReadAsArray(), exp)


def test_vsimem_store(conformance_dir):
    """Virtual I/O: a store copied into /vsimem/ opens and reads."""
    src = conformance_dir / "shard_regular_zstd" / "store.zarr"
    base = "/vsimem/zarr3_test/s.zarr"
    try:
        # GDAL 3.6 /vsimem/ lists only folders made explicitly: make them.
        gdal.MkdirRecursive(base, 0o755)
        for f in sorted(src.rglob("*")):
            if f.is_dir():
                gdal.MkdirRecursive(f"{base}/{f.relative_to(src).as_posix()}", 0o755)
            else:
                gdal.FileFromMemBuffer(f"{base}/{f.relative_to(src).as_posix()}", f.read_bytes())
        ds = gdal.OpenEx(base, gdal.OF_MULTIDIM_RASTER)
        assert ds.GetDriver().ShortName == "Zarr3"
        got = ds.GetRootGroup().OpenMDArray("a").ReadAsArray()
        exp = np.fromfile(conformance_dir / "shard_regular_zstd" / "expected" / "a.bin", dtype="<i4")
        assert np.array_equal(got.ravel(), exp)
    finally:
        gdal.RmdirRecursive("/vsimem/zarr3_test")


# ------------------------------------------------------------------ bad input


def test_garbage_zarr_json(tmp_path, run_tool):
    root = tmp_path / "garbage.zarr"
    root.mkdir()
    (root / "zarr.json").write_bytes(b"\x00\x01 this is { not json")
    for flags in (0, gdal.OF_MULTIDIM_RASTER):
        msg = open_error(root, flags)
        assert str(root / "zarr.json") in msg
    p = run_tool("gdalinfo", root)
    assert p.returncode == 1  # an error exit, not a crash (negative = signal)
    assert str(root / "zarr.json") in p.stderr


# (id, mutation, words of which at least one must appear in the message)
MALFORMED = [
    ("zero_edge", mutate(CS, [[4, 0, 6], 3]), ["edge", "chunk_shapes"]),
    ("negative_edge", mutate(CS, [[4, -6], 3]), ["edge", "chunk_shapes", "negative"]),
    ("rle_count_zero", mutate(CS, [[[5, 0], 10], 3]), ["count", "chunk_shapes"]),
    ("edges_short", mutate(CS, [[4, 5], 3]), ["sum", "short", "cover", "chunk_shapes"]),
    ("axis_count_mismatch", mutate(CS, [[4, 6]]), ["axes", "axis", "rank", "dimension", "chunk_shapes"]),
    ("unknown_grid", mutate(("chunk_grid", "name"), "hexagonal"), ["hexagonal"]),
    ("missing_kind", mutate(("chunk_grid", "configuration", "kind"), DELETE), ["kind"]),
    ("bad_kind", mutate(("chunk_grid", "configuration", "kind"), "external"), ["kind", "external"]),
    ("unknown_codec", mutate(("codecs",), [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "lzma9000"}]), ["lzma9000"]),
    ("no_codecs", mutate(("codecs",), []), ["codecs"]),
    ("unknown_dtype", mutate(("data_type",), "int128"), ["int128"]),
    ("bad_fill_value", mutate(("fill_value",), "banana"), ["fill_value"]),
    ("fill_value_out_of_range", mutate(("fill_value",), 70000), ["fill_value"]),
    ("shape_overflow", mutate(("shape",), [2**63, 2**63]), ["overflow", "shape", "large", "exceed"]),
    ("edge_overflow", mutate(CS, [[[2**62, 8]], 3]), ["overflow", "chunk_shapes", "large", "exceed"]),
    ("negative_shape", mutate(("shape",), [-10, 6]), ["shape"]),
    ("missing_shape", mutate(("shape",), DELETE), ["shape"]),
    ("bad_node_type", mutate(("node_type",), "table"), ["node_type"]),
    ("unknown_member", mutate(("frobnicate",), {"x": 1}), ["frobnicate"]),
    ("storage_transformer", mutate(("storage_transformers",), [{"name": "foo"}]), ["storage_transformers"]),
    ("bad_dimension_names", mutate(("dimension_names",), ["y"]), ["dimension_names"]),
    ("bad_separator", mutate(("chunk_key_encoding", "configuration", "separator"), "|"), ["separator"]),
    ("bad_endian", mutate(("codecs",), [{"name": "bytes", "configuration": {"endian": "middle"}}]), ["endian"]),
]


@pytest.mark.parametrize("name,change,words", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_metadata_refused(tmp_path, name, change, words):
    root = tmp_path / f"{name}.zarr"
    root.mkdir()
    (root / "zarr.json").write_text(json.dumps(change(base_array_meta())))
    for flags in (gdal.OF_MULTIDIM_RASTER, 0):
        msg = open_error(root, flags)
        assert str(root / "zarr.json") in msg, msg
        assert any(w.lower() in msg.lower() for w in words), msg


def test_truncated_json(tmp_path):
    root = tmp_path / "truncated.zarr"
    root.mkdir()
    (root / "zarr.json").write_text(json.dumps(base_array_meta())[:-20])
    msg = open_error(root, gdal.OF_MULTIDIM_RASTER)
    assert str(root / "zarr.json") in msg


def test_missing_chunk_reads_fill_and_corrupt_chunk_errors(tmp_path):
    root = tmp_path / "corrupt.zarr"
    root.mkdir()
    meta = base_array_meta()
    meta["fill_value"] = -7
    meta["codecs"] = [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}}]
    (root / "zarr.json").write_text(json.dumps(meta))
    (root / "c" / "0").mkdir(parents=True)
    (root / "c" / "0" / "0").write_bytes(b"definitely not gzip")
    ds = gdal.OpenEx(str(root), gdal.OF_MULTIDIM_RASTER)
    arr = ds.GetRootGroup().OpenMDArray("corrupt")
    # Chunk (1, 0) is missing: fill value.
    assert arr.ReadAsArray(array_start_idx=[4, 0], count=[6, 3]).tolist() == [[-7] * 3] * 6
    with pytest.raises(RuntimeError) as e:
        arr.ReadAsArray(array_start_idx=[0, 0], count=[4, 3])
    assert "c/0/0" in str(e.value)


def test_raw_type_refused_politely(tmp_path):
    root = tmp_path / "raw.zarr"
    root.mkdir()
    meta = base_array_meta()
    meta["data_type"] = "r24"
    meta["fill_value"] = "0x000000"
    meta["codecs"] = [{"name": "bytes"}]
    (root / "zarr.json").write_text(json.dumps(meta))
    ds = gdal.OpenEx(str(root), gdal.OF_MULTIDIM_RASTER)
    with pytest.raises(RuntimeError) as e:
        ds.GetRootGroup().OpenMDArray("raw")
    msg = str(e.value)
    assert "r24" in msg and "no GDAL equivalent" in msg
    assert str(root) in msg


# ------------------------------------------------------------------ demo sample


def test_sample_store_reads_and_is_georeferenced():
    """data/daily_t2m_2023.zarr (rectilinear month shards) reads back what scripts/make_sample.py wrote."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_sample", REPO / "scripts" / "make_sample.py")
    make_sample = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_sample)
    store = REPO / "data" / "daily_t2m_2023.zarr"
    ds = gdal.OpenEx(str(store), gdal.OF_MULTIDIM_RASTER)
    assert ds.GetDriver().ShortName == "Zarr3"
    t2m = ds.GetRootGroup().OpenMDArray("t2m")
    assert t2m.GetStructuralInfo()["CHUNK_GRID"] == "rectilinear"
    assert t2m.GetStructuralInfo()["CODECS"] == "sharding_indexed"
    assert t2m.GetBlockSize() == [31, 32, 64]
    exp = make_sample.temperature()
    assert np.array_equal(t2m.ReadAsArray(), exp)
    # February (days 31..58) alone, across a shard boundary with March.
    assert np.array_equal(t2m.ReadAsArray(array_start_idx=[31, 0, 0], count=[30, 32, 64]), exp[31:61])
    srs = t2m.GetSpatialRef()
    assert srs is not None and srs.GetAuthorityCode(None) == "4326"
    assert srs.GetDataAxisToSRSAxisMapping() == [2, 3]  # lat -> dim 2, lon -> dim 3 (1-based)
    # The classic view GDAL builds from the multidim array is georeferenced via lat/lon.
    classic = t2m.GetView("[196,:,:]").AsClassicDataset(1, 0)
    assert classic.GetGeoTransform() == (-20.0, 1.0, 0.0, 72.0, 0.0, -1.0)
    # A sliced view reads with step 0 on the sliced axis.
    assert np.array_equal(t2m.GetView("[196,:,:]").ReadAsArray(), exp[196])
    assert np.array_equal(t2m.GetView("[:,5,::-3]").ReadAsArray(), exp[:, 5, ::-3])
