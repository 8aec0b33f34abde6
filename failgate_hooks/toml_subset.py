"""A fast parser for the narrow TOML shape tomli-w writes for ledger events.

Why it exists: with 10,000 ledger event files (about 400 bytes each),
`tomllib.loads` cost about 47 µs per file and was about 80% of a cold run.
The files are almost always in the exact canonical shape tomli-w writes, so
that shape gets a parser of its own and `tomllib` stays the fallback for
everything else. On those files `loads` takes about 10 µs per file, and every
one of them takes the fast path; about 7 µs when lines repeat, as a ledger's do
(the line memo below).

Contract: for any text, `loads(text)` returns either None ("outside my subset,
ask tomllib") or exactly what `tomllib.loads(text)` returns: an equal dict with
the same keys in the same order and the same types (`int`, never `bool`, for
integers; `str`; `list`; nested `dict`; `datetime.datetime` with an equal
`tzinfo`). It never returns a value for text tomllib rejects. Being
conservative is always correct, so anything unusual returns None.

The subset, exactly as tomli-w writes it:

- `\\n` line endings only (any `\\r` gives None); empty lines allowed; no
  comments and no whitespace other than what is spelled out below.
- top-level `key = value` lines, then `[table]` headers each followed by its
  own `key = value` lines. Keys and table names are bare (`[A-Za-z0-9_-]+`),
  with exactly one space each side of `=`. A duplicate key, a duplicate table
  or a table named like a top-level key gives None.
- values: basic strings with no backslash, no `"` and no control character
  (U+0000-U+001F, U+007F; tab included); integers `0` or `-?[1-9][0-9]*`;
  `true` and `false`; offset date-times `YYYY-MM-DD HH:MM:SS[.f{1,6}]` followed
  by `Z` or `+HH:MM`/`-HH:MM`, built the way `tomllib` builds them.
- arrays: `[]`, or `[` ending the key line, then one `    value,` line per
  item (any of the values above), then a line `]`.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

# One scalar value. The groups, in order: basic string (1), integer (2),
# boolean (3), then the date-time's year, month, day, hour, minute and second
# (4-9), fraction (10) and offset, `Z` or `+HH:MM`/`-HH:MM` (11). The ranges
# are tomllib's own (`tomllib/_re.py`): a range check here is what keeps an
# offset like `+00:75` from being built at all, since `timezone` would take it.
# No group nests in another and a date-time always ends with its offset group,
# so `match.lastindex` (the last group to close) says which alternative matched.
_SCALAR = (
    r'"([^"\\\x00-\x1f\x7f]*)"'
    r"|(0|-?[1-9][0-9]*)"
    r"|(true|false)"
    r"|([0-9]{4})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"
    r" ([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9])(?:\.([0-9]{1,6}))?"
    r"(Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
)
# `key = value`: the key is group 1, the scalar groups follow from 2, and the
# last group (13) is an array opening, `[]` or `[`.
_KEY_VALUE = re.compile(rf"([A-Za-z0-9_-]+) = (?:{_SCALAR}|(\[\]?))")
_ARRAY_ITEM = re.compile(rf"    (?:{_SCALAR}),")
_TABLE = re.compile(r"\[([A-Za-z0-9_-]+)\]")

_KV_ARRAY = 13


def _scalar(match: re.Match[str], first: int) -> Any:
    """The value of a `_SCALAR` match whose groups start at `first`, or None.

    None means tomllib would not return this value: an impossible date or
    time, or an integer longer than Python converts (tomllib raises then).
    """
    kind = match.lastindex
    if kind == first:
        return match.group(first)
    if kind == first + 1:
        try:
            return int(match.group(first + 1))
        except ValueError:  # beyond sys.get_int_max_str_digits(): tomllib raises too
            return None
    if kind == first + 2:
        return match.group(first + 2) == "true"
    # The regex has checked the shape and every range tomllib checks
    # (`tomllib/_re.py`); what is left, building it, `fromisoformat` does in C with
    # the values and timezone `match_to_datetime` gives (`Z` and +00:00 are both
    # `timezone.utc`; other offsets equal `timezone(timedelta(...))`).
    text = match.string[match.start(first + 3) : match.end(first + 10)]  # year to offset
    try:
        return datetime.fromisoformat(text)
    except ValueError:  # e.g. February 30th; tomllib rejects the document
        return None


# Lines seen before, and how they parsed. An event file's lines parse alone (the key
# and value of `key = value` depend on nothing around them), and a ledger repeats most
# of them: `schema = 1`, `follows = []`, `status = "observed"`, its triggers, its
# people. Values are immutable (an array is made new each time), so sharing them is
# safe. Bounded: a ledger of unique lines stops adding, and parses as without.
_MEMO_LIMIT = 65_536
_NOT_SEEN = object()
_REJECT = object()  # a value tomllib would not give (loads returns None)
_OPEN_ARRAY = object()  # `key = [`: the items follow
_EMPTY_ARRAY = object()  # `key = []`
_line_memo: dict[str, tuple[str, Any] | None] = {}
_item_memo: dict[str, Any] = {}


def _key_value(line: str) -> tuple[str, Any] | None:
    """A `key = value` line as (key, value), or None when it is no such line.

    An array's value is `_OPEN_ARRAY` or `_EMPTY_ARRAY`; `_REJECT` when tomllib would
    not give the value."""
    match = _KEY_VALUE.fullmatch(line)
    if match is None:
        return None
    kind = match.lastindex
    if kind == 2:
        value = match.group(2)  # a plain string, the common case: no call for it
    elif kind == _KV_ARRAY:
        value = _EMPTY_ARRAY if match.group(_KV_ARRAY) == "[]" else _OPEN_ARRAY
    else:
        value = _scalar(match, 2)
        if value is None:
            value = _REJECT
    return match.group(1), value


def _item(line: str) -> Any:
    """The value of an array item line, or `_REJECT`."""
    match = _ARRAY_ITEM.fullmatch(line)
    if match is None:
        return _REJECT
    value = match.group(1) if match.lastindex == 1 else _scalar(match, 1)
    return _REJECT if value is None else value


def loads(text: str) -> dict[str, Any] | None:
    """`tomllib.loads(text)` for canonical tomli-w text, None for anything else."""
    if "\r" in text:
        return None
    line_memo = _line_memo
    item_memo = _item_memo
    root: dict[str, Any] = {}
    table = root
    array: list[Any] | None = None
    value: Any
    for line in text.split("\n"):  # never splitlines(): it also splits on U+2028 and more
        if array is not None:
            if line == "]":
                array = None
                continue
            value = item_memo.get(line, _NOT_SEEN)
            if value is _NOT_SEEN:
                value = _item(line)
                if len(item_memo) < _MEMO_LIMIT:
                    item_memo[line] = value
            if value is _REJECT:
                return None
            array.append(value)
            continue
        if not line:
            continue
        found: Any = line_memo.get(line, _NOT_SEEN)
        if found is _NOT_SEEN:
            found = _key_value(line)
            if len(line_memo) < _MEMO_LIMIT:
                line_memo[line] = found
        if found is None:
            match = _TABLE.fullmatch(line)
            if match is None:
                return None
            name = match.group(1)
            if name in root:
                return None
            table = root[name] = {}
            continue
        key, value = found
        if key in table or value is _REJECT:
            return None
        if value is _OPEN_ARRAY:
            value = array = []
        elif value is _EMPTY_ARRAY:
            value = []
        table[key] = value
    if array is not None:
        return None
    return root


def read(text: str) -> dict[str, Any]:
    """`tomllib.loads(text)`, through the fast path when the text is in the subset.

    Raises what tomllib raises: TOMLDecodeError, a ValueError from int() beyond its
    digit limit, RecursionError for nesting too deep."""
    found = loads(text)
    if found is not None:
        return found
    import tomllib  # only for a text outside the subset: a warm hook parses nothing

    return tomllib.loads(text)
