"""Re-running a command onto an existing Zarr store replaces it (issue 32):
gdal_translate, gdalwarp -overwrite, gdalmdimtranslate, Driver.Create. The new
store is built under a hidden sibling name and exchanged with the old one in
one step; a failure or a kill (ZARR3_TEST_KILL_AT) before that leaves the old
store, after it the new one. What is not a Zarr store (a folder holding other
files, a file, a symbolic link) is never replaced."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from osgeo import gdal

DRV = "Zarr3"


def tif(path, value, size=40, tiled=False):
    opts = ["TILED=YES", "BLOCKXSIZE=16", "BLOCKYSIZE=16", "COMPRESS=DEFLATE"] if tiled else []
    ds = gdal.GetDriverByName("GTiff").Create(str(path), size, size, 1, gdal.GDT_Int16, options=opts)
    ds.SetGeoTransform([0, 1, 0, size, 0, -1])
    a = (np.arange(size * size, dtype=np.int16).reshape(size, size) % 97) + value * 1000
    ds.GetRasterBand(1).WriteArray(a)
    ds = None
    return path, a


def read(store, multidim=False):
    """The store's data read in a fresh process (no cache shared with this one), or None."""
    code = (
        "import sys, numpy as np\nfrom osgeo import gdal\ngdal.UseExceptions()\n"
        "try:\n"
        + (
            "    ds = gdal.OpenEx(sys.argv[1], gdal.OF_MULTIDIM_RASTER, allowed_drivers=['Zarr3'])\n"
            "    rg = ds.GetRootGroup()\n"
            "    arrs = [rg.OpenMDArray(n) for n in rg.GetMDArrayNames()]\n"
            "    a = [x for x in arrs if x.GetDimensionCount() == 2][0].ReadAsArray()\n"
            if multidim
            else "    a = gdal.OpenEx(sys.argv[1], gdal.OF_RASTER, allowed_drivers=['Zarr3']).ReadAsArray()\n"
        )
        + "except RuntimeError as e:\n    print('NOOPEN', e); sys.exit(0)\n"
        "np.save(sys.argv[2], a); print('READ')\n"
    )
    out = str(store) + ".npy"
    p = subprocess.run([sys.executable, "-c", code, str(store), out], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    if not p.stdout.startswith("READ"):
        return None
    a = np.load(out)
    os.unlink(out)
    return a


def hidden(tmp_path):
    """Hidden names a replacement uses beside the stores, and unfinished marks left inside them."""
    out = sorted(n for n in os.listdir(tmp_path) if n.startswith(".") and "zarr3" in n)
    return out + sorted(str(m) for m in tmp_path.glob("*.zarr/.zarr3-unfinished"))


@pytest.fixture
def sources(tmp_path):
    return [tif(tmp_path / f"s{v}.tif", v) for v in (1, 2, 3)]


@pytest.fixture(scope="module")
def driver_replaces(tmp_path_factory, driver_path):
    """Whether gdal_translate onto an existing store reaches the driver's own replacement (probed with a
    kill at its first step). GDAL 3.13's CreateCopy first removes an existing target through the driver's
    Delete (GDALDriver::QuietDelete), in GDAL's own order (delete, then copy), as for every format: there a
    failed or killed copy leaves no store, and the keep-the-old-store tests below do not apply. GDAL 3.6 and
    3.10 leave folders to the driver, whose replacement must then run."""
    d = tmp_path_factory.mktemp("probe")
    src, _ = tif(d / "p.tif", 1)
    cmd = ["gdal_translate", "-q", "-of", DRV, str(src), str(d / "p.zarr")]
    env = dict(os.environ, GDAL_DRIVER_PATH=driver_path)
    subprocess.run(cmd, env=env, check=True, capture_output=True, timeout=120)
    p = subprocess.run(cmd, env=dict(env, ZARR3_TEST_KILL_AT="replace-staged"), capture_output=True,
                       timeout=120)
    replaces = p.returncode == -9
    if int(gdal.VersionInfo()) < 3110000:
        assert replaces, (p.returncode, p.stderr)
    return replaces


@pytest.fixture
def keeps_old(driver_replaces):
    if not driver_replaces:
        pytest.skip("this GDAL deletes an existing target through the driver's Delete before the copy "
                    "(GDAL's own order), so the driver's keep-the-old-store replacement does not run")


def translate(run_tool, src, store, env=None, *extra):
    return run_tool("gdal_translate", "-q", "-of", DRV, *extra, src, store, env_extra=env)


def test_gdal_translate_rerun_replaces(tmp_path, run_tool, sources):
    store = tmp_path / "out.zarr"
    for (src, a) in sources[:2]:
        p = translate(run_tool, src, store)
        assert p.returncode == 0, p.stderr
        np.testing.assert_array_equal(read(store), a)
    assert hidden(tmp_path) == []
    # A different shape and type replaces as well.
    p = run_tool("gdal_translate", "-q", "-of", DRV, "-ot", "Float32", "-outsize", "10", "10", sources[2][0], store)
    assert p.returncode == 0, p.stderr
    got = read(store)
    assert got.shape == (10, 10) and got.dtype == np.float32
    assert hidden(tmp_path) == []


def test_replace_removes_old_side_file(tmp_path, run_tool, sources):
    store = tmp_path / "out.zarr"
    assert translate(run_tool, sources[0][0], store).returncode == 0
    assert run_tool("gdalinfo", "-stats", store).returncode == 0
    assert (tmp_path / "out.zarr.aux.xml").exists()
    assert translate(run_tool, sources[1][0], store).returncode == 0
    info = run_tool("gdalinfo", "-stats", store, check=True).stdout
    assert "Minimum=2000.000" in info, info


def test_gdalwarp_overwrite_replaces(tmp_path, run_tool, sources):
    store = tmp_path / "w.zarr"
    for (src, a) in sources[:2]:
        p = run_tool("gdalwarp", "-q", "-of", DRV, "-overwrite", src, store)
        assert p.returncode == 0, p.stderr
        np.testing.assert_array_equal(read(store), a)
    assert hidden(tmp_path) == []


def test_driver_create_replaces(tmp_path, sources):
    store = str(tmp_path / "c.zarr")
    gdal.Translate(store, str(sources[0][0]), format=DRV)
    ds = gdal.GetDriverByName(DRV).Create(store, 5, 4, 1, gdal.GDT_Byte)
    ds.GetRasterBand(1).WriteArray(np.full((4, 5), 7, np.uint8))
    ds = None
    np.testing.assert_array_equal(read(store), np.full((4, 5), 7, np.uint8))
    assert hidden(tmp_path) == []


def test_gdalmdimtranslate_rerun_replaces(tmp_path, run_tool, sources):
    md = []
    for i, (src, a) in enumerate(sources[:2]):
        m = tmp_path / f"md{i}.zarr"
        run_tool("gdalmdimtranslate", "-of", DRV, src, m, check=True)
        md.append((m, a))
    store = tmp_path / "mdout.zarr"
    for m, a in md:
        p = run_tool("gdalmdimtranslate", "-of", DRV, m, store)
        assert p.returncode == 0, p.stderr
        np.testing.assert_array_equal(read(store, multidim=True), a)
    assert hidden(tmp_path) == []


@pytest.mark.parametrize(
    "step,no_exchange,new",
    [
        ("replace-staged", "0", False),
        ("replace-exchanged", "0", True),
        ("replace-staged", "1", False),
        ("replace-aside", "1", None),  # name missing until the next creation puts the old back
        ("replace-exchanged", "1", True),
    ],
)
def test_killed_replacement_leaves_old_or_new(tmp_path, run_tool, sources, step, no_exchange, new, keeps_old):
    store = tmp_path / "k.zarr"
    (s1, a1), (s2, a2), (s3, a3) = sources
    assert translate(run_tool, s1, store).returncode == 0
    env = {"ZARR3_TEST_KILL_AT": step, "ZARR3_TEST_NO_EXCHANGE": no_exchange}
    p = translate(run_tool, s2, store, env)
    assert p.returncode == -9, (p.returncode, p.stderr)
    got = read(store)
    if new is None:
        # Without the open hook the name is missing until the next creation;
        # with it (zarr3_driver.cpp Open) the open puts the old store back.
        if got is None:
            assert not store.exists()
        else:
            np.testing.assert_array_equal(got, a1)
        # The next creation at that name finds the old store aside and puts it back first;
        # a failing one (refused option) leaves it in place.
        p = translate(run_tool, s3, store, None, "-co", "COMPRESS=NOPE")
        assert p.returncode != 0
        np.testing.assert_array_equal(read(store), a1)
    else:
        np.testing.assert_array_equal(got, a2 if new else a1)
    # The next run replaces it and leaves nothing hidden behind.
    p = translate(run_tool, s3, store, {"ZARR3_TEST_NO_EXCHANGE": no_exchange})
    assert p.returncode == 0, p.stderr
    np.testing.assert_array_equal(read(store), a3)
    assert hidden(tmp_path) == []


def test_killed_multidim_replacement(tmp_path, run_tool, sources, keeps_old):
    m = tmp_path / "src_md.zarr"
    run_tool("gdalmdimtranslate", "-of", DRV, sources[1][0], m, check=True)
    store = tmp_path / "mk.zarr"
    run_tool("gdalmdimtranslate", "-of", DRV, sources[0][0], store, check=True)
    for step, want in (("replace-staged", sources[0][1]), ("replace-exchanged", sources[1][1])):
        p = run_tool("gdalmdimtranslate", "-of", DRV, m, store, env_extra={"ZARR3_TEST_KILL_AT": step})
        assert p.returncode == -9, (p.returncode, p.stderr)
        np.testing.assert_array_equal(read(store, multidim=True), want)


def test_failure_part_way_leaves_old(tmp_path, run_tool, sources, keeps_old):
    store = tmp_path / "f.zarr"
    assert translate(run_tool, sources[0][0], store).returncode == 0
    # A tiled, compressed source whose tail is cut: its last tiles cannot be read.
    bad, _ = tif(tmp_path / "bad.tif", 5, size=64, tiled=True)
    size = bad.stat().st_size
    with open(bad, "r+b") as f:
        f.truncate(size - 200)
    p = translate(run_tool, bad, store)
    assert p.returncode != 0
    assert "reading the source failed" in p.stderr, p.stderr
    np.testing.assert_array_equal(read(store), sources[0][1])
    assert hidden(tmp_path) == []


def test_leftover_staging_of_killed_copy_is_replaced(tmp_path, run_tool, sources):
    store = tmp_path / "l.zarr"
    assert translate(run_tool, sources[0][0], store).returncode == 0
    # What a replacement killed while copying leaves: the staging folder with its
    # mark (a process that no longer runs) and some chunks.
    staging = tmp_path / ".l.zarr.zarr3-new"
    (staging / "l" / "c" / "0").mkdir(parents=True)
    (staging / "l" / "c" / "0" / "0").write_bytes(b"partial")
    (staging / ".zarr3-unfinished").write_text(f"{os.uname().nodename} 999999999\n")
    np.testing.assert_array_equal(read(store), sources[0][1])
    assert translate(run_tool, sources[1][0], store).returncode == 0
    np.testing.assert_array_equal(read(store), sources[1][1])
    assert hidden(tmp_path) == []


def test_leftover_staging_with_foreign_content_is_kept(tmp_path, run_tool, sources, keeps_old):
    store = tmp_path / "g.zarr"
    assert translate(run_tool, sources[0][0], store).returncode == 0
    staging = tmp_path / ".g.zarr.zarr3-new"
    staging.mkdir()
    (staging / "notes.txt").write_text("mine")
    p = translate(run_tool, sources[1][0], store)
    assert p.returncode != 0 and "notes.txt" in p.stderr, p.stderr
    assert (staging / "notes.txt").read_text() == "mine"
    np.testing.assert_array_equal(read(store), sources[0][1])


def test_non_store_folder_never_replaced(tmp_path, run_tool, sources):
    d = tmp_path / "docs.zarr"
    d.mkdir()
    (d / "report.txt").write_text("keep me")
    for args in (("gdal_translate", "-q", "-of", DRV, sources[0][0], d),
                 ("gdalwarp", "-q", "-of", DRV, "-overwrite", sources[0][0], d),
                 ("gdalmdimtranslate", "-of", DRV, sources[0][0], d)):
        p = run_tool(*args)
        assert p.returncode != 0, args
        assert (d / "report.txt").read_text() == "keep me"
        assert sorted(os.listdir(d)) == ["report.txt"]
    assert hidden(tmp_path) == []


def test_store_with_foreign_file_never_replaced(tmp_path, run_tool, sources):
    store = tmp_path / "s.zarr"
    assert translate(run_tool, sources[0][0], store).returncode == 0
    (store / "README.txt").write_text("keep me")
    p = translate(run_tool, sources[1][0], store)
    assert p.returncode != 0 and "README.txt" in p.stderr, p.stderr
    assert (store / "README.txt").read_text() == "keep me"
    np.testing.assert_array_equal(read(store), sources[0][1])


def test_file_never_replaced(tmp_path, run_tool, sources):
    f = tmp_path / "file.zarr"
    f.write_text("not a store")
    p = translate(run_tool, sources[0][0], f)
    assert p.returncode != 0
    assert f.read_text() == "not a store"


def test_symlinked_store_name_refused(tmp_path, run_tool, sources):
    real = tmp_path / "real.zarr"
    assert translate(run_tool, sources[0][0], real).returncode == 0
    link = tmp_path / "link.zarr"
    link.symlink_to(real)
    p = translate(run_tool, sources[1][0], link)
    assert p.returncode != 0 and "symbolic link" in p.stderr, p.stderr
    assert link.is_symlink()
    np.testing.assert_array_equal(read(real), sources[0][1])
    assert hidden(tmp_path) == []


def test_reader_open_during_replacement(tmp_path, run_tool, sources):
    """What a dataset opened before a replacement sees (README: reopen after a
    replacement). Its cached metadata stays; the old chunk files are gone, so
    blocks it had not read come from the new store (whole chunks, never a
    torn one; blocks already in GDAL's cache keep the old values). A new
    store with another type or other codecs is detected: reads fail asking to
    reopen, never decode one store's chunks with the other's codecs."""
    store = tmp_path / "r.zarr"
    assert translate(run_tool, sources[0][0], store).returncode == 0
    old = gdal.OpenEx(str(store), gdal.OF_RASTER, allowed_drivers=[DRV])
    assert translate(run_tool, sources[1][0], store).returncode == 0
    np.testing.assert_array_equal(old.GetRasterBand(1).ReadAsArray(), sources[1][1])
    p = run_tool("gdal_translate", "-q", "-of", DRV, "-ot", "Float64", sources[2][0], store)
    assert p.returncode == 0, p.stderr
    with pytest.raises(RuntimeError, match="reopen"):
        old.GetRasterBand(1).ReadAsArray(0, 20, 40, 20)
    old = None
    np.testing.assert_array_equal(read(store), sources[2][1].astype(np.float64))


def test_store_with_array_named_c(tmp_path, run_tool, sources):
    """c.zarr holds the array "c" (the default name), whose chunk folder is
    c/c: a node folder named "c" is not the root's chunk folder. Such a store
    was refused by Delete and by a replacement as holding foreign content."""
    store = tmp_path / "c.zarr"
    assert translate(run_tool, sources[0][0], store).returncode == 0
    assert (store / "c" / "zarr.json").exists()
    p = translate(run_tool, sources[1][0], store)
    assert p.returncode == 0, p.stderr
    np.testing.assert_array_equal(read(store), sources[1][1])
    gdal.GetDriverByName(DRV).Delete(str(store))
    assert not store.exists()


@pytest.mark.skipif(shutil.which("gdal") is None, reason="the `gdal` command line needs GDAL >= 3.11")
def test_gdal_cli_overwrite_replaces(tmp_path, run_tool, sources):
    store = tmp_path / "cli.zarr"
    for (src, a) in sources[:2]:
        p = run_tool("gdal", "raster", "convert", "--of", DRV, "--overwrite", src, store)
        assert p.returncode == 0, p.stderr
        np.testing.assert_array_equal(read(store), a)
    md = tmp_path / "climd.zarr"
    for (src, a) in sources[:2]:
        p = run_tool("gdal", "mdim", "convert", "--of", DRV, "--overwrite", src, md)
        assert p.returncode == 0, p.stderr
        np.testing.assert_array_equal(read(md, multidim=True), a)
    assert hidden(tmp_path) == []


def test_concurrent_replacement_refused(tmp_path, run_tool, sources, keeps_old):
    """A replacement whose staging folder is marked by a running process (here:
    this test's own process id) is not disturbed: the second one is refused."""
    store = tmp_path / "cc.zarr"
    assert translate(run_tool, sources[0][0], store).returncode == 0
    staging = tmp_path / ".cc.zarr.zarr3-new"
    staging.mkdir()
    (staging / ".zarr3-unfinished").write_text(f"{os.uname().nodename} {os.getpid()}\n")
    p = translate(run_tool, sources[1][0], store)
    assert p.returncode != 0 and "still running" in p.stderr, p.stderr
    assert (staging / ".zarr3-unfinished").exists()
    np.testing.assert_array_equal(read(store), sources[0][1])


def test_delete_removes_what_a_killed_replacement_left(tmp_path, run_tool, sources, keeps_old):
    store = tmp_path / "d.zarr"
    assert translate(run_tool, sources[0][0], store).returncode == 0
    p = translate(run_tool, sources[1][0], store, {"ZARR3_TEST_KILL_AT": "replace-staged"})
    assert p.returncode == -9
    assert hidden(tmp_path) == [".d.zarr.zarr3-new"]
    assert run_tool("gdalmanage", "delete", store).returncode == 0
    assert not store.exists() and hidden(tmp_path) == []


@pytest.mark.parametrize("step,new", [("replace-staged", False), ("replace-exchanged", True)])
def test_killed_gdalwarp_overwrite(tmp_path, run_tool, sources, step, new, keeps_old):
    """Create (gdalwarp -overwrite) swaps the new, still empty store in at
    once; killed before the swap the old store is whole, after it the new one
    opens (its pixels not yet written: the fill value)."""
    store = tmp_path / "wk.zarr"
    assert run_tool("gdalwarp", "-q", "-of", DRV, sources[0][0], store).returncode == 0
    p = run_tool("gdalwarp", "-q", "-of", DRV, "-overwrite", sources[1][0], store,
                 env_extra={"ZARR3_TEST_KILL_AT": step})
    assert p.returncode == -9, (p.returncode, p.stderr)
    got = read(store)
    if new:
        assert got is not None and (got == 0).all()
    else:
        np.testing.assert_array_equal(got, sources[0][1])
    assert run_tool("gdalwarp", "-q", "-of", DRV, "-overwrite", sources[2][0], store).returncode == 0
    np.testing.assert_array_equal(read(store), sources[2][1])
    assert hidden(tmp_path) == []


def test_open_after_kill_between_renames_puts_old_back(tmp_path, run_tool, sources, keeps_old):
    store = tmp_path / "ob.zarr"
    assert translate(run_tool, sources[0][0], store).returncode == 0
    p = translate(run_tool, sources[1][0], store,
                  {"ZARR3_TEST_KILL_AT": "replace-aside", "ZARR3_TEST_NO_EXCHANGE": "1"})
    assert p.returncode == -9
    np.testing.assert_array_equal(read(store), sources[0][1])
    assert hidden(tmp_path) == [".ob.zarr.zarr3-new"]  # the new store, removed by the next run
