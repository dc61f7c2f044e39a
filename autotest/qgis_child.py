"""QGIS (Debian python3-qgis) headless in a child process, for tests that must not load QGIS into the
pytest process (QGIS writes its .aux.xml and settings files; its exit can abort the interpreter).

    p = run_qgis(SCRIPT, args, driver_path, tmp_path)   # subprocess.CompletedProcess (text)

The script runs in /usr/bin/python3 with the plugin on GDAL_DRIVER_PATH, the offscreen Qt platform and
HOME / XDG_RUNTIME_DIR in tmp_path; it reads its arguments from sys.argv[1:].
qgis_importable() says whether that python can import qgis.core.
"""
import os
import subprocess

PYTHON = "/usr/bin/python3"


def qgis_importable():
    return subprocess.run([PYTHON, "-c", "import qgis.core"], capture_output=True, timeout=60).returncode == 0


def run_qgis(script, args, driver_path, tmp_path, timeout=120):
    os.makedirs(tmp_path, mode=0o700, exist_ok=True)
    env = dict(os.environ, GDAL_DRIVER_PATH=str(driver_path), QT_QPA_PLATFORM="offscreen",
               XDG_RUNTIME_DIR=str(tmp_path), HOME=str(tmp_path))
    return subprocess.run([PYTHON, "-c", script, *[str(a) for a in args]], env=env, capture_output=True,
                          text=True, timeout=timeout)
