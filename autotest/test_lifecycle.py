"""Store life cycle and copies as GDAL users meet them (issue 17, part F).

- gdalmdimtranslate -co ARRAY:<opt>: each per-axis option goes to the arrays whose rank it fits;
  a failed array copy makes the command fail (non-zero exit, nothing left behind).
- Delete / gdalmanage delete on complete and incomplete stores (a killed copy's folder, with or
  without the unfinished mark), never removing foreign files; re-running a killed copy just works;
  an existing store as target is refused with a message naming the fix.
- One unreadable array (unknown codec, corrupt zarr.json) is a warning and the rest of the store
  opens (classic and multidim); a corrupt zarr.json of the main array is an error naming the file.
"""
import json
import os
import shutil
import socket
import subprocess
import sys

import numpy as np
import pytest
from osgeo import gdal

from conftest import REPO, drop_consolidated

DRV = "Zarr3"
SAMPLE = REPO / "data" / "daily_t2m_2023.zarr"


class Errors:
    """Collects the GDAL errors and warnings raised inside the block."""

    def __enter__(self):
        self.items = []
        gdal.PushErrorHandler(lambda cls, no, msg: self.items.append((cls, msg)))
        return self

    def __exit__(self, *exc):
        gdal.PopErrorHandler()
        return False

    def warnings(self):
        return [m for c, m in self.items if c == gdal.CE_Warning]

    def failures(self):
        return [m for c, m in self.items if c == gdal.CE_Failure]


def md_open(path):
    return gdal.OpenEx(str(path), gdal.OF_MULTIDIM_RASTER, allowed_drivers=[DRV])


def dead_pid():
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def tif(tmp_path, value=7, name="in.tif"):
    path = tmp_path / name
    ds = gdal.GetDriverByName("GTiff").Create(str(path), 64, 32, 1, gdal.GDT_Byte)
    ds.GetRasterBand(1).WriteArray(np.full((32, 64), value, dtype="uint8"))
    ds = None
    return path


def read_all(path):
    ds = gdal.OpenEx(str(path), gdal.OF_RASTER, allowed_drivers=[DRV])
    return ds.GetRasterBand(1).ReadAsArray()


# ------------------------------------------------- gdalmdimtranslate -co ARRAY:


def test_mdimtranslate_plain_blocksize_fits_3d_arrays_only(tmp_path, run_tool):
    out = tmp_path / "out.zarr"
    p = run_tool("gdalmdimtranslate", SAMPLE, out, "-of", DRV, "-co", "ARRAY:BLOCKSIZE=30,32,64",
                 env_extra={"CPL_DEBUG": "ON"})
    assert p.returncode == 0, p.stderr[-3000:]
    assert "ERROR" not in p.stderr, p.stderr[-3000:]
    plain = tmp_path / "plain.zarr"
    assert run_tool("gdalmdimtranslate", SAMPLE, plain, "-of", DRV).returncode == 0
    src, dst = md_open(SAMPLE).GetRootGroup(), md_open(out).GetRootGroup()
    ref = md_open(plain).GetRootGroup()
    assert dst.GetMDArrayNames() == src.GetMDArrayNames()
    assert {"lat", "lon", "time", "t2m"} <= set(dst.GetMDArrayNames())
    assert dst.OpenMDArray("t2m").GetBlockSize() == [30, 32, 64]
    for name in ("lat", "lon", "time"):
        # Left as they were: chunked as a copy without the option, same values.
        assert dst.OpenMDArray(name).GetBlockSize() == ref.OpenMDArray(name).GetBlockSize(), name
        assert (dst.OpenMDArray(name).ReadAsArray() == src.OpenMDArray(name).ReadAsArray()).all()
        assert (f"/{name}: ARRAY:BLOCKSIZE=30,32,64 lists 3 axes, the array has 1: not applied to it"
                in p.stderr), p.stderr[-3000:]
    assert "/t2m: ARRAY:BLOCKSIZE" not in p.stderr
    a = src.OpenMDArray("t2m").ReadAsArray(array_start_idx=[181, 0, 0], count=[31, 32, 64])
    b = dst.OpenMDArray("t2m").ReadAsArray(array_start_idx=[181, 0, 0], count=[31, 32, 64])
    assert np.array_equal(a, b)


