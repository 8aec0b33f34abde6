"""Whether a restore of paths would change a protected file, from what git and the disk
hold before it runs. Pure: the facts are gathered by `app/agent_restore.py`.

`git restore` and `git checkout` of paths write each path their source holds
(the index, or a revision's tree) into the work tree, and a restore from a
revision without `--overlay` removes a path the index holds and the source
lacks. A path the source does not hold, and the index does not either, is
left alone (an uncommitted event file, untracked, stays). So the restore writes
nothing new to a protected path exactly when the work tree already holds, for
each protected path the source holds, the same kind of file (a file of the
same executable bit, or a symbolic link), whose bytes are the same blob; and
holds nothing at each one it would remove. Anything else is a change: an
unmerged index entry, a submodule, a folder or a missing file where the source
holds one, a link in a folder on the way.

Equality of bytes is equality of blob ids. A link's id is its target's bytes',
computed as git computes it (`core/ids.py:blob_id`), for SHA-1 and SHA-256 alike. A file holds a
blob when its bytes are that blob, or when `git add` would store it as that
blob: a line ending converted (core.autocrlf, the attributes text, eol and
crlf) is the same configuration, the same event. The attributes under which git
writes other bytes than that (`core/attributes.py:CONVERTING_ATTRIBUTES`: `filter`,
which runs a command, `ident`, `working-tree-encoding`) make the check refuse,
before git hashes anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from failgate_hooks.core.agent.command_writes import Restore


class Entry(NamedTuple):
    """One path of the index or of a tree: `ls-files -s` or `ls-tree` as git lists it."""

    path: str
    mode: str  # 100644, 100755, 120000 (a link), 160000 (a submodule)
    oid: str
    stage: int = 0  # 1 to 3: unmerged


class OnDisk(NamedTuple):
    """What the work tree holds at a path: `file`, `link`, `absent` or `other` (a folder,
    a device, or a path under a file or through a link)."""

    kind: str
    executable: bool = False
    oid: str | None = None  # the blob id of its bytes (a link's: its target)
    added: str | None = None  # a file's: the id `git add` would give it, line endings converted


class Change(NamedTuple):
    """A protected path the restore would change, and how: a clause that follows it."""

    path: str
    how: str


def attribute_file_converts(text: bytes) -> bool:
    """Whether a `.gitattributes` may set a converting attribute (read as text: a macro,
    a pattern or a comment that names one counts too)."""
    lowered = text.lower()
    return any(name.encode() in lowered for name in ("filter", "ident", "encoding"))


def restore_change(
    restore: Restore,
    source: Sequence[Entry] | None,
    index: Sequence[Entry],
    disk: Mapping[str, OnDisk],
) -> Change | None:
    """The first protected path the restore would change, and how; None when it writes
    nothing new. `source` is the revision's entries (None: from the index), `index`
    the index's, each limited to the protected paths the restore reaches; `disk`
    holds what the work tree has at every path of either."""
    for entry in index:
        if entry.stage:
            return Change(entry.path, "which is unmerged in the index")
    origin = "the index" if restore.source is None else f"`{restore.source}`"
    writes = index if source is None else source
    for entry in writes:
        if entry.mode == "160000":
            return Change(entry.path, f"which is a submodule in {origin}")
        if not _holds(disk[entry.path], entry):
            return Change(entry.path, f"of which {origin} holds another version than the work tree")
    if restore.removes_tracked and source is not None:
        held = {entry.path for entry in source}
        for entry in index:
            if entry.path not in held and disk[entry.path].kind != "absent":
                return Change(
                    entry.path, f"which the index holds and {origin} lacks: it would be removed"
                )
    return None


def _holds(found: OnDisk, entry: Entry) -> bool:
    if entry.mode == "120000":
        return found.kind == "link" and found.oid == entry.oid
    if entry.mode in ("100644", "100755"):
        executable = entry.mode == "100755"
        same = entry.oid in (found.oid, found.added)
        return found.kind == "file" and found.executable == executable and same
    return False
