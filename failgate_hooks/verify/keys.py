"""The keys a pass is cached under: what of commit C a verifier's verdict depends on.

The content key is C's tree without the ledger's event files; the input key,
for a verifier that names its `inputs`, the files those globs match. Tree
objects are parsed here, so the content key costs one object read per level
of the ledger's path, and the ledger's listing, which reading it made already.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
from collections.abc import Sequence
from typing import Any, ClassVar

from failgate_hooks.core import wildmatch
from failgate_hooks.core.errors import FailgateError, UsageError
from failgate_hooks.core.events import is_safe_relative_path
from failgate_hooks.git.repo import GitRepo, TreeEntry
from failgate_hooks.verify.localfiles import local_folder, read_quietly, write_atomically

CONTENT_KEY_VERSION = "ck1"
INPUT_KEY_VERSION = "ik1"
_LINK = "120000"  # a symbolic link's mode

_TREE = b"40000"


def _raw(entry: TreeEntry) -> tuple[bytes, bytes, bytes]:
    """An entry as git stores it (mode without padding, name bytes, raw id): what is hashed."""
    return (
        entry.mode.lstrip("0").encode("ascii"),
        entry.path.encode("utf-8", "surrogateescape"),
        bytes.fromhex(entry.oid),
    )


_Triple = tuple[bytes, bytes, bytes]  # mode, name, tagged id


def _serialise(entries: Sequence[_Triple]) -> bytes:
    """Entries as `<mode> <name>\\0<tag><id>`: the tag tells a git id from one of our digests."""
    return b"".join(mode + b" " + name + b"\0" + ident for mode, name, ident in entries)


def _entries_without(repo: GitRepo, tree: str, parts: Sequence[str]) -> list[_Triple]:
    """`tree`'s entries with the path `parts` removed, rewriting only the trees along it."""
    out: list[_Triple] = []
    for entry in repo.tree_entries(tree):
        mode, name, raw_id = _raw(entry)
        if entry.path != parts[0]:
            out.append((mode, name, b"g" + raw_id))
            continue
        if len(parts) == 1:
            continue  # the ledger itself: whatever it holds, it is not content
        if mode != _TREE:
            out.append((mode, name, b"g" + raw_id))
            continue
        inner = _entries_without(repo, entry.oid, parts[1:])
        # A folder left empty is as if absent: git stores no empty trees, so the
        # commit that adds the first ledger event must keep the key of the one before.
        if inner:
            digest = hashlib.sha256(_serialise(inner)).digest()
            out.append((mode, name, b"k" + digest))
    return out


def _ledger_parts(ledger_dir: str) -> list[str]:
    path = ledger_dir.strip("/")
    if not is_safe_relative_path(path):
        raise UsageError(
            f"ledger folder {ledger_dir!r} is not a relative path inside the repository"
        )
    return path.split("/")


def content_key(repo: GitRepo, commit: str, ledger_dir: str) -> str:
    """C's content without the ledger's event files: equal for commits that differ only in
    events. What else lies in the ledger folder (a dot-file, which no reader takes for an
    event) is content: a link elsewhere in C can point the verifier at it."""
    parts = _ledger_parts(ledger_dir)
    entries = _entries_without(repo, repo.commit_tree(commit), parts)
    payload = CONTENT_KEY_VERSION.encode() + b"\0" + _serialise(entries)
    folder = "/".join(parts)
    listing = repo.ls_folder(commit, folder)
    others = [_raw(e) for e in listing if not _may_be_event(e, len(folder))]
    kept = [(mode, name, b"g" + raw_id) for mode, name, raw_id in others]
    if kept:  # none in a ledger of events alone: its key is what it always was
        payload += b"\0not events\0" + _serialise(kept)
    return f"{CONTENT_KEY_VERSION}:{hashlib.sha256(payload).hexdigest()}"


def _may_be_event(entry: TreeEntry, folder_length: int) -> bool:
    """Whether a ledger entry is a regular `*.toml` file, neither a dot-file nor in a
    dot-folder below the ledger folder: the reader takes nothing else for an event.
    Asked of every file of the ledger on every run, so string tests only."""
    return (
        entry.mode in ("100644", "100755")
        and entry.path.endswith(".toml")
        and "/." not in entry.path[folder_length:]
    )


