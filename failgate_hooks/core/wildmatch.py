"""git's wildmatch with WM_PATHNAME semantics, compiled to regular expressions; pure.

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
import functools
import re
import string
from collections.abc import Iterable, Sequence

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

# Any character, including newline, for the segment-crossing `**`.
_ANY_RUN = "(?s:.*)"
_SEGMENT_RUN = "[^/]*"


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


def _stars(pattern: str, start: int) -> tuple[str, int]:
    """Translate the run of `*` at `start`; return (regex, next index)."""
    n = len(pattern)
    end = start
    while end < n and pattern[end] == "*":
        end += 1
    if end - start == 1:
        return _SEGMENT_RUN, end
    # git's test is on the raw characters around the run, so an escaped `\/`
    # before or after still counts as a segment boundary.
    after_boundary = start == 0 or pattern[start - 1] == "/"
    before_boundary = end == n or pattern[end] == "/" or pattern.startswith("\\/", end)
    if not (after_boundary and before_boundary):
        return _SEGMENT_RUN, end
    if end < n and pattern[end] == "/":
        # `**/` may also match no directory at all: `a/**/b` matches `a/b`.
        return f"(?:{_ANY_RUN}/)?", end + 1
    # Trailing `**`, or `**\/` where git does not try the empty match.
    return _ANY_RUN, end


def _translate(pattern: str) -> str:
    """Translate a glob into an (unanchored) regex; raise _PatternError when invalid."""
    if not pattern:
        raise _PatternError("empty pattern")
    if "\0" in pattern:
        raise _PatternError("pattern contains a NUL character")
    parts: list[str] = []
    n = len(pattern)
    k = 0
    while k < n:
        char = pattern[k]
        if char == "\\":
            if k + 1 >= n:
                raise _PatternError("trailing backslash escapes nothing")
            parts.append(re.escape(pattern[k + 1]))
            k += 2
        elif char == "?":
            parts.append("[^/]")
            k += 1
        elif char == "*":
            part, k = _stars(pattern, k)
            parts.append(part)
        elif char == "[":
            part, k = _bracket(pattern, k)
            parts.append(part)
        else:
            parts.append(re.escape(char))
            k += 1
    return "".join(parts)


@functools.lru_cache(maxsize=1024)
def _compile(pattern: str) -> re.Pattern[str] | None:
    """The compiled regex for `pattern`, or None when it can never match."""
    try:
        return re.compile(_translate(pattern))
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


def match(pattern: str, path: str) -> bool:
    """Whether the whole of `path` matches `pattern`; an invalid pattern matches nothing."""
    compiled = _compile(pattern)
    return compiled is not None and compiled.fullmatch(path) is not None


def match_any(patterns: Iterable[str], path: str) -> bool:
    """Whether `path` matches at least one of `patterns`."""
    return any(match(pattern, path) for pattern in patterns)


# The characters a glob gives a meaning to: everything before the first is literal.
_SPECIAL = re.compile(r"[*?[\\]")


def literal_prefix(pattern: str) -> str:
    """What every path `pattern` matches starts with: the text before its first special."""
    return _SPECIAL.split(pattern, maxsplit=1)[0]


def matching(
    patterns: Iterable[str], sorted_paths: Sequence[str], *, first: bool = False
) -> list[int]:
    """Indices of the sorted paths that match any pattern, in order (only one with `first`).

    Only the paths that start with a pattern's literal prefix are tried, found by
    bisection: a glob under one folder costs that folder's files, not the tree's."""
    found: set[int] = set()
    for pattern in patterns:
        prefix = literal_prefix(pattern)
        for i in range(bisect.bisect_left(sorted_paths, prefix), len(sorted_paths)):
            path = sorted_paths[i]
            if not path.startswith(prefix):
                break
            if i not in found and match(pattern, path):
                if first:
                    return [i]
                found.add(i)
    return sorted(found)
