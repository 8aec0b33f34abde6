"""Where verifier checkouts wait between runs, and which run holds which.

A repository's pool is a folder of its own in the user's cache, outside every
repository and work tree:

    <cache>/failgate/checkouts/<pool id>/
        repository   the repository's path, for a person reading the folder
        lock         held while a run picks, makes or prunes slots
        git/, home/  the private git dir (git/checkoutgit.py) and git's empty HOME
        0/ 1/ …      slots: tree/ (the checkout), index, state.json, lock (held while in use)
        broken/      slots that could not be removed (a file made immutable), left for a person

Every run proves its checkout equal to the commit before it runs, so deleting
any of this, or all of it, at any time is always safe: it costs one full
checkout. A pool for a single run lives in a temporary folder and goes with it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeGuard

from failgate_hooks.git.checkoutgit import CheckoutGit, Shape
from failgate_hooks.verify.scrub import remove_tree

POOL_FORMAT = 1  # part of the pool id: a new layout starts a new pool
MAX_SLOTS = 4  # concurrent runs beyond this get a temporary checkout
IDLE_SLOT_S = 14 * 86_400  # a slot unused this long is pruned

Report = Callable[[str], None]


def cache_home(environ: Mapping[str, str]) -> str | None:
    """`$XDG_CACHE_HOME`, else `~/.cache`; None when neither can be named."""
    xdg = environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):
        return xdg
    home = environ.get("HOME", "")
    return os.path.join(home, ".cache") if os.path.isabs(home) else None


def pools_folder(environ: Mapping[str, str]) -> str | None:
    """Where every repository's pool lives: `failgate/checkouts` in the cache folder."""
    cache = cache_home(environ)
    return None if cache is None else os.path.join(cache, "failgate", "checkouts")


def pool_id(common_dir: str, object_format: str) -> str:
    """The pool's folder name: one per repository, object format and pool layout."""
    key = f"{os.path.realpath(common_dir)}\0{object_format}\0{POOL_FORMAT}"
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:20]


@dataclass
class Slot:
    """One checkout folder and the index git keeps its stat data in, held through `lock_fd`."""

    path: str
    lock_fd: int

    @property
    def tree(self) -> str:
        return os.path.join(self.path, "tree")

    @property
    def index(self) -> str:
        return os.path.join(self.path, "index")

    @property
    def state(self) -> str:
        return os.path.join(self.path, "state.json")


