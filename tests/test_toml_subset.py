"""`toml_subset.loads` is never different from `tomllib.loads`, and takes the fast path.

For any text, `loads` returns None or exactly what `tomllib.loads` returns
(same keys in the same order, same types, datetimes with equal `tzinfo`), and
never a value for text tomllib rejects. Checked on what tomli-w writes for
random event-like dicts, on those files mutated, on documents assembled from
near-miss tokens, and on a table of hand-written edge cases whose outcome is
pinned exactly, tomllib's side included.
"""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from failgate_hooks.toml_subset import loads

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- the oracle ---------------------------------------------------------------


def assert_identical(fast: Any, slow: Any, path: str = "$") -> None:
    """Equal values with identical types, key order, and datetime fields and tzinfo."""
    assert type(fast) is type(slow), f"{path}: {type(fast)} != {type(slow)}"
    if isinstance(slow, dict):
        assert list(fast) == list(slow), f"{path}: key order"
        for key in slow:
            assert_identical(fast[key], slow[key], f"{path}.{key}")
    elif isinstance(slow, list):
        assert len(fast) == len(slow), f"{path}: length"
        for i, (a, b) in enumerate(zip(fast, slow, strict=True)):
            assert_identical(a, b, f"{path}[{i}]")
    elif isinstance(slow, datetime):
        # `==` on aware datetimes compares instants; compare every field instead.
        assert fast.replace(tzinfo=None) == slow.replace(tzinfo=None), path
        assert fast.tzinfo == slow.tzinfo, f"{path}: {fast.tzinfo!r} != {slow.tzinfo!r}"
        assert fast.utcoffset() == slow.utcoffset(), path
        assert fast.fold == slow.fold, path
    else:
        assert fast == slow, f"{path}: {fast!r} != {slow!r}"
    assert repr(fast) == repr(slow), path


def agree(text: str) -> dict[str, Any] | None:
    """Assert the contract for `text`; return what `loads` returned."""
    fast = loads(text)
    try:
        slow = tomllib.loads(text)
    except Exception:  # TOMLDecodeError, and ValueError from int()'s digit limit
        assert fast is None, f"tomllib rejects {text!r} but loads returned {fast!r}"
        return None
    if fast is not None:
        assert_identical(fast, slow)
    return fast


# -- what tomli-w writes --------------------------------------------------------

BARE_KEY = st.from_regex(r"[A-Za-z0-9_-]{1,10}", fullmatch=True)
ANY_KEY = st.one_of(BARE_KEY, st.text(max_size=6))

NOT_IN_PLAIN = "".join(map(chr, range(0x20))) + '\x7f"\\'
# Everything a plain string may hold: non-ASCII, U+0085, U+2028, `#`, `=`, brackets.
PLAIN_TEXT = st.one_of(
    st.text(st.characters(exclude_characters=NOT_IN_PLAIN), max_size=20),
    st.text(st.sampled_from(list(" #=[]{},.'é€😀\x85\u2028\u2029\x80\x9f\ufeffab")), max_size=8),
)
HOSTILE_CHARS = list("\"\\\t\n\r\x00\x1f\x7f\x85\u2028é😀#=[]{},. 'abcT")
ANY_TEXT = st.one_of(PLAIN_TEXT, st.text(max_size=12), st.text(st.sampled_from(HOSTILE_CHARS)))

MINUTE_OFFSET = st.integers(-(24 * 60 - 1), 24 * 60 - 1).map(
    lambda m: timezone(timedelta(minutes=m))
)
COMMON_TZ = st.one_of(st.just(UTC), MINUTE_OFFSET)
# Offsets with seconds are written as +HH:MM:SS(.ffffff), which TOML has no syntax for.
ODD_TZ = st.timedeltas(
    min_value=-timedelta(hours=23, minutes=59, seconds=59),
    max_value=timedelta(hours=23, minutes=59, seconds=59),
).map(timezone)
DATETIMES = st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59))
AWARE = st.datetimes(
    min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59), timezones=COMMON_TZ
)
# With and without microseconds, both common.
AWARE_EITHER = st.one_of(AWARE, AWARE.map(lambda d: d.replace(microsecond=0)))

