"""Ledger files in the work tree that are not committed: `check` warns of them (DESIGN §5).

Changes to tracked files are asked of git every time (`status -uno` reads no
folder). Untracked files are what `git status` spends its time on: in a
10,000-event ledger it reads 5,000 folders (~45 ms, two thirds of a check).
A folder's mtime changes whenever an entry is added to it or removed from it,
so, as git's own untracked cache does, the folders' mtimes are kept after a
walk that found nothing untracked; while every folder, the index and the ignore
files are as they were, no file can have appeared and the walk is skipped.
A folder changed within RACY_NS of a walk is never trusted (a file written
while git walked could be missed), and anything unreadable means a walk.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from failgate_hooks.cachefile import write_whole
from failgate_hooks.core.errors import GitError
from failgate_hooks.git.repo import GitRepo

if TYPE_CHECKING:
    from failgate_hooks.forked import Child

STATE = "worktree-ledger.json"
VERSION = 1
RACY_NS = 2_000_000_000  # coarse file systems stamp in seconds
_PAUSE_EVERY = 256  # folders stat'ed between two chances to let other work go first

Stamp = list[list[int] | None]  # the index's paths, and (mtime, size) of the ignore files


class Look:
    """A look under way: call it for the uncommitted paths. Use it in a `with` block:
    leaving the block without asking ends the look (a forked child left running would
    outlive failgate)."""

    def __init__(self, paths: Callable[[], list[str]], child: Child | None = None) -> None:
        self._paths = paths
        self._child = child

    def __call__(self) -> list[str]:
        return self._paths()

    def __enter__(self) -> Look:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._child is not None:
            self._child.__exit__()


def start_uncommitted(repo: GitRepo, ledger_dir: str) -> Look:
    """Start looking for uncommitted ledger paths.

    The look runs in a forked child where it can (forked.Child): comparing the
    mtimes of a large ledger's folders (5,000 at 10,000 events) then costs the
    decision nothing. While the decision has both cores (forked.both_cores: a first
    index being built), it waits. Elsewhere its git processes still run beside the
    decision."""
    if _folder(repo, ledger_dir) is None:
        return Look(list)  # nothing there can be uncommitted: no walk, no process
    from failgate_hooks.forked import Child, wait_for_a_core

    def look() -> list[str]:
        repo.forget_inherited()  # in the child: the parent's cat-file is not its own
        # Its answer is wanted only at the end: while the decision keeps both cores
        # busy (a first run building the ledger index), the look waits for it.
        wait_for_a_core()
        return start_here(repo, ledger_dir, pause=wait_for_a_core)()

    child = Child(look)
    if not child.started:
        return Look(start_here(repo, ledger_dir))

    def result() -> list[str]:
        found = child.result()
        return start_here(repo, ledger_dir)() if found is None else found

    return Look(result, child)


def _folder(repo: GitRepo, ledger_dir: str) -> tuple[str, str] | None:
    """The work tree and its ledger folder, when both exist."""
    root = repo.working_dir
    if root is None:
        return None
    folder = os.path.join(root, *ledger_dir.strip("/").split("/"))
    return (root, folder) if os.path.isdir(folder) else None


def start_here(
    repo: GitRepo, ledger_dir: str, *, pause: Callable[[], None] = lambda: None
) -> Callable[[], list[str]]:
    """The look in this process: git works on the other core until the result is asked.
    `pause` is called between runs of the folders' stats (to let other work go first)."""
    found = _folder(repo, ledger_dir)
    if found is None:
        return list
    root, folder = found
    state = os.path.join(repo.git_dir, "failgate", STATE)
    # taken before git runs: a status may refresh the index's stat data and rewrite it
    stamp = _stamp(repo, root, ledger_dir)
    tracked = repo.start("status", "--porcelain", "--untracked-files=no", "--", ledger_dir)
    excludes = repo.start("config", "--get", "core.excludesFile")  # while folders are read
    kept = _kept_stamp(state, ledger_dir, folder, pause)
    stamp.append(_mtime_size(_excludes_file(excludes)))
    if kept is not None and kept == stamp:
        return lambda: _paths(tracked())
    began = time.time_ns()
    others = repo.start("ls-files", "--others", "--exclude-standard", "--", ledger_dir)

    def result() -> list[str]:
        changed = _paths(tracked())
        untracked = [line for line in others().splitlines() if line]
        if not untracked:
            # the index as these two left it is the one the next look starts from
            after = _stamp(repo, root, ledger_dir)
            after.append(stamp[-1])
            _save(state, ledger_dir, after, folder, began)
        return changed + untracked

    return result


