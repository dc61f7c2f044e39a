"""Writes never lose data and the store never leaves its root (issue 15):
full disks and read-only file systems keep the old bytes and report the OS
error; two processes updating one shard both survive; symbolic links out of
the store, dangling or looping links, FIFOs are errors; Delete never follows
links; cancelled or killed copies leave nothing that opens."""
import glob
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from osgeo import gdal

DRV = "Zarr3"


def create_store(path, data, options=("BLOCKSIZE=64,64", "COMPRESS=NONE")):
    src = gdal.GetDriverByName("MEM").Create("", data.shape[1], data.shape[0], 1,
                                             gdal.GetDataTypeByName(
                                                 {"float64": "Float64", "uint8": "Byte", "int32": "Int32"}[str(data.dtype)]))
    src.GetRasterBand(1).WriteArray(data)
    gdal.GetDriverByName(DRV).CreateCopy(str(path), src, options=list(options))


def read_all(path):
    ds = gdal.OpenEx(str(path), gdal.OF_RASTER, allowed_drivers=[DRV])
    return ds.GetRasterBand(1).ReadAsArray()


def chunk_files(path):
    return sorted(f for f in glob.glob(f"{path}/**/c/**", recursive=True) if os.path.isfile(f))


def opens(path):
    try:
        return gdal.OpenEx(str(path), gdal.OF_RASTER | gdal.OF_MULTIDIM_RASTER,
                           allowed_drivers=[DRV]) is not None
    except RuntimeError:
        return False


# ---------------------------------------------------------------- small disks
class Tmpfs:
    def __init__(self, path, size):
        self.path = str(path)
        os.makedirs(self.path, exist_ok=True)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", self.path],
                           capture_output=True, text=True)
        if r.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")

    def remount_ro(self):
        subprocess.run(["mount", "-o", "remount,ro", self.path], check=True)

    def close(self):
        subprocess.run(["umount", "-l", self.path], capture_output=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


@pytest.fixture
def small_disk(tmp_path):
    with Tmpfs(tmp_path / "disk", "1536k") as disk:
        yield disk


def fill_disk(folder):
    fd = os.open(os.path.join(folder, "filler"), os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while True:
            os.write(fd, b"\1" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)


def test_full_disk_keeps_old_chunk_and_metadata(small_disk):
    store = os.path.join(small_disk.path, "s.zarr")
    # Old chunks compress well; the new ones do not: written in place, the
    # new bytes would not fit where the old ones were.
    old = np.arange(128 * 128, dtype="float64").reshape(128, 128)
    create_store(store, old, ("BLOCKSIZE=64,64", "COMPRESS=ZSTD"))
    fill_disk(small_disk.path)
    ds = gdal.OpenEx(store, gdal.OF_RASTER | gdal.OF_UPDATE, allowed_drivers=[DRV])
    with pytest.raises(RuntimeError) as e:
        ds.GetRasterBand(1).WriteArray(np.random.default_rng(1).random((128, 128)))
    ds = None
    np.testing.assert_array_equal(read_all(store), old)  # the old bytes are intact
    assert "No space left on device" in str(e.value), str(e.value)
    assert "s.zarr" in str(e.value)
    leftovers = [f for f in glob.glob(f"{store}/**", recursive=True) if ".tmp." in f]
    assert leftovers == []


def test_read_only_file_system_names_os_error(small_disk):
    store = os.path.join(small_disk.path, "s.zarr")
    old = np.arange(64 * 64, dtype="float64").reshape(64, 64)
    create_store(store, old)
    small_disk.remount_ro()
    ds = gdal.OpenEx(store, gdal.OF_RASTER | gdal.OF_UPDATE, allowed_drivers=[DRV])
    with pytest.raises(RuntimeError) as e:
        ds.GetRasterBand(1).WriteArray(np.full((64, 64), 5.0))
    assert "Read-only file system" in str(e.value), str(e.value)
    ds = None
    np.testing.assert_array_equal(read_all(store), old)


# ------------------------------------------------------- concurrent updates
WRITER = textwrap.dedent(r"""
    import sys
    import numpy as np
    from osgeo import gdal
    gdal.UseExceptions()
    path, col, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    lost = 0
    for k in range(1, rounds + 1):
        ds = gdal.OpenEx(path, gdal.OF_RASTER | gdal.OF_UPDATE, allowed_drivers=["Zarr3"])
        b = ds.GetRasterBand(1)
        if int(b.ReadAsArray(col * 32, 0, 32, 32)[0, 0]) != k - 1:
            lost += 1
        b.WriteArray(np.full((32, 32), k, dtype="int32"), col * 32, 0)
        ds = None
    print("LOST", lost)
""")


def test_two_processes_update_one_shard(tmp_path):
    store = tmp_path / "s.zarr"
    create_store(store, np.zeros((64, 64), dtype="int32"),
                 ("BLOCKSIZE=64,64", "SHARD_CHUNK_SHAPE=32,32", "COMPRESS=NONE"))
    rounds = 60
    env = dict(os.environ, ZARR3_SHARD_INDEX_CACHE_MB="0")
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(store), str(c), str(rounds)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for c in (0, 1)]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-2000:]
        assert out.strip() == "LOST 0", out + err[-2000:]
    a = read_all(store)
    assert (a[:32, :32] == rounds).all() and (a[:32, 32:] == rounds).all()
    assert not [f for f in glob.glob(f"{store}/**", recursive=True) if f.endswith(".lock")]


