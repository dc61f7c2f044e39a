"""Stores shared by the application tests (QGIS, rioxarray, dask)."""
import numpy as np
from osgeo import gdal, osr


def two_variable_store(store, epsg):
    """A multidim store with data arrays a and b (20 x 30 float32, b = a + 1000) sharing
    x/y coordinates (10 m pixels from (1000, 2000)) and a CRS. Returns {name: values}."""
    ds = gdal.GetDriverByName("Zarr3").CreateMultiDimensional(str(store))
    rg = ds.GetRootGroup()
    dy = rg.CreateDimension("y", gdal.DIM_TYPE_HORIZONTAL_Y, None, 20)
    dx = rg.CreateDimension("x", gdal.DIM_TYPE_HORIZONTAL_X, None, 30)
    f64 = gdal.ExtendedDataType.Create(gdal.GDT_Float64)
    xv = rg.CreateMDArray("x", [dx], f64)
    xv.Write(1000.0 + 10.0 * np.arange(30) + 5.0)
    yv = rg.CreateMDArray("y", [dy], f64)
    yv.Write(2000.0 - 10.0 * np.arange(20) - 5.0)
    dx.SetIndexingVariable(xv)
    dy.SetIndexingVariable(yv)
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(epsg)
    values = {n: (np.arange(600).reshape(20, 30) + 1000 * i).astype(np.float32)
              for i, n in enumerate("ab")}
    for n, v in values.items():
        a = rg.CreateMDArray(n, [dy, dx], gdal.ExtendedDataType.Create(gdal.GDT_Float32))
        a.Write(v)
        a.SetSpatialRef(srs)
    return values


def geotiff(path, bands, geotransform, epsg, nodata):
    """A float32 GeoTIFF of the given band arrays, with georeferencing and nodata."""
    h, w = bands[0].shape
    ds = gdal.GetDriverByName("GTiff").Create(str(path), w, h, len(bands), gdal.GDT_Float32)
    ds.SetGeoTransform(geotransform)
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(epsg)
    ds.SetSpatialRef(srs)
    for b, v in enumerate(bands):
        ds.GetRasterBand(b + 1).SetNoDataValue(nodata)
        ds.GetRasterBand(b + 1).WriteArray(v)
    ds = None
