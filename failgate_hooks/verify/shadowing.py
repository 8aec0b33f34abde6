"""An unpinned path that Python would import in place of a pinned module.

Pinning a module is worth nothing if the commit can put something beside it
that Python finds first under the same name: a package folder (`helper/` beats
`helper.py`), an extension module (`helper.*.so` beats both), a compiled file
(an unchecked-hash `__pycache__/helper.*.pyc` is used without reading the
source). Nor can it put a module of the standard library's name beside a pinned
script: Python looks in the script's own folder first, so a `checks/json.py`
is what the pinned `checks/check.py` loads for `import json`. Judged on C's
tree with the pinned files laid over it, which is what the checkout holds, so
a pass cached for C cannot skip the judgement either.
"""

from __future__ import annotations

import posixpath
import re
import shlex
import sys
from collections.abc import Iterator, Sequence
from importlib.machinery import BYTECODE_SUFFIXES, EXTENSION_SUFFIXES, SOURCE_SUFFIXES

from failgate_hooks.git.repo import GitRepo, TreeEntry
from failgate_hooks.verify.pins import Pin, pinned_folders

# Every suffix under which Python's path finder loads a module, longest first so
# that `helper.abi3.so` is read as `helper`, not `helper.abi3`.
_SUFFIXES = sorted({*EXTENSION_SUFFIXES, *SOURCE_SUFFIXES, *BYTECODE_SUFFIXES}, key=len)[::-1]
_SYMLINK = "120000"
_CACHE = "__pycache__"
_STANDARD = frozenset(sys.stdlib_module_names)
_PYTHON = re.compile(r"(python|pypy)[0-9.]*\Z")


def module_stem(filename: str) -> str | None:
    """`helper` for `helper.py`, `helper.pyc` or `helper.cpython-311-x86_64-linux-gnu.so`."""
    for suffix in _SUFFIXES:
        if filename.endswith(suffix) and len(filename) > len(suffix):
            return filename[: -len(suffix)]
    return None


def shadowing(
    repo: GitRepo, commit: str, pins: Sequence[Pin], argv: Sequence[str] = ()
) -> str | None:
    """Why an unpinned path in `commit` shadows a pinned module, or None when none does.

    `argv` is the verifier's command: run as `python -m` or `python -c`, Python looks
    in the checkout's root folder first too."""
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
    return _standard_shadow(repo, commit, pins, pinned, argv)


def _standard_shadow(
    repo: GitRepo, commit: str, pins: Sequence[Pin], pinned: set[str], argv: Sequence[str]
) -> str | None:
    """Why an unpinned module named as one of the standard library's, in the folder of a
    pinned Python source, or of a pinned file the command names (a script need not end
    in `.py`), or in the root for `python -m` and `-c`, would be imported in its place;
    None when there is none."""
    folders: dict[str, str] = {}  # folder -> what Python runs from it
    if pins and _runs_from_root(argv):  # with nothing pinned, nothing to stand in for
        folders[""] = f"`{shlex.join(argv[:3])}`"
    named = {posixpath.normpath(arg) for arg in argv}  # a script run by its path, any name
    for pin in pins:
        folder, _, filename = pin.path.rpartition("/")
        source = any(filename.endswith(s) for s in SOURCE_SUFFIXES) or pin.path in named
        if pin.folder is None and source:
            folders.setdefault(folder, pin.path)
    for folder, script in folders.items():
        for path, name in _standard_rivals(repo, commit, folder):
            if path in pinned:
                continue
            where = f"{folder}/" if folder else "the checkout's root folder"
            return (
                f"{path} is not pinned and shadows the standard library's `{name}` for "
                f"{script} (Python looks in {where} first): pin it too in the verifier's "
                f"files, pin {where} whole, or remove it"
            )
    return None


def _runs_from_root(argv: Sequence[str]) -> bool:
    """Whether `argv` runs Python with `-m` or `-c`, which put the working folder (the
    checkout's root) first on sys.path, alone or among other short options (`-Bm`). Any
    python-named program counts, first or started by another (`env`): a false yes only
    asks for the root's standard library names to be pinned."""
    # argv[0], or a program after it (`env python3 -m`, `uv run python -c`)
    starts = [at for at, arg in enumerate(argv) if _PYTHON.match(arg.rpartition("/")[2])]
    for arg in argv[starts[0] + 1 :] if starts else ():
        if not arg.startswith("-") or arg.startswith("--"):
            continue
        for option in arg[1:]:  # short options go together: `-Bm` is `-B -m`
            if option in "cm":
                return True
            if option in "WX":  # the rest is its argument
                break
    return False


def _standard_rivals(repo: GitRepo, commit: str, folder: str) -> Iterator[tuple[str, str]]:
    """(path, module name) of what in `folder` Python would import for a standard module:
    a module of any suffix, a link, or a package's `__init__` (a folder without one is a
    namespace portion, which the standard library's own module beats)."""
    prefix = f"{folder}/" if folder else ""
    for entry in _entries(repo, commit, folder):
        path = prefix + entry.path
        if entry.mode.lstrip("0") == _SYMLINK:
            name = entry.path if entry.path in _STANDARD else module_stem(entry.path)
            if name is not None and name in _STANDARD:  # Python follows it: it counts as is
                yield path, name
        elif entry.type == "tree":
            if entry.path in _STANDARD:
                for inner in repo.tree_entries(entry.oid):
                    if module_stem(inner.path) == "__init__":
                        yield f"{path}/{inner.path}", entry.path
        else:
            name = module_stem(entry.path)
            if name is not None and name in _STANDARD:
                yield path, name


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
