"""Data as Markdown that nothing inside it can break out of. Pure.

The CI step summary, the export for an agent and the replay receipt all quote
text from the ledger, a verifier or git. Each piece goes through one of three
escapers, chosen by where it stands: `text` for words in a line or a table
cell, `code` for an identifier in a code span, `fenced` for many lines. Each
sanitises first, so no escape sequence or control character survives either.
"""

from __future__ import annotations

import re

from failgate_hooks.core import sanitize

# Markdown syntax inside a line: backslash, code, emphasis, links, raw HTML and
# entities, table cells, strikethrough, and the #123 references GitHub links.
_INLINE_SYNTAX = re.compile(r"([\\`*_\[\]<>|~&#])")
# What makes a line a list item or a thematic break when it starts the line;
# `>`, `#`, `*` and backticks are escaped anywhere already.
_BULLET = re.compile(r"^([-+])")
_NUMBERED = re.compile(r"^(\d+)([.)])")
# GFM makes a link of a bare URL from the raw text, backslashes and all; data
# links nothing, so the `:` of `://` and the dot of `www.` are escaped too.
_BARE_URL = re.compile(r"(?=://)|(?<=www)(?=\.)", re.IGNORECASE)
# GFM links an email address too (`a@b.example`, `mailto:a@b.example`,
# `xmpp:a@b.example`), escapes and entities notwithstanding; a word joiner before
# the `@`, which shows nothing, stops it. The sanitiser removes any word joiner
# the data held, so each one in the output is this escaper's.
_WORD_JOINER = "\u2060"


def text(value: str) -> str:
    """One line of data as literal Markdown text, right anywhere a line or a cell holds text."""
    # A backslash before ASCII punctuation makes it literal, `\|` in a table cell
    # too; leading spaces would make a code block of a paragraph and show nothing.
    line = _INLINE_SYNTAX.sub(r"\\\1", sanitize.clean_line(value).strip())
    line = _BARE_URL.sub(r"\\", line).replace("@", f"{_WORD_JOINER}@")
    return _NUMBERED.sub(r"\1\\\2", _BULLET.sub(r"\\\1", line))


def code(value: str, *, in_table: bool = False) -> str:
    """One line of data as an inline code span that nothing inside can close."""
    line = sanitize.clean_line(value)
    if not line:
        return "(empty)"  # `` is no code span: Markdown would print the backticks
    if in_table:
        # GFM splits a row into cells before it reads code spans: a pipe would end
        # the cell. Outside a table the backslash would show, so only here.
        line = line.replace("|", "\\|")
    fence = "`" * (_longest_backtick_run(line) + 1)
    # Markdown strips one space from each end of a span that has one at both; a
    # span needs that space beside a backtick, and keeps its own spaces with it.
    beside_backtick = line.startswith("`") or line.endswith("`")
    spaced = line.startswith(" ") and line.endswith(" ") and line.strip(" ") != ""
    pad = " " if beside_backtick or spaced else ""
    return f"{fence}{pad}{line}{pad}{fence}"


def fenced(value: str, *, empty: str = "(empty)") -> list[str]:
    """Many lines of data as a fenced block that no line inside can close."""
    body = sanitize.clean(value).rstrip("\n") or empty
    fence = "`" * max(3, _longest_backtick_run(body) + 1)
    return [f"{fence}text", *body.split("\n"), fence]


def _longest_backtick_run(value: str) -> int:
    return max((len(run) for run in re.findall(r"`+", value)), default=0)