def _paths(status: str) -> list[str]:
    return [line[3:] for line in status.splitlines() if line.strip()]


def _stamp(repo: GitRepo, root: str, ledger_dir: str) -> Stamp:
    """What else decides which files are untracked: the index and every ignore file git
    reads for the ledger folder (its ancestors' .gitignore, info/exclude, the global
    ignore file), and the config files that may name another (core.excludesFile)."""
    index = os.environ.get("GIT_INDEX_FILE") or os.path.join(repo.git_dir, "index")
    common = repo.common_dir  # a linked work tree reads info/exclude and config there
    files = [os.path.join(common, "info", "exclude"), os.path.join(common, "config")]
    parts = [p for p in ledger_dir.split("/") if p]
    files += [os.path.join(root, *parts[:depth], ".gitignore") for depth in range(len(parts))]
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    files += [os.path.join(xdg, "git", "ignore"), os.path.join(xdg, "git", "config")]
    files += [os.path.join(home, ".gitconfig"), os.environ.get("GIT_CONFIG_GLOBAL", "")]
    return [_index_paths(index), *(_mtime_size(path) for path in files)]


def _index_paths(index: str) -> list[int] | None:
    """How many paths the index tracks, and its size: a file leaves it only by changing them.

    Not its mtime: `git status` rewrites the index whenever it refreshes stat data,
    which would make every look walk."""
    try:
        with open(index, "rb") as handle:
            header = handle.read(12)  # "DIRC", version, number of entries
            size = os.fstat(handle.fileno()).st_size
    except OSError:
        return None
    if len(header) != 12 or header[:4] != b"DIRC":
        return None
    return [int.from_bytes(header[8:12], "big"), size]


def _excludes_file(started: Callable[[], str]) -> str:
    """The ignore file core.excludesFile names, if any (a `git config` started already)."""
    try:
        named = started().strip()
    except GitError:
        return ""  # unset (git config exits 1), or unreadable: no such file to watch
    return os.path.expanduser(named) if named else ""


def _mtime_size(path: str) -> list[int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return [found.st_mtime_ns, found.st_size]


def _kept_stamp(
    state: str, ledger_dir: str, folder: str, pause: Callable[[], None] = lambda: None
) -> Stamp | None:
    """The stamp of the last look that found nothing, if every folder it saw is unchanged
    since (the caller compares the stamp: the index and the ignore files)."""
    import json

    try:
        with open(state, "rb") as handle:
            kept = json.loads(handle.read())
        if kept["version"] != VERSION or kept["ledger"] != ledger_dir:
            return None
        folders = kept["folders"]
        if type(folders) is not dict or not folders:
            return None
        fd = os.open(folder, os.O_RDONLY)
        try:
            for i, (rel, mtime) in enumerate(folders.items()):
                if not i % _PAUSE_EVERY:
                    pause()
                # a .gitignore inside the ledger counts as a folder: its edits change what
                # is ignored (relative to the folder's descriptor: a third of the time)
                if os.stat(rel, dir_fd=fd).st_mtime_ns != mtime:
                    return None
        finally:
            os.close(fd)
    except (OSError, ValueError, KeyError, TypeError, RecursionError, NotImplementedError):
        return None
    stamp = kept["stamp"]
    return stamp if isinstance(stamp, list) else None


def _save(state: str, ledger_dir: str, stamp: Stamp, folder: str, began: int) -> None:
    """Keep the folders' mtimes, unless one changed while (or just before) git walked."""
    import json

    folders: dict[str, int] = {}
    for path, _, names in os.walk(folder):
        watched = [path] + [os.path.join(path, n) for n in names if n == ".gitignore"]
        for item in watched:
            try:
                mtime = os.stat(item).st_mtime_ns
            except OSError:
                return
            if mtime >= began - RACY_NS:
                return  # racy: trusted only once it is older than the walk
            folders[os.path.relpath(item, folder)] = mtime
    kept = {"version": VERSION, "ledger": ledger_dir, "stamp": stamp, "folders": folders}
    write_whole(state, json.dumps(kept).encode("utf-8"))  # else the next check walks again