class Pool:
    """The slots of one folder (`root`), and the private git their checkouts are moved by."""

    def __init__(self, root: str, git: CheckoutGit, *, temporary: bool) -> None:
        self.root = root
        self.git = git
        self.temporary = temporary

    @classmethod
    def at(cls, root: str, objects: list[str], *, temporary: bool = False) -> Pool:
        """The pool in `root` (made when missing); OSError when it cannot be."""
        root = os.path.abspath(root)  # git runs in the checkout: every path it gets is absolute
        os.makedirs(root, mode=0o700, exist_ok=True)
        git = CheckoutGit(os.path.join(root, "git"), objects, os.path.join(root, "home"))
        return cls(root, git, temporary=temporary)

    @classmethod
    def temporary_in(cls, parent: str | None, objects: list[str]) -> Pool:
        """A pool for this run only, in a new folder under `parent` (default: TMPDIR)."""
        return cls.at(tempfile.mkdtemp(prefix="failgate-", dir=parent), objects, temporary=True)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        fd = os.open(os.path.join(self.root, "lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.utime(fd)  # when the pool was last used, for a person or a pruner
            yield
        finally:
            os.close(fd)

    def take(
        self, tree: str, object_format: str, report: Report, *, new: bool = False
    ) -> Slot | None:
        """A slot no other run holds, now held by this one; None when all are busy.

        Prefers a slot already holding `tree`, then the one used last: the
        fewer files git has to write. With `new`, only an empty slot. Prunes
        idle slots on the way."""
        with self._locked():
            self.git.ensure(object_format)
            self._forget_broken()
            names = self._slot_names()
            taken = None
            for name in sorted(names, key=lambda n: self._preference(n, tree)):
                slot = self._try_lock(name)
                if slot is None:
                    continue
                if taken is None and not new:
                    taken = slot
                elif self._idle_for(name) > IDLE_SLOT_S:
                    self.discard(slot, report)
                else:
                    self.release(slot)
            if taken is None and (self.temporary or len(names) < MAX_SLOTS):
                free = next(str(n) for n in range(len(names) + 1) if str(n) not in names)
                os.makedirs(os.path.join(self.root, free), mode=0o700, exist_ok=True)
                taken = self._try_lock(free)
            return taken

    def release(self, slot: Slot) -> None:
        """Let other runs take `slot`; the checkout stays for the next one."""
        if slot.lock_fd >= 0:
            os.close(slot.lock_fd)
            slot.lock_fd = -1

    def discard(self, slot: Slot, report: Report) -> None:
        """Remove `slot` wholly; one that cannot be removed is reported and left in broken/.

        It is moved aside first, so that no other run can take it meanwhile."""
        name = os.path.basename(slot.path)
        aside = os.path.join(self.root, "broken", f"{name}-{time.time_ns()}")
        try:
            os.makedirs(os.path.dirname(aside), exist_ok=True)
            os.rename(slot.path, aside)
            remove_tree(aside)
        except OSError as exc:
            report(_left(exc, aside if os.path.lexists(aside) else slot.path))
        finally:
            self.release(slot)

    def close(self, report: Report) -> None:
        """A temporary pool is removed; one that cannot be is reported and left."""
        if self.temporary:
            try:
                remove_tree(self.root)
            except OSError as exc:
                report(_left(exc, self.root))

    def _slot_names(self) -> set[str]:
        with os.scandir(self.root) as entries:
            return {e.name for e in entries if e.name.isdigit() and e.is_dir(follow_symlinks=False)}

    def _preference(self, name: str, tree: str) -> tuple[bool, float]:
        held = read_state(os.path.join(self.root, name, "state.json"))
        return (held is None or held.tree != tree, -self._last_used(name))

    def _last_used(self, name: str) -> float:
        try:
            return os.stat(os.path.join(self.root, name, "state.json")).st_mtime
        except OSError:
            return 0.0

    def _idle_for(self, name: str) -> float:
        return time.time() - (self._last_used(name) or time.time())

    def _try_lock(self, name: str) -> Slot | None:
        path = os.path.join(self.root, name)
        try:
            fd = os.open(os.path.join(path, "lock"), os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return None
        return Slot(path, fd)

    def _forget_broken(self) -> None:
        """Remove slots left aside once a person has made them removable again."""
        broken = os.path.join(self.root, "broken")
        if os.path.isdir(broken):
            with contextlib.suppress(OSError):
                remove_tree(broken)


class SlotState(NamedTuple):
    """What a slot's checkout was last proven equal to: a tree, its shape, and when."""

    tree: str
    shape: Shape
    settled: float  # when it was handed to a run, in seconds since the epoch


_STATE_FORMAT = 3  # 3: a tree (the commit's without its ledger), no longer a commit


def read_state(path: str) -> SlotState | None:
    """A slot's state.json, or None when it is missing or not one this code wrote."""
    try:
        with open(path, encoding="utf-8") as handle:
            data: Any = json.load(handle)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != _STATE_FORMAT:
        return None
    tree, settled = data.get("tree"), data.get("settled")
    folders, gitlinks = data.get("folders"), data.get("gitlinks")
    if not isinstance(tree, str) or type(settled) is not float:
        return None
    if not _paths(folders) or not _paths(gitlinks):
        return None
    return SlotState(tree, Shape(frozenset(folders), frozenset(gitlinks)), settled)


def _paths(value: object) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(path, str) for path in value)


def write_state(path: str, state: SlotState) -> None:
    """Write a slot's state.json whole (write, then rename over the old one)."""
    data = {
        "format": _STATE_FORMAT,
        "tree": state.tree,
        "folders": sorted(state.shape.folders),
        "gitlinks": sorted(state.shape.gitlinks),
        "settled": state.settled,
    }
    partial = path + ".partial"
    with open(partial, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    os.replace(partial, path)


def _left(exc: OSError, where: str) -> str:
    """The report of a checkout that could not be removed."""
    what = f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc.strerror or exc)
    return (
        f"could not remove {where} ({what}): remove it by hand "
        "(a verifier may have made a file immutable: chattr -R -i)"
    )
