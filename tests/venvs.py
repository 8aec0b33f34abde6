"""Virtualenvs made in a test, offline: what a project develops in, with failgate or without."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

# site-packages of the interpreter running the suite: failgate and its dependencies.
SUITE_SITE_PACKAGES = sysconfig.get_paths()["purelib"]


def make_venv(path: Path) -> Path:
    """A new virtualenv at `path`, without pip: nothing is fetched."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    return path


def site_packages(venv: Path) -> Path:
    return venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"


def install_failgate(venv: Path) -> None:
    """failgate importable in `venv`, as `pip install failgate-hooks` into it would make it."""
    (site_packages(venv) / "failgate-from-suite.pth").write_text(
        f"import site; site.addsitedir({SUITE_SITE_PACKAGES!r})\n"
    )


def activated(venv: Path) -> dict[str, str]:
    """The environment of a shell that ran `source VENV/bin/activate`."""
    return {
        **os.environ,
        "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "VIRTUAL_ENV": str(venv),
    }


def install_editable_pth(venv: Path, name: str, source_root: Path) -> None:
    """What `pip install -e .` leaves for a src layout (setuptools, hatch, flit, pdm, uv):
    a `.pth` file naming the source folder, and the distribution's metadata."""
    packages = site_packages(venv)
    (packages / f"__editable__.{name}-0.1.pth").write_text(f"{source_root}\n")
    _dist_info(packages, name, source_root)


def install_editable_finder(venv: Path, name: str, package_dir: Path) -> None:
    """What setuptools' strict editable mode leaves: a finder on sys.meta_path, put
    there by a `.pth` file, that maps the package's name to its folder."""
    packages = site_packages(venv)
    finder = f"__editable___{name}_0_1_finder"
    (packages / f"{finder}.py").write_text(
        EDITABLE_FINDER.format(mapping=repr({name: str(package_dir)}))
    )
    (packages / f"__editable__.{name}-0.1.pth").write_text(f"import {finder}; {finder}.install()\n")
    _dist_info(packages, name, package_dir.parent)


EDITABLE_FINDER = """\
import sys
from importlib.machinery import PathFinder
from importlib.util import spec_from_file_location
from pathlib import Path

MAPPING = {mapping}


class _EditableFinder:
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        if fullname in MAPPING:
            init = Path(MAPPING[fullname], "__init__.py")
            return spec_from_file_location(fullname, init, submodule_search_locations=[str(init.parent)])
        parent = fullname.rpartition(".")[0]
        if parent in MAPPING:
            return PathFinder.find_spec(fullname, path=[MAPPING[parent]])
        return None


def install():
    if _EditableFinder not in sys.meta_path:
        sys.meta_path.append(_EditableFinder)
"""


def _dist_info(packages: Path, name: str, source: Path) -> None:
    info = packages / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    url = source.as_uri()
    (info / "direct_url.json").write_text(f'{{"url": "{url}", "dir_info": {{"editable": true}}}}')
