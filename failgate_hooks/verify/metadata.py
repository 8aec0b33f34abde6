"""A distribution's metadata in a folder on sys.path: what the reviewed revision held.

importlib.metadata reads every sys.path folder for `*.dist-info` (and
pkg_resources for eggs and egg links), so a pushed `evil.dist-info/entry_points.txt`
with a `[pytest11]` entry registers a plugin the reviewed pytest loads. shadowing.py
asks, for each folder it judges as on sys.path, whether any metadata there differs
from the reviewed revision's.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from failgate_hooks.git.repo import GitRepo
from failgate_hooks.git.trees import TreeEntry

# What importlib.metadata (and pkg_resources, which also reads eggs and egg links) takes
# for a distribution in any sys.path folder. Not `.pth`: only site folders' are read.
_METADATA = (".dist-info", ".egg-info", ".egg", ".egg-link")


def changed_metadata(
    repo: GitRepo,
    reviewed: Sequence[TreeEntry],
    commit: Sequence[TreeEntry],
    folder: str,
    pinned: set[str],
) -> tuple[str, bool] | None:
    """The path of a distribution's metadata among `commit`'s entries of `folder` that
    is not what the `reviewed` entries held there, and whether they held that name (as
    importlib.metadata compares it); None when every such path is the reviewed one or
    pinned.

    A name the reviewed revision held is no licence: an entry_points.txt added to its
    egg-info registers a pytest11 plugin all the same, so its content must be the same
    objects."""
    held = {e.path.lower(): e for e in reviewed}
    prefix = f"{folder}/" if folder else ""
    for entry in commit:
        if not entry.path.lower().endswith(_METADATA):
            continue
        path = prefix + entry.path
        before = held.get(entry.path.lower())
        if before is None:
            if path not in pinned and not any(p.startswith(f"{path}/") for p in pinned):
                return path, False
            continue
        for changed in changed_paths(repo, before, entry, path):
            if not any(changed == p or changed.startswith(f"{p}/") for p in pinned):
                return changed, True
    return None


def changed_paths(repo: GitRepo, before: TreeEntry, after: TreeEntry, path: str) -> Iterator[str]:
    """The paths at and below `path` whose object in `after` is not the one `before` had
    there (a pinned one is written over with the reviewed content)."""
    if after.oid == before.oid and after.mode == before.mode:
        return
    if after.type != "tree" or before.type != "tree":
        yield path
        return
    old = {e.path: e for e in repo.tree_entries(before.oid)}
    for entry in repo.tree_entries(after.oid):
        inner = f"{path}/{entry.path}"
        if entry.path not in old:
            yield inner
        else:
            yield from changed_paths(repo, old[entry.path], entry, inner)
