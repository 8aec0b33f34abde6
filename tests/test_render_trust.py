"""What `failgate trust` prints of argv and files: one line per field, exact, bounded."""

from __future__ import annotations

import shlex
import subprocess

import pytest

from failgate_hooks.render.trust import (
    ESCAPED_NOTE,
    MAX_LINES,
    MAX_WIDTH,
    argv_lines,
    content_lines,
    diff_lines,
    quote_argument,
    settings_lines,
    shown_path,
)

HOSTILE = [
    "a\nb",
    "x\r\nFORGED: trusted",
    "\x1b]0;retitled\x07",
    "tab\there",
    "bidi \u202eesrever",
    "line\u2028sep",
    "back\\slash\nnew",
    "nbsp\u00a0",
    "astral \U0001f600\x00",
    "ch\u0435cks/check.py",  # a Cyrillic е: another file than checks/check.py
    "caf\u00e9.py",
]


@pytest.mark.parametrize("argument", ["plain", "two words", "", "it's", "$HOME", "-x=1"])
def test_a_printable_argument_is_quoted_as_the_shell_reads_it(argument: str) -> None:
    assert shlex.split(quote_argument(argument)) == [argument]


@pytest.mark.parametrize("argument", HOSTILE)
def test_any_other_argument_is_one_printable_line(argument: str) -> None:
    quoted = quote_argument(argument)
    assert quoted.isprintable(), quoted
    assert quoted.startswith("$'") and quoted.endswith("'")


@pytest.mark.parametrize("argument", [a for a in HOSTILE if "\x00" not in a])
def test_bash_reads_the_quoting_back_as_the_argument(argument: str) -> None:
    """The quoting is exact: bash, whose `$'…'` it is, reads back the argument."""
    out = subprocess.run(
        ["bash", "-c", f"printf %s {quote_argument(argument)}"],
        capture_output=True, check=True, env={"LC_ALL": "C.UTF-8"},
    ).stdout  # fmt: skip
    assert out.decode("utf-8") == argument


def test_argv_is_one_argument_per_line() -> None:
    lines = argv_lines(("python3", "a\nVERIFIER x  [trusted]"))
    assert lines == ["       python3", "       ! $'a\\nVERIFIER x  [trusted]'"]


def test_an_argument_or_path_that_is_not_ascii_is_marked_and_escaped() -> None:
    """A look-alike letter names another file: it is shown as its code point."""
    assert argv_lines(("python3", "ch\u0435cks/check.py")) == [
        "       python3",
        "       ! $'ch\\u0435cks/check.py'",
    ]
    assert shown_path("ch\u0435cks/check.py") == "$'ch\\u0435cks/check.py'"
    assert shown_path("checks/check.py") == "checks/check.py"


def test_file_content_keeps_letters_that_are_not_ascii() -> None:
    """A comment in another language prints as it is, under `|`."""
    assert content_lines(
        "# caf\u00e9 \u043f\u0440\u0438\u0432\u0435\u0442\n".encode(), "ab" * 20
    ) == ["       | # caf\u00e9 \u043f\u0440\u0438\u0432\u0435\u0442"]


def test_run_settings_are_one_per_line_and_no_item_poses_as_another() -> None:
    settings = {
        "env_pass": ["TOKEN", "X\nworkdir: checkout"],
        "inputs": None,
        "timeout_s": 30,
        "workdir": "inplace",
    }
    assert settings_lines(settings) == [
        "       env_pass: TOKEN $'X\\nworkdir: checkout'",
        "       inputs: (the whole commit)",
        "       timeout_s: 30",
        "       workdir: inplace",
    ]
    huge = settings_lines({"env_pass": ["A" * 10_000]})
    assert len(huge) == 1 and len(huge[0]) < 2 * MAX_WIDTH and "more characters" in huge[0]


def test_file_lines_are_prefixed_and_bounded() -> None:
    data = b"ok\n" + b"W" * (MAX_WIDTH + 50) + b"\n\tindented\n"
    lines = content_lines(data, "ab" * 20)
    assert lines == [
        "       | ok",
        f"       | {'W' * MAX_WIDTH}… (50 more characters)",
        "       |     indented",
    ]
    many = content_lines(b"x\n" * (MAX_LINES + 7), "cd" * 20)
    assert len(many) == MAX_LINES + 1
    assert many[-1] == "       … 7 more lines: see git show cdcdcdcdcdcd"


