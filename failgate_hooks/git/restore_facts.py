"""What git holds for the paths a restore would write: the index's entries, a tree's, the
attributes that convert what git writes, the ids `git add` would give the work tree's
files, and whether objects are replaced.

Read for the agent hook before a `git restore` or `git checkout` of paths runs
(`app/agent_restore.py`); `core/agent/restore_check.py` judges it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from failgate_hooks.core.agent.restore_check import Entry
from failgate_hooks.core.attributes import CONVERTING_ATTRIBUTES, Attribute
from failgate_hooks.core.errors import GitError
from failgate_hooks.git.conversion import HashReading, as_hashed, check_attr, hash_files
from failgate_hooks.git.repo import GitRepo

_EMPTY_TREE = {
    40: "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
    64: "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",
}


def index_entries(repo: GitRepo, pathspecs: Sequence[str]) -> list[Entry]:
    """The index's entries that the pathspecs select, every stage of each."""
    out = repo.run("ls-files", "--stage", "-z", "--", *pathspecs, strip=False)
    entries = []
    for record in out.split("\0"):
        if not record:
            continue
        meta, tab, path = record.partition("\t")
        fields = meta.split(" ")
        if not tab or len(fields) != 3:
            raise GitError(f"git ls-files gave a line it should not: {record[:80]!r}")
        mode, oid, stage = fields
        entries.append(Entry(path, mode, oid, int(stage)))
    return entries


def tree_of(repo: GitRepo, revision: str) -> str | None:
    """The tree a revision names, resolved as git resolves it; None when it names none."""
    if not revision or revision.startswith("-") or "\n" in revision:
        return None
    return repo.cat_file.resolve(f"{revision}^{{tree}}")


def tree_entries(repo: GitRepo, tree: str, pathspecs: Sequence[str]) -> list[Entry]:
    """The files, links and submodules of `tree` that the pathspecs select, recursively.

    A diff from the empty tree: unlike ls-tree, it reads pathspec magic."""
    empty = _EMPTY_TREE.get(len(tree))
    if empty is None:
        raise GitError(f"not a full tree id: {tree[:80]!r}")
    out = repo.run(
        "diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-abbrev", empty, tree,
        "--", *pathspecs, strip=False,
    )  # fmt: skip
    fields = out.split("\0")
    entries = []
    for index in range(0, len(fields) - 1, 2):
        meta, path = fields[index], fields[index + 1]
        parts = meta.lstrip(":").split(" ")
        if not meta.startswith(":") or len(parts) != 5 or parts[4] != "A":
            raise GitError(f"git diff-tree gave a line it should not: {meta[:80]!r}")
        entries.append(Entry(path, parts[1], parts[3]))
    return entries


def index_attributes(repo: GitRepo, paths: Sequence[str]) -> list[Attribute]:
    """Each converting attribute at each path from the index's `.gitattributes` alone,
    `info/attributes` and the global files: what a restore from the index reads."""
    return check_attr(repo, paths, CONVERTING_ATTRIBUTES, cached=True)


def work_tree_attributes(repo: GitRepo, paths: Sequence[str]) -> HashReading:
    """Each converting attribute at each path as `git hash-object` reads them, which
    `added_ids` hashes under: the work tree's `.gitattributes` alone, `info/attributes`
    and the global files."""
    return as_hashed(repo, paths)


def added_ids(repo: GitRepo, paths: Sequence[str], reading: HashReading) -> dict[str, str]:
    """The blob id `git add` would give the work tree's file at each path, its line endings
    converted, in one git call. `reading` (`work_tree_attributes`) must prove that no
    filter driver would run here: else `hash_files` raises GitError and runs no git."""
    hashed = hash_files(repo, paths, filters=True, reading=reading)
    return dict(zip(paths, hashed, strict=True))


def replaces_objects(repo: GitRepo) -> bool:
    """Whether git, run as the agent runs it, would read another object than the one an
    id names: a ref under refs/replace/ (or GIT_REPLACE_REF_BASE) exists. failgate's own
    reads never follow them."""
    base = os.environ.get("GIT_REPLACE_REF_BASE") or "refs/replace/"
    found = repo.run("for-each-ref", "--count=1", "--format=%(refname)", base)
    return bool(found.strip())