INTS = st.one_of(st.integers(-(10**6), 10**6), st.integers())
COMMON_SCALAR = st.one_of(PLAIN_TEXT, INTS, st.booleans(), AWARE_EITHER)
COMMON_VALUE = st.one_of(
    COMMON_SCALAR,
    st.lists(PLAIN_TEXT, max_size=4),
    st.lists(st.one_of(PLAIN_TEXT, INTS, st.booleans(), AWARE_EITHER), max_size=3),
)

ANY_SCALAR = st.one_of(
    ANY_TEXT,
    INTS,
    st.booleans(),
    AWARE_EITHER,
    st.datetimes(timezones=ODD_TZ),
    DATETIMES,  # local date-times
    st.dates(),
    st.times(),
    st.floats(allow_nan=False),
)
ANY_LIST = st.one_of(
    st.lists(ANY_SCALAR, max_size=4),
    st.lists(st.lists(INTS, max_size=2), max_size=2),
    st.lists(st.dictionaries(BARE_KEY, INTS, max_size=2), max_size=2),
)
ANY_TABLE = st.dictionaries(ANY_KEY, st.one_of(ANY_SCALAR, ANY_LIST), max_size=5)
ANY_DOC = st.dictionaries(
    ANY_KEY,
    st.one_of(
        ANY_SCALAR,
        ANY_LIST,
        ANY_TABLE,
        st.dictionaries(BARE_KEY, ANY_TABLE, max_size=2),  # nested: [a.b]
    ),
    max_size=8,
)


@st.composite
def common_docs(draw: st.DrawFn) -> dict[str, Any]:
    """The shape the fast path exists for: bare keys, plain values, one or two sub-tables."""
    doc: dict[str, Any] = draw(st.dictionaries(BARE_KEY, COMMON_VALUE, max_size=10))
    names = draw(
        st.lists(BARE_KEY.filter(lambda k: k not in doc), min_size=1, max_size=2, unique=True)
    )
    for name in names:
        doc[name] = draw(st.dictionaries(BARE_KEY, COMMON_VALUE, max_size=4))
    return doc


EVENT_ID = st.from_regex(r"20[0-9]{6}T[0-9]{6}Z-[0-9a-f]{8}", fullmatch=True)


@st.composite
def event_docs(draw: st.DrawFn) -> dict[str, Any]:
    """Shaped like a ledger event file."""
    doc: dict[str, Any] = {
        "schema": draw(st.integers(0, 3)),
        "id": draw(EVENT_ID),
        "entity_key": draw(PLAIN_TEXT),
        "status": draw(st.sampled_from(["observed", "diagnosed", "fixed", "retracted"])),
        "follows": draw(st.lists(EVENT_ID, max_size=3)),
        "effective_at": draw(AWARE_EITHER),
    }
    if draw(st.booleans()):
        doc["title"] = draw(PLAIN_TEXT)
        doc["triggers"] = draw(st.lists(st.sampled_from(["push", "merge"]), max_size=2))
    doc["supersedes"] = draw(st.lists(EVENT_ID, max_size=2))
    doc["retracts"] = []
    doc["recorded_by"] = draw(PLAIN_TEXT)
    doc["note"] = draw(PLAIN_TEXT)
    if draw(st.booleans()):
        doc["applies_to"] = {"refs": draw(st.lists(PLAIN_TEXT, max_size=3))}
    return doc


@FAST
@given(ANY_DOC)
def test_anything_tomli_w_writes_agrees_with_tomllib(doc: dict[str, Any]) -> None:
    agree(tomli_w.dumps(doc))


@FAST
@given(st.one_of(common_docs(), event_docs()))
def test_the_common_shape_takes_the_fast_path(doc: dict[str, Any]) -> None:
    text = tomli_w.dumps(doc)
    fast = agree(text)
    assert fast is not None, f"fell back on canonical text:\n{text}"


@FAST
@given(st.one_of(st.text(), st.text(st.sampled_from(HOSTILE_CHARS))))
def test_a_string_takes_the_fast_path_exactly_when_it_is_plain(value: str) -> None:
    plain = set(value).isdisjoint(NOT_IN_PLAIN)
    assert (agree(tomli_w.dumps({"k": value, "l": [value]})) is not None) == plain
    # Written raw, not escaped as tomli-w would: DEL, NUL, CR, tab, backslash as they are.
    assert (agree(f'k = "{value}"\nl = [\n    "{value}",\n]\n') is not None) == plain


