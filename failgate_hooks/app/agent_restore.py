"""A `git restore` or `git checkout` of paths that reaches a protected place: whether it
would change anything there, read from git and the disk before it runs.

`git restore .` and `git checkout -- .` rewrite the work tree from the index:
how an agent discards its own edits. They reach the ledger, pre-commit's
configuration and the agents' hook configuration, and write them from the
index, where `git reset REV -- .pre-commit-config.yaml` (which writes the index
alone) may have put an older configuration. So each protected path the
restore reaches is compared, as git holds it in the source (the index, or the
revision named) and as the work tree holds it (`core/agent/restore_check.py`); the
restore proceeds when none would change.

A line ending converted is no change: a file is compared as its bytes and as
`git add` would store it, which git hashes only once no attribute there names a
filter driver (git would run it), `ident` or `working-tree-encoding`.

The comparison stands only for the state it read: the scan voids it for a
restore that anything earlier in its line could change (`core/agent/command_restores.py`).
Any doubt refuses: git failing, a path unreadable, a submodule, a link, a
converting attribute, replaced objects or grafts, another repository.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from failgate_hooks.core.agent.command_rules import Finding, Risk
from failgate_hooks.core.agent.command_writes import Restore, WriteTarget
from failgate_hooks.core.agent.protected import (
    Protected,
    entry_pathspecs,
    in_scope,
    protected_entry,
    restore_scope,
    touched,
    write_finding,
)
from failgate_hooks.core.agent.restore_check import (
    Change,
    Entry,
    OnDisk,
    attribute_file_converts,
    restore_change,
)
from failgate_hooks.core.attributes import Attribute, converting
from failgate_hooks.core.errors import FailgateError
from failgate_hooks.core.ids import blob_id, object_format_of

if TYPE_CHECKING:
    from failgate_hooks.git.repo import GitRepo

# A protected file larger than this is not read: the restore is refused instead.
_MOST_BYTES = 32 * 1024 * 1024


class _Doubt(Exception):
    """Why what the restore would write cannot be known: it is refused."""


def restore_findings(targets: Iterable[WriteTarget], protected: Protected) -> list[Finding]:
    """A finding for each restore that would change a protected path, or whose change
    cannot be known; none for a restore that leaves every protected path as it is."""
    found: dict[str, Finding] = {}
    for target in targets:
        what = touched(target, protected)
        if what is None or target.restore is None:
            continue
        detail = _detail(target, target.restore, protected, what)
        if detail is not None:
            found.setdefault(detail, write_finding(target, detail, Risk.PROTECTED_RESTORE))
    return list(found.values())


def _detail(target: WriteTarget, restore: Restore, protected: Protected, what: str) -> str | None:
    place = what.split(", which", 1)[0]
    scope = restore_scope(target, protected)
    if scope == "":
        place = f"{place} and every other protected file of the work tree"
    if restore.void is not None:
        return f"{place}, and failgate cannot check what it would write there: {restore.void}"
    try:
        change = _change(target, restore, scope, protected)
    except (_Doubt, FailgateError, OSError) as error:
        why = error.message if isinstance(error, FailgateError) else f"{error}"
        return f"{place}, which failgate could not compare ({why})"
    except Exception as error:  # a hook that crashes lets the command run: never here
        return f"{place}, which failgate could not compare ({type(error).__name__}: {error})"
    if change is None:
        return None
    named = protected_entry(change.path, protected) or what
    return f"{named.split(', which', 1)[0]}: {change.path}, {change.how}"


def _change(
    target: WriteTarget, restore: Restore, scope: str | None, protected: Protected
) -> Change | None:
    from failgate_hooks.git import restore_facts
    from failgate_hooks.git.repo import GitRepo

    if scope is None or target.cwd is None or protected.root is None:
        raise _Doubt("where it runs is not known")
    with GitRepo.open(target.cwd) as repo:
        root = repo.working_dir
        if root is None or not os.path.samefile(root, protected.root):
            raise _Doubt("it runs in another repository's work tree")
        if restore_facts.replaces_objects(repo):
            raise _Doubt("refs/replace/ holds a replacement, which git would read instead")
        specs = entry_pathspecs(protected)
        index = _reached(restore_facts.index_entries(repo, specs), scope, protected)
        source: list[Entry] | None = None
        if restore.source is not None:
            if _grafted(repo.common_dir):
                raise _Doubt("a grafts file changes which commits the revision names")
            tree = restore_facts.tree_of(repo, restore.source)
            if tree is None and restore.source_or_path:
                return None  # git reads the word as a path: another target judges that
            if tree is None:
                raise _Doubt(f"`{restore.source}` names no tree here")
            source = _reached(restore_facts.tree_entries(repo, tree, specs), scope, protected)
            _no_conversion_in_tree(repo, tree, source)
        paths = sorted({e.path for e in index} | {e.path for e in source or ()})
        # before git hashes any file with its conversions (a filter driver would run there):
        # the attributes as hash-object reads them, and as the index holds them
        work_tree = restore_facts.work_tree_attributes(repo, paths)
        _no_converting(work_tree.attributes)
        _no_converting(restore_facts.index_attributes(repo, paths))
        oids = [e.oid for e in index] + [e.oid for e in source or ()]
        fmt = object_format_of(oids[0]) if oids else "sha1"
        disk = {path: on_disk(root, path, fmt) for path in paths}
        files = [path for path, found in disk.items() if found.kind == "file"]
        for path, added in restore_facts.added_ids(repo, files, work_tree).items():
            disk[path] = disk[path]._replace(added=added)
    return restore_change(restore, source, index, disk)


def _no_converting(attributes: Sequence[Attribute]) -> None:
    why = converting(attributes)
    if why is not None:
        raise _Doubt(why)


def _reached(entries: Sequence[Entry], scope: str, protected: Protected) -> list[Entry]:
    return [e for e in entries if in_scope(e.path, scope) and protected_entry(e.path, protected)]


def _grafted(common_dir: str) -> bool:
    graft_file = os.environ.get("GIT_GRAFT_FILE") or os.path.join(common_dir, "info", "grafts")
    return os.path.lexists(graft_file)


def _no_conversion_in_tree(repo: GitRepo, tree: str, entries: Sequence[Entry]) -> None:
    """The `.gitattributes` a checkout of `tree` would put beside each path, read as text:
    git reads those from the index it has just written, before the work tree's files."""
    folders = {""}
    for entry in entries:
        parts = entry.path.split("/")[:-1]
        folders.update("/".join(parts[:n]) for n in range(1, len(parts) + 1))
    for folder in sorted(folders):
        path = f"{folder}/.gitattributes" if folder else ".gitattributes"
        found = repo.tree_entry(tree, path)
        if found is not None and (
            found.type != "blob" or attribute_file_converts(repo.read_blob(found.oid))
        ):
            raise _Doubt(f"{path} in that revision may convert what git writes")


