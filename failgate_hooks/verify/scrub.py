"""What git never looks at in a checkout, put right before git looks at the rest.

git's own check of a checkout (verify/checkout.py) compares each tracked
path's stat data and lists what is untracked, but some things a verifier can
leave are outside what it sees or can undo:

- a `.git` anywhere (a nested repository, or a file pointing at another one):
  git would treat the folder as a repository boundary;
- a symlink: git lstat()s `dir/file` *through* a folder swapped for a link to
  its moved original, finds the same inodes and keeps the link;
- a FIFO, socket or device;
- a submodule's folder: git never looks inside one;
- a folder made unenterable or read-only: git does not track folder modes;
- a file's mode changed within the second git wrote it (git compares ctime
  to the second, and records only the executable bit).

The walk never follows a link, so it never reaches outside the checkout.
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import stat
from collections.abc import Callable, Collection

_umask: int | None = None


def folder_mode() -> int:
    """The mode git and mkdir give a new folder here: 0o777 less the umask."""
    global _umask
    if _umask is None:
        _umask = os.umask(0o022)  # reading the umask means setting it: put it straight back
        os.umask(_umask)
    return 0o777 & ~_umask


def file_mode(executable: bool) -> int:
    """The mode git gives a file it writes: 0o666 or 0o777, less the umask."""
    return (0o777 if executable else 0o666) & folder_mode()


def scrub(
    root: str, gitlinks: Collection[str], *, since: float = 0.0, known: Collection[str] | None
) -> list[str]:
    """Remove from `root` what git cannot see or undo (above); empty each submodule folder.

    `gitlinks` are the submodule paths of the commit the checkout is moved to,
    relative to `root` with `/`. `known` are the folders (relative) the
    checkout held when it was last proven, at `since` (seconds since the
    epoch); None when that is not known. Returns the folders changed since,
    or not known then ("" is the root): all of them without `known`.

    A folder's ctime, which no process can set back, moves whenever an entry
    is added to it, removed or renamed, or its mode changes. So a known folder
    not changed since holds what it held: only its subfolders are looked at,
    unless git wrote into it in the second `since` falls in. A file's mode is
    checked in each folder looked into: git compares ctime to the second, so a
    chmod within the second git wrote the file goes unseen by git, and git
    writes a file by creating it anew, which changes its folder then. An entry
    that cannot be put right raises OSError."""
    modes = (file_mode(False), file_mode(True), folder_mode())
    was = None if known is None else {"", *known}
    subfolders = _subfolders(was or ())
    same_second = math.floor(since)
    top = os.lstat(root)
    _set_mode(root, top, modes)
    changed = []
    pending = [("", root, top)]
    while pending:
        path, folder, st = pending.pop()
        if path in gitlinks:
            _empty(folder)
            continue
        found = None
        if was is not None and path in was and st.st_ctime < same_second:
            found = _known_subfolders(path, folder, subfolders.get(path, ()))
        if found is None:
            found = _scan(path, folder, modes)
        if was is None or path not in was or st.st_ctime >= since:
            changed.append(path)
        for sub, full, sub_st in found:
            _set_mode(full, sub_st, modes)
            pending.append((sub, full, sub_st))
    return changed


def _scan(
    path: str, folder: str, modes: tuple[int, int, int]
) -> list[tuple[str, str, os.stat_result]]:
    """Every entry of `folder` put right, files' modes too; its subfolders, to be walked."""
    prefix = path + "/" if path else ""
    subfolders = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_symlink() or entry.name.lower() == ".git":
                remove_tree(entry.path)
            elif entry.is_dir(follow_symlinks=False):
                subfolders.append(
                    (prefix + entry.name, entry.path, entry.stat(follow_symlinks=False))
                )
            elif not entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)  # a FIFO, socket or device
            else:
                _set_mode(entry.path, entry.stat(follow_symlinks=False), modes)
    return subfolders


def _known_subfolders(
    path: str, folder: str, names: Collection[str]
) -> list[tuple[str, str, os.stat_result]] | None:
    """The subfolders an unchanged folder held; None if one is not what it was (look again)."""
    prefix = path + "/" if path else ""
    found = []
    for name in names:
        full = os.path.join(folder, name)
        try:
            st = os.lstat(full)
        except FileNotFoundError:
            return None
        if not stat.S_ISDIR(st.st_mode):
            return None
        found.append((prefix + name, full, st))
    return found


def _subfolders(folders: Collection[str]) -> dict[str, list[str]]:
    """Each folder's subfolders by name, the root's under ""."""
    children: dict[str, list[str]] = {}
    for folder in folders:
        if not folder:
            continue
        parent, _, name = folder.rpartition("/")
        children.setdefault(parent, []).append(name)
    return children


def _set_mode(path: str, st: os.stat_result, modes: tuple[int, int, int]) -> None:
    """The mode a fresh checkout gives this folder or file (git keeps only a file's x bit).

    Git compares ctime to the second: a chmod within the second git wrote the
    file goes unseen, so the mode is put right here whatever git thinks."""
    plain, executable, folder = modes
    if stat.S_ISDIR(st.st_mode):
        want = folder
    else:
        want = executable if st.st_mode & stat.S_IXUSR else plain
    if stat.S_IMODE(st.st_mode) != want:
        os.chmod(path, want)


def _empty(folder: str) -> None:
    for name in os.listdir(folder):
        remove_tree(os.path.join(folder, name))


def remove_tree(path: str) -> None:
    """Remove a folder, file or link at `path`, even where a verifier made parts read-only.

    Never follows a link. An entry that still cannot be removed (an immutable
    file) raises the OSError that names it."""

    def retry(func: Callable[..., object], failed: str, _exc: object) -> None:
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(failed), stat.S_IRWXU)
            if os.path.isdir(failed) and not os.path.islink(failed):
                os.chmod(failed, stat.S_IRWXU)
        with contextlib.suppress(FileNotFoundError):
            func(failed)

    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, onerror=retry)
    elif os.path.lexists(path):
        os.unlink(path)  # a file, or a symlink itself (never what it points at)