@FAST
@given(st.one_of(INTS, AWARE_EITHER))
def test_every_integer_and_offset_date_time_takes_the_fast_path(value: Any) -> None:
    text = tomli_w.dumps({"k": value, "l": [value, value]})
    assert agree(text) is not None, text


def test_a_real_event_file_takes_the_fast_path() -> None:
    text = (
        "schema = 1\n"
        'id = "20260102T031000Z-db3a4054"\n'
        'entity_key = "svc:area-30:risk-01630"\n'
        'status = "observed"\n'
        "follows = []\n"
        "effective_at = 2026-01-02 03:10:00+00:00\n"
        'title = "Risk 1630: a failure that burned once"\n'
        "triggers = [\n"
        '    "push",\n'
        "]\n"
        "supersedes = []\n"
        "retracts = []\n"
        'recorded_by = "Bench <bench@example.org>"\n'
        'note = "observed while shipping change 1630; see the post-mortem"\n'
        "\n"
        "[applies_to]\n"
        "refs = [\n"
        '    "refs/heads/release/*",\n'
        "]\n"
    )
    fast = agree(text)
    assert fast is not None
    assert fast["effective_at"] == datetime(2026, 1, 2, 3, 10, tzinfo=UTC)
    assert fast["applies_to"] == {"refs": ["refs/heads/release/*"]}


def test_lines_seen_before_parse_the_same_into_values_of_their_own() -> None:
    # the second file's lines all come from the line memo
    text = 'schema = 1\nfollows = []\ntriggers = [\n    "push",\n]\n\n[t]\nfiles = []\n'
    first, second = agree(text), agree(text)
    assert first == second == {
        "schema": 1, "follows": [], "triggers": ["push"], "t": {"files": []}
    }  # fmt: skip
    assert first is not None and second is not None
    first["follows"].append("x")
    first["triggers"].append("deploy")
    first["t"]["files"].append("y")
    assert second == {"schema": 1, "follows": [], "triggers": ["push"], "t": {"files": []}}


def test_a_line_the_subset_rejects_is_rejected_again() -> None:
    text = "when = 2026-02-30 00:00:00Z\n"  # no February 30th: tomllib refuses it
    assert agree(text) is None
    assert agree(text) is None
    assert agree("x = [\n    2026-02-30 00:00:00Z,\n]\n") is None
    assert agree("x = [\n    2026-02-30 00:00:00Z,\n]\n") is None


# -- mutated canonical files ----------------------------------------------------

MUTATION_CHARS = [*HOSTILE_CHARS, "+", "-", "_", "0", "1", "9", ":", "Z", "z", "t", "x", "\u0661"]
Mutation = Callable[[st.DrawFn, str], str]


def _position(draw: st.DrawFn, text: str, extra: int = 0) -> int:
    return draw(st.integers(0, max(len(text) - 1 + extra, 0)))


def _flip(draw: st.DrawFn, text: str) -> str:
    i = _position(draw, text)
    return text[:i] + draw(st.sampled_from(MUTATION_CHARS)) + text[i + 1 :]


def _insert(draw: st.DrawFn, text: str) -> str:
    i = _position(draw, text, extra=1)
    return text[:i] + draw(st.sampled_from(MUTATION_CHARS)) + text[i:]


def _delete(draw: st.DrawFn, text: str) -> str:
    i = _position(draw, text)
    return text[:i] + text[i + 1 :]


def _lines(draw: st.DrawFn, text: str) -> tuple[list[str], int, int]:
    lines = text.split("\n")
    last = len(lines) - 1
    return lines, draw(st.integers(0, last)), draw(st.integers(0, last))


def _duplicate_line(draw: st.DrawFn, text: str) -> str:
    lines, i, j = _lines(draw, text)
    lines.insert(j, lines[i])
    return "\n".join(lines)


def _drop_line(draw: st.DrawFn, text: str) -> str:
    lines, i, _ = _lines(draw, text)
    del lines[i]
    return "\n".join(lines)