def on_disk(root: str, path: str, fmt: str) -> OnDisk:
    """What the work tree holds at `path` (relative to `root`), with the blob id of its
    bytes (a link's: its target's, never converted); a file's id as `git add` would store
    it is git's to give (`restore_facts.added_ids`). A folder on the way that is a link or
    a file makes it `other`: git would replace it."""
    parts = path.split("/")
    for depth in range(1, len(parts)):
        try:
            mode = os.lstat(os.path.join(root, *parts[:depth])).st_mode
        except FileNotFoundError:
            return OnDisk("absent")
        if not stat.S_ISDIR(mode):
            return OnDisk("other")
    full = os.path.join(root, *parts)
    try:
        info = os.lstat(full)
    except OSError as error:
        if error.errno == errno.ENOENT:
            return OnDisk("absent")
        raise
    if stat.S_ISLNK(info.st_mode):
        return OnDisk("link", oid=blob_id(os.fsencode(os.readlink(full)), fmt))
    if not stat.S_ISREG(info.st_mode):
        return OnDisk("other")
    if info.st_size > _MOST_BYTES:
        raise _Doubt(f"{path} is larger than failgate reads")
    with open(full, "rb") as handle:
        data = handle.read(_MOST_BYTES + 1)
    return OnDisk("file", executable=bool(info.st_mode & stat.S_IXUSR), oid=blob_id(data, fmt))
