"""git's wildmatch with WM_PATHNAME semantics, in time bounded by pattern times path; pure.

This is the matcher behind `:(glob)` pathspecs and gitignore-style paths:

- `*` matches any run of characters except `/`; `?` one character except `/`;
- `[...]` is a bracket expression: ranges, `!` or `^` to negate, POSIX classes
  such as `[:alpha:]`, a `]` right after the opening (or the negation) is a
  literal; a bracket expression never matches `/`;
- a backslash makes the next character literal;
- `**` is special only as a whole path segment: `**/x` matches `x` at any
  depth, `x/**` everything under `x` (not `x` itself), `a/**/b` matches `a/b`,
  `a/x/b`, `a/x/y/b`; any other `**` is a plain `*`;
- the whole path must match (anchored at both ends), case-sensitively.

Matching never backtracks: its work is bounded by the pattern's length times
the path's, whatever either holds. A pusher writes these globs (a gate's `paths`
and `refs`), and a backtracking matcher's work grows exponentially with the
number of `*` in a pattern such as `*a*a*a*a*b` against a long run of `a`.

Two places where this deliberately differs from git, both outside ASCII or
outside wildmatch itself:

- git compares bytes of UTF-8, so its `?` matches half of an `é` and `[é]`
  never matches anything; here a character is a code point. On ASCII the two
  agree exactly, and the POSIX classes stay ASCII-only as in git's ctype.
- git's pathspec layer (not wildmatch) strips the literal prefix before a
  wildcard and so reads `foo**/bar` as if `**` started a segment, and a
  pathspec with no wildcard also matches everything below a directory of that
  name. These globs are matched against full paths and ref names, so the
  plain wildmatch rules apply.
"""

from __future__ import annotations

import bisect
import enum
import functools
import re
import string
from collections.abc import Iterable, Sequence
from typing import NamedTuple

# git's sane ctype is ASCII-only: a non-ASCII character is in no class, and
# `space` is exactly " \t\n\r" (git's isspace leaves out \v and \f).
_CLASSES: dict[str, str] = {
    "alnum": string.ascii_letters + string.digits,
    "alpha": string.ascii_letters,
    "blank": " \t",
    "cntrl": "".join(chr(c) for c in range(0x20)) + "\x7f",
    "digit": string.digits,
    "graph": "".join(chr(c) for c in range(0x21, 0x7F)),
    "lower": string.ascii_lowercase,
    "print": "".join(chr(c) for c in range(0x20, 0x7F)),
    "punct": string.punctuation,
    "space": " \t\n\r",
    "upper": string.ascii_uppercase,
    "xdigit": string.hexdigits,
}


class _PatternError(ValueError):
    """A glob that can never match; the message says why."""


def _member(char: str) -> str:
    """One character as a regex bracket member, escaped whatever it is."""
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _bracket(pattern: str, start: int) -> tuple[str, int]:
    """Translate the bracket expression whose `[` is at `start`; return (regex, next index)."""
    n = len(pattern)
    k = start + 1
    negated = k < n and pattern[k] in "!^"
    if negated:
        k += 1
    members: list[str] = []
    # The character a following `-` would start a range from. git resets it
    # after a range or a class, so `[a-c-e]` and `[[:digit:]-z]` hold a
    # literal `-`.
    range_start: str | None = None
    first = True
    while True:
        if k >= n:
            raise _PatternError(f"unterminated bracket expression at offset {start}")
        char = pattern[k]
        if char == "]" and not first:
            k += 1
            break
        first = False
        if char == "\\":
            if k + 1 >= n:
                raise _PatternError(f"unterminated bracket expression at offset {start}")
            range_start = pattern[k + 1]
            members.append(_member(range_start))
            k += 2
        elif char == "-" and range_start is not None and k + 1 < n and pattern[k + 1] != "]":
            end = pattern[k + 1]
            k += 2
            if end == "\\":
                if k >= n:
                    raise _PatternError(f"unterminated bracket expression at offset {start}")
                end = pattern[k]
                k += 1
            # A reversed range adds nothing, as in git; its start was already
            # added as a member of its own, so `[z-a]` still matches `z`.
            if range_start <= end:
                members.append(f"{_member(range_start)}-{_member(end)}")
            range_start = None
        elif char == "[" and k + 1 < n and pattern[k + 1] == ":":
            close = pattern.find("]", k + 2)
            if close == -1:
                raise _PatternError(f"unterminated bracket expression at offset {start}")
            if close == k + 2 or pattern[close - 1] != ":":
                # No `:]` before the next `]`: git reads the `[` as a literal.
                members.append(_member("["))
                range_start = "["
                k += 1
            else:
                name = pattern[k + 2 : close - 1]
                chars = _CLASSES.get(name)
                if chars is None:
                    shown = f" [:{name}:]" if name.isascii() and name.isalnum() else ""
                    raise _PatternError(f"unknown character class{shown} at offset {k}")
                members.extend(_member(c) for c in chars)
                range_start = None
                k = close + 1
        else:
            members.append(_member(char))
            range_start = char
            k += 1
    body = "".join(members)
    # WM_PATHNAME: a bracket expression never matches `/`, negated or not.
    if negated:
        return f"[^/{body}]", k
    return f"(?!/)[{body}]", k


