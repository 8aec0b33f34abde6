"""Pinned verifier files: taken from a reviewed revision, written over a checkout.

A verifier's pinned files come from the revision its event was read from, not
from the commit under check, and only as regular files: a symlink on the way
is refused in the revision, and replaced, never followed, in the checkout. A
pinned folder is pinned whole: the checkout's copy of it is replaced by the
revision's, so nothing the commit adds there is seen.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import NamedTuple

from failgate_hooks.core.events import is_safe_relative_path
from failgate_hooks.core.ids import short_id
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.git.trees import TreeEntry
from failgate_hooks.verify.scrub import remove_tree

# Tree entry modes without leading zeros (a TreeEntry pads them to six digits).
_TREE = "40000"
_SYMLINK = "120000"
_GITLINK = "160000"


class PinError(Exception):
    """A pinned verifier file cannot be taken from its revision; the verifier does not run."""


class Pin(NamedTuple):
    """One pinned verifier file as its revision holds it."""

    path: str
    mode: str
    oid: str
    folder: str | None = None  # the pinned folder it is part of, if any

    @property
    def executable(self) -> bool:
        return self.mode == "100755"


def pinned_entry(repo: GitRepo, rev: str, path: str) -> TreeEntry | str:
    """The file or folder entry at `path` in `rev`'s tree, or why there is none.

    Walks the path one tree at a time instead of asking `ls-tree`, whose path
    argument is a pathspec: `checks/*.py` would match other files."""
    where = f"pinned verifier file {path}"
    tree = repo.commit_tree(rev)
    parts = path.split("/")
    for depth, part in enumerate(parts):
        entry = next((e for e in repo.tree_entries(tree) if e.path == part), None)
        so_far = "/".join(parts[: depth + 1])
        last = depth == len(parts) - 1
        if entry is None:
            return f"{where} is missing at {short_id(rev)}"
        mode = entry.mode.lstrip("0")
        if mode == _SYMLINK:
            what = "is a symlink" if last else f"lies under {so_far}, a symlink"
            return f"{where} {what} at {short_id(rev)}; symlinks are never followed"
        if last:
            if mode == _GITLINK:
                return f"{where} is a submodule at {short_id(rev)}, not a file"
            return entry
        if mode != _TREE:
            return f"{where} is missing at {short_id(rev)} ({so_far} is not a folder)"
        tree = entry.oid
    raise AssertionError("unreachable: a path has at least one part")


def resolve_pins(repo: GitRepo, rev: str, files: Sequence[str]) -> list[Pin]:
    """Each pinned path's regular files at `rev` (a folder's, all of them, recursively);
    PinError naming the path and why not."""
    pins: dict[str, Pin] = {}
    for path in files:
        if not is_safe_relative_path(path):
            raise PinError(f"pinned verifier file {path!r} is not a safe relative path")
        found = pinned_entry(repo, rev, path)
        if isinstance(found, str):
            raise PinError(found)
        if found.mode.lstrip("0") == _TREE:
            pins.update((pin.path, pin) for pin in _folder_pins(repo, rev, path))
        else:
            pins.setdefault(path, Pin(path, _file_mode(found.mode), found.oid))
    return list(pins.values())


def _folder_pins(repo: GitRepo, rev: str, folder: str) -> list[Pin]:
    """Every file under a pinned folder at `rev`; PinError for a link or submodule in it."""
    pins = []
    for entry in repo.ls_folder(rev, folder):
        mode = entry.mode.lstrip("0")
        where = f"pinned verifier folder {folder} holds {entry.path}"
        if mode == _SYMLINK:
            raise PinError(f"{where}, a symlink, at {short_id(rev)}; symlinks are never followed")
        if mode == _GITLINK:
            raise PinError(f"{where}, a submodule, at {short_id(rev)}")
        pins.append(Pin(entry.path, _file_mode(entry.mode), entry.oid, folder=folder))
    return pins


def _file_mode(mode: str) -> str:
    return "100755" if mode == "100755" else "100644"


def pinned_folders(pins: Sequence[Pin]) -> list[str]:
    """The folders pinned whole, each once."""
    return list(dict.fromkeys(pin.folder for pin in pins if pin.folder is not None))


def written_over(pins: Sequence[Pin], path: str) -> bool:
    """Whether the checkout's `path` is what the pins make it: a pinned file, or anything
    in a folder pinned whole (which replaces the commit's copy of that folder)."""
    return any(path == pin.path for pin in pins) or any(
        path.startswith(f"{folder}/") for folder in pinned_folders(pins)
    )


def pins_read_only(pins: Sequence[Pin]) -> list[str]:
    """What the sandbox keeps read-only of the pins failgate wrote (read_only_paths)."""
    return read_only_paths([pin.path for pin in pins], pinned_folders(pins))


def read_only_paths(files: Sequence[str], folders: Sequence[str]) -> list[str]:
    """What the sandbox keeps read-only of the verifier's files failgate wrote: each of
    `files`, each of the `folders` pinned whole, and each pinned Python file's folder,
    which Python puts first on sys.path (a `json.py` planted there is what the
    verifier's `import json` loads).

    Not the checkout root, where tests write (pytest's cache, coverage files): a pinned
    Python file at the top keeps only itself read-only."""
    python_folders = [os.path.dirname(path) for path in files if path.endswith(".py")]
    wanted = [*files, *folders, *python_folders]
    return [path for path in dict.fromkeys(wanted) if path]


def differs_from(repo: GitRepo, commit: str, pins: Sequence[Pin]) -> str | None:
    """How `commit`'s own copy differs from the pinned files, or None when it holds them."""
    for pin in pins:
        found = pinned_entry(repo, commit, pin.path)
        if isinstance(found, str) or found.oid != pin.oid or found.mode != pin.mode:
            return f"pinned file {pin.path} differs from {short_id(commit)}'s"
    pinned = {pin.path for pin in pins}
    for folder in pinned_folders(pins):
        extra = [e.path for e in repo.ls_folder(commit, folder) if e.path not in pinned]
        if extra:
            return f"{short_id(commit)} has {extra[0]} in the pinned folder {folder}"
    return None


def write_pins(repo: GitRepo, root: str, pins: Sequence[Pin]) -> None:
    """Write each pinned file over the checkout at `root`: a regular file, never through a link.

    A folder pinned whole is emptied first: what the commit holds there is not pinned."""
    for folder in pinned_folders(pins):
        parent = _real_folder(root, folder.split("/")[:-1])
        remove_tree(os.path.join(parent, folder.rsplit("/", 1)[-1]))
    blobs = repo.read_blobs(pin.oid for pin in pins)
    for pin in pins:
        write_regular_file(root, pin.path, blobs[pin.oid], pin.executable)


def write_regular_file(root: str, path: str, data: bytes, executable: bool) -> None:
    """Write `data` as a regular file at `path` under `root`, never through a link.

    Whatever stands in the way (a link, a file where a folder goes) is replaced."""
    parts = path.split("/")
    target = os.path.join(_real_folder(root, parts[:-1]), parts[-1])
    remove_tree(target)  # a symlink is unlinked, never followed
    mode = 0o755 if executable else 0o644
    # O_EXCL fails on anything still there, a symlink included: never write through one.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(target, flags, mode)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.chmod(target, mode)  # the umask must not take the exec bit away


def _real_folder(root: str, parts: Sequence[str]) -> str:
    """`root/parts…` as real folders, made where missing; the path to the last one."""
    folder = root
    for part in parts:
        folder = os.path.join(folder, part)
        # The checkout is C's, and C may hold a symlink where the pinned revision has
        # a folder: replace it, so nothing is written, or removed, outside the checkout.
        if os.path.islink(folder) or (os.path.lexists(folder) and not os.path.isdir(folder)):
            os.unlink(folder)
        if not os.path.lexists(folder):
            os.mkdir(folder)
    return folder
