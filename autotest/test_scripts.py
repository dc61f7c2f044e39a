"""The chroot legs' Debian mirror: taken from the host's apt configuration only
(the repository names no mirror host), with a clear stop when there is none."""
import re
import subprocess

from conftest import REPO

LIB = REPO / "scripts" / "compat" / "chroot_lib.sh"


def mirror_of(apt_etc):
    """Runs host_debian_mirror + require_mirror on a fake apt folder."""
    script = f'source "{LIB}"; m=$(host_debian_mirror || true); require_mirror "$m"; echo "MIRROR=$m"'
    return subprocess.run(["bash", "-c", script], env={"PATH": "/usr/bin:/bin", "COMPAT_APT_ETC": str(apt_etc)},
                          capture_output=True, text=True, timeout=30)


def test_mirror_from_deb822_sources(tmp_path):
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\n# URIs: http://commented.example/debian\nURIs: http://mirror.example.org/debian/\n"
        "Suites: bookworm\nComponents: main\n")
    p = mirror_of(tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "MIRROR=http://mirror.example.org/debian"


def test_mirror_from_one_line_sources(tmp_path):
    (tmp_path / "sources.list").write_text("deb https://other.example/debian bookworm main\n")
    p = mirror_of(tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "MIRROR=https://other.example/debian"


def test_no_mirror_stops_with_a_message(tmp_path):
    (tmp_path / "sources.list").write_text("deb https://packages.example/apt stable main\n")  # not Debian
    p = mirror_of(tmp_path)
    assert p.returncode == 2
    assert "no Debian mirror" in p.stderr and "COMPAT_MIRROR" in p.stderr, p.stderr
    assert "MIRROR=" not in p.stdout


def test_repository_names_no_mirror_host():
    hosts = []
    for f in (REPO / "scripts").rglob("*"):
        if f.is_file() and f.suffix in ("", ".sh", ".py") and "node_modules" not in f.parts:
            hosts += [(f.name, h) for h in re.findall(r"https?://[\w.-]*debian[\w.-]*", f.read_text(errors="replace"))]
    hosts += [("Makefile", h) for h in re.findall(r"https?://[\w.-]*debian[\w.-]*", (REPO / "Makefile").read_text())]
    assert hosts == []
