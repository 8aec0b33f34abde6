"""Tests for failgate_hooks.core.sanitize: text that is data stays data on a terminal."""

from __future__ import annotations

import json
from typing import NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from failgate_hooks.core import sanitize

ESC = "\x1b"
C0_UNSAFE = {chr(c) for c in range(0x20)} - {"\n", "\t"}
C1 = {chr(c) for c in range(0x80, 0xA0)}
BIDI = {"\u061c", "\u200e", "\u200f"} | {chr(c) for c in range(0x202A, 0x202F)}
BIDI |= {chr(c) for c in range(0x2066, 0x206A)}
TAGS = {chr(c) for c in range(0xE0000, 0xE0080)}
INVISIBLE = TAGS | {"\u180e", "\u200b", "\ufeff"} | {chr(c) for c in range(0x2060, 0x2065)}
INVISIBLE |= {chr(c) for c in range(0xFFF9, 0xFFFC)}
FORBIDDEN = C0_UNSAFE | C1 | BIDI | INVISIBLE | {"\x7f"}

# Pieces that build escape sequences, so that random text holds many of them.
_ESCAPE_PIECES = [
    ESC,
    "[",
    "]",
    "P",
    "X",
    "^",
    "_",
    "\\",
    "\x07",
    "\x9b",
    "\x9c",
    "\x9d",
    "\x90",
    "0;",
    "31m",
    "2J",
    "(B",
    "\r",
    "\x00",
    "\x08",
    "\x7f",
    "\u202e",
    "\u2066",
    "\U000e0041",
    "\u200b",
    "\n",
    "\t",
]
any_text = st.text(st.characters(exclude_categories=()))
escape_heavy_text = st.lists(
    st.one_of(st.sampled_from(_ESCAPE_PIECES), st.text(max_size=3)), max_size=20
).map("".join)
hostile_text = st.one_of(any_text, escape_heavy_text)


@settings(max_examples=1000)
@given(hostile_text)
def test_clean_leaves_no_unsafe_character(text: str) -> None:
    cleaned = sanitize.clean(text)
    assert not FORBIDDEN & set(cleaned)
    assert ESC not in cleaned
    cleaned.encode("utf-8")  # printable on any UTF-8 terminal, no lone surrogate


@settings(max_examples=1000)
@given(hostile_text)
def test_clean_is_idempotent(text: str) -> None:
    once = sanitize.clean(text)
    assert sanitize.clean(once) == once


@settings(max_examples=500)
@given(hostile_text)
def test_clean_line_is_one_line(text: str) -> None:
    line = sanitize.clean_line(text)
    assert not (FORBIDDEN | {"\n", "\t", "\u2028", "\u2029", ESC}) & set(line)
    assert sanitize.clean_line(line) == line


# Ordinary text: letters, digits, punctuation, symbols (emoji), marks, spaces,
# newlines and tabs; no control or format characters. Emoji sequences keep
# their zero-width joiner.
ordinary_text = st.lists(
    st.one_of(
        st.text(st.characters(categories=("L", "N", "P", "S", "M", "Zs")), max_size=5),
        st.sampled_from(["\n", "\t", "👩\u200d💻", "é", "日本語", "🇫🇷", "→"]),
    ),
    max_size=10,
).map("".join)


@settings(max_examples=1000)
@given(ordinary_text)
def test_ordinary_text_is_unchanged(text: str) -> None:
    assert sanitize.clean(text) == text


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("\x1b[31mred\x1b[0m", "red"),
        ("\x1b[1;31;40mbold\x1b[m", "bold"),
        ("\x1b[?25lhidden cursor", "hidden cursor"),
        ("\x1b[2J\x1b[Hclear", "clear"),
        ("a\x1b[12", "a"),
        ("\x9b31mred", "red"),
        ("\x1b]0;evil title\x07after", "after"),
        ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),
        ("\x9d0;title\x9cafter", "after"),
        ("\x1b]0;unterminated title and the rest", ""),
        ("before\x1bPq#0;2;0;0;0\x1b\\after", "beforeafter"),
        ("\x90dcs\x9cafter", "after"),
        ("x\x1bP unterminated dcs", "x"),
        ("\x1b_apc\x1b\\a", "a"),
        ("\x1b^pm\x1b\\b", "b"),
        ("\x1bXsos\x1b\\c", "c"),
        ("\x9fapc\x9cd", "d"),
        ("\x1bcreset", "reset"),
        ("\x1b(Bcharset", "charset"),
        ("\x1b7saved\x1b8", "saved"),
        ("lone escape\x1b", "lone escape"),
        ("over\rwrite", "overwrite"),
        ("bell\x07", "bell"),
        ("nul\x00", "nul"),
        ("back\x08\x08space", "backspace"),
        ("del\x7f", "del"),
        ("next\x85line", "nextline"),
        ("admin\u202e\u2066txt.exe\u2069", "admintxt.exe"),
        ("\u200e\u200f\u061cmarks", "marks"),
        ("Budget.\U000e0001\U000e0069\U000e0067\U000e006e\U000e007f", "Budget."),
        ("zero\u200bwidth\u2060joined\u2061\u2064\ufeff\u180e", "zerowidthjoined"),
        ("\ufff9annotated\ufffaruby\ufffb", "annotatedruby"),
        ("کتاب\u200cها 👩\u200d💻", "کتاب\u200cها 👩\u200d💻"),
        ("keep\nnew\tlines", "keep\nnew\tlines"),
        ("crlf\r\n", "crlf\n"),
        ("broken \ud800 surrogate", "broken \ufffd surrogate"),
        ("\x1b\x00[31m", "[31m"),
    ],
)
def test_clean(raw: str, expected: str) -> None:
    assert sanitize.clean(raw) == expected