def test_mdimtranslate_failed_coordinate_copy_exits_nonzero(tmp_path, run_tool):
    out = tmp_path / "out.zarr"
    # Only the 1-D (coordinate) arrays get the bad value: GDAL 3.6 goes on without them.
    p = run_tool("gdalmdimtranslate", SAMPLE, out, "-of", DRV, "-co", "ARRAY:IF(DIM=1):COMPRESS=BOGUS")
    assert p.returncode != 0, p.stderr[-3000:]
    assert "COMPRESS=BOGUS" in p.stderr, p.stderr[-3000:]
    assert f"{out}: the copy failed (array " in p.stderr, p.stderr[-3000:]
    assert not out.exists()
    # The same through the API: no dataset.
    with Errors() as errs:
        try:
            ds = gdal.MultiDimTranslate(str(out), str(SAMPLE), format=DRV,
                                        creationOptions=["ARRAY:IF(DIM=1):COMPRESS=BOGUS"])
        except RuntimeError:
            ds = None
    assert ds is None
    assert not out.exists()


def test_direct_create_mdarray_wrong_rank_still_fails(tmp_path):
    root = tmp_path / "x.zarr"
    ds = gdal.GetDriverByName(DRV).CreateMultiDimensional(str(root))
    rg = ds.GetRootGroup()
    d = rg.CreateDimension("t", None, None, 365)
    with pytest.raises(RuntimeError, match=r"BLOCKSIZE=30,32,64: expected 1 to 1"):
        rg.CreateMDArray("t", [d], gdal.ExtendedDataType.Create(gdal.GDT_Float64), ["BLOCKSIZE=30,32,64"])
    assert rg.GetMDArrayNames() in (None, [])  # GDAL 3.6 returns None for no names
    assert not (root / "t").exists()


# ----------------------------------------------------------- killed copies


def partial_raster_copy(path, mark=True, pid=None):
    """The folder unfinished_copy leaves when gdal_translate is killed: the mark (host and pid of
    the dead writer), the array's chunks, no zarr.json yet."""
    path.mkdir()
    if mark:
        (path / ".zarr3-unfinished").write_text(f"{socket.gethostname()} {pid or dead_pid()}\n")
    chunk = path / path.stem / "c" / "0"
    chunk.mkdir(parents=True)
    (chunk / "0").write_bytes(b"\x28\xb5\x2f\xfd" + bytes(20))
    (chunk / "0.tmp.somehost.4242.0").write_bytes(b"partial")


def partial_md_copy(path, mark=True):
    """A killed gdalmdimtranslate: arrays' zarr.json and chunks, no root zarr.json."""
    path.mkdir()
    if mark:
        (path / ".zarr3-unfinished").write_text(f"{socket.gethostname()} {dead_pid()}\n")
    for name in ("lat", "t2m"):
        (path / name).mkdir()
        shutil.copy(SAMPLE / name / "zarr.json", path / name / "zarr.json")
    shutil.copytree(SAMPLE / "lat" / "c", path / "lat" / "c")


@pytest.mark.parametrize("mark", [True, False], ids=["marked", "unmarked"])
@pytest.mark.parametrize("kind", ["raster", "multidim"])
def test_gdalmanage_delete_removes_incomplete_store(tmp_path, run_tool, mark, kind):
    out = tmp_path / "out.zarr"
    (partial_raster_copy if kind == "raster" else partial_md_copy)(out, mark=mark)
    p = run_tool("gdalinfo", out)
    assert p.returncode != 0
    assert f"{out}: an incomplete Zarr store (no zarr.json: a copy into it did not finish)" in p.stderr, p.stderr
    p = run_tool("gdalmanage", "delete", out)
    assert p.returncode == 0, p.stdout + p.stderr
    assert not out.exists()
    assert sorted(os.listdir(tmp_path)) == []


