"""An unpinned path that Python would import in place of a pinned module.

Pinning a module is worth nothing if the commit can put something beside it
that Python finds first under the same name: a package folder (`helper/` beats
`helper.py`), an extension module (`helper.*.so` beats both), a compiled file
(an unchecked-hash `__pycache__/helper.*.pyc` is used without reading the
source). Nor can it put a module of the standard library's name beside a pinned
script, or one of a name the reviewed revision did not offer there: Python
looks in the script's own folder first, so a `checks/json.py` is what the
pinned `checks/check.py` loads for `import json`, a `checks/yaml.py` for
`import yaml`. Judged on C's tree with the pinned files laid over it, which is
what the checkout holds, so a pass cached for C cannot skip the judgement
either.
"""

from __future__ import annotations

import posixpath
import re
import shlex
import sys
from collections.abc import Iterator, Sequence
from importlib.machinery import BYTECODE_SUFFIXES, SOURCE_SUFFIXES

from failgate_hooks.core.ids import short_id
from failgate_hooks.git.repo import GitRepo, TreeEntry
from failgate_hooks.verify.pins import Pin, pinned_folders

# The suffixes of a module's source and compiled file; and an extension module of any
# interpreter, not only of the one failgate runs on, as the verifier's Python may be
# another (`helper.cpython-312-x86_64-linux-gnu.so`, `helper.abi3.so`, `.pyd`).
_SUFFIXES = sorted({*SOURCE_SUFFIXES, *BYTECODE_SUFFIXES}, key=len)[::-1]
_EXTENSION = re.compile(r"([^.]+)(?:\.[^.]+)?\.(?:so|pyd)\Z")
_SYMLINK = "120000"
_CACHE = "__pycache__"
_STANDARD = frozenset(sys.stdlib_module_names)
_PYTEST = re.compile(r"(pytest|py\.test)\Z")


def module_stem(filename: str) -> str | None:
    """`helper` for `helper.py`, `helper.pyc` or `helper.cpython-311-x86_64-linux-gnu.so`."""
    extension = _EXTENSION.match(filename)
    if extension is not None:
        return extension.group(1)
    for suffix in _SUFFIXES:
        if filename.endswith(suffix) and len(filename) > len(suffix):
            return filename[: -len(suffix)]
    return None


def shadowing(
    repo: GitRepo,
    commit: str,
    pins: Sequence[Pin],
    argv: Sequence[str] = (),
    pinned_from: str | None = None,
) -> str | None:
    """Why an unpinned path in `commit` shadows a pinned module, or None when none does.

    `argv` is the verifier's command: run as `python -m` or `python -c`, Python looks
    in the checkout's root folder first too. `pinned_from` is the revision the pins
    come from (None: `commit`): what it offers beside a pinned script is what was
    reviewed."""
    pinned = {pin.path for pin in pins}
    for pin in pins:
        folder, _, filename = pin.path.rpartition("/")
        stem = module_stem(filename)
        # In a folder pinned whole nothing unpinned is left to shadow it.
        if stem is None or pin.folder is not None:
            continue
        for path in _rivals(repo, commit, folder, stem):
            # A pinned path is written over whatever C holds there; a pinned folder
            # replaces C's copy of it.
            if path in pinned or any(path.startswith(f"{f}/") for f in pinned_folders(pins)):
                continue
            name = folder.rpartition("/")[2] if stem == "__init__" else stem
            where = f"{folder}/" if folder else "the checkout's root folder"
            return (
                f"{path} is not pinned and shadows {pin.path} (Python would import it "
                f"for `{name or stem}`): pin it too in the verifier's files, pin {where} "
                "whole, or remove it"
            )
    reviewed = pinned_from if pinned_from not in (None, commit) else None
    return _first_folder_shadow(repo, commit, pins, pinned, argv, reviewed)