# ------------------------------------------------------------ leaving the root
@pytest.fixture
def linked(tmp_path):
    """A store of 4 chunks (values 1) and an outside folder with a file."""
    store = tmp_path / "s.zarr"
    create_store(store, np.ones((128, 128), dtype="uint8"))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_bytes(bytes([9]) * (64 * 64))
    return store, outside, chunk_files(store)


def read_error(store):
    with pytest.raises(RuntimeError) as e:
        read_all(store)
    return str(e.value)


def test_chunk_linked_outside_is_refused(linked):
    store, outside, chunks = linked
    os.unlink(chunks[0])
    os.symlink(outside / "secret", chunks[0])
    msg = read_error(store)
    assert "outside the store" in msg and os.path.basename(chunks[0]) in msg, msg


def test_chunk_linked_inside_is_read(linked):
    store, _, chunks = linked
    os.unlink(chunks[0])
    os.symlink(chunks[1], chunks[0])
    assert (read_all(store) == 1).all()


@pytest.mark.parametrize("kind", ["dangling", "loop"])
def test_broken_chunk_link_is_an_error_not_fill(linked, kind):
    store, outside, chunks = linked
    os.unlink(chunks[0])
    os.symlink(chunks[0] if kind == "loop" else str(outside / "missing"), chunks[0])
    msg = read_error(store)
    assert ("dangling" if kind == "dangling" else "loop") in msg, msg


OPEN_AND_READ = textwrap.dedent(r"""
    import sys
    from osgeo import gdal
    gdal.UseExceptions()
    try:
        ds = gdal.OpenEx(sys.argv[1], gdal.OF_RASTER, allowed_drivers=["Zarr3"])
        ds.GetRasterBand(1).ReadAsArray()
        print("READ")
    except RuntimeError as e:
        print("ERROR", e)
""")


