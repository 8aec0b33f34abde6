"""Parsed and resolved entities kept between runs, in one file keyed by what git names forever.

Reading, parsing and resolving every event is most of what a decision costs
on a large ledger, and it gives the same answer every time: a parse depends
only on the file's bytes, its path and the entity its folder names, and an
entity's resolution only on its parses. So each entity's parses and the
resolution of those parses are kept under a digest of its key and its sorted
(path, blob id) pairs. A blob id names its bytes forever: an entry is never
stale, only unused.

The file is `<git-common-dir>/failgate/parsed-events.pickle`. It carries a
format version (failgate's, Python's, and a digest of the sources whose rules
made the parses); a file of another version, or one that does not load, is
ignored and rewritten; sources that cannot be read mean no cache. It is
written whole, beside its name then renamed over it, and only when a read
parsed something it lacked; a folder that cannot be written is no cache,
never a failure. Entries a read did not use are kept only while they are
fewer than those it used: the file holds less than twice the entities of the
read that last wrote it.

Why pickle is safe here: loading a pickle can run code the file names, so the
file must be as trusted as failgate itself, and it is. Only a process that
can already write `.git/hooks` and `.git/config`, and so run any command at
the next git operation, can write that folder; the sandboxed verifier sees it
read-only.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeGuard

from failgate_hooks import __version__
from failgate_hooks.core.errors import GitError
from failgate_hooks.core.events import Event, Problem
from failgate_hooks.core.resolve import Resolution
from failgate_hooks.git.repo import GitRepo

FILE_NAME = "parsed-events.pickle"

File = tuple[str, str]  # (path, blob id)
Parse = tuple[Event | None, tuple[Problem, ...]]  # what core.validate.parse_event gives
Entry = tuple[list[Parse], Resolution]  # an entity's parses, in file order, and their resolution


def cache_path(repo: GitRepo) -> str | None:
    """Where the cache file of `repo` lives; None when there is nowhere to keep one."""
    try:
        return os.path.join(repo.common_dir, "failgate", FILE_NAME)
    except (GitError, OSError):
        return None


def rule_sources() -> list[Path]:
    """The sources whose rules make a kept entry: core (parse_event, resolve, and the
    top-level modules it may import), the ledger read that bounds and parses each file
    (union.py), and this file."""
    here = Path(__file__).resolve()
    package = here.parent.parent
    core = sorted([*package.glob("*.py"), *(package / "core").glob("*.py")])
    return [*core, here.parent / "union.py", here]


def format_version() -> str:
    """Changes whenever a kept parse could differ from a fresh one."""
    digest = hashlib.sha256()
    for source in rule_sources():
        digest.update(source.read_bytes())
    python = ".".join(map(str, sys.version_info[:3]))
    return f"{__version__}-{python}-{digest.hexdigest()[:16]}"


class ParseCache:
    """The kept parses of one repository, for one read of the ledger."""

    def __init__(self, path: str | None) -> None:
        try:
            self._version = format_version()
        except OSError:  # an install without its sources: nothing tells two rule sets apart
            self._version, path = "", None
        self._path = path
        self._on_disk = self._load() if path is not None else {}
        self._used: dict[bytes, Entry] = {}
        self._added = False

    @classmethod
    def open(cls, repo: GitRepo) -> ParseCache:
        return cls(cache_path(repo))

    @property
    def enabled(self) -> bool:
        """Whether anything put here is kept for the next run."""
        return self._path is not None

    def _load(self) -> dict[bytes, Any]:
        assert self._path is not None
        import pickle  # loaded with the first cache to read: a ledger without events has none

        try:
            with open(self._path, "rb") as handle:
                data = pickle.load(handle)
        except Exception:  # missing, truncated or not ours: start again
            return {}
        if type(data) is not dict or data.get("version") != self._version:
            return {}
        entities = data.get("entities")
        return entities if type(entities) is dict else {}

    def get(self, entity_key: str, files: Sequence[File]) -> Entry | None:
        """The parses of `files` (sorted), in their order, and their resolution, when an
        earlier read kept them."""
        key = _digest(entity_key, files)
        found = self._on_disk.get(key)
        if not _is_entry(found, len(files)):
            return None
        self._used[key] = found
        return found

    def put(self, entity_key: str, files: Sequence[File], entry: Entry) -> None:
        self._used[_digest(entity_key, files)] = entry
        self._added = True

    def save(self) -> None:
        """Write the file again when this read parsed something new; never fail."""
        if self._path is None or not self._added:
            return
        import pickle

        unused = {key: v for key, v in self._on_disk.items() if key not in self._used}
        entities = {**unused, **self._used} if len(unused) < len(self._used) else self._used
        data = pickle.dumps(
            {"version": self._version, "entities": entities}, protocol=pickle.HIGHEST_PROTOCOL
        )
        temp = f"{self._path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(self._path), exist_ok=True)
            with open(temp, "wb") as handle:
                handle.write(data)
            os.replace(temp, self._path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temp)


def _digest(entity_key: str, files: Sequence[File]) -> bytes:
    # git names hold no NUL: the joined text cannot be read two ways
    text = "\0".join([entity_key, *(part for file in files for part in file)])
    return hashlib.blake2b(text.encode("utf-8", "surrogateescape"), digest_size=16).digest()


def _is_entry(value: Any, count: int) -> TypeGuard[Entry]:
    """Whether `value` has the shape `put` keeps, for that many files: a file of the right
    version is still bytes from disk."""
    if type(value) is not tuple or len(value) != 2 or type(value[1]) is not Resolution:
        return False
    parses = value[0]
    return (
        type(parses) is list
        and len(parses) == count
        and all(
            type(item) is tuple
            and len(item) == 2
            and (item[0] is None or type(item[0]) is Event)
            and type(item[1]) is tuple
            for item in parses
        )
    )
