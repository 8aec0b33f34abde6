"""Make text from the ledger, a verifier or git safe to print; pure.

Everything failgate prints is data, never instructions to the terminal: escape
sequences could rewrite earlier lines, retitle the window, hide text or, on some
terminals, answer back with input; bidi controls can make a line read other
than it is; invisible characters can carry text that no person reading it sees.
`clean` removes them all and keeps every ordinary character. Where removing one
would make the text read as other text, `escaped` writes each as its escape
instead, in bash's `$'…'` quoting: what `failgate trust` shows, and a ref name
(`shown_ref`), which removed could read as a protected one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TypeVar, cast

_T = TypeVar("_T")

# String-type sequences run to a terminator; an unterminated one runs to the
# end of the text, because a terminal would swallow everything after it too.
_STRING_END = r"(?:\x1b\\|\x9c|\Z)"
_ESCAPES = re.compile(
    "|".join(
        [
            # OSC (ESC ] or 8-bit \x9d): xterm also ends it with BEL.
            r"(?:\x1b\]|\x9d).*?(?:\x07|\x1b\\|\x9c|\Z)",
            # DCS, SOS, PM, APC (ESC P / X / ^ / _, or 8-bit \x90 \x98 \x9e \x9f).
            r"(?:\x1b[PX^_]|[\x90\x98\x9e\x9f]).*?" + _STRING_END,
            # CSI: parameter bytes, intermediate bytes, one final byte.
            r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?",
            # Any other escape: ESC, intermediates, one final byte (ESC c, ESC ( B).
            r"\x1b[\x20-\x2f]*[\x30-\x7e]",
        ]
    ),
    re.DOTALL,
)

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# Invisible characters that carry text no reader sees: tag characters (a language
# model reads U+E0041 as "A", so a whole sentence can hide in them), the zero-width
# space, word joiner and invisible operators, the BOM, the Mongolian vowel separator
# and the interlinear annotation marks. The zero-width joiner and non-joiner stay:
# Persian, Indic scripts and emoji sequences need them, and they carry no letters.
_INVISIBLE = "\u180e\u200b\u2060-\u2064\ufeff\ufff9-\ufffb\U000e0000-\U000e007f"
# Unicode's Default_Ignorable_Code_Point: what a renderer shows as nothing, though
# it may print (variation selectors, the combining grapheme joiner, Hangul fillers).
# Python takes some inside identifiers (`ok\ufe00` is a name other than `ok`), so
# where a person approves code, each is shown as its escape.
DEFAULT_IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
# C0 but tab and newline, DEL, C1, bidi controls, invisible characters.
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}{_INVISIBLE}]")
# A lone surrogate (from bytes decoded with surrogateescape) cannot be encoded
# for any terminal: print() would raise instead of printing.
_SURROGATE = re.compile("[\ud800-\udfff]")
# U+2028/U+2029 too: some viewers break the line there, and a one-line field
# must not look like two.
_LINE_BREAKS = re.compile("[\n\t\u2028\u2029]")


def clean(text: str) -> str:
    """`text` without escape sequences, controls (but newline and tab), bidi controls or
    invisible characters."""
    text = _ESCAPES.sub("", text)
    text = _UNSAFE.sub("", text)
    return _SURROGATE.sub("\ufffd", text)


# The most of one field a line prints: a title of megabytes must not make every
# hook print megabytes, and a terminal line is read, not scrolled.
LINE_LIMIT = 1000


def clean_line(text: str, limit: int = LINE_LIMIT) -> str:
    """`clean(text)` on one line (newlines, tabs and line separators become spaces),
    cut to `limit` characters with a note of how many were left out."""
    return clip(_LINE_BREAKS.sub(" ", clean(text)), limit)


def clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, saying how many were left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\", "'": "\\'"}


def shows(text: str, *, names: bool = False) -> bool:
    """Whether every character of `text` prints, and shows as something; for `names`
    (an argument, a path, a ref), whether it is ASCII too."""
    return (
        (text.isascii() or not names)
        and text.isprintable()
        and DEFAULT_IGNORABLE.search(text) is None
    )


def escaped(text: str, *, names: bool = False) -> str:
    """`text` in bash's `$'…'` quoting: one printable line, every character that does
    not print (for `names`, that is not ASCII) written as an escape (`\\n`, `\\x1b`,
    `\\u202e`), none left out."""
    parts = []
    for char in text:
        if char in _NAMED_ESCAPES:
            parts.append(_NAMED_ESCAPES[char])
        elif shows(char, names=names):
            parts.append(char)
        elif ord(char) < 0x80:  # bash reads \xHH as a byte, \uHHHH as a character
            parts.append(f"\\x{ord(char):02x}")
        elif ord(char) < 0x10000:
            parts.append(f"\\u{ord(char):04x}")
        else:
            parts.append(f"\\U{ord(char):08x}")
    return "$'" + "".join(parts) + "'"


def shown_ref(ref: str, limit: int = LINE_LIMIT) -> str:
    """A ref name as failgate prints it: as it is when it is printable ASCII, else in
    `$'…'` quoting, each other character as its escape, bounded. Removing a bidi or
    invisible character would print `refs/heads/\\u202emain` as `refs/heads/main`, a
    protected ref the push never went to; a letter that is not ASCII may pose as one
    (a Cyrillic а in `main`)."""
    return clip(ref if shows(ref, names=True) else escaped(ref, names=True), limit)


def clean_tree(value: _T) -> _T:
    """`value` with every string in it cleaned, through dicts, lists and tuples (keys too)."""
    return cast(_T, _clean_any(value))


def _clean_any(value: object) -> object:
    """The untyped recursion behind clean_tree."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {_clean_any(key): _clean_any(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_clean_any(item) for item in value]
    if isinstance(value, tuple):
        items = [_clean_any(item) for item in value]
        # A NamedTuple keeps its type: callers read its fields by name.
        make = getattr(type(value), "_make", None)
        return tuple(items) if make is None else make(items)
    return value


# How a GitHub Actions runner finds a workflow command in a line of a step's
# output (actions/runner, ActionCommand.TryParseV2 and TryParse): `::name …::`
# once the line's leading white space is trimmed, and the legacy `##[name …]`
# anywhere in the line. The runner reads stdout and stderr alike.
LEGACY_COMMAND = "##["
_COMMAND_START = "::"


def in_github_actions(environ: Mapping[str, str]) -> bool:
    """Whether `environ` is a GitHub Actions step's, whose runner reads those commands."""
    return environ.get("GITHUB_ACTIONS") == "true"


def no_workflow_commands(text: str) -> str:
    """`text` with no line a GitHub runner reads as a workflow command: `##[` is written
    `##\\[`, and a line that starts with `::` starts with `:\\:`."""
    lines = text.splitlines(keepends=True)
    return "".join(_no_command(line) for line in lines) if lines else text


def _no_command(line: str) -> str:
    line = line.replace(LEGACY_COMMAND, "##\\[")
    body = line.lstrip()
    if body.startswith(_COMMAND_START):
        line = line[: len(line) - len(body)] + ":\\" + body[1:]
    return line


def json_no_workflow_commands(document: str) -> str:
    """A JSON text (of json.dumps) with every `#` written `\\u0023`: the same value, and no
    `##[` in any line. `#` is never JSON's syntax, only a string's character."""
    return document.replace("#", "\\u0023")