def input_key(repo: GitRepo, commit: str, patterns: Sequence[str]) -> str | None:
    """The sorted (path, mode, blob) of C's files that match any `inputs` glob, hashed;
    None when a link is among them or on the way to their folders: the verifier reads
    what a link points at, which no entry here names (the caller keys by all content).

    Every file a glob matches lies in the folder its literal prefix names, so the
    key is a function of those folders' tree ids: it is kept by them (InputKeys),
    and a folder not seen before is listed alone, never the commit's whole tree
    (50,000 files in a monorepo, for each of its gates)."""
    folders = sorted({wildmatch.literal_prefix(p).rpartition("/")[0] for p in patterns})
    if not patterns or "" in folders:
        return _input_key(repo.sorted_files(commit)[0], patterns)  # the root: keyed by nothing
    if any(_through_a_link(repo, commit, folder) for folder in folders):
        return None
    where = []
    for folder in folders:
        entry = repo.tree_entry(commit, folder)
        where.append([folder, None if entry is None else [entry.mode, entry.oid]])
    memo = json.dumps(
        [INPUT_KEY_VERSION, _matching_rules(), sorted(set(patterns)), where], separators=(",", ":")
    )
    keys = InputKeys.of(repo)
    found = keys.get(memo)
    if found is None:
        entries = {e.path: e for folder in folders for e in repo.ls_folder(commit, folder)}
        found = _input_key(sorted(entries.values(), key=lambda e: e.path), patterns)
        if found is not None:
            keys.put(memo, found)
    return found


def _through_a_link(repo: GitRepo, commit: str, folder: str) -> bool:
    """Whether `folder`, or a folder on the way to it, is a link in `commit`."""
    parts = folder.split("/")
    for depth in range(1, len(parts) + 1):
        entry = repo.tree_entry(commit, "/".join(parts[:depth]))
        if entry is None:
            return False
        if entry.mode == _LINK:
            return True
    return False


def _folder_globs(patterns: Sequence[str]) -> list[str]:
    """Each folder a pattern's matches lie in, as globs: `a/*/b/*.json` -> `a`, `a/*`, `a/*/b`."""
    globs: set[str] = set()
    for pattern in patterns:
        parts = pattern.split("/")[:-1]
        globs.update("/".join(parts[:depth]) for depth in range(1, len(parts) + 1))
    return sorted(globs)


@functools.cache
def _matching_rules() -> str:
    """A hash of the glob matcher's source: a key kept under other rules is never used."""
    try:
        with open(wildmatch.__file__, "rb") as handle:
            source = handle.read()
    except OSError:
        source = b"?"
    return hashlib.sha256(source).hexdigest()[:16]


def _input_key(entries: Sequence[TreeEntry], patterns: Sequence[str]) -> str | None:
    """The key of the entries (sorted by path) that match any of `patterns`; None when a
    link matches one, or matches a folder on one's way (`*` in `*/budget.json`): what
    the verifier reads through it is named by no entry."""
    links = [e.path for e in entries if e.mode == _LINK]
    if links and wildmatch.matching([*patterns, *_folder_globs(patterns)], links, first=True):
        return None
    paths = [e.path for e in entries]
    matched = [
        [entries[i].path, entries[i].mode, entries[i].oid]
        for i in wildmatch.matching(patterns, paths)
    ]
    # The mode is kept too: a file turned into a symlink to the same text is not the same input.
    payload = json.dumps([INPUT_KEY_VERSION, matched], separators=(",", ":")).encode("utf-8")
    return f"{INPUT_KEY_VERSION}:{hashlib.sha256(payload).hexdigest()}"


class InputKeys:
    """Input keys by the tree ids of their folders, in `<git-common-dir>/failgate/inputs.json`.

    A tree id names its files forever, so a key never goes stale. The file is
    data another process can write: a value that is not an input key is a miss,
    and an unreadable or unwritable file is no cache. At most KEEP keys are kept."""

    KEEP = 4096
    _open: ClassVar[dict[str, InputKeys]] = {}  # one per file in a process

    def __init__(self, path: str | None) -> None:
        self.path = path
        self._keys: dict[str, str] | None = None

    @classmethod
    def of(cls, repo: GitRepo) -> InputKeys:
        try:
            folder: str | None = local_folder(repo.common_dir)
        except FailgateError:
            folder = None
        path = None if folder is None else os.path.join(folder, "inputs.json")
        if str(path) not in cls._open:
            cls._open[str(path)] = cls(path)
        return cls._open[str(path)]

    def _load(self) -> dict[str, str]:
        if self._keys is None:
            self._keys = {}
            if self.path is None:
                return self._keys
            data: Any = None
            raw = read_quietly(self.path)
            with contextlib.suppress(ValueError, RecursionError):
                data = None if raw is None else json.loads(raw)
            ours = type(data) is list and len(data) == 2 and data[0] == INPUT_KEY_VERSION
            if ours and type(data[1]) is dict:
                prefix = f"{INPUT_KEY_VERSION}:"
                self._keys = {
                    k: v
                    for k, v in data[1].items()
                    if type(v) is str and v.startswith(prefix) and len(v) == len(prefix) + 64
                }
        return self._keys

    def get(self, memo: str) -> str | None:
        return self._load().get(memo)

    def put(self, memo: str, key: str) -> None:
        keys = self._load()
        keys[memo] = key
        while len(keys) > self.KEEP:
            del keys[next(iter(keys))]  # the oldest first
        if self.path is None:
            return
        body = json.dumps([INPUT_KEY_VERSION, keys], separators=(",", ":")).encode("utf-8")
        with contextlib.suppress(OSError):  # unwritable: the key is worked out again next time
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            write_atomically(self.path, body, durable=False)
