"""The top-level names a verifier's Python would import from its installed packages.

Where Python puts a folder of the checkout before its site folders (the root under
`python3 -m pytest`, a PYTHONPATH folder), a module there named like an installed
one is imported in its place: a root `pluggy.py` is what pytest takes for its plugin
manager. Which names those are is read from the files of site folders, never asked
of an interpreter (a pushed commit may choose it) nor of the checkout: failgate's
own Python's, and those of each Python the command starts that failgate's PATH
finds by its absolute folders, as the verifier's PATH does; a console script
(`pytest`) by the Python its `#!` line names. The names a test runner imports
whatever is installed (`RUNNER_NAMES`) count too: the Python that runs it may be
one no file read here shows.
"""

from __future__ import annotations

import functools
import glob
import os
import re
import sys
from collections.abc import Iterable, Sequence
from importlib.machinery import BYTECODE_SUFFIXES, SOURCE_SUFFIXES
from typing import NamedTuple

from failgate_hooks.verify.programs import (
    PYTHON_NAME,
    find_program,
    program_and_interpreter,
    pyvenv_settings,
)

# The suffixes of a module's source and compiled file; and an extension module of any
# interpreter, not only of the one failgate runs on, as the verifier's Python may be
# another (`helper.cpython-312-x86_64-linux-gnu.so`, `helper.abi3.so`, `.pyd`).
_SUFFIXES = sorted({*SOURCE_SUFFIXES, *BYTECODE_SUFFIXES}, key=len)[::-1]
_EXTENSION = re.compile(r"([^.]+)(?:\.[^.]+)?\.(?:so|pyd)\Z")
PYTEST_NAME = re.compile(r"(pytest|py\.test)\Z")  # a program that is pytest
# pytest and what it imports as it starts, on every Python it supports.
RUNNER_NAMES = frozenset(
    {"pytest", "_pytest", "py", "pluggy", "iniconfig", "packaging", "exceptiongroup", "tomli",
     "colorama", "pygments"}
)  # fmt: skip
_SITE_FOLDERS = ("site-packages", "dist-packages")
_METADATA = (".dist-info", ".egg-info")
_TOP_LEVEL_BYTES = 64 * 1024


def module_stem(filename: str) -> str | None:
    """`helper` for `helper.py`, `helper.pyc` or `helper.cpython-311-x86_64-linux-gnu.so`."""
    extension = _EXTENSION.match(filename)
    if extension is not None:
        return extension.group(1)
    for suffix in _SUFFIXES:
        if filename.endswith(suffix) and len(filename) > len(suffix):
            return filename[: -len(suffix)]
    return None


class Installed(NamedTuple):
    """The installed top-level names; `regular` those of them found as a module or a
    package, which a namespace portion of the same name in an earlier folder loses to
    (one found only as a folder without an `__init__` is joined, the earlier first)."""

    names: frozenset[str]
    regular: frozenset[str]


def installed_names(words: Sequence[str], path: str | None = None) -> Installed:
    """What the Pythons `words` may start would import from their site folders, with
    failgate's own and RUNNER_NAMES; `path` is the PATH to find them on (os.environ's)."""
    folders = [entry for entry in sys.path if os.path.basename(entry) in _SITE_FOLDERS]
    for python in _pythons(words, os.environ.get("PATH", os.defpath) if path is None else path):
        folders += site_folders(python)
    names, regular = set(RUNNER_NAMES), set(RUNNER_NAMES)
    for folder in dict.fromkeys(os.path.realpath(folder) for folder in folders):
        for name, portion in _names_in(folder):
            names.add(name)
            if not portion:
                regular.add(name)
    return Installed(frozenset(names), frozenset(regular))


def _pythons(words: Sequence[str], path: str) -> list[str]:
    """The Pythons `words` may start, found on `path`'s absolute folders: a python-named
    word, and the `#!` interpreter of the command's program or of a pytest-named word.
    A relative path is the checkout's: never read."""
    absolute = os.pathsep.join(f for f in path.split(os.pathsep) if os.path.isabs(f))
    found = [sys.executable]
    for at, word in enumerate(words):
        name = os.path.basename(word)
        if not (PYTHON_NAME.match(name) or PYTEST_NAME.match(name) or at == 0):
            continue
        if ("/" in word and not os.path.isabs(word)) or ("/" not in word and not absolute):
            continue
        try:
            program = find_program(word, cwd="/", path=absolute)
        except OSError:
            continue
        chain = program_and_interpreter(program, cwd="/", env={"PATH": absolute})
        found += [p for p in chain if PYTHON_NAME.match(os.path.basename(p)) and os.path.isabs(p)]
    return list(dict.fromkeys(found))


def site_folders(python: str) -> list[str]:
    """The site folders of the Python at `python`, read from its files: a virtualenv's
    (the folder above `bin/` holding `pyvenv.cfg`), with its base Python's when the
    config includes them; else those of the prefix the path resolves to, and the
    user's."""
    venv = os.path.dirname(os.path.dirname(os.path.abspath(python)))
    settings = pyvenv_settings(os.path.join(venv, "pyvenv.cfg"))
    if settings is None:
        base = os.path.dirname(os.path.dirname(os.path.realpath(python)))
        user = os.path.join(os.path.expanduser("~"), ".local")
        return _site_folders_of(base) + _site_folders_of(user)
    found = _site_folders_of(venv)
    home = next((value for key, value in settings if key == "home"), "")
    system = [value.lower() for key, value in settings if key == "include-system-site-packages"]
    if system[-1:] == ["true"] and os.path.isabs(home):
        found += _site_folders_of(os.path.dirname(os.path.realpath(home)))
    return found


def _site_folders_of(prefix: str) -> list[str]:
    """`lib/python3.11/site-packages` and Debian's `dist-packages` under `prefix`, which
    also names /usr/local's for /usr."""
    patterns = [
        os.path.join(glob.escape(prefix), *parts, site)
        for parts in (("lib", "python*"), ("lib64", "python*"), ("local", "lib", "python*"))
        for site in _SITE_FOLDERS
    ]
    return [folder for pattern in patterns for folder in sorted(glob.glob(pattern))]


@functools.lru_cache(maxsize=256)
def _names_in(folder: str) -> tuple[tuple[str, bool], ...]:
    """(name, whether only a namespace portion) of each module Python finds in `folder`,
    and each top-level name its installed distributions list (`top_level.txt`: an
    editable install's package lives elsewhere)."""
    found: list[tuple[str, bool]] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return ()
    for entry in entries:
        if entry.name.endswith(_METADATA):
            found += [(name, False) for name in _top_level(entry.path)]
        elif _is_folder(entry):
            if entry.name.isidentifier() and entry.name != "__pycache__":
                found.append((entry.name, not _has_init(entry.path)))
        else:
            name = module_stem(entry.name)
            if name is not None and name.isidentifier():
                found.append((name, False))
    return tuple(found)


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _has_init(folder: str) -> bool:
    try:
        return any(module_stem(name) == "__init__" for name in os.listdir(folder))
    except OSError:
        return False


def _top_level(metadata: str) -> Iterable[str]:
    try:
        with open(os.path.join(metadata, "top_level.txt"), encoding="utf-8") as handle:
            lines = handle.read(_TOP_LEVEL_BYTES).splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    return [line.strip() for line in lines if line.strip().isidentifier()]
