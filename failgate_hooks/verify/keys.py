"""The keys a pass is cached under: what of commit C a verifier's verdict depends on.

A verifier is given C's tree without the ledger folder (`verified_tree`): a
verdict is about the code, and committing an event must not call for another
run. The content key names that tree, so nothing the key leaves out can reach
the verifier, through a link or a path a file names. It costs one object read
per level of the ledger's path. The input key, for a verifier that names its
`inputs`, covers the files those globs match.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
from collections.abc import Sequence
from typing import Any, ClassVar, NamedTuple

from failgate_hooks.core import wildmatch
from failgate_hooks.core.errors import FailgateError, UsageError
from failgate_hooks.core.events import is_safe_relative_path
from failgate_hooks.git.repo import GitRepo, local_folder
from failgate_hooks.git.trees import TreeEntry
from failgate_hooks.verify.localfiles import read_quietly, write_atomically

CONTENT_KEY_VERSION = "ck2"
INPUT_KEY_VERSION = "ik1"
# 2: globs that match no file give no input key; a key kept before may be such a one.
_MEMO_VERSION = 2
_LINK = "120000"  # a symbolic link's mode


class VerifiedTree(NamedTuple):
    """The tree a verifier's checkout holds for a commit, and the tree objects made for it
    (innermost first), which a checkout's object store must hold: none when the commit
    has no ledger folder, and the tree is the commit's own."""

    tree: str
    made: tuple[bytes, ...] = ()


def verified_tree(repo: GitRepo, commit: str, ledger_dir: str) -> VerifiedTree:
    """`commit`'s root tree without the ledger folder, rewriting only the trees along its
    path; a folder left empty goes too, as git stores no empty trees."""
    parts = _ledger_parts(ledger_dir)
    root = repo.commit_tree(commit)
    made: list[bytes] = []
    tree = _without(repo, root, parts, made)
    return VerifiedTree(_tree_id(b"", root) if tree is None else tree, tuple(made))


def _without(repo: GitRepo, tree: str, parts: Sequence[str], made: list[bytes]) -> str | None:
    """The id of `tree` with the path `parts` removed (None when nothing is left)."""
    kept: list[bytes] = []
    found = False
    for entry in repo.tree_entries(tree):
        if entry.path != parts[0]:
            kept.append(_raw(entry, entry.oid))
            continue
        if len(parts) > 1:
            if entry.type != "tree":
                return tree  # a file where a folder of the path would be: nothing to remove
            inner = _without(repo, entry.oid, parts[1:], made)
            if inner == entry.oid:
                return tree
            if inner is not None:
                kept.append(_raw(entry, inner))
        found = True
    if not found:
        return tree  # the path is not there
    if not kept:
        return None
    content = b"".join(kept)
    made.append(content)
    return _tree_id(content, tree)


def _raw(entry: TreeEntry, oid: str) -> bytes:
    """An entry as a tree object holds it: `<mode> <name>\0<raw id>`, mode unpadded."""
    mode = entry.mode.lstrip("0").encode("ascii")
    return mode + b" " + entry.path.encode("utf-8", "surrogateescape") + b"\0" + bytes.fromhex(oid)


def _tree_id(content: bytes, like: str) -> str:
    """The id git gives a tree object of `content`, in the object format of id `like`."""
    algorithm = "sha1" if len(like) == 40 else "sha256"
    return hashlib.new(algorithm, b"tree %d\0" % len(content) + content).hexdigest()


def _ledger_parts(ledger_dir: str) -> list[str]:
    path = ledger_dir.strip("/")
    if not is_safe_relative_path(path):
        raise UsageError(
            f"ledger folder {ledger_dir!r} is not a relative path inside the repository"
        )
    return path.split("/")


def content_key(repo: GitRepo, commit: str, ledger_dir: str, *, whole: bool = False) -> str:
    """The key of the tree a verifier is given for `commit`: equal for commits that differ
    only in the ledger. `whole`: of the commit's whole tree, for a verifier that runs in
    the work tree (workdir = "inplace"), which sees the ledger too."""
    if whole:
        tree, what = repo.commit_tree(commit), b"whole"
    else:
        tree, what = verified_tree(repo, commit, ledger_dir).tree, b"verified"
    payload = b"\0".join([CONTENT_KEY_VERSION.encode(), what, tree.encode("ascii")])
    return f"{CONTENT_KEY_VERSION}:{hashlib.sha256(payload).hexdigest()}"


def input_key(repo: GitRepo, commit: str, patterns: Sequence[str]) -> str | None:
    """The sorted (path, mode, blob) of C's files that match any `inputs` glob, hashed;
    None when a link is among them or on the way to their folders: the verifier reads
    what a link points at, which no entry here names; and when they match no file (the
    caller keys by all content).

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
        [INPUT_KEY_VERSION, _MEMO_VERSION, _matching_rules(), sorted(set(patterns)), where],
        separators=(",", ":"),
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
    the verifier reads through it is named by no entry. None too when they match no
    entry (`./budget.json`, a typo): every commit would have the one key, and a pass on
    one would stand for all, whatever the verifier reads. None too when matching would
    take more work than one answer may (many long globs beside very long names)."""
    links = [e.path for e in entries if e.mode == _LINK]
    paths = [e.path for e in entries]
    budget = wildmatch.Budget()  # past it, keyed by all content: never a key too narrow
    try:
        folders = [*patterns, *_folder_globs(patterns)]
        if links and wildmatch.matching(folders, links, first=True, budget=budget):
            return None
        found = wildmatch.matching(patterns, paths, budget=budget)
    except wildmatch.WorkSpent:
        return None
    matched = [[entries[i].path, entries[i].mode, entries[i].oid] for i in found]
    if not matched:
        return None
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