# Longer than one line of any field may be (sanitize.LINE_LIMIT, 1000 characters),
# so a count taken from a first cut of it would be short.
def test_a_long_hostile_line_says_exactly_how_much_was_left_out() -> None:
    # shown as $'\x1b]0;x\x07AAA…A': 2 + 12 + 5000 + 1 = 5015 characters
    argument = "\x1b]0;x\x07" + "A" * 5000
    kept = r"$'\x1b]0;x\x07" + "A" * (MAX_WIDTH - 14)
    assert argv_lines([argument]) == [f"       ! {kept}… (4615 more characters)"]
    # shown as $'\x1b[31mBBB…B': 2 + 8 + 3000 + 1 = 3011 characters
    line = content_lines(b"\x1b[31m" + b"B" * 3000 + b"\n", "ab" * 20)[0]
    kept = r"$'\x1b[31m" + "B" * (MAX_WIDTH - 10)
    assert line == f"       ! {kept}… (2611 more characters)"
    # a setting's name is cleaned (the escape sequence goes), then the line cut once
    named = settings_lines({"\x1b[2J" + "N" * 2000: 1})
    assert named == [f"       {'N' * MAX_WIDTH}… (1603 more characters)"]


# Code a terminal would hide: between ESC ] and BEL, behind a carriage return, in
# reverse behind a bidi override, in tag characters, split by a zero-width space.
HIDING = [
    (
        'BANNER = "\x1b]0;"; run("evil"); X = "\x07"',
        """$'BANNER = "\\x1b]0;"; run("evil"); X = "\\x07"'""",
    ),
    ("ok = 1\rrun('evil')", "$'ok = 1\\rrun(\\'evil\\')'"),
    ("x = '\u202e)live(nur'", "$'x = \\'\\u202e)live(nur\\''"),
    ("# \U000e0072\U000e0075\U000e006e", "$'# \\U000e0072\\U000e0075\\U000e006e'"),
    ("ru\u200bn('evil')", "$'ru\\u200bn(\\'evil\\')'"),
    ("a = 1\x0c\x1c\u2028b = 2", "$'a = 1\\x0c\\x1c\\u2028b = 2'"),
    # Printable, yet shown as nothing: Python reads `ok\ufe00` as a name other than `ok`.
    ("sys.exit(0 if ok\ufe00 else 1)", "$'sys.exit(0 if ok\\ufe00 else 1)'"),
    ("ok\U000e0100 = \u034fTrue", "$'ok\\U000e0100 = \\u034fTrue'"),
    ("\u3164 = 1; x = \u115f", "$'\\u3164 = 1; x = \\u115f'"),
]


@pytest.mark.parametrize(("line", "shown"), HIDING)
def test_a_line_with_characters_that_do_not_print_is_marked_and_shown_escaped(
    line: str, shown: str
) -> None:
    """What a reviewer approves is shown in full: nothing a terminal would hide is dropped."""
    lines = content_lines(f"import sys\n{line}\nsys.exit(0)\n".encode(), "ab" * 20)
    assert lines == [
        "       | import sys",
        f"       ! {shown}",
        "       | sys.exit(0)",
        f"       {ESCAPED_NOTE}",
    ]
    assert all(shown_line.isprintable() for shown_line in lines)


def test_the_escaped_line_reads_back_as_the_file_line() -> None:
    """The escaping is bash's `$'…'`: bash reads each shown line back as the file's."""
    for line, _ in HIDING:
        shown = content_lines(line.encode() + b"\n", "ab" * 20)[0].removeprefix("       ! ")
        out = subprocess.run(
            ["bash", "-c", f"printf %s {shown}"],
            capture_output=True, check=True, env={"LC_ALL": "C.UTF-8"},
        ).stdout  # fmt: skip
        assert out.decode("utf-8") == line


def test_a_printable_line_cannot_pose_as_an_escaped_one() -> None:
    lines = content_lines(b"! $'forged'\n", "ab" * 20)
    assert lines == ["       | ! $'forged'"]


def test_binary_content_is_named_not_printed() -> None:
    assert content_lines(b"\x7fELF\x00\x01", "ef" * 20) == [
        "       (binary, 6 bytes: see git show efefefefefef)"
    ]
    assert content_lines(b"\xff\xfe", "ef" * 20)[0].startswith("       (binary")


def test_a_diff_is_unified_and_prefixed() -> None:
    lines = diff_lines(b"a\nb\n", b"a\nc\n", "1" * 40, "2" * 40)
    assert lines == [
        "       | --- approved",
        "       | +++ this version",
        "       | @@ -1,2 +1,2 @@",
        "       |  a",
        "       | -b",
        "       | +c",
    ]


def test_a_diff_shows_what_a_changed_line_hides() -> None:
    lines = diff_lines(b"X = 1\n", b'X = "\x1b]0;"; run("evil"); Y = "\x07"\n', "1" * 40, "2" * 40)
    assert lines[3:] == [
        "       | -X = 1",
        """       ! $'+X = "\\x1b]0;"; run("evil"); Y = "\\x07"'""",
        f"       {ESCAPED_NOTE}",
    ]
