"""Checkouts of exactly commit C for verifiers: kept between runs, proven equal to C each time.

What a checkout holds is C's tree less its ledger folder (verify/keys.py), the
tree the content key names: the trees made for it are written into the pool's
objects. A run takes a checkout from the repository's pool (verify/pool.py) and moves
it to C with git, which rewrites only what differs from C, so a run costs what
changed rather than the repository. Before each run the checkout is proven
equal to C: the scrub (verify/scrub.py) puts right what git cannot see, then a
one-way `read-tree --reset -u C` rewrites every tracked path whose stat data
differs from the index (ctime included, which no unprivileged process can set
back; racily clean entries are hashed) and `clean -ffdxq` removes everything
else. The index is never refreshed after a verifier ran: that would record its
changes as clean. A checkout that cannot be proven is discarded and written
fresh. Git there runs through git/checkoutgit.py, obeying failgate only.

Without a sandbox this guards against accidents, not malice: a verifier that
means harm can write to the pool's git dir or index beside its checkout.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Collection, Iterator

from failgate_hooks.core.errors import GitError
from failgate_hooks.core.ids import object_format_of
from failgate_hooks.git.checkoutgit import CheckoutGit, Shape, object_dirs
from failgate_hooks.git.repo import GitRepo
from failgate_hooks.verify.keys import VerifiedTree, verified_tree
from failgate_hooks.verify.load_watcher import is_within
from failgate_hooks.verify.pool import (
    Pool,
    Slot,
    SlotState,
    pool_id,
    pools_folder,
    read_state,
    write_state,
)
from failgate_hooks.verify.scrub import remove_tree as remove_tree
from failgate_hooks.verify.scrub import scrub

# A version-2 index has no extended flags: no skip-worktree, no intent-to-add.
_PLAIN_INDEX = b"DIRC\x00\x00\x00\x02"
# Beyond this many changed folders, `clean` looks at every folder instead of each of them.
_CLEAN_FOLDERS = 200


def verifier_git_env(tree: str) -> dict[str, str]:
    """What a verifier running in checkout `tree` needs so that git there finds no repository.

    Git's search stops at the checkout, and at the folder above it (reached by a
    `node_modules -> ..` link): never the pool, a home folder kept in git, or a
    work tree the cache folder happens to be in. Git stops only below a ceiling,
    hence two: the checkout's parent and grandparent."""
    slot = os.path.dirname(os.path.abspath(tree))
    return {"GIT_CEILING_DIRECTORIES": os.pathsep.join([slot, os.path.dirname(slot)])}


class Checkouts:
    """Checkouts of exact commits for one process's verifier runs, each proven before use.

    Slots come from the repository's pool in the user's cache; a temporary one
    is used when there is no usable cache folder, when every pool slot is busy,
    and for `fresh`. With `parent_dir`, every checkout is temporary, there.
    `warnings` gets one line for each checkout that cannot be removed, and for a
    pool that cannot be kept; the caller prints them: the verifier's verdict stands."""

    def __init__(self, repo: GitRepo, *, parent_dir: str | None = None) -> None:
        self._repo = repo
        self._parent = parent_dir
        self._pool: Pool | None = None
        self._no_pool = parent_dir is not None
        self._temporary: Pool | None = None
        self._held: list[tuple[Pool, Slot]] = []
        self._idle: list[tuple[Pool, Slot]] = []
        # What could not be removed (a verifier made a file immutable) is reported and
        # left; a pool that cannot be kept is reported, and temporary checkouts used.
        self.warnings: list[str] = []

    def __enter__(self) -> Checkouts:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Let other runs take this object's slots, and remove its temporary checkouts."""
        held, self._held, self._idle = self._held, [], []
        for pool, slot in held:
            pool.release(slot)
        temporary, self._temporary = self._temporary, None
        if temporary is not None:
            temporary.close(self.warnings.append)

    @contextlib.contextmanager
    def checkout(self, commit: str, ledger_dir: str) -> Iterator[str]:
        """A folder proven to hold exactly `commit`'s tree without its ledger folder (what
        the content key names), for the block; kept afterwards."""
        target = verified_tree(self._repo, commit, ledger_dir)
        held = self._idle.pop() if self._idle else self._take(target.tree)
        held = self._prove_or_replace(held, target)
        try:
            yield held[1].tree
        finally:
            self._idle.append(held)

    def fresh(self, commit: str, ledger_dir: str) -> str:
        """A new temporary folder holding what `checkout` would, removed by `close`."""
        target = verified_tree(self._repo, commit, ledger_dir)
        pool = self._temporary_pool()
        held = self._take_from(pool, target.tree, new=True)
        return self._prove_or_replace(held, target)[1].tree

    def _prove_or_replace(self, held: tuple[Pool, Slot], target: VerifiedTree) -> tuple[Pool, Slot]:
        """`held` proven to hold `target`; else discarded, and a new slot written instead."""
        pool, slot = held
        try:
            prove(pool.git, slot, target)
            return held
        except (OSError, GitError):
            self._drop(held)
        fresh = self._take_from(pool, target.tree, new=True)
        try:
            prove(fresh[0].git, fresh[1], target)
        except (OSError, GitError):
            self._drop(fresh)
            raise
        return fresh

    def _drop(self, held: tuple[Pool, Slot]) -> None:
        self._held.remove(held)
        held[0].discard(held[1], self.warnings.append)

    def _take(self, tree: str) -> tuple[Pool, Slot]:
        pool = self._persistent_pool(tree)
        if pool is not None:
            try:
                slot = pool.take(tree, object_format_of(tree), self.warnings.append)
            except (OSError, GitError) as exc:
                self._give_up_pool(pool.root, exc)
            else:
                if slot is not None:
                    self._held.append((pool, slot))
                    return pool, slot
        return self._take_from(self._temporary_pool(), tree, new=False)

    def _take_from(self, pool: Pool, tree: str, *, new: bool) -> tuple[Pool, Slot]:
        """A slot of `pool`, or of a temporary pool when `pool` has none free."""
        slot = pool.take(tree, object_format_of(tree), self.warnings.append, new=new)
        if slot is None:
            pool = self._temporary_pool()
            slot = pool.take(tree, object_format_of(tree), self.warnings.append, new=True)
            assert slot is not None, "a temporary pool always makes a slot"
        self._held.append((pool, slot))
        return pool, slot

    def _persistent_pool(self, tree: str) -> Pool | None:
        """The repository's pool in the user's cache; None when there is no usable one."""
        if self._pool is not None or self._no_pool:
            return self._pool
        pools = pools_folder(os.environ)
        if pools is None:
            self._no_pool = True
            return None
        root = os.path.join(pools, pool_id(self._repo.common_dir, object_format_of(tree)))
        inside = [self._repo.common_dir, self._repo.working_dir or self._repo.common_dir]
        real = os.path.realpath(root)
        if any(is_within(real, os.path.realpath(folder)) for folder in inside):
            # From a checkout there, Node's module search and other upward
            # searches would reach the user's own files.
            self._no_pool = True
            return None
        try:
            self._pool = Pool.at(root, object_dirs(self._repo))
            label = os.path.join(root, "repository")
            if not os.path.exists(label):
                with open(label, "w", encoding="utf-8", errors="surrogateescape") as handle:
                    handle.write(self._repo.common_dir + "\n")
        except OSError as exc:
            self._give_up_pool(root, exc)
        return self._pool

    def _give_up_pool(self, root: str, exc: Exception) -> None:
        self._pool, self._no_pool = None, True
        self.warnings.append(
            f"verifier checkouts cannot be kept in {root} ({exc}): each run writes a fresh one"
        )

    def _temporary_pool(self) -> Pool:
        if self._temporary is None:
            self._temporary = Pool.temporary_in(self._parent, object_dirs(self._repo))
        return self._temporary