def _swap_lines(draw: st.DrawFn, text: str) -> str:
    lines, i, j = _lines(draw, text)
    lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


def _replace_token(draw: st.DrawFn, text: str) -> str:
    old, new = draw(
        st.sampled_from(
            [
                (" = ", "="),
                (" = ", "  = "),
                (" = ", " =\t"),
                ("    ", "   "),
                ("    ", "\t"),
                (",\n", "\n"),
                ("\n", "\r\n"),
                ("\n", " \n"),
                ("\n", "\n\n"),
                ("+00:00", "Z"),
                ("+00:00", "z"),
                ("+00:00", "+24:00"),
                ("+", "-"),
                (":00", ":60"),
                (" 0", "T0"),
                (" 1", "t1"),
                ('"', "'"),
                ("[\n", "["),
                ("\n]", "]"),
                ("]", "]]"),
                ("[", "[["),
                ("= ", "= +"),
                ("= 1", "= 01"),
                ("= 1", "= 1_0"),
                ("= 1", "= 1.0"),
                ("true", "True"),
                (".", ""),
                (".", ".0"),
            ]
        )
    )
    count = text.count(old)
    if not count:
        return text
    nth = draw(st.integers(0, count - 1))
    i = -1
    for _ in range(nth + 1):
        i = text.index(old, i + 1)
    return text[:i] + new + text[i + len(old) :]


MUTATIONS: list[Mutation] = [
    _flip,
    _insert,
    _delete,
    _duplicate_line,
    _drop_line,
    _swap_lines,
    _replace_token,
]


@st.composite
def mutated_docs(draw: st.DrawFn) -> str:
    text = tomli_w.dumps(draw(st.one_of(event_docs(), common_docs())))
    for _ in range(draw(st.integers(1, 3))):
        text = draw(st.sampled_from(MUTATIONS))(draw, text)
    return text


@settings(FAST, max_examples=400)
@given(mutated_docs())
def test_mutated_files_agree_with_tomllib(text: str) -> None:
    agree(text)


# -- documents assembled from near-miss tokens ---------------------------------


def _pick(*options: str) -> st.SearchStrategy[str]:
    return st.sampled_from(options)