@pytest.mark.parametrize("mark", [True, False], ids=["marked", "unmarked"])
def test_gdal_translate_rerun_after_killed_run_just_works(tmp_path, run_tool, mark):
    src = tif(tmp_path, 9)
    out = tmp_path / "out.zarr"
    partial_raster_copy(out, mark=mark)
    p = run_tool("gdal_translate", "-of", DRV, src, out)
    assert p.returncode == 0, p.stderr
    assert "ERROR" not in p.stderr
    assert (read_all(out) == 9).all()
    assert not (out / ".zarr3-unfinished").exists()
    assert not (out / "out" / "c" / "0" / "0.tmp.somehost.4242.0").exists()


def test_mdimtranslate_rerun_after_killed_run_just_works(tmp_path, run_tool):
    out = tmp_path / "out.zarr"
    partial_md_copy(out, mark=False)
    p = run_tool("gdalmdimtranslate", "-of", DRV, SAMPLE, out)
    assert p.returncode == 0, p.stderr
    assert md_open(out).GetRootGroup().GetMDArrayNames() == md_open(SAMPLE).GetRootGroup().GetMDArrayNames()


def test_copy_still_running_is_not_replaced(tmp_path, run_tool):
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        out = tmp_path / "out.zarr"
        partial_raster_copy(out, mark=True, pid=sleeper.pid)
        p = run_tool("gdal_translate", "-of", DRV, tif(tmp_path), out)
        assert p.returncode != 0
        assert (f"{out}: a copy into this folder is still running (process {sleeper.pid} on this host)"
                in p.stderr), p.stderr
        with pytest.raises(RuntimeError, match=f"still running \\(process {sleeper.pid}"):
            gdal.GetDriverByName(DRV).Delete(str(out))
        assert (out / "out" / "c" / "0" / "0").exists()
    finally:
        sleeper.kill()
        sleeper.wait()


# ------------------------------------------------------------- foreign files


def test_delete_refuses_incomplete_store_with_foreign_files(tmp_path, run_tool):
    out = tmp_path / "out.zarr"
    partial_raster_copy(out)
    (out / "notes.txt").write_text("mine")
    (out / "out" / "c" / "draft.csv").write_text("1,2")
    with pytest.raises(RuntimeError) as e:
        gdal.GetDriverByName(DRV).Delete(str(out))
    assert str(e.value) == (f"{out}: not deleted: it holds what a Zarr store does not "
                            "(notes.txt, out/c/draft.csv); move those out first")
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "out" / "c" / "0" / "0").exists()
    # gdalmanage (whose exit code is 0 on GDAL 3.6 even when Delete fails) says the same.
    p = run_tool("gdalmanage", "delete", out)
    assert "not deleted: it holds what a Zarr store does not (notes.txt, out/c/draft.csv)" in p.stderr
    assert (out / "notes.txt").exists() and (out / "out" / "c" / "0" / "0").exists()


def test_delete_refuses_complete_store_with_foreign_file(tmp_path):
    out = tmp_path / "out.zarr"
    gdal.Translate(str(out), str(tif(tmp_path)), format=DRV)
    (out / "README.md").write_text("keep")
    with pytest.raises(RuntimeError, match=r"holds what a Zarr store does not \(README.md\)"):
        gdal.GetDriverByName(DRV).Delete(str(out))
    assert (read_all(out) == 7).all()


def test_delete_complete_store_with_side_files_and_pam(tmp_path, run_tool):
    out = tmp_path / "out.zarr"
    gdal.Translate(str(out), str(tif(tmp_path)), format=DRV, creationOptions=["BLOCKSIZE=16,16"])
    chunk_dir = out / "out" / "c" / "0"
    assert (chunk_dir / "0").exists()
    (chunk_dir / "1.tmp.otherhost.999.3").write_bytes(b"x")  # a killed writer's temporary file
    (chunk_dir / "0.lock").write_bytes(b"")                   # a shard lock
    (tmp_path / "out.zarr.aux.xml").write_text("<PAMDataset/>")
    p = run_tool("gdalmanage", "delete", out)
    assert p.returncode == 0, p.stderr
    assert sorted(os.listdir(tmp_path)) == ["in.tif"]


