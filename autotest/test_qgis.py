"""QGIS (Debian python3-qgis, headless): a rectilinear, sharded, georeferenced
Zarr3 store opens as a QgsRasterLayer through QGIS's GDAL provider (plain path
and ZARR3: subdataset URI), with the right CRS, extent and pixel values, and
renders exactly like the same data as GeoTIFF. The Icechunk samples of data/ open as layers
at every version selector (ICECHUNK:repo?tag=/branch=/snapshot=/as_of=), and the virtual archive
over NetCDF files, with every band equal to GDAL's read (issue 29); the archive `zarr3 virtualize` writes from
4 monthly NetCDF-4 files equals those files opened in QGIS through the netCDF driver (issue 42).

Skipped when qgis is not installed (scripts/install-apps.sh installs it).
"""
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

# QGIS's GDAL provider registers the drivers when it starts: the plugin path and
# the headless Qt platform must be in the environment before qgis is imported.
os.environ.setdefault("GDAL_DRIVER_PATH", str(Path(__file__).resolve().parent.parent / "build"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

qgis_core = pytest.importorskip("qgis.core")
from osgeo import gdal, osr  # noqa: E402

from app_stores import two_variable_store  # noqa: E402
from virtual_months import virtual_months_archive  # noqa: E402
from icechunk_samples import (ARCHIVE_DIR, ARCHIVE_GROUP, DATA, NC_FILES, between, days_and_qc,  # noqa: E402
                              history, netcdf_months, placed_archive_files, zarr3_log)
from qgis.core import (  # noqa: E402
    Qgis,
    QgsApplication,
    QgsContrastEnhancement,
    QgsMapRendererSequentialJob,
    QgsMapSettings,
    QgsPointXY,
    QgsRasterLayer,
    QgsRectangle,
    QgsSingleBandGrayRenderer,
)

pytestmark = ARCHIVE_GROUP  # the virtual archive test uses /tmp/gdal-zarr3-archive (not the virtualize ones)
from qgis.PyQt.QtCore import QSize  # noqa: E402
from qgis.PyQt.QtGui import QColor, QImage  # noqa: E402

gdal.UseExceptions()

W, H = 300, 256
GT = (500000.0, 30.0, 0.0, 4000000.0, 0.0, -30.0)
EPSG = 32631
NODATA = -9999.0
VMIN, VMAX = 0.0, 700.0  # fixed contrast stretch for every render


def pattern():
    """Float32 gradient plus a 50x32-pixel checkerboard and a nodata disc."""
    y, x = np.mgrid[0:H, 0:W].astype(np.float32)
    a = 0.5 * x + y + 250.0 * (((x // 50) + (y // 32)) % 2)
    a[(x - 220) ** 2 + (y - 70) ** 2 < 30**2] = NODATA
    return a.astype(np.float32)


@pytest.fixture(scope="module")
def qgs():
    app = QgsApplication([], False)
    QgsApplication.setPrefixPath("/usr", True)
    app.initQgis()
    yield app
    # exitQgis() is left out on purpose: it can abort the interpreter at exit
    # with PyQt5 when layers were created in other fixtures.


@pytest.fixture(scope="module")
def stores(tmp_path_factory, driver_path):
    d = tmp_path_factory.mktemp("qgis")
    src = d / "src.tif"
    ds = gdal.GetDriverByName("GTiff").Create(str(src), W, H, 1, gdal.GDT_Float32)
    ds.SetGeoTransform(GT)
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(EPSG)
    ds.SetSpatialRef(srs)
    band = ds.GetRasterBand(1)
    band.SetNoDataValue(NODATA)
    band.WriteArray(pattern())
    ds = None
    store = d / "t.zarr"
    env = dict(os.environ, GDAL_DRIVER_PATH=driver_path)
    subprocess.run(
        ["gdal_translate", "-q", "-of", "Zarr3",
         "-co", "CHUNK_SHAPES=[[128,64,64],[100,200]]", "-co", "SHARD_CHUNK_SHAPE=64,50",
         "-co", "COMPRESS=ZSTD", "-co", "ARRAY_NAME=data", str(src), str(store)],
        env=env, check=True, timeout=120,
    )
    back = d / "back.tif"
    subprocess.run(["gdal_translate", "-q", "-of", "GTiff", str(store), str(back)], env=env, check=True, timeout=120)
    return {"dir": d, "src": src, "store": store, "back": back, "uri": f'ZARR3:"{store}":/data'}


def test_store_is_rectilinear_sharded_and_opened_by_plugin(stores):
    meta = json.loads((stores["store"] / "data" / "zarr.json").read_text())
    assert meta["chunk_grid"]["name"] == "rectilinear"
    assert meta["codecs"][0]["name"] == "sharding_indexed"
    assert meta["codecs"][0]["configuration"]["chunk_shape"] == [64, 50]
    for name in (str(stores["store"]), stores["uri"]):
        assert gdal.Open(name).GetDriver().ShortName == "Zarr3"


def layer_for(qgs, name, key):
    lyr = QgsRasterLayer(name, key, "gdal")
    assert lyr.isValid(), f"{name}: {lyr.error().summary()}"
    return lyr


@pytest.mark.parametrize("key", ["store", "uri"])
def test_layer_valid_crs_extent(qgs, stores, key):
    lyr = layer_for(qgs, str(stores[key]), key)
    ref = layer_for(qgs, str(stores["src"]), "src")
    assert lyr.crs().authid() == f"EPSG:{EPSG}"
    assert lyr.crs() == ref.crs()
    assert (lyr.width(), lyr.height(), lyr.bandCount()) == (W, H, 1)
    ext = lyr.extent()
    assert (ext.xMinimum(), ext.yMinimum(), ext.xMaximum(), ext.yMaximum()) == (
        500000.0, 4000000.0 - 30.0 * H, 500000.0 + 30.0 * W, 4000000.0)
    assert ext == ref.extent()
    prov = lyr.dataProvider()
    assert prov.dataType(1) == Qgis.Float32
    assert prov.sourceHasNoDataValue(1) and prov.sourceNoDataValue(1) == NODATA
    # QGIS really went through the plugin, not GDAL's built-in Zarr driver.
    html = re.sub(r"<[^>]+>", " ", prov.htmlMetadata())
    assert re.search(r"GDAL Driver Description\s+Zarr3\s", html), html[:2000]


@pytest.mark.parametrize("key", ["store", "uri"])
def test_layer_samples_match_geotiff(qgs, stores, key):
    lyr = layer_for(qgs, str(stores[key]), key)
    ref = layer_for(qgs, str(stores["src"]), "src")
    a = pattern()
    pixels = [(0, 0), (W - 1, H - 1), (49, 31), (50, 32), (123, 200), (299, 0), (0, 255), (150, 128), (220, 70), (101, 129)]
    for col, row in pixels:
        pt = QgsPointXY(GT[0] + (col + 0.5) * GT[1], GT[3] + (row + 0.5) * GT[5])
        v, ok = lyr.dataProvider().sample(pt, 1)
        rv, rok = ref.dataProvider().sample(pt, 1)
        if a[row, col] == NODATA:  # QGIS reports nodata as "no value"
            assert not ok and not rok and np.isnan(v) and np.isnan(rv), (col, row, v, rv)
        else:
            assert ok and rok, (col, row)
            assert v == rv == a[row, col], (col, row, v, rv, a[row, col])
    # Outside the extent: no value.
    _, ok = lyr.dataProvider().sample(QgsPointXY(GT[0] - 100.0, GT[3] + 100.0), 1)
    assert not ok


def render(lyr, path):
    r = QgsSingleBandGrayRenderer(lyr.dataProvider(), 1)
    ce = QgsContrastEnhancement(Qgis.Float32)
    ce.setContrastEnhancementAlgorithm(QgsContrastEnhancement.StretchToMinimumMaximum)
    ce.setMinimumValue(VMIN)
    ce.setMaximumValue(VMAX)
    r.setContrastEnhancement(ce)
    lyr.setRenderer(r)
    ms = QgsMapSettings()
    ms.setLayers([lyr])
    ms.setDestinationCrs(lyr.crs())
    ms.setExtent(QgsRectangle(GT[0], GT[3] + H * GT[5], GT[0] + W * GT[1], GT[3]))
    ms.setOutputSize(QSize(W, H))
    ms.setBackgroundColor(QColor(255, 0, 255))
    job = QgsMapRendererSequentialJob(ms)
    job.start()
    job.waitForFinished()
    img = job.renderedImage().convertToFormat(QImage.Format_ARGB32)
    assert img.save(str(path)), path
    assert (img.width(), img.height()) == (W, H)
    bits = img.constBits()
    bits.setsize(img.sizeInBytes())
    # ARGB32 is stored B,G,R,A per pixel on little-endian machines.
    return np.frombuffer(bytes(bits), np.uint8).reshape(H, img.bytesPerLine() // 4, 4)[:, :W, :]


@pytest.mark.parametrize("key", ["store", "uri"])
def test_render_matches_geotiff(qgs, stores, key):
    out = stores["dir"]
    z = render(layer_for(qgs, str(stores[key]), key), out / f"zarr_{key}.png")
    t = render(layer_for(qgs, str(stores["back"]), "back"), out / "back_tif.png")
    s = render(layer_for(qgs, str(stores["src"]), "src"), out / "src_tif.png")
    ndiff = int(np.count_nonzero(np.any(z != t, axis=2)))
    assert ndiff == 0, f"{ndiff} pixels differ from the GeoTIFF render ({out})"
    assert np.array_equal(z, s)
    # The render shows the pattern: one output pixel per raster pixel, gray
    # levels follow the value, nodata shows the magenta background.
    a = pattern()
    nod = a == NODATA
    assert np.all(z[nod] == [255, 0, 255, 255])
    gray = z[..., 0].astype(int)
    assert np.array_equal(gray[~nod], z[..., 1][~nod]) and np.array_equal(gray[~nod], z[..., 2][~nod])
    expect = np.clip((a - VMIN) / (VMAX - VMIN) * 255.0, 0, 255)
    assert np.max(np.abs(gray[~nod] - expect[~nod])) <= 1.0
    assert len(np.unique(gray[~nod])) > 100


# ------------------------------------------------------------------ sublayers (issue 17)


def sublayers(path):
    from qgis.core import QgsProviderRegistry

    return [(s.providerKey(), s.name(), s.uri()) for s in QgsProviderRegistry.instance().querySublayers(str(path))]


def test_one_variable_store_offers_one_layer(qgs, stores):
    """The gdal_translate-written store holds data plus spatial_ref, x and y: QGIS offers one
    layer (the raster itself), not four sublayers, and the layer has no sublayers of its own."""
    names = sorted(p.name for p in stores["store"].iterdir() if p.is_dir())
    assert names == ["data", "spatial_ref", "x", "y"]
    for key in ("store", "uri"):
        subs = sublayers(stores[key])
        assert len(subs) == 1, subs
        provider, _, uri = subs[0]
        assert provider == "gdal" and uri == str(stores[key]), subs
        lyr = layer_for(qgs, uri, key)
        assert lyr.subLayers() == []
        assert (lyr.width(), lyr.height(), lyr.bandCount()) == (W, H, 1)


def test_two_variable_store_offers_its_two_data_arrays(qgs, stores):
    """Two data arrays sharing x/y/spatial_ref: two sublayers, one per data array; the
    coordinate and grid-mapping arrays are not offered."""
    store = stores["dir"] / "two.zarr"
    two_variable_store(store, EPSG)
    subs = sublayers(store)
    uris = sorted(u for _, _, u in subs)
    assert uris == [f'ZARR3:"{store}":/a', f'ZARR3:"{store}":/b'], subs
    for i, uri in enumerate(uris):
        lyr = layer_for(qgs, uri, f"v{i}")
        assert (lyr.width(), lyr.height()) == (30, 20) and lyr.crs().authid() == f"EPSG:{EPSG}"
        v, ok = lyr.dataProvider().sample(QgsPointXY(1000.0 + 10.0 * 7 + 5.0, 2000.0 - 10.0 * 3 - 5.0), 1)
        assert ok and v == 3 * 30 + 7 + 1000 * i


def test_band_list_shows_dates(qgs, tmp_path):
    """QGIS's band list of a daily series names each band by its date (issue 32, part). On a copy: QGIS
    saves the histograms it computes beside the store."""
    sample = tmp_path / "sample.zarr"
    shutil.copytree(Path(__file__).resolve().parent.parent / "data" / "daily_t2m_2023.zarr", sample)
    layer = QgsRasterLayer(str(sample), "t2m", "gdal")
    assert layer.isValid()
    assert layer.bandCount() == 365
    assert "2023-01-01" in layer.bandName(1), layer.bandName(1)
    assert "2023-02-01" in layer.bandName(32), layer.bandName(32)


# ------------------------------------------------------------------ Icechunk samples (issue 29)
# data/t2m_2023q1.icechunk at every kind of version selector, and the virtual data/archive.icechunk, as
# QGIS raster layers through the GDAL provider. Each band QGIS reads (a full block through the data
# provider) equals GDAL's own read of the same version, chosen with open options rather than the URI
# (that read is checked bit-exact against the source in test_icechunk_samples.py).


@pytest.fixture(scope="module")
def q1(tmp_path_factory):
    """A copy of data/t2m_2023q1.icechunk (nothing is written into data/)."""
    dst = tmp_path_factory.mktemp("q1") / "t2m_2023q1.icechunk"
    shutil.copytree(DATA / "t2m_2023q1.icechunk", dst)
    return dst


def q1_versions(exe, q1):
    """[(id, ICECHUNK: query, the same as GDAL open options, snapshot id, days, qc)]: the default, the tag,
    the branch, a snapshot id from `zarr3 log`, and an as_of between two commits of main and of qc."""
    main = history(zarr3_log(exe, q1))
    qc = history(zarr3_log(exe, q1, "qc"))
    march, feb, jan = main[0], main[1], main[2]
    assert [days_and_qc(c.message) for c in (march, feb, jan)] == [(90, False), (59, False), (31, False)]
    assert days_and_qc(qc[0].message) == (90, True) and qc[1].id == march.id
    t_feb, t_qc = between(feb, march), between(march, qc[0])
    return [
        ("default", "", [], march.id, 90, False),
        ("tag", "?tag=january", ["TAG=january"], jan.id, 31, False),
        ("branch", "?branch=qc", ["BRANCH=qc"], qc[0].id, 90, True),
        ("snapshot", f"?snapshot={feb.id}", [f"SNAPSHOT={feb.id}"], feb.id, 59, False),
        # the latest snapshot of main at or before a time between February and March: February
        ("as_of", f"?as_of={t_feb}", [f"AS_OF={t_feb}"], feb.id, 59, False),
        # branch qc just before its correction: main's March, which qc branched from
        ("branch_as_of", f"?branch=qc&as_of={t_qc}", ["BRANCH=qc", f"AS_OF={t_qc}"], march.id, 90, False),
    ]


def provider_bands(lyr):
    """Every band of the layer as one full-extent block read through its data provider: (bands, rows, cols)."""
    prov = lyr.dataProvider()
    assert prov.dataType(1) == Qgis.Float32
    out = []
    for b in range(1, lyr.bandCount() + 1):
        block = prov.block(b, lyr.extent(), lyr.width(), lyr.height())
        assert block.isValid() and (block.width(), block.height()) == (lyr.width(), lyr.height()), b
        assert block.dataType() == Qgis.Float32, b
        out.append(np.frombuffer(bytes(block.data()), np.float32).reshape(lyr.height(), lyr.width()))
    return np.stack(out)


def assert_same_bits(got, want, what):
    assert got.shape == want.shape and got.dtype == want.dtype, (what, got.shape, want.shape, got.dtype, want.dtype)
    if got.tobytes() != want.tobytes():
        bad = np.argwhere(got != want)
        pytest.fail(f"{what}: {len(bad)} values differ from GDAL's read, first at {bad[0].tolist()}")


def assert_through_plugin(lyr):
    html = re.sub(r"<[^>]+>", " ", lyr.dataProvider().htmlMetadata())
    assert re.search(r"GDAL Driver Description\s+Zarr3\s", html), html[:2000]
    return html


def test_icechunk_versions_in_qgis(qgs, exe, q1):
    """t2m_2023q1.icechunk through ICECHUNK: URIs (?tag=, ?branch=, ?snapshot=, ?as_of=, branch with as_of,
    and none): each layer has its version's days, georeferencing and snapshot, and every band equals GDAL's
    read of that version."""
    seen = {}
    for key, query, opts, sid, days, qc in q1_versions(exe, q1):
        uri = f"ICECHUNK:{q1}{query}"
        lyr = layer_for(qgs, uri, key)
        assert lyr.providerType() == "gdal" and lyr.source() == uri, (key, lyr.source())
        assert (lyr.bandCount(), lyr.width(), lyr.height()) == (days, 64, 32), key
        assert lyr.crs().authid() == "EPSG:4326", key
        assert lyr.extent().toString(3) == "-20.000,40.000 : 44.000,72.000", key
        last_day = {31: "2023-01-31", 59: "2023-02-28", 90: "2023-03-31"}[days]
        assert lyr.bandName(days) == f"Band {days:02d}: time={last_day}", (key, lyr.bandName(days))
        html = assert_through_plugin(lyr)
        assert re.search(rf"ICECHUNK_SNAPSHOT_ID={sid}\b", html), (key, sid, html[:3000])
        ds = gdal.OpenEx(str(q1), gdal.OF_RASTER | gdal.OF_READONLY, open_options=opts)
        assert ds.GetMetadataItem("SNAPSHOT_ID", "ICECHUNK") == sid and ds.RasterCount == days, key
        got = provider_bands(lyr)
        assert_same_bits(got, ds.ReadAsArray(), f"{uri} in QGIS")
        seen[key] = got
    # The versions really differ where they should: qc's correction (2023-02-14, north-west block, -1.5 K)
    # is only on branch qc; the tag and the February snapshot are the first days of main.
    diff = seen["branch"] - seen["default"]
    assert np.all(diff[44, :16, :32] == np.float32(-1.5))
    diff[44, :16, :32] = 0
    assert not diff.any()
    assert_same_bits(seen["branch_as_of"], seen["default"], "qc as of before its correction")
    assert_same_bits(seen["tag"], seen["default"][:31], "tag january")
    assert_same_bits(seen["snapshot"], seen["default"][:59], "February snapshot")
    assert_same_bits(seen["as_of"], seen["snapshot"], "as_of between February and March")


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """A copy of data/archive.icechunk, its .nc files where its virtual references point."""
    dst = tmp_path_factory.mktemp("archive") / "archive.icechunk"
    shutil.copytree(DATA / "archive.icechunk", dst)
    with placed_archive_files():
        yield dst


@pytest.mark.parametrize("how", ["folder", "uri"])
def test_virtual_archive_in_qgis(qgs, archive, how):
    """The virtual array over three monthly NetCDF-4 files as a QGIS layer (the folder, or the ZARR3: URI
    README gives): 90 bands named by date, EPSG:4326, every band equal to GDAL's read of the same name
    and to the netCDF driver reading the files one by one."""
    name = str(archive) if how == "folder" else f'ZARR3:"{archive}":/t2m'
    lyr = layer_for(qgs, name, how)
    assert (lyr.bandCount(), lyr.width(), lyr.height()) == (90, 64, 32)
    assert lyr.crs().authid() == "EPSG:4326"
    assert lyr.extent().toString(3) == "-20.000,40.000 : 44.000,72.000"
    assert lyr.bandName(45) == "Band 45: time=2023-02-14", lyr.bandName(45)
    assert_through_plugin(lyr)
    got = provider_bands(lyr)
    assert_same_bits(got, gdal.Open(name).ReadAsArray(), f"{name} in QGIS")
    assert_same_bits(got, netcdf_months(), f"{name} in QGIS vs the netCDF driver")
    nc = gdal.Open(f'NETCDF:"{ARCHIVE_DIR / NC_FILES[1]}":t2m')
    want = float(nc.GetRasterBand(14).ReadAsArray()[0, 0])  # 2023-02-14, north-west pixel
    v, ok = lyr.dataProvider().sample(QgsPointXY(-19.5, 71.5), 45)
    assert ok and v == want, (v, want)


# ------------------------------------------------------------------ zarr3 virtualize (issue 42, done-when)
@pytest.fixture(scope="module")
def virtual_months(tmp_path_factory, exe):
    """The done-when archive (virtual_months.virtual_months_archive) in this module's folder."""
    return virtual_months_archive(tmp_path_factory.mktemp("virtual_months"), exe)


def netcdf_band_date(name):
    """'Band 01: time=12 (hours since 2023-02-01)' (QGIS's name of a netCDF driver band) -> datetime64."""
    m = re.match(r"^Band \d+: time=([0-9.]+) \(hours since (\d{4}-\d\d-\d\d)\)$", name)
    assert m, name
    return np.datetime64(m.group(2)) + np.timedelta64(int(float(m.group(1))), "h")


@pytest.mark.parametrize("var", ["t2m", "sp", "tp"])
def test_virtualized_months_in_qgis(qgs, virtual_months, var):
    """Each array of the archive `zarr3 virtualize` writes from the 4 monthly files, as a QGIS layer
    through the plugin, equals the 4 files opened in QGIS through GDAL's netCDF driver: the 120 bands'
    values (sp unpacked by QGIS from its scale_factor/add_offset on both), band dates, CRS, extent,
    nodata, scale and offset."""
    repo, files = virtual_months
    lyr = layer_for(qgs, f'ZARR3:"{repo}":/{var}', var)
    assert_through_plugin(lyr)
    ncs = [layer_for(qgs, f'NETCDF:"{f}":{var}', f.name) for f in files]
    assert lyr.bandCount() == sum(n.bandCount() for n in ncs) == 120
    prov = lyr.dataProvider()
    for n in ncs:
        np_ = n.dataProvider()
        assert (lyr.width(), lyr.height()) == (n.width(), n.height())
        assert lyr.crs() == n.crs() and lyr.crs().authid() == "EPSG:4326"
        assert lyr.extent() == n.extent(), (lyr.extent().toString(6), n.extent().toString(6))
        assert prov.sourceNoDataValue(1) == np_.sourceNoDataValue(1)
        assert (prov.bandScale(1), prov.bandOffset(1)) == (np_.bandScale(1), np_.bandOffset(1))
    band = 1
    for n in ncs:
        for b in range(1, n.bandCount() + 1):
            want = netcdf_band_date(n.bandName(b))
            got = lyr.bandName(band).split("time=", 1)[1]
            assert np.datetime64(got) == want, (band, lyr.bandName(band), n.bandName(b))
            band += 1
    want = np.concatenate([provider_bands(n) for n in ncs])
    assert_same_bits(provider_bands(lyr), want, f"{var} in QGIS vs the netCDF driver in QGIS")