def _mostly(valid: st.SearchStrategy[str], near: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """`valid` three times in four, so that whole documents are often valid."""
    return st.integers(0, 3).flatmap(lambda i: near if i == 0 else valid)


KEY_TOKEN = _mostly(
    _pick("a", "b", "c", "d", "t", "u", "1", "-", "true"), _pick("a.b", '"a"', "a b", "", "é")
)
SEPARATOR = _mostly(st.just(" = "), _pick("=", "  = ", " =", "= ", "\t=\t"))
NEAR_INT = _mostly(
    st.one_of(st.integers(-(10**20), 10**20).map(str), _pick("0", "-1", "9" * 30)),
    _pick("+1", "01", "00", "-0", "1_0", "0_0", "0x1f", "0o7", "0b1", "1.0", "1e3", "inf", "nan")
    | _pick("--1", "- 1", "\u0661", "1\u0661", "\uff11", "1 2"),
)
# Date-time parts, each (valid, near miss). Half the date-times are valid; the
# other half have exactly one part wrong, so each near miss is tried on its own.
DATETIME_PARTS = [
    (_pick("2026", "2024", "1999", "0001", "9999"), _pick("0000", "202", "20260", "\u0662026")),
    (st.just("-"), _pick("_", "/")),
    (_pick("01", "02", "12"), _pick("00", "13", "1")),
    (st.just("-"), st.just("")),
    (_pick("01", "28", "29", "30", "31"), _pick("00", "32", "1")),
    (st.just(" "), _pick("T", "t", "  ", "_")),
    (_pick("00", "09", "23"), _pick("24", "9")),
    (st.just(":"), st.just("")),
    (_pick("00", "59"), _pick("60", "5")),
    (st.just(":"), st.just("")),
    (_pick("00", "59"), _pick("60", "61")),
    (_pick("", ".5", ".000001", ".123456", ".0"), _pick(".1234567", ".0000001", ".", ".x")),
    (
        _pick("+00:00", "Z", "-05:30", "+23:59", "-00:00", "-23:59", "+01:00"),
        _pick("z", "", "+24:00", "+00:60", "+5:30", "+05:30:00", "+0530", "+05"),
    ),
]


@st.composite
def near_datetimes(draw: st.DrawFn) -> str:
    broken = draw(st.integers(-len(DATETIME_PARTS), len(DATETIME_PARTS) - 1))
    return "".join(
        draw(near if i == broken else valid) for i, (valid, near) in enumerate(DATETIME_PARTS)
    )


NEAR_DATETIME = near_datetimes()
NEAR_STRING = _mostly(
    st.text(st.characters(exclude_characters=NOT_IN_PLAIN), max_size=6).map(lambda s: f'"{s}"'),
    st.text(st.characters(), max_size=6).map(lambda s: f'"{s}"')
    | st.text(st.sampled_from(HOSTILE_CHARS), max_size=4).map(lambda s: f'"{s}"')
    | _pick("'a'", '"""a"""', '"a\\nb"', '"a" "b"', '"a', 'a"', '"\\u00e9"', "''"),
)
NEAR_BOOL = _mostly(_pick("true", "false"), _pick("True", "tru", "truee", "FALSE"))
NEAR_SCALAR = st.one_of(NEAR_STRING, NEAR_INT, NEAR_DATETIME, NEAR_BOOL)
NEAR_VALUE = _mostly(
    NEAR_SCALAR | st.just("[]"),
    _pick("[ ]", "[1]", '["a", "b"]', '["a",]', "[[]]", "{}", "{ a = 1 }", "[", "]"),
)
SUFFIX = _mostly(st.just(""), _pick(" ", " # c", "#", ",", "\t", "\x00"))
INDENT = _mostly(st.just("    "), _pick("   ", "\t", "        ", ""))
COMMA = _mostly(st.just(","), _pick("", ", ", " ,"))


@st.composite
def near_miss_lines(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["kv", "kv", "kv", "array", "header", "other"]))
    if kind == "kv":
        return draw(KEY_TOKEN) + draw(SEPARATOR) + draw(NEAR_VALUE) + draw(SUFFIX)
    if kind == "array":
        items = draw(st.lists(st.tuples(INDENT, NEAR_SCALAR, COMMA).map("".join), max_size=3))
        closer = draw(_mostly(st.just("]"), _pick(" ]", "],", "", "]]")))
        return "\n".join([draw(KEY_TOKEN) + draw(SEPARATOR) + "[", *items, closer])
    if kind == "header":
        key = draw(KEY_TOKEN)
        return draw(_mostly(st.just(f"[{key}]"), _pick(f"[[{key}]]", f"[ {key} ]", f"[{key}] #")))
    return draw(_mostly(st.just(""), _pick(" ", "# comment", "\t", "]")))


@st.composite
def near_miss_docs(draw: st.DrawFn) -> str:
    lines = draw(st.lists(near_miss_lines(), max_size=6))
    newline = draw(_mostly(st.just("\n"), st.just("\r\n")))
    return newline.join(lines) + draw(_mostly(st.just(newline), st.just("")))


@settings(FAST, max_examples=500)
@given(near_miss_docs())
def test_near_miss_documents_agree_with_tomllib(text: str) -> None:
    agree(text)


@settings(FAST, max_examples=300)
@given(NEAR_VALUE, NEAR_SCALAR)
def test_near_miss_values_agree_with_tomllib(value: str, item: str) -> None:
    agree(f"a = {value}\nb = [\n    {item},\n]\n")


# -- hand-written edge cases ----------------------------------------------------

REJECTED = "tomllib rejects it, loads returns None"
FALLBACK = "tomllib accepts it, loads returns None"


def dt(*args: int, tz: timezone = UTC) -> datetime:
    return datetime(*args, tzinfo=tz)


def offset(hours: int, minutes: int) -> timezone:
    return timezone(timedelta(hours=hours, minutes=minutes))


D = "2026-01-02 06:39:00"  # a valid date and time, to hang offsets and fractions on

