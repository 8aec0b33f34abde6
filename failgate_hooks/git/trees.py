"""Tree objects and `ls-tree -z` listings, parsed as git reads them.

Kept apart from repo.py, which asks git for the bytes: the rules of what a
tree entry is (its mode by file type, one name once, one path component)
are the same whichever way the bytes came.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from failgate_hooks.core.errors import GitError


class TreeEntry(NamedTuple):
    """One entry of a tree listing (a tuple: 50,000 of them are made for a monorepo)."""

    mode: str
    type: str
    oid: str
    path: str


def parse_tree(tree: str, data: bytes) -> list[TreeEntry]:
    """The entries of tree object `tree`, whose content is `data`, each by its own name."""
    id_len = len(tree) // 2  # a tree's raw ids are as long as its own id
    entries = []
    names: set[str] = set()
    pos = 0
    try:
        while pos < len(data):
            space = data.index(b" ", pos)
            nul = data.index(b"\0", space)
            raw = data[nul + 1 : nul + 1 + id_len]
            if len(raw) != id_len:
                raise ValueError("short id")
            mode, kind = as_git_reads(int(data[pos:space], 8))
            name = data[space + 1 : nul].decode("utf-8", "surrogateescape")
            if "/" in name or name in ("", ".", "..") or name.lower() == ".git":
                # git checks `a/b` out as a path, where a reader of trees sees no folder
                raise GitError(
                    f"tree {tree} holds an entry named {name!r}, which git fsck refuses "
                    "(fullPathname, emptyName, hasDot, hasDotgit): failgate cannot "
                    "tell where git would write it",
                    hint="rewrite the commit so that each entry is one path component",
                )
            if name in names:
                # git checks out one of them, which one its own rules say: a gate
                # that read the other would judge what is not there.
                raise GitError(
                    f"tree {tree} holds two entries named {name!r} (git fsck: "
                    "duplicateEntries): failgate cannot tell which one git would use",
                    hint="rewrite the commit so that each name appears once",
                )
            names.add(name)
            entries.append(TreeEntry(mode, kind, raw.hex(), name))
            pos = nul + 1 + id_len
    except (ValueError, UnicodeDecodeError):
        raise GitError(f"tree {tree} is malformed at byte {pos}") from None
    return entries


def as_git_reads(mode: int) -> tuple[str, str]:
    """A tree entry's mode and kind as git reads them, whatever the object stores: by
    its file type alone, as git's canon_mode does. A commit may store `40755` for a
    folder or `120644` for a link, and git checks out a folder and a link."""
    file_type = mode & 0o170000
    if file_type == 0o100000:
        return ("100755" if mode & 0o100 else "100644"), "blob"
    if file_type == 0o120000:
        return "120000", "blob"
    if file_type == 0o040000:
        return "040000", "tree"
    return "160000", "commit"


def parse_ls_tree(out: str, prefix: str = "") -> Iterator[TreeEntry]:
    """`ls-tree -z` output as entries, each path after `prefix`."""
    for record in out.split("\0"):
        if not record:
            continue
        meta, _, path = record.partition("\t")
        mode, kind, oid = meta.split(" ")
        yield TreeEntry(mode, kind, oid, prefix + path)
