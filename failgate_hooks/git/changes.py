"""`git log --raw -z` and `diff-tree --raw -z` output, read as records of changed paths.

Without `-z` git quotes a path holding `"`, a tab, a newline or a backslash
(`"le\\"dger/…toml"`), so a reader of lines sees a path that ends in `.toml"` and
is no ledger file. With `-z` every path comes as its bytes, ended by a NUL, and
is read by its position after the record's status, never by what it looks like.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from failgate_hooks.core.errors import GitError
from failgate_hooks.core.sanitize import clean_line

_ID = r"(?:[0-9a-f]{40}|[0-9a-f]{64})"
# `:old_mode new_mode old_id new_id STATUS`: a rename's or copy's status (and with -B a
# modification's) carries a score. A combined diff's `::` record is none of them.
_META_RE = re.compile(rf":([0-7]{{6}}) ([0-7]{{6}}) {_ID} {_ID} ([ACDMRTUX])[0-9]{{0,3}}\Z")
_NONE = "000000"  # the mode of a side that holds no such path
COMMIT_MARK = "\x01"  # what `--format=%x01%H` puts before each commit's id
_SHOWN = 80  # of a malformed record, the most an error message quotes


class Change(NamedTuple):
    """One path a commit adds (`A`), deletes (`D`) or otherwise changes (`M`, `T`, …),
    with its mode before and after (`000000`: absent).

    A rename or copy is given as what it does to each path: a rename deletes the
    old path and adds the new one, a copy only adds the new one."""

    status: str
    path: str
    old_mode: str
    new_mode: str


def parse_raw(out: str) -> list[Change]:
    """The changes of `--raw -z` output holding no commit headers (`diff-tree`)."""
    changes = []
    for commit, found in parse_log_raw(out):
        if commit is not None:
            raise GitError(f"git diff output holds a commit header: {_shown(commit)}")
        changes += found
    return changes


def parse_log_raw(out: str) -> Iterator[tuple[str | None, list[Change]]]:
    """(commit id, its changes) for each commit of `git log --format=%x01%H --raw -z`
    output, in git's order; changes before any header come with None. A record that
    is not what git writes is a GitError: a change never read is one never checked."""
    tokens = out.split("\0")
    if tokens and tokens[-1] == "":
        tokens.pop()  # the NUL that ends the last path
    commit: str | None = None
    changes: list[Change] = []
    started = False
    position = 0
    while position < len(tokens):
        # git ends a header with a NUL and starts the raw records on a new line
        token = tokens[position].lstrip("\n")
        position += 1
        if token.startswith(COMMIT_MARK):
            if started:
                yield commit, changes
            commit, changes, started = _commit_id(token), [], True
            continue
        match = _META_RE.match(token)
        if match is None:
            raise GitError(f"git gave a change record failgate cannot read: {_shown(token)}")
        old_mode, new_mode, status = match.groups()
        wanted = 2 if status in "RC" else 1
        paths = tokens[position : position + wanted]
        position += wanted
        if len(paths) != wanted or not all(paths):
            raise GitError(f"git's change record {_shown(token)} lacks its path")
        if status == "R":
            changes.append(Change("D", paths[0], old_mode, _NONE))
        if status in "RC":  # a copy's source stays; git gives its edit a record of its own
            changes.append(Change("A", paths[1], _NONE, new_mode))
        else:
            changes.append(Change(status, paths[0], old_mode, new_mode))
        started = True
    if started:
        yield commit, changes


def _commit_id(token: str) -> str:
    oid = token[len(COMMIT_MARK) :]
    if not re.fullmatch(_ID, oid):
        raise GitError(f"git gave a commit header failgate cannot read: {_shown(token)}")
    return oid


def _shown(token: str) -> str:
    return repr(clean_line(token, _SHOWN))