def prove(git: CheckoutGit, slot: Slot, target: VerifiedTree) -> None:
    """Make `slot`'s checkout hold exactly `target`'s tree, or raise OSError or GitError."""
    tree = target.tree
    git.store_trees(target.made)  # the pool's objects may lack them, or have lost them
    held = read_state(slot.state)
    since = _settled(slot, held)
    shape = _shape(git, held, tree)
    if not _index_is_plain(slot.index):
        # Without the index git knows no stat data: every file is written again,
        # and nothing on disk is known to be the last commit's.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(slot.index)
        held = None
    _make_folder(slot.tree)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(slot.index + ".lock")  # a killed run's: this run holds the slot
    on_disk = None if held is None else held.shape.folders | held.shape.gitlinks
    changed = scrub(slot.tree, shape.gitlinks, since=since, known=on_disk)
    git.move(slot.tree, slot.index, tree)
    if on_disk is None or "" in changed or len(changed) > _CLEAN_FOLDERS:
        git.clean(slot.tree, slot.index)
    elif changed:
        # Only a folder changed since the last run can hold what the commit does not.
        git.clean(slot.tree, slot.index, changed)
        _remove_emptied(slot.tree, changed, shape.gitlinks)
    write_state(slot.state, SlotState(tree, shape, time.time()))


def _settled(slot: Slot, held: SlotState | None) -> float:
    """Since when the checkout may have changed: when it was last handed to a run.

    The state file's ctime, written last, from the clock every file time here
    comes from (coarser than time.time(), so a change in the same tick counts
    as later); the time recorded in it if earlier, should the file have been
    written again. 0.0, so that everything is looked at, without a record or
    when the clock has been set back since."""
    if held is None or time.time() < held.settled:
        return 0.0
    try:
        written = os.stat(slot.state).st_ctime
    except OSError:
        return 0.0
    return min(written, held.settled)


def _shape(git: CheckoutGit, held: SlotState | None, tree: str) -> Shape:
    """`tree`'s folders and submodules: from the last tree and a tree diff, else listed."""
    if held is not None:
        if held.tree == tree:
            return held.shape
        try:
            return git.reshape(held.shape, held.tree, tree)
        except GitError:
            pass  # the tree it held is gone (a rejected push's objects): list the tree
    return git.shape(tree)


def _remove_emptied(root: str, folders: list[str], gitlinks: Collection[str]) -> None:
    """Remove each folder left empty, and its parents left empty in turn.

    A commit holds no empty folder but a submodule's: one left once `clean`
    removed what lay in a folder the commit drops is not the commit's."""
    for folder in sorted(folders, key=len, reverse=True):
        while folder and folder not in gitlinks:
            try:
                os.rmdir(os.path.join(root, folder))
            except FileNotFoundError:
                pass  # `clean` removed it whole: its parent may be empty now
            except OSError:
                break  # not empty: the usual case
            folder = folder.rpartition("/")[0]


def _index_is_plain(index: str) -> bool:
    try:
        with open(index, "rb") as handle:
            return handle.read(len(_PLAIN_INDEX)) == _PLAIN_INDEX
    except OSError:
        return False


def _make_folder(path: str) -> None:
    """A real folder at `path`, whatever stands there (a verifier may replace its own cwd)."""
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            return
        remove_tree(path)
    except FileNotFoundError:
        pass
    os.mkdir(path)