EDGE_CASES: list[tuple[str, str, Any]] = [
    # document shape
    ("empty document", "", {}),
    ("only blank lines", "\n\n", {}),
    ("missing final newline", "a = 1", {"a": 1}),
    ("blank lines between", "a = 1\n\n\nb = 2\n", {"a": 1, "b": 2}),
    ("whitespace-only line", "a = 1\n  \n", FALLBACK),
    ("trailing space", "a = 1 \n", FALLBACK),
    ("leading space", " a = 1\n", FALLBACK),
    ("no spaces around =", "a=1\n", FALLBACK),
    ("two spaces before =", "a  = 1\n", FALLBACK),
    ("tab around =", "a\t=\t1\n", FALLBACK),
    ("CRLF line endings", "a = 1\r\n", FALLBACK),
    ("lone CR", "a = 1\r", REJECTED),
    ("comment line", "# c\na = 1\n", FALLBACK),
    ("trailing comment", "a = 1 # c\n", FALLBACK),
    ("hash inside a string", 'a = "x # y"\n', {"a": "x # y"}),
    ("BOM", "\ufeffa = 1\n", REJECTED),
    ("NUL after a value", "a = 1\x00\n", REJECTED),
    # keys and tables
    ("duplicate key", "a = 1\na = 2\n", REJECTED),
    ("duplicate key in a table", "[t]\na = 1\na = 2\n", REJECTED),
    ("duplicate table", "[t]\n[t]\n", REJECTED),
    ("duplicate table, apart", "[t]\na = 1\n[u]\n[t]\nb = 2\n", REJECTED),
    ("key-table clash", "t = 1\n[t]\n", REJECTED),
    ("key-table clash, array", "t = []\n[t]\n", REJECTED),
    ("same key in two tables", "[t]\na = 1\n[u]\na = 2\n", {"t": {"a": 1}, "u": {"a": 2}}),
    ("key named like its table", "t = 1\n[u]\nt = 2\n", {"t": 1, "u": {"t": 2}}),
    ("empty tables", "[t]\n[u]\n", {"t": {}, "u": {}}),
    ("key order kept", "b = 1\na = 2\n[z]\n[y]\nc = 3\n", {"b": 1, "a": 2, "z": {}, "y": {"c": 3}}),
    ("bare keys that look like values", "true = 1\n1 = 2\n- = 3\n", {"true": 1, "1": 2, "-": 3}),
    ("quoted key", '"a" = 1\n', FALLBACK),
    ("dotted key", "a.b = 1\n", FALLBACK),
    ("non-ASCII key", "é = 1\n", REJECTED),
    ("array of tables", "[[t]]\n", FALLBACK),
    ("nested table", "[a.b]\n", FALLBACK),
    ("spaced table header", "[ t ]\n", FALLBACK),
    # integers
    ("zero", "a = 0\n", {"a": 0}),
    ("negative", "a = -42\n", {"a": -42}),
    ("beyond 64 bits", f"a = {2**64}\n", {"a": 2**64}),
    ("plus sign", "a = +1\n", FALLBACK),
    ("negative zero", "a = -0\n", FALLBACK),
    ("leading zero", "a = 01\n", REJECTED),
    ("underscore", "a = 1_0\n", FALLBACK),
    ("hex", "a = 0x1f\n", FALLBACK),
    ("float", "a = 1.5\n", FALLBACK),
    ("exponent", "a = 1e3\n", FALLBACK),
    ("inf", "a = inf\n", FALLBACK),
    ("Arabic-Indic digit", "a = \u0661\n", REJECTED),
    ("fullwidth digit", "a = \uff11\n", REJECTED),
    ("ASCII digit, then Arabic-Indic digit", "a = 1\u0661\n", REJECTED),
    # booleans
    ("true and false", "a = true\nb = false\n", {"a": True, "b": False}),
    ("capitalised True", "a = True\n", REJECTED),
    # strings
    ("empty string", 'a = ""\n', {"a": ""}),
    ("non-ASCII string", 'a = "é€😀"\n', {"a": "é€😀"}),
    ("U+0085 and U+2028 in a string", 'a = "x\x85y\u2028z"\n', {"a": "x\x85y\u2028z"}),
    ("lone surrogate in a string", 'a = "\ud800"\n', {"a": "\ud800"}),
    ("escape", 'a = "x\\ny"\n', FALLBACK),
    ("escaped quote", 'a = "x\\"y"\n', FALLBACK),
    ("tab in a string", 'a = "x\ty"\n', FALLBACK),
    ("NUL in a string", 'a = "x\x00y"\n', REJECTED),
    ("DEL in a string", 'a = "x\x7fy"\n', REJECTED),
    ("CR in a string", 'a = "x\ry"\n', REJECTED),
    ("unterminated string", 'a = "x\n', REJECTED),
    ("two strings", 'a = "x" "y"\n', REJECTED),
    ("literal string", "a = 'x'\n", FALLBACK),
    ("multi-line string", 'a = """x"""\n', FALLBACK),
    # date-times
    ("Z", f"a = {D}Z\n", {"a": dt(2026, 1, 2, 6, 39)}),
    ("+00:00", f"a = {D}+00:00\n", {"a": dt(2026, 1, 2, 6, 39)}),
    ("-00:00", f"a = {D}-00:00\n", {"a": dt(2026, 1, 2, 6, 39)}),
    ("positive offset", f"a = {D}+05:30\n", {"a": dt(2026, 1, 2, 6, 39, tz=offset(5, 30))}),
    ("negative offset", f"a = {D}-05:30\n", {"a": dt(2026, 1, 2, 6, 39, tz=offset(-5, -30))}),
    ("largest offset", f"a = {D}-23:59\n", {"a": dt(2026, 1, 2, 6, 39, tz=offset(-23, -59))}),
    ("offset hour 24", f"a = {D}+24:00\n", REJECTED),
    ("offset minute 60", f"a = {D}+00:60\n", REJECTED),
    ("offset with seconds", f"a = {D}+05:30:00\n", REJECTED),
    ("offset without colon", f"a = {D}+0530\n", REJECTED),
    ("one-digit fraction padded", f"a = {D}.5Z\n", {"a": dt(2026, 1, 2, 6, 39, 0, 500000)}),
    ("six-digit fraction", f"a = {D}.000001Z\n", {"a": dt(2026, 1, 2, 6, 39, 0, 1)}),
    ("seven-digit fraction", f"a = {D}.1234567Z\n", FALLBACK),
    ("seven-digit fraction, small", f"a = {D}.0000001Z\n", FALLBACK),
    ("empty fraction", f"a = {D}.Z\n", REJECTED),
    ("T separator", "a = 2026-01-02T06:39:00Z\n", FALLBACK),
    ("lowercase t", "a = 2026-01-02t06:39:00Z\n", FALLBACK),
    ("lowercase z", f"a = {D}z\n", FALLBACK),
    ("local date-time", f"a = {D}\n", FALLBACK),
    ("local date", "a = 2026-01-02\n", FALLBACK),
    ("local time", "a = 06:39:00\n", FALLBACK),
    ("hour 24", "a = 2026-01-02 24:00:00Z\n", REJECTED),
    ("minute 60", "a = 2026-01-02 06:60:00Z\n", REJECTED),
    ("second 60", "a = 2026-01-02 06:39:60Z\n", REJECTED),
    ("month 13", "a = 2026-13-02 06:39:00Z\n", REJECTED),
    ("day 00", "a = 2026-01-00 06:39:00Z\n", REJECTED),
    ("February 30th", "a = 2026-02-30 06:39:00Z\n", REJECTED),
    ("February 29th, not a leap year", "a = 2026-02-29 06:39:00Z\n", REJECTED),
    ("February 29th, leap year", "a = 2024-02-29 06:39:00Z\n", {"a": dt(2024, 2, 29, 6, 39)}),
    ("year 0000", "a = 0000-01-01 00:00:00Z\n", REJECTED),
    ("year 0001", "a = 0001-01-01 00:00:00Z\n", {"a": dt(1, 1, 1)}),
    ("Arabic-Indic digit in the year", "a = \u0662026-01-02 06:39:00Z\n", REJECTED),
    ("five-digit year", "a = 20260-01-02 06:39:00Z\n", REJECTED),
    # arrays
    ("empty array", "a = []\n", {"a": []}),
    ("empty multi-line array", "a = [\n]\n", {"a": []}),
    ("multi-line array", 'a = [\n    "x",\n    "y",\n]\n', {"a": ["x", "y"]}),
    (
        "mixed items",
        f"a = [\n    1,\n    true,\n    {D}Z,\n    -5,\n]\n",
        {"a": [1, True, dt(2026, 1, 2, 6, 39), -5]},
    ),
    ("array in a table", '[t]\na = [\n    "x",\n]\n', {"t": {"a": ["x"]}}),
    ("array closed by end of file", 'a = [\n    "x",\n]', {"a": ["x"]}),
    ("trailing item without comma", 'a = [\n    "x"\n]\n', FALLBACK),
    ("item indented 3", 'a = [\n   "x",\n]\n', FALLBACK),
    ("item indented with a tab", 'a = [\n\t"x",\n]\n', FALLBACK),
    ("blank line inside", 'a = [\n\n    "x",\n]\n', FALLBACK),
    ("indented closer", 'a = [\n    "x",\n    ]\n', FALLBACK),
    ("array never closed", 'a = [\n    "x",\n', REJECTED),
    ("array never closed, no final newline", 'a = [\n    "x",', REJECTED),
    ("array opened at end of file", "a = [", REJECTED),
    ("bad item", "a = [\n    01,\n]\n", REJECTED),
    ("one-line array", 'a = ["x", "y"]\n', FALLBACK),
    ("spaced empty array", "a = [ ]\n", FALLBACK),
    ("nested array", "a = [\n    [],\n]\n", FALLBACK),
    ("inline table", "a = { b = 1 }\n", FALLBACK),
    ("empty inline table", "a = {}\n", FALLBACK),
]


