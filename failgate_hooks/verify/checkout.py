"""Clean checkouts of exactly commit C, for verifiers to run in, and their removal."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator

from failgate_hooks.git.repo import GitRepo

# read-tree runs the user's post-index-change hook, even on a temporary index.
_NO_HOOKS = ("-c", f"core.hooksPath={os.devnull}")


class Checkouts:
    """Clean checkouts of exactly C, each commit's tree read once, all removed on exit.

    Each commit's tree goes once into a temporary index (`read-tree`); every
    verifier then gets its own folder written from that index by
    `checkout-index`. A fresh write from the objects, rather than a copy of a
    pristine folder, means nothing one verifier did (a chmod, a hard link, a
    file swapped for a symlink) can reach the next, and no pristine copy has
    to sit on disk beside the working ones.
    """

    def __init__(self, repo: GitRepo, *, parent_dir: str | None = None) -> None:
        self._repo = repo
        self._parent = parent_dir
        self._base: str | None = None
        self._indexes: dict[str, str] = {}
        self._count = 0
        # What could not be removed (a verifier made a file immutable): reported, left.
        self.left_behind: list[str] = []

    def __enter__(self) -> Checkouts:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Remove every checkout and index this object made."""
        base, self._base = self._base, None
        self._indexes.clear()
        if base is not None:
            self._remove(base)

    @contextlib.contextmanager
    def checkout(self, commit: str) -> Iterator[str]:
        """A new folder holding exactly `commit`'s tree, removed when the block ends."""
        path = self.fresh(commit)
        try:
            yield path
        finally:
            self._remove(path)

    def _remove(self, path: str) -> None:
        """Remove a folder; one that cannot be removed is noted, never a failure of the run:
        the verifier's verdict stands."""
        try:
            remove_tree(path)
        except OSError as exc:
            self.left_behind.append(
                f"could not remove {path} ({exc.strerror or exc}): remove it by hand "
                "(a verifier may have made a file immutable: chattr -R -i)"
            )

    def fresh(self, commit: str) -> str:
        """A new folder holding exactly `commit`'s tree, removed by `close`."""
        index = self._index_for(commit)
        self._count += 1
        path = os.path.join(self._base_dir(), f"{commit[:12]}-{self._count}")
        os.mkdir(path)
        # --work-tree, not --prefix: checkout-index refuses a bare repository otherwise.
        # export-ignore does not apply here, and gitlinks stay empty folders.
        self._repo.run(
            *_NO_HOOKS,
            f"--work-tree={path}",
            "checkout-index",
            "--all",
            "--force",
            env={"GIT_INDEX_FILE": index, "GIT_LFS_SKIP_SMUDGE": "1"},
        )
        return path

    def _base_dir(self) -> str:
        if self._base is None:
            self._base = tempfile.mkdtemp(prefix="failgate-", dir=self._parent)
        return self._base

    def _index_for(self, commit: str) -> str:
        index = self._indexes.get(commit)
        if index is None:
            index = os.path.join(self._base_dir(), f"index-{len(self._indexes)}")
            # A temporary index leaves the user's own index, and a quarantine, untouched.
            self._repo.run(*_NO_HOOKS, "read-tree", commit, env={"GIT_INDEX_FILE": index})
            self._indexes[commit] = index
        return index


def remove_tree(path: str) -> None:
    """Remove a folder, file or link at `path`, even where a verifier made parts read-only."""

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