def test_delete_refuses_folder_of_stores(tmp_path):
    stores = tmp_path / "stores"
    stores.mkdir()
    gdal.Translate(str(stores / "a.zarr"), str(tif(tmp_path)), format=DRV)
    with pytest.raises(RuntimeError, match=r"holds the store a.zarr of its own"):
        gdal.GetDriverByName(DRV).Delete(str(stores))
    assert (read_all(stores / "a.zarr") == 7).all()


def test_existing_store_as_target_is_replaced_or_refused_naming_the_fix(tmp_path, run_tool):
    """An existing store as target: GDAL's own QuietDelete (gdal_translate, Create) removes
    it through the driver's Delete where GDAL does that for folders (GDAL 3.13), so the store
    is replaced whole; where it does not (GDAL 3.6), the driver refuses and names the fix.
    Either way nothing of the old store is mixed into the new one."""
    out = tmp_path / "out.zarr"
    gdal.Translate(str(out), str(tif(tmp_path, 3)), format=DRV)
    p = run_tool("gdal_translate", "-of", DRV, tif(tmp_path, 5, "other.tif"), out)
    if p.returncode == 0:  # replaced through QuietDelete -> Delete
        assert "ERROR" not in p.stderr, p.stderr
        assert (read_all(out) == 5).all()
        assert not list(out.rglob("*.tmp.*")) and not (out / ".zarr3-unfinished").exists()
        return
    assert (f"{out}: a Zarr store already exists there; delete it first (gdalmanage delete {out}, "
            "or Driver.Delete) or write to another name") in p.stderr, p.stderr
    assert (read_all(out) == 3).all()
    p = run_tool("gdalmdimtranslate", "-of", DRV, SAMPLE, out)
    assert p.returncode != 0 and "already exists" in p.stderr
    with pytest.raises(RuntimeError, match="already exists"):
        gdal.GetDriverByName(DRV).Create(str(out), 4, 4, 1, gdal.GDT_Byte)
    assert (read_all(out) == 3).all()
    # After the fix named in the message, the same command works.
    assert run_tool("gdalmanage", "delete", out).returncode == 0
    p = run_tool("gdal_translate", "-of", DRV, tif(tmp_path, 5, "other.tif"), out)
    assert p.returncode == 0, p.stderr
    assert (read_all(out) == 5).all()


def test_folder_with_other_files_as_target_is_refused(tmp_path):
    out = tmp_path / "out.zarr"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(RuntimeError, match=r"holds what a Zarr store does not \(notes.txt\)"):
        gdal.Translate(str(out), str(tif(tmp_path)), format=DRV)
    assert sorted(os.listdir(out)) == ["notes.txt"]


# ------------------------------------------------------- unreadable arrays


def store_with_broken_arrays(tmp_path):
    """Root group; 2-D arrays a and d (good), b (unknown codec), c (zarr.json not JSON)."""
    root = tmp_path / "s.zarr"
    ds = gdal.GetDriverByName(DRV).CreateMultiDimensional(str(root))
    rg = ds.GetRootGroup()
    y = rg.CreateDimension("y", None, None, 4)
    x = rg.CreateDimension("x", None, None, 5)
    for i, name in enumerate("abcd"):
        a = rg.CreateMDArray(name, [y, x], gdal.ExtendedDataType.Create(gdal.GDT_Int16))
        a.Write(np.full((4, 5), i + 1, dtype="int16"))
    ds = None
    meta = json.loads((root / "b" / "zarr.json").read_text())
    meta["codecs"].append({"name": "no_such_codec"})
    (root / "b" / "zarr.json").write_text(json.dumps(meta))
    (root / "c" / "zarr.json").write_text('{"zarr_format": 3, "node_type": "array", ')
    drop_consolidated(root)
    return root


