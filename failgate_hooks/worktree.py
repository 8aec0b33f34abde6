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

from failgate_hooks.cachefile import write_whole
from failgate_hooks.gitio import GitRepo

STATE = "worktree-ledger.json"
VERSION = 1
RACY_NS = 2_000_000_000  # coarse file systems stamp in seconds

Stamp = list[list[int] | None]  # (mtime, size) of the index and the ignore files


def start_uncommitted(repo: GitRepo, ledger_dir: str) -> Callable[[], list[str]]:
    """Start looking; the function returned waits and gives the uncommitted paths."""
    root = repo.working_dir
    if root is None:
        return list
    folder = os.path.join(root, *ledger_dir.strip("/").split("/"))
    if not os.path.isdir(folder):
        return list  # nothing there can be uncommitted: no walk, no process
    state = os.path.join(repo.git_dir, "failgate", STATE)
    # before git runs: a status may refresh the index's stat data and rewrite it
    unchanged = _unchanged(state, ledger_dir, _stamp(repo, root), folder)
    tracked = repo.start("status", "--porcelain", "--untracked-files=no", "--", ledger_dir)
    if unchanged:
        return lambda: _paths(tracked())
    began = time.time_ns()
    others = repo.start("ls-files", "--others", "--exclude-standard", "--", ledger_dir)

    def result() -> list[str]:
        changed = _paths(tracked())
        untracked = [line for line in others().splitlines() if line]
        if not untracked:
            # the index as these two left it is the one the next look starts from
            _save(state, ledger_dir, _stamp(repo, root), folder, began)
        return changed + untracked

    return result


def _paths(status: str) -> list[str]:
    return [line[3:] for line in status.splitlines() if line.strip()]


def _stamp(repo: GitRepo, root: str) -> Stamp:
    """What else decides which files are untracked: the index and the ignore files."""
    index = os.environ.get("GIT_INDEX_FILE") or os.path.join(repo.git_dir, "index")
    files = [index, os.path.join(root, ".gitignore"), os.path.join(repo.git_dir, "info", "exclude")]
    return [_mtime_size(path) for path in files]


def _mtime_size(path: str) -> list[int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return [found.st_mtime_ns, found.st_size]


def _unchanged(state: str, ledger_dir: str, stamp: Stamp, folder: str) -> bool:
    import json

    try:
        with open(state, "rb") as handle:
            kept = json.loads(handle.read())
        if kept["version"] != VERSION or kept["ledger"] != ledger_dir or kept["stamp"] != stamp:
            return False
        folders = kept["folders"]
        if type(folders) is not dict or not folders:
            return False
        for rel, mtime in folders.items():
            # a .gitignore inside the ledger counts as a folder: its edits change what is ignored
            if os.stat(os.path.join(folder, rel)).st_mtime_ns != mtime:
                return False
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return False
    return True


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