class _Run(enum.Enum):
    """A wildcard: the run of characters a `*`, `**` or `**/` stands for."""

    SEGMENT = "*"  # any characters but `/`
    ANYTHING = "**"  # any characters, `/` included
    FOLDERS = "**/"  # nothing, or any characters that end with a `/`


class _Piece(NamedTuple):
    """What a pattern holds between its wildcards: literals, `?` and bracket
    expressions, each matching exactly one character, so `width` in all."""

    lookahead: re.Pattern[str]  # zero-width: it matches at each offset the piece starts at
    width: int


_Step = _Piece | _Run


def _stars(pattern: str, start: int) -> tuple[_Run, int]:
    """Read the run of `*` at `start`; return (its wildcard, next index)."""
    n = len(pattern)
    end = start
    while end < n and pattern[end] == "*":
        end += 1
    if end - start == 1:
        return _Run.SEGMENT, end
    # git's test is on the raw characters around the run, so an escaped `\/`
    # before or after still counts as a segment boundary.
    after_boundary = start == 0 or pattern[start - 1] == "/"
    before_boundary = end == n or pattern[end] == "/" or pattern.startswith("\\/", end)
    if not (after_boundary and before_boundary):
        return _Run.SEGMENT, end
    if end < n and pattern[end] == "/":
        # `**/` may also match no directory at all: `a/**/b` matches `a/b`.
        return _Run.FOLDERS, end + 1
    # Trailing `**`, or `**\/` where git does not try the empty match.
    return _Run.ANYTHING, end


def _translate(pattern: str) -> tuple[_Step, ...]:
    """Read a glob into its steps; raise _PatternError when it is invalid."""
    if not pattern:
        raise _PatternError("empty pattern")
    if "\0" in pattern:
        raise _PatternError("pattern contains a NUL character")
    steps: list[_Step] = []
    piece: list[str] = []  # the regex of each character of the piece being read

    def end_piece() -> None:
        if piece:
            steps.append(_Piece(re.compile(f"(?={''.join(piece)})"), len(piece)))
            piece.clear()

    n = len(pattern)
    k = 0
    while k < n:
        char = pattern[k]
        if char == "\\":
            if k + 1 >= n:
                raise _PatternError("trailing backslash escapes nothing")
            piece.append(re.escape(pattern[k + 1]))
            k += 2
        elif char == "?":
            piece.append("[^/]")
            k += 1
        elif char == "*":
            end_piece()
            run, k = _stars(pattern, k)
            steps.append(run)
        elif char == "[":
            part, k = _bracket(pattern, k)
            piece.append(part)
        else:
            piece.append(re.escape(char))
            k += 1
    end_piece()
    return tuple(steps)


@functools.lru_cache(maxsize=1024)
def _compile(pattern: str) -> tuple[_Step, ...] | None:
    """The steps of `pattern`, or None when it can never match."""
    try:
        return _translate(pattern)
    except _PatternError:
        return None


@functools.lru_cache(maxsize=1024)  # a ledger repeats its globs across thousands of files
def pattern_error(pattern: str) -> str | None:
    """Why `pattern` is not a valid glob, or None when it is."""
    try:
        _translate(pattern)
    except _PatternError as error:
        return str(error)
    return None


# Matching walks the steps once, left to right, carrying a set of offsets into the
# path as the bits of an int: bit k says the steps so far can match path[:k].
# So a step's work is bounded by the path's length (times a piece's width), never
# by backtracking: a pusher writes these globs, and `*a*a*a*a*b` must not hang a hook.