def _first_folder_shadow(
    repo: GitRepo,
    commit: str,
    pins: Sequence[Pin],
    pinned: set[str],
    argv: Sequence[str],
    reviewed: str | None,
) -> str | None:
    """Why an unpinned module would be imported from a folder Python looks in first;
    None when there is none.

    A pinned Python source's folder, or a pinned script's the command names (a script
    need not end in `.py`), is first on `sys.path` for every import: the script's own,
    and those of every module it loads, installed or not. There an unpinned module
    is refused when it has a standard library name, or a name the `reviewed`
    revision's folder does not offer: the commit may change the modules the reviewed
    script was meant to import, never add one that takes an import from elsewhere
    (`simplejson.py` for an optional `import simplejson`). The root under `python -m`
    and `-c` is first too, but it holds the project under test, the commit's by
    design: there only the standard library's names are judged, and the packages
    `python -m a.b.c` imports before its module (`a.py` or `a/__init__.py` at the
    root, `a/b/__init__.py`), which must not be new either; nor, for pytest, a
    `conftest.py` from the root down to a pinned file."""
    who: dict[str, str] = {}  # folder -> what Python runs from it, for the message
    first: set[str] = set()  # folders where every name counts
    named = {posixpath.normpath(arg) for arg in argv}  # a script run by its path, any name
    for pin in pins:
        folder, _, filename = pin.path.rpartition("/")
        source = any(filename.endswith(s) for s in SOURCE_SUFFIXES) or pin.path in named
        if pin.folder is None and source:
            who.setdefault(folder, pin.path)
            first.add(folder)
    module = _run_from_root(argv) if pins else None  # with nothing pinned, nothing to stand in for
    imported: dict[str, set[str]] = {}  # folder -> names `-m`'s packages are imported by
    if module is not None:
        packages = module.split(".")[:-1]
        for depth, package in enumerate(packages):
            imported.setdefault("/".join(packages[:depth]), set()).add(package)
            imported.setdefault("/".join(packages[: depth + 1]), set()).add("__init__")
        for folder in ("", *imported):
            who.setdefault(folder, f"`{shlex.join(argv[:3])}`")
    if module == "pytest" or any(_PYTEST.match(arg.rpartition("/")[2]) for arg in argv):
        # pytest runs every conftest.py from the root down to each test it is given
        for pin in pins:
            parts = pin.path.split("/")[:-1]
            for depth in range(len(parts) + 1):
                folder = "/".join(parts[:depth])
                imported.setdefault(folder, set()).add("conftest")
                who.setdefault(folder, f"`{shlex.join(argv[:3])}`")
    for folder, script in who.items():
        standard = folder in first or folder == ""  # where Python looks first
        # What the reviewed folder offers, by name: a portion stands in for a portion
        # only, as a module of the name beats one (a root `checks.py` beats `checks/`).
        offered: dict[bool, set[str]] | None = None  # None: only the library's names count
        if reviewed is not None:
            offered = {True: set(), False: set()}
            for _, name, portion in _importable(repo, reviewed, folder):
                offered[True].add(name)
                if not portion:
                    offered[False].add(name)
            since = short_id(reviewed)
        for path, name, portion in _importable(repo, commit, folder):
            if path in pinned:
                continue
            judged = name in imported.get(folder, ()) or (folder in first and name != "__init__")
            if standard and name in _STANDARD and not portion:  # the library's own wins
                what = f"the standard library's `{name}` for {script}"
            elif judged and offered is not None and name not in offered[portion]:
                what = f"any other `{name}` for {script}, a module {since} had not there"
            else:
                continue
            where = f"{folder}/" if folder else "the checkout's root folder"
            return (
                f"{path} is not pinned and shadows {what} (Python looks in {where} "
                f"first): pin it too in the verifier's files, pin {where} whole, or move it "
                "to a folder of its own"
            )
    return None


def _run_from_root(argv: Sequence[str]) -> str | None:
    """The module `argv` runs with `-m` (`""` for `-c`, or when it cannot be told): Python
    then puts the working folder (the checkout's root) first on sys.path, and so do
    launchers that take the same options (`coverage run -m`, `uv run -m`); None for
    neither. Alone or among other short options (`-Bm`), after any program (`env`). A
    false answer (`pytest -m slow`) only asks for more of the root to be pinned."""
    rest = list(argv[1:])
    for at, arg in enumerate(rest):
        if not arg.startswith("-") or arg.startswith("--"):
            continue
        for position, option in enumerate(arg[1:], 2):  # `-Bm` is `-B -m`
            if option == "c":
                return ""
            if option == "m":  # its argument: the rest of this one, else the next
                return arg[position:] or (rest[at + 1] if at + 1 < len(rest) else "")
            if option in "WX":  # the rest is its argument
                break
    return None


def _importable(repo: GitRepo, commit: str, folder: str) -> Iterator[tuple[str, str, bool]]:
    """(path, module name, whether a namespace portion) of what Python could import from
    `folder`: a module of any suffix, a link, a package's `__init__`, or a folder
    without one that holds a module or a folder: a namespace portion, which extends
    an installed namespace package (`google`) and stands for a missing one, though a
    module of its name anywhere beats it."""
    prefix = f"{folder}/" if folder else ""
    for entry in _entries(repo, commit, folder):
        path = prefix + entry.path
        if entry.mode.lstrip("0") == _SYMLINK:  # Python follows it: it counts as is
            name: str | None = module_stem(entry.path) or entry.path
        elif entry.type == "tree":
            inner = repo.tree_entries(entry.oid) if entry.path != _CACHE else []
            inits = [e.path for e in inner if module_stem(e.path) == "__init__"]
            if inits:
                yield f"{path}/{inits[0]}", entry.path, False
            elif any(e.type == "tree" or module_stem(e.path) for e in inner):
                yield path, entry.path, True
            continue
        else:
            name = module_stem(entry.path)
        if name is not None:
            yield path, name, False


def _rivals(repo: GitRepo, commit: str, folder: str, stem: str) -> Iterator[str]:
    """Paths in `commit` that Python could import for `stem` from `folder`, pinned or not:
    a package folder's files, modules of any suffix, compiled files, and links to any."""
    prefix = f"{folder}/" if folder else ""
    for entry in _entries(repo, commit, folder):
        path = prefix + entry.path
        link = entry.mode.lstrip("0") == _SYMLINK  # Python follows it: it counts as is
        if entry.path == stem and stem != "__init__":
            if link:
                yield path
            elif entry.type == "tree":
                yield from (e.path for e in repo.ls_folder(commit, path))
        elif module_stem(entry.path) == stem:
            yield path
        elif entry.path == _CACHE:
            if link:
                yield path
            elif entry.type == "tree":
                for cached in repo.tree_entries(entry.oid):
                    if cached.path.startswith(f"{stem}."):
                        yield f"{path}/{cached.path}"


def _entries(repo: GitRepo, commit: str, folder: str) -> list[TreeEntry]:
    """The entries of `folder` (`""`: the root) in `commit`, or none when it is not a folder."""
    entry = repo.tree_entry(commit, folder)
    return repo.tree_entries(entry.oid) if entry is not None and entry.type == "tree" else []
