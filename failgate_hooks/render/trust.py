"""What `failgate trust` shows a person about to approve a verifier. Pure.

Everything shown comes from the ledger or from a commit: argv, file content,
a diff. None of it may print a line of its own, or the prompt could be made
to read as something it is not (a verifier argument holding a newline and
`trusted` after it). Argv is one quoted argument per line, quoted as a shell
would need it; file lines go under a prefix of ours, bounded.

What is shown here is approved to run, so nothing of it is dropped: a character
that does not print (an escape sequence's ESC and BEL, a bidi control, a tag
character) is written as a visible escape, and what it carries is shown with it.
Elsewhere `sanitize.clean` removes such sequences whole, which is what a terminal
would have shown; here that would hide code between ESC ] and BEL from the person
approving it.

An argument or a path names a file, so there every character that is not ASCII is
escaped too, and its line marked `!`: `chеcks/check.py` with a Cyrillic `е` is
another file than the pinned `checks/check.py`, however alike the two look. File
content keeps its letters (a comment may be in any language).
"""

from __future__ import annotations

import difflib
import shlex
from collections.abc import Mapping

from failgate_hooks.core.sanitize import clean_line, escaped, shows

INDENT = "       "
# A verifier's file is read, not scrolled: beyond this the rest is one `git show` away.
MAX_LINES = 400
MAX_WIDTH = 400

ESCAPED_NOTE = (
    "(a line under ! holds characters that do not print: it is shown in bash's $'…' "
    "quoting, each such character as its escape)"
)
NAMES_NOTE = (
    "(an argument or path under ! holds a character that is not ASCII or does not print, "
    "which may look like another (\\u0435, a Cyrillic letter, like e) and name another file: "
    "it is shown in bash's $'…' quoting, each such character as its escape)"
)


def marked(text: str) -> bool:
    """Whether an argument or path is shown escaped, its line marked `!`."""
    return not shows(text, names=True)


def margin(indent: str, text: str) -> str:
    """`indent`, with `! ` after it when `text`, an argument or a path, is shown escaped."""
    return f"{indent}! " if marked(text) else indent


def quote_argument(argument: str) -> str:
    """One argv element as a shell would need it, on one line: `'a b'`, or `$'a\\nb'`
    (bash's quoting with escapes) when it holds anything that does not print or is not
    ASCII."""
    return escaped(argument, names=True) if marked(argument) else shlex.quote(argument)


def exact(text: str) -> str:
    """`text` as it is when every character prints, else `escaped(text)`."""
    return text if shows(text) else escaped(text)


def shown_path(path: str) -> str:
    """A repository path as trust names it: exact, bounded, every character that is not
    ASCII escaped; a path is approved too."""
    return _bounded(escaped(path, names=True) if marked(path) else path)


def argv_lines(argv: tuple[str, ...] | list[str]) -> list[str]:
    """Argv, one quoted argument per line under the indent; `! ` before one shown escaped."""
    return [margin(INDENT, argument) + _bounded(quote_argument(argument)) for argument in argv]


_UNSET = {"inputs": "(the whole commit)", "timeout_s": "(the configured default)"}


def settings_lines(settings: Mapping[str, object]) -> list[str]:
    """A verifier's run settings, one `name: value` per line under the indent; a list value
    is its items quoted as argv is, so no item can pose as another setting."""
    lines = []
    for name, value in sorted(settings.items()):
        if isinstance(value, list | tuple):
            shown = " ".join(quote_argument(str(item)) for item in value) or "(none)"
        else:
            shown = _UNSET.get(name, "(unset)") if value is None else quote_argument(str(value))
        lines.append(INDENT + _bounded(f"{name}: {shown}"))
    return lines


def content_lines(data: bytes, blob: str) -> list[str]:
    """A file's content, each line under `| `, or why it is not shown."""
    text = _text(data)
    if text is None:
        return [f"{INDENT}(binary, {len(data)} bytes: see git show {blob[:12]})"]
    return _quoted(_lines(text), blob)


def diff_lines(before: bytes, after: bytes, before_blob: str, after_blob: str) -> list[str]:
    """A unified diff from the approved content to this one, each line under `| `."""
    old, new = _text(before), _text(after)
    if old is None or new is None:
        return [f"{INDENT}(binary: see git diff {before_blob[:12]} {after_blob[:12]})"]
    diff = difflib.unified_diff(_lines(old), _lines(new), "approved", "this version", lineterm="")
    return _quoted(list(diff), after_blob)


def _text(data: bytes) -> str | None:
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _lines(text: str) -> list[str]:
    """`text` split at newlines only: a carriage return, a form feed or U+2028 breaks no
    line for Python, so it is shown escaped where it stands, not as a line break."""
    lines = text.split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def _quoted(lines: list[str], blob: str) -> list[str]:
    """Each line under `| `, or under `! ` and escaped when it holds a character that does
    not print; a tab is shown as the spaces an editor shows."""
    shown = []
    for line in (line.expandtabs(4) for line in lines[:MAX_LINES]):
        mark = "|" if shows(line) else "!"
        shown.append(f"{INDENT}{mark} {_bounded(exact(line))}")
    if len(lines) > MAX_LINES:
        shown.append(f"{INDENT}… {len(lines) - MAX_LINES} more lines: see git show {blob[:12]}")
    if any(line.startswith(f"{INDENT}! ") for line in shown):
        shown.append(f"{INDENT}{ESCAPED_NOTE}")
    return shown


def _bounded(text: str) -> str:
    """`text` on one line, cleaned, cut to MAX_WIDTH with a note of what was left out.

    clean_line cuts once, at MAX_WIDTH: cut at its own limit first and again here, the
    note would count what was left of the first cut, not what was left out."""
    return clean_line(text, MAX_WIDTH)