@pytest.mark.parametrize(
    ("text", "outcome"), [case[1:] for case in EDGE_CASES], ids=[case[0] for case in EDGE_CASES]
)
def test_edge_cases(text: str, outcome: Any) -> None:
    fast = loads(text)
    if outcome == REJECTED:
        with pytest.raises(tomllib.TOMLDecodeError):
            tomllib.loads(text)
        assert fast is None
    elif outcome == FALLBACK:
        tomllib.loads(text)  # accepted
        assert fast is None
    else:
        assert_identical(tomllib.loads(text), outcome)
        assert_identical(fast, outcome)


def test_z_and_zero_offset_give_the_same_utc_object() -> None:
    fast = loads(f"a = {D}Z\nb = {D}+00:00\nc = {D}-00:00\n")
    assert fast is not None
    assert all(value.tzinfo is UTC for value in fast.values())


@contextmanager
def int_digit_limit(limit: int) -> Iterator[None]:
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(limit)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(before)


def test_integers_beyond_the_digit_limit_fall_back_as_tomllib_raises() -> None:
    with int_digit_limit(4300):
        at_limit = "a = " + "7" * 4300 + "\n"
        assert_identical(loads(at_limit), tomllib.loads(at_limit))
        beyond = "a = " + "7" * 4301 + "\n"
        with pytest.raises(ValueError, match="limit"):  # a ValueError, not a TOMLDecodeError
            tomllib.loads(beyond)
        assert loads(beyond) is None


def test_tomli_w_writes_what_the_subset_expects() -> None:
    """Pin the shapes the subset was written against, should tomli-w change them."""
    doc = {
        "s": "x",
        "i": -3,
        "b": True,
        "d": datetime(2026, 1, 2, 6, 39, 0, 5, tzinfo=offset(-5, -30)),
        "z": datetime(2026, 1, 2, 6, 39, tzinfo=UTC),
        "e": [],
        "l": ["x", 1],
        "t": {"k": "v"},
    }
    assert tomli_w.dumps(doc) == (
        's = "x"\n'
        "i = -3\n"
        "b = true\n"
        "d = 2026-01-02 06:39:00.000005-05:30\n"
        "z = 2026-01-02 06:39:00+00:00\n"
        "e = []\n"
        'l = [\n    "x",\n    1,\n]\n'
        "\n"
        "[t]\n"
        'k = "v"\n'
    )
    assert_identical(loads(tomli_w.dumps(doc)), doc)