def test_unreadable_arrays_warn_classic(tmp_path):
    root = store_with_broken_arrays(tmp_path)
    with Errors() as errs:
        ds = gdal.OpenEx(str(root), gdal.OF_RASTER, allowed_drivers=[DRV])
    assert ds is not None
    assert errs.failures() == []
    w = errs.warnings()
    assert any(m.startswith(f"{root}/b/zarr.json") and "no_such_codec" in m and m.endswith("(node skipped)")
               for m in w), w
    assert any(m.startswith(f"{root}/c/zarr.json") and m.endswith("(node skipped)") for m in w), w
    sds = ds.GetMetadata("SUBDATASETS")
    assert [v for k, v in sorted(sds.items()) if k.endswith("_NAME")] == [
        f'ZARR3:"{root}":/a', f'ZARR3:"{root}":/d']
    a = gdal.Open(f'ZARR3:"{root}":/d')
    assert (a.GetRasterBand(1).ReadAsArray() == 4).all()


def test_unreadable_arrays_warn_multidim(tmp_path, run_tool):
    root = store_with_broken_arrays(tmp_path)
    with Errors() as errs:
        rg = md_open(root).GetRootGroup()
        names = rg.GetMDArrayNames()
        a = rg.OpenMDArray("a")
    assert names == ["a", "d"]
    assert errs.failures() == []
    w = errs.warnings()
    assert any(m.startswith(f"{root}/b/zarr.json") and "no_such_codec" in m and m.endswith("(array skipped)")
               for m in w), w
    assert any(m.startswith(f"{root}/c/zarr.json") and m.endswith("(node skipped)") for m in w), w
    assert len(w) == 2, w
    assert (a.ReadAsArray() == 1).all()
    # Asked for by name, the broken array is an error naming its file.
    with pytest.raises(RuntimeError) as e:
        rg.OpenMDArray("b")
    assert str(e.value).startswith(f"{root}/b/zarr.json") and "no_such_codec" in str(e.value), str(e.value)
    p = run_tool("gdalmdiminfo", root)
    assert p.returncode == 0, p.stderr
    assert "ERROR" not in p.stderr
    info = json.loads(p.stdout)
    assert sorted(info["arrays"]) == ["a", "d"]
    assert "no_such_codec" in p.stderr


def test_corrupt_main_array_is_an_error_naming_the_file(tmp_path):
    out = tmp_path / "out.zarr"
    gdal.Translate(str(out), str(tif(tmp_path)), format=DRV)
    (out / "out" / "zarr.json").write_text('{"zarr_format": 3, "node_type": "array"')
    drop_consolidated(out)
    with pytest.raises(RuntimeError) as e:
        gdal.OpenEx(str(out), gdal.OF_RASTER, allowed_drivers=[DRV])
    assert str(e.value).startswith(f"{out}/zarr.json: no data array could be read: {out}/out/zarr.json"
                                   ": invalid JSON"), str(e.value)
    with pytest.raises(RuntimeError) as e:
        gdal.OpenEx(f'ZARR3:"{out}":/out', gdal.OF_RASTER, allowed_drivers=[DRV])
    assert str(e.value).startswith(f"{out}/out/zarr.json: invalid JSON"), str(e.value)


def test_corrupt_root_array_is_an_error_naming_the_file(tmp_path):
    root = tmp_path / "r.zarr"
    ds = gdal.GetDriverByName(DRV).CreateMultiDimensional(str(root))
    ds = None
    shutil.rmtree(root)
    root.mkdir()
    (root / "zarr.json").write_text('{"zarr_format": 3, "node_type": "array", "shape": [4], ')
    for flags in (gdal.OF_RASTER, gdal.OF_MULTIDIM_RASTER):
        with pytest.raises(RuntimeError) as e:
            gdal.OpenEx(str(root), flags, allowed_drivers=[DRV])
        assert str(e.value).startswith(f"{root}/zarr.json"), str(e.value)
    (root / "zarr.json").write_text(json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
        "codecs": [{"name": "bytes"}, {"name": "no_such_codec"}]}))
    for flags in (gdal.OF_RASTER, gdal.OF_MULTIDIM_RASTER):
        with pytest.raises(RuntimeError) as e:
            gdal.OpenEx(str(root), flags, allowed_drivers=[DRV])
        assert str(e.value).startswith(f"{root}/zarr.json") and "no_such_codec" in str(e.value), str(e.value)