@pytest.mark.parametrize("what", ["chunk", "zarr.json"])
def test_fifo_is_an_error_not_a_hang(linked, what):
    store, _, chunks = linked
    target = chunks[0] if what == "chunk" else str(store / "zarr.json")
    os.unlink(target)
    os.mkfifo(target)
    try:
        r = subprocess.run([sys.executable, "-c", OPEN_AND_READ, str(store)],
                           capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail(f"reading a store with a FIFO as {what} blocked")
    assert r.stdout.startswith("ERROR") or what == "zarr.json" and "READ" not in r.stdout, r.stdout
    if what == "chunk":
        assert "FIFO" in r.stdout, r.stdout


def test_write_through_linked_folder_is_refused(linked):
    store, outside, chunks = linked
    chunk_dir = os.path.dirname(chunks[-1])
    for f in os.listdir(chunk_dir):
        os.unlink(os.path.join(chunk_dir, f))
    os.rmdir(chunk_dir)
    os.symlink(outside, chunk_dir)
    ds = gdal.OpenEx(str(store), gdal.OF_RASTER | gdal.OF_UPDATE, allowed_drivers=[DRV])
    with pytest.raises(RuntimeError) as e:
        ds.GetRasterBand(1).WriteArray(np.full((128, 128), 3, dtype="uint8"))
    ds = None
    assert "outside the store" in str(e.value), str(e.value)
    assert sorted(os.listdir(outside)) == ["secret"]


def test_delete_removes_links_not_targets(linked):
    store, outside, chunks = linked
    # Links in the places of a chunk and of a chunk folder (store keys): removed, never followed.
    os.unlink(chunks[0])
    os.symlink(outside / "secret", chunks[0])
    chunk_dir = os.path.dirname(chunks[-1])
    shutil.rmtree(chunk_dir)
    os.symlink(outside, chunk_dir)
    # Links under other names are not store content: Delete refuses, naming them.
    os.symlink(outside, store / "linked_folder")
    os.symlink(outside / "secret", store / "linked_file")
    with pytest.raises(RuntimeError, match=r"not deleted: it holds what a Zarr store does not "
                                           r"\(linked_file, linked_folder\)"):
        gdal.GetDriverByName(DRV).Delete(str(store))
    os.unlink(store / "linked_folder")
    os.unlink(store / "linked_file")
    gdal.GetDriverByName(DRV).Delete(str(store))
    assert not store.exists()
    assert sorted(os.listdir(outside)) == ["secret"]
    assert (outside / "secret").read_bytes() == bytes([9]) * (64 * 64)


# ---------------------------------------------------- cancelled / killed copies
def cancel_at_half(pct, msg, data):
    return 0 if pct >= 0.5 else 1


def raster_source(tmp_path):
    path = tmp_path / "src.tif"
    ds = gdal.GetDriverByName("GTiff").Create(str(path), 512, 512, 1, gdal.GDT_Byte)
    ds.GetRasterBand(1).WriteArray(np.full((512, 512), 7, dtype="uint8"))
    ds = None
    return path


def md_source(tmp_path):
    path = tmp_path / "src_md.zarr"
    ds = gdal.GetDriverByName(DRV).CreateMultiDimensional(str(path))
    rg = ds.GetRootGroup()
    dim = rg.CreateDimension("x", None, None, 4096)
    for i in range(8):
        a = rg.CreateMDArray(f"a{i}", [dim], gdal.ExtendedDataType.Create(gdal.GDT_Int32))
        a.Write(np.full(4096, i + 1, dtype="int32"))
    ds = None
    return path


def test_cancelled_translate_leaves_nothing_that_opens(tmp_path):
    src = raster_source(tmp_path)
    out = tmp_path / "out.zarr"
    opts = gdal.TranslateOptions(format=DRV, creationOptions=["BLOCKSIZE=64,64"],
                                 callback=cancel_at_half)
    try:
        gdal.Translate(str(out), str(src), options=opts)
    except RuntimeError:
        pass
    assert not opens(out)
    assert gdal.Translate(str(out), str(src), format=DRV) is not None
    assert (read_all(out) == 7).all()


def test_cancelled_mdimtranslate_leaves_nothing_that_opens(tmp_path):
    src = md_source(tmp_path)
    out = tmp_path / "out_md.zarr"
    try:
        gdal.MultiDimTranslate(str(out), str(src), format=DRV, callback=cancel_at_half)
    except RuntimeError:
        pass
    assert not opens(out)
    assert gdal.MultiDimTranslate(str(out), str(src), format=DRV) is not None
    ds = gdal.OpenEx(str(out), gdal.OF_MULTIDIM_RASTER, allowed_drivers=[DRV])
    assert sorted(ds.GetRootGroup().GetMDArrayNames()) == [f"a{i}" for i in range(8)]


KILLED_COPY = textwrap.dedent(r"""
    import os, sys
    from osgeo import gdal
    gdal.UseExceptions()
    def die(pct, msg, data):
        if pct >= 0.5:
            os._exit(0)  # like a kill: no clean-up runs
        return 1
    if sys.argv[3] == "raster":
        gdal.Translate(sys.argv[2], sys.argv[1], format="Zarr3", creationOptions=["BLOCKSIZE=64,64"], callback=die)
    else:
        gdal.MultiDimTranslate(sys.argv[2], sys.argv[1], format="Zarr3", callback=die)
    print("FINISHED")
""")


@pytest.mark.parametrize("kind", ["raster", "multidim"])
@pytest.mark.parametrize("then", ["rerun", "delete"])
def test_killed_copy_leftover_does_not_open_and_can_be_replaced(tmp_path, kind, then):
    src = raster_source(tmp_path) if kind == "raster" else md_source(tmp_path)
    out = tmp_path / "killed.zarr"
    r = subprocess.run([sys.executable, "-c", KILLED_COPY, str(src), str(out), kind],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "FINISHED" not in r.stdout, r.stderr[-2000:]
    assert out.exists() and os.listdir(out), "the killed copy left nothing to test with"
    assert not opens(out)
    if then == "delete":
        gdal.GetDriverByName(DRV).Delete(str(out))
        assert not out.exists()
    elif kind == "raster":
        assert gdal.Translate(str(out), str(src), format=DRV) is not None
        assert (read_all(out) == 7).all()
    else:
        assert gdal.MultiDimTranslate(str(out), str(src), format=DRV) is not None
        assert opens(out)


def test_delete_refuses_a_plain_folder(tmp_path):
    d = tmp_path / "plain"
    d.mkdir()
    (d / "keep.txt").write_text("x")
    with pytest.raises(RuntimeError):
        gdal.GetDriverByName(DRV).Delete(str(d))
    assert (d / "keep.txt").exists()
