"""What git converts between the work tree's files and their blobs: the attributes
`check-attr` reports for a path, and the blob ids `hash-object` gives the files, with
git's conversions applied or without them.

`verify/inplace.py` proves a work tree is a commit's bytes with both; the agent
hook's restore check (`app/agent_restore.py`) reads the attributes as hash-object
reads them first (`as_hashed`), and hashes with conversions only with that reading,
which `hash_files` requires: without one that proves no filter driver could run,
it runs no git.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from failgate_hooks.core.attributes import CONVERTING_ATTRIBUTES, Attribute, unproven
from failgate_hooks.core.errors import GitError
from failgate_hooks.core.sanitize import clean_line
from failgate_hooks.git.repo import GitRepo

_PLAIN = frozenset(range(0x20, 0x7F)) - {ord('"'), ord("\\")}


def check_attr(
    repo: GitRepo, paths: Sequence[str], names: Sequence[str], *, cached: bool = False
) -> list[Attribute]:
    """The attributes `names` of each of `paths` (relative to the work tree's root), in one
    `check-attr`: from the work tree's `.gitattributes` (the index's where the work tree
    has none), or with `cached` from the index's alone; `info/attributes` and the global
    files in both, as checkout, add and status read them."""
    return _check_attr(repo, paths, names, ["--cached"] if cached else [])


class HashReading(NamedTuple):
    """`CONVERTING_ATTRIBUTES` at some paths as `hash-object` reads them (`as_hashed`):
    what `hash_files` needs to hash them with git's conversions."""

    attributes: tuple[Attribute, ...]


def as_hashed(repo: GitRepo, paths: Sequence[str]) -> HashReading:
    """`CONVERTING_ATTRIBUTES` at each of `paths` as `hash-object` reads them, in one
    `check-attr`: from the work tree's `.gitattributes` alone, `info/attributes` and the
    global files. hash-object reads no index, so a `.gitattributes` the index holds and
    the work tree lacks (which check-attr reads in its place) sets nothing there: given
    an index that does not exist, check-attr reads what hash-object does."""
    with tempfile.TemporaryDirectory(prefix="failgate-attributes-") as folder:
        no_index = {"GIT_INDEX_FILE": os.path.join(folder, "index")}
        return HashReading(tuple(_check_attr(repo, paths, CONVERTING_ATTRIBUTES, [], no_index)))


def _check_attr(
    repo: GitRepo,
    paths: Sequence[str],
    names: Sequence[str],
    flags: Sequence[str],
    env: Mapping[str, str] | None = None,
) -> list[Attribute]:
    if not paths or not names:
        return []
    args = ["check-attr", "-z", "--stdin", *flags, *names]
    return parse_check_attr(repo.run(*args, stdin="\0".join(paths) + "\0", strip=False, env=env))


def parse_check_attr(output: str) -> list[Attribute]:
    """The triples of `git check-attr -z` output: path, attribute, value, each ended by NUL."""
    fields = output.split("\0")
    if len(fields) % 3 != 1 or fields[-1]:
        raise GitError(f"git check-attr gave output it should not: {output[-80:]!r}")
    return [Attribute(*fields[i : i + 3]) for i in range(0, len(fields) - 1, 3)]


def hash_files(
    repo: GitRepo, paths: Sequence[str], *, filters: bool, reading: HashReading | None = None
) -> list[str]:
    """The blob id of each work-tree file at `paths` (relative to the root), in order, in one
    `hash-object --stdin-paths`: as its bytes lie on disk, or with `filters` as `git add`
    would store it, its line endings converted as the attributes and core.autocrlf say.

    With `filters` a filter driver the attributes name would run on the file, whatever
    command it is: so `reading` (`as_hashed`) must prove of each path that nothing
    converts more than line endings (`core/attributes.py:unproven`), or no git runs and
    this raises GitError. git reads no index here, so a file whose blob already holds
    CRLF is converted as if it did not (`git add` would leave it as it is).

    The reading stands for the attributes when it was made: a .gitattributes rewritten
    before hash-object reads it goes unseen, and nothing here narrows that. Emptying
    core.attributesFile leaves the files a writer of the work tree changes (the
    .gitattributes, info/attributes) and changes the ids where it sets `text` or `eol`;
    a second reading after hashing finds the change only once the driver has run; no git
    option turns every driver off and keeps line endings converted. Only a process
    already writing the repository meanwhile could win that race, and it can write a
    protected file itself: the agent hook judges commands, not what already runs."""
    if not paths:
        return []
    if filters:
        why = unproven(paths, reading.attributes if reading is not None else ())
        if why is not None:
            raise GitError(
                f"git hash-object was not run with conversions: {clean_line(why)}, and a "
                "filter driver would run whatever command it names (read the attributes "
                "with as_hashed first, refuse a path where one converts, and pass them)"
            )
    flags = () if filters else ("--no-filters",)
    lines = "".join(_stdin_path(path) + "\n" for path in paths)
    ids = repo.run("hash-object", *flags, "--stdin-paths", stdin=lines).split()
    if len(ids) != len(paths):  # then no id can be matched to its file
        raise GitError(f"git hash-object gave {len(ids)} ids for {len(paths)} files")
    return ids


def _stdin_path(path: str) -> str:
    """`path` as `hash-object --stdin-paths` reads one line: C-quoted, each byte that is
    not plain printable ASCII as an octal escape (a name may hold a newline or a quote)."""
    raw = path.encode("utf-8", "surrogateescape")
    return '"' + "".join(chr(b) if b in _PLAIN else f"\\{b:03o}" for b in raw) + '"'
