# `make package` (cpack -G DEB): a Debian package of the plugin and the zarr3 tool. The plugin goes
# into GDAL's plugin folder (GDAL_PLUGIN_INSTALL_DIR, e.g. /usr/lib/x86_64-linux-gnu/gdalplugins), where
# every GDAL application and QGIS load it without GDAL_DRIVER_PATH; the tool into /usr/bin. Its
# dependencies (libgdal, zstd, blosc, ...) are computed by dpkg-shlibdeps from the built binaries.
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "gdal-zarr3")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_CONTACT "gdal-zarr3 developers <gdal-zarr3@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "GDAL plugin for Zarr v3 with rectilinear chunk grids and sharding")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_DEBIAN_FILE_NAME "DEB-DEFAULT")
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "gdal-bin")
set(CPACK_STRIP_FILES ON)
# cpack installs what `make package` built (the plugin and the tool), not the test suites.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY TRUE)
include(CPack)
