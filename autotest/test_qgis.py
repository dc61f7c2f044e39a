"""QGIS (Debian python3-qgis, headless): a rectilinear, sharded, georeferenced
Zarr3 store opens as a QgsRasterLayer through QGIS's GDAL provider (plain path
and ZARR3: subdataset URI), with the right CRS, extent and pixel values, and
renders exactly like the same data as GeoTIFF.

Skipped when qgis is not installed (scripts/install-apps.sh installs it).
"""
import json
import os
import re
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
    import shutil
    sample = tmp_path / "sample.zarr"
    shutil.copytree(Path(__file__).resolve().parent.parent / "data" / "daily_t2m_2023.zarr", sample)
    layer = QgsRasterLayer(str(sample), "t2m", "gdal")
    assert layer.isValid()
    assert layer.bandCount() == 365
    assert "2023-01-01" in layer.bandName(1), layer.bandName(1)
    assert "2023-02-01" in layer.bandName(32), layer.bandName(32)