def _slashes(path: str) -> int:
    """The offsets of the `/` in `path`, as bits."""
    found = 0
    k = path.find("/")
    while k != -1:
        found |= 1 << k
        k = path.find("/", k + 1)
    return found


def _advance(step: _Step, path: str, ends: int) -> int:
    """The offsets where `step` can end, when it may start at any of `ends` (not none)."""
    if isinstance(step, _Piece):
        if ends & (ends - 1) == 0:  # one start: try the piece there only
            return ends << step.width if step.lookahead.match(path, ends.bit_length() - 1) else 0
        starts = 0
        for found in step.lookahead.finditer(path):
            starts |= 1 << found.start()
        return (ends & starts) << step.width
    if step is _Run.SEGMENT:
        # Adding a start to a run of non-`/` bits carries it to the run's end and
        # one past, the offset of the `/`: the xor keeps what the carry passed.
        plain = ((1 << len(path)) - 1) ^ _slashes(path)
        return ends | (((ends & plain) + plain) ^ plain)
    onward = -(ends & -ends)  # every offset from the first start on
    if step is _Run.ANYTHING:
        return onward & ((2 << len(path)) - 1)
    return ends | (onward & (_slashes(path) << 1))  # FOLDERS: nothing, or up to a `/` and past it


def _matches(steps: tuple[_Step, ...], path: str) -> bool:
    """Whether the whole of `path` matches the steps of a valid pattern."""
    last = steps[-1]
    end = len(path)
    if isinstance(last, _Piece):
        # The last piece must end where the path does, so only one start leads there;
        # most paths a glob is tried on fail it (`**/*.json`), so it is tried first.
        end -= last.width
        if end < 0 or not last.lookahead.match(path, end):
            return False
        steps = steps[:-1]
    ends = 1
    for step in steps:
        if not ends:
            return False
        ends = _advance(step, path, ends)
    return bool(ends >> end & 1)


def match(pattern: str, path: str) -> bool:
    """Whether the whole of `path` matches `pattern`; an invalid pattern matches nothing."""
    steps = _compile(pattern)
    return steps is not None and _matches(steps, path)


def match_any(patterns: Iterable[str], path: str) -> bool:
    """Whether `path` matches at least one of `patterns`."""
    return any(match(pattern, path) for pattern in patterns)


# The characters a glob gives a meaning to: everything before the first is literal.
_SPECIAL = re.compile(r"[*?[\\]")


def literal_prefix(pattern: str) -> str:
    """What every path `pattern` matches starts with: the text before its first special."""
    return _SPECIAL.split(pattern, maxsplit=1)[0]


class WorkSpent(Exception):
    """A match was asked for beyond the work a `Budget` allows."""


# The matching work one answer may take (one decision's `paths`, one verifier's
# `inputs`): 50,000 files against 20 globs with no literal prefix take about a fifth.
MATCH_WORK = 4_000_000_000


class Budget:
    """The work several matches may take together, counted as glob length times path
    length per path tried. Each match is bounded; their sum is not, and the globs and
    paths are a pusher's to choose (many long globs beside many long file names)."""

    def __init__(self, work: int | None = None) -> None:
        self.left = MATCH_WORK if work is None else work

    def spend(self, pattern: str, path: str) -> None:
        self.left -= len(pattern) * len(path)
        if self.left < 0:
            raise WorkSpent


def matching(
    patterns: Iterable[str],
    sorted_paths: Sequence[str],
    *,
    first: bool = False,
    budget: Budget | None = None,
) -> list[int]:
    """Indices of the sorted paths that match any pattern, in order (only one with `first`).

    Only the paths that start with a pattern's literal prefix are tried, found by
    bisection: a glob under one folder costs that folder's files, not the tree's.
    With a `budget`, raises WorkSpent once the paths tried would take more."""
    found: set[int] = set()
    for pattern in patterns:
        steps = _compile(pattern)
        if steps is None:
            continue
        prefix = literal_prefix(pattern)
        for i in range(bisect.bisect_left(sorted_paths, prefix), len(sorted_paths)):
            path = sorted_paths[i]
            if not path.startswith(prefix):
                break
            if budget is not None:
                budget.spend(pattern, path)
            if i not in found and _matches(steps, path):
                if first:
                    return [i]
                found.add(i)
    return sorted(found)
