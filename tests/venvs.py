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