def test_clean_line_flattens_breaks() -> None:
    assert sanitize.clean_line("title\r\nsecond\tline\u2028third") == "title second line third"
    assert sanitize.clean_line("\x1b[31mred\x1b[0m title") == "red title"


class _Pair(NamedTuple):
    left: str
    right: int


def test_clean_tree_cleans_every_string() -> None:
    tree = {
        "title\x1b[31m": "a\x1b]0;x\x07b",
        "gates": [{"reason": "c\rd", "exit_code": 1, "cached": True, "x": None}],
        "pair": ("e\u202ef", 2.5),
        "named": _Pair("g\x00h", 3),
    }
    assert sanitize.clean_tree(tree) == {
        "title": "ab",
        "gates": [{"reason": "cd", "exit_code": 1, "cached": True, "x": None}],
        "pair": ("ef", 2.5),
        "named": _Pair("gh", 3),
    }
    assert type(sanitize.clean_tree(tree)["named"]) is _Pair


def test_clean_tree_keeps_non_strings() -> None:
    assert sanitize.clean_tree(None) is None
    assert sanitize.clean_tree(7) == 7
    assert sanitize.clean_tree("x\x1b[1my") == "xy"


def test_a_line_is_bounded_and_says_how_much_was_left_out() -> None:
    line = sanitize.clean_line("x" * 10_000)
    assert line.startswith("x" * sanitize.LINE_LIMIT)
    assert line.endswith(f"… ({10_000 - sanitize.LINE_LIMIT} more characters)")
    assert sanitize.clean_line("short\nline") == "short line"


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("a ##[add-mask]b", "a ##\\[add-mask]b"),
        ("###[x]", "###\\[x]"),
        ("::error::x", ":\\:error::x"),
        ("  \u00a0::warning::x", "  \u00a0:\\:warning::x"),
        ("ok\n::add-mask::y\r\n##[group]z", "ok\n:\\:add-mask::y\r\n##\\[group]z"),
        ("a :: b", "a :: b"),
        ("", ""),
    ],
)
def test_no_line_is_a_workflow_command(text: str, written: str) -> None:
    assert sanitize.no_workflow_commands(text) == written
    for line in sanitize.no_workflow_commands(text).splitlines():
        assert "##[" not in line and not line.strip().startswith("::")


def test_json_without_workflow_commands_is_the_same_value() -> None:
    value = {"#k##[": ["##[add-mask]x", "\\##[", "::error::y"], "n": 1}
    document = sanitize.json_no_workflow_commands(json.dumps(value, indent=2))
    assert "#" not in document
    assert json.loads(document) == value


@pytest.mark.parametrize(
    ("ref", "shown"),
    [
        ("refs/heads/main", "refs/heads/main"),
        ("refs/heads/release/1.2", "refs/heads/release/1.2"),
        ("refs/heads/\u202emain", "$'refs/heads/\\u202emain'"),
        ("refs/heads/ma\u200bin", "$'refs/heads/ma\\u200bin'"),
        ("refs/tags/v1\u2060", "$'refs/tags/v1\\u2060'"),
        ("refs/heads/m\u0430in", "$'refs/heads/m\\u0430in'"),  # a Cyrillic а
        ("refs/heads/ma\ufe0fin", "$'refs/heads/ma\\ufe0fin'"),  # a variation selector
        ("refs/heads/\U000e0041", "$'refs/heads/\\U000e0041'"),  # a tag character
        ("refs/heads/\x1b[31mmain", "$'refs/heads/\\x1b[31mmain'"),
        ("refs/heads/it's\u202e", "$'refs/heads/it\\'s\\u202e'"),
    ],
)
def test_a_ref_that_does_not_print_as_itself_is_shown_escaped(ref: str, shown: str) -> None:
    """Never removed: `refs/heads/\\u202emain` printed as `refs/heads/main` names a
    protected ref the push never went to."""
    assert sanitize.shown_ref(ref) == shown


@settings(max_examples=1000)
@given(hostile_text)
def test_a_shown_ref_is_printable_ascii_and_names_that_ref_alone(ref: str) -> None:
    """Two refs are never shown alike: the shown text reads back as bash reads `$'…'`."""
    from failgate_hooks.core.agent.shell_lexer import _ansi_c

    shown = sanitize.shown_ref(ref, limit=10_000)
    assert shown.isascii() and shown.isprintable(), shown
    if shown.startswith("$'"):
        assert _ansi_c(shown[2:-1]) == ref
    else:
        assert shown == ref


def test_a_long_ref_is_bounded() -> None:
    assert sanitize.shown_ref("refs/heads/" + "\u202e" * 2000).endswith("more characters)")
