"""Tests for failgate_hooks.core.wildmatch: tables, a port of git's dowild(), and real git."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from failgate_hooks.core import wildmatch

# (pattern, path, matches): the WM_PATHNAME column of git's t/t3070-wildmatch.sh,
# minus the empty pattern (invalid here), written as raw strings.
T3070 = [
    ("foo", "foo", True),
    ("bar", "foo", False),
    ("???", "foo", True),
    ("??", "foo", False),
    ("*", "foo", True),
    ("f*", "foo", True),
    ("*f", "foo", False),
    ("*foo*", "foo", True),
    ("*ob*a*r*", "foobar", True),
    ("*ab", "aaaaaaabababab", True),
    (r"foo\*", "foo*", True),
    (r"foo\*bar", "foobar", False),
    (r"f\\oo", r"f\oo", True),
    ("*[al]?", "ball", True),
    ("[ten]", "ten", False),
    ("**[!te]", "ten", True),
    ("**[!ten]", "ten", False),
    ("t[a-g]n", "ten", True),
    ("t[!a-g]n", "ten", False),
    ("t[!a-g]n", "ton", True),
    ("t[^a-g]n", "ton", True),
    ("a[]]b", "a]b", True),
    ("a[]-]b", "a-b", True),
    ("a[]-]b", "a]b", True),
    ("a[]-]b", "aab", False),
    ("a[]a-]b", "aab", True),
    ("]", "]", True),
    ("foo*bar", "foo/baz/bar", False),
    ("foo**bar", "foo/baz/bar", False),
    ("foo**bar", "foobazbar", True),
    ("foo/**/bar", "foo/baz/bar", True),
    ("foo/**/**/bar", "foo/baz/bar", True),
    ("foo/**/bar", "foo/b/a/z/bar", True),
    ("foo/**/**/bar", "foo/b/a/z/bar", True),
    ("foo/**/bar", "foo/bar", True),
    ("foo/**/**/bar", "foo/bar", True),
    ("foo?bar", "foo/bar", False),
    ("foo[/]bar", "foo/bar", False),
    ("foo[^a-z]bar", "foo/bar", False),
    ("f[^eiu][^eiu][^eiu][^eiu][^eiu]r", "foo/bar", False),
    ("f[^eiu][^eiu][^eiu][^eiu][^eiu]r", "foo-bar", True),
    ("**/foo", "foo", True),
    ("**/foo", "XXX/foo", True),
    ("**/foo", "bar/baz/foo", True),
    ("*/foo", "bar/baz/foo", False),
    ("**/bar*", "foo/bar/baz", False),
    ("**/bar/*", "deep/foo/bar/baz", True),
    ("**/bar/*", "deep/foo/bar/baz/", False),
    ("**/bar/**", "deep/foo/bar/baz/", True),
    ("**/bar/*", "deep/foo/bar", False),
    ("**/bar/**", "deep/foo/bar/", True),
    ("**/bar**", "foo/bar/baz", False),
    ("*/bar/**", "foo/bar/baz/x", True),
    ("*/bar/**", "deep/foo/bar/baz/x", False),
    ("**/bar/*/*", "deep/foo/bar/baz/x", True),
    ("a[c-c]st", "acrt", False),
    ("a[c-c]rt", "acrt", True),
    ("[!]-]", "]", False),
    ("[!]-]", "a", True),
    ("\\", "", False),
    ("\\", "\\", False),
    ("*/\\", "XXX/\\", False),
    (r"*/\\", "XXX/\\", True),
    ("foo", "foo", True),
    ("@foo", "@foo", True),
    ("@foo", "foo", False),
    (r"\[ab]", "[ab]", True),
    ("[[]ab]", "[ab]", True),
    ("[[:]ab]", "[ab]", True),
    ("[[::]ab]", "[ab]", False),
    ("[[:digit]ab]", "[ab]", True),
    (r"[\[:]ab]", "[ab]", True),
    (r"\??\?b", "?a?b", True),
    (r"\a\b\c", "abc", True),
    ("**/t[o]", "foo/bar/baz/to", True),
    ("[[:alpha:]][[:digit:]][[:upper:]]", "a1B", True),
    ("[[:digit:][:upper:][:space:]]", "a", False),
    ("[[:digit:][:upper:][:space:]]", "A", True),
    ("[[:digit:][:upper:][:space:]]", "1", True),
    ("[[:digit:][:upper:][:spaci:]]", "1", False),
    ("[[:digit:][:upper:][:space:]]", " ", True),
    ("[[:digit:][:upper:][:space:]]", ".", False),
    ("[[:digit:][:punct:][:space:]]", ".", True),
    ("[[:xdigit:]]", "5", True),
    ("[[:xdigit:]]", "f", True),
    ("[[:xdigit:]]", "D", True),
    (
        "[[:alnum:][:alpha:][:blank:][:cntrl:][:digit:][:graph:][:lower:]"
        "[:print:][:punct:][:space:][:upper:][:xdigit:]]",
        "_",
        True,
    ),
    (
        "[^[:alnum:][:alpha:][:blank:][:cntrl:][:digit:][:lower:][:space:][:upper:][:xdigit:]]",
        ".",
        True,
    ),
    ("[a-c[:digit:]x-z]", "5", True),
    ("[a-c[:digit:]x-z]", "b", True),
    ("[a-c[:digit:]x-z]", "y", True),
    ("[a-c[:digit:]x-z]", "q", False),
    (r"[\\-^]", "]", True),
    (r"[\\-^]", "[", False),
    (r"[\-_]", "-", True),
    (r"[\]]", "]", True),
    (r"[\]]", r"\]", False),
    (r"[\]]", "\\", False),
    ("a[]b", "ab", False),
    ("a[]b", "a[]b", False),
    ("ab[", "ab[", False),
    ("[!", "ab", False),
    ("[-", "ab", False),
    ("[-]", "-", True),
    ("[a-", "-", False),
    ("[!a-", "-", False),
    ("[--A]", "-", True),
    ("[--A]", "5", True),
    ("[ --]", " ", True),
    ("[ --]", "$", True),
    ("[ --]", "-", True),
    ("[ --]", "0", False),
    ("[---]", "-", True),
    ("[------]", "-", True),
    ("[a-e-n]", "j", False),
    ("[a-e-n]", "-", True),
    ("[!------]", "a", True),
    ("[]-a]", "[", False),
    ("[]-a]", "^", True),
    ("[!]-a]", "^", False),
    ("[!]-a]", "[", True),
    ("[a^bc]", "^", True),
    ("[a-]b]", "-b]", True),
    ("[\\]", "\\", False),
    (r"[\\]", "\\", True),
    (r"[!\\]", "\\", False),
    (r"[A-\\]", "G", True),
    ("b*a", "aaabbb", False),
    ("*ba*", "aabcaa", False),
    ("[,]", ",", True),
    (r"[\\,]", ",", True),
    (r"[\\,]", "\\", True),
    ("[,-.]", "-", True),
    ("[,-.]", "+", False),
    ("[,-.]", "-.]", False),
    (r"[\1-\3]", "2", True),
    (r"[\1-\3]", "3", True),
    (r"[\1-\3]", "4", False),
    (r"[[-\]]", "\\", True),
    (r"[[-\]]", "[", True),
    (r"[[-\]]", "]", True),
    (r"[[-\]]", "-", False),
    (
        "-*-*-*-*-*-*-12-*-*-*-m-*-*-*",
        "-adobe-courier-bold-o-normal--12-120-75-75-m-70-iso8859-1",
        True,
    ),
    (
        "-*-*-*-*-*-*-12-*-*-*-m-*-*-*",
        "-adobe-courier-bold-o-normal--12-120-75-75-X-70-iso8859-1",
        False,
    ),
    (
        "-*-*-*-*-*-*-12-*-*-*-m-*-*-*",
        "-adobe-courier-bold-o-normal--12-120-75-75-/-70-iso8859-1",
        False,
    ),
    (
        "XXX/*/*/*/*/*/*/12/*/*/*/m/*/*/*",
        "XXX/adobe/courier/bold/o/normal//12/120/75/75/m/70/iso8859/1",
        True,
    ),
    (
        "XXX/*/*/*/*/*/*/12/*/*/*/m/*/*/*",
        "XXX/adobe/courier/bold/o/normal//12/120/75/75/X/70/iso8859/1",
        False,
    ),
    ("**/*a*b*g*n*t", "abcd/abcdefg/abcdefghijk/abcdefghijklmnop.txt", True),
    ("**/*a*b*g*n*t", "abcd/abcdefg/abcdefghijk/abcdefghijklmnop.txtz", False),
    ("*/*/*", "foo", False),
    ("*/*/*", "foo/bar", False),
    ("*/*/*", "foo/bba/arr", True),
    ("*/*/*", "foo/bb/aa/rr", False),
    ("**/**/**", "foo/bb/aa/rr", True),
    ("*X*i", "abcXdefXghi", True),
    ("*X*i", "ab/cXd/efXg/hi", False),
    ("*/*X*/*/*i", "ab/cXd/efXg/hi", True),
    ("**/*X*/**/*i", "ab/cXd/efXg/hi", True),
    ("fo", "foo", False),
    ("foo/bar", "foo/bar", True),
    ("foo/*", "foo/bar", True),
    ("foo/*", "foo/bba/arr", False),
    ("foo/**", "foo/bba/arr", True),
    ("foo*", "foo/bba/arr", False),
    ("foo**", "foo/bba/arr", False),
    ("foo/*arr", "foo/bba/arr", False),
    ("foo/**arr", "foo/bba/arr", False),
    ("foo/*z", "foo/bba/arr", False),
    ("foo/**z", "foo/bba/arr", False),
    ("*Xg*i", "ab/cXd/efXg/hi", False),
    ("[A-Z]", "a", False),
    ("[A-Z]", "A", True),
    ("[a-z]", "A", False),
    ("[a-z]", "a", True),
    ("[[:upper:]]", "a", False),
    ("[[:upper:]]", "A", True),
    ("[[:lower:]]", "A", False),
    ("[[:lower:]]", "a", True),
    ("[B-Za]", "A", False),
    ("[B-Za]", "a", True),
    ("[B-a]", "A", False),
    ("[B-a]", "a", True),
    ("[Z-y]", "z", False),
    ("[Z-y]", "Z", True),
]

# Cases failgate leans on, and git behaviours worth pinning down.
FAILGATE_CASES = [
    ("refs/heads/release/*", "refs/heads/release/1.0", True),
    ("refs/heads/release/*", "refs/heads/release/1.0/x", False),
    ("refs/heads/release/*", "refs/heads/release", False),
    ("refs/heads/release/*", "refs/heads/release/", True),
    ("refs/tags/*", "refs/tags/v1.2.3", True),
    ("refs/heads/main", "refs/heads/main", True),
    ("refs/heads/main", "refs/heads/main2", False),
    ("refs/heads/main", "refs/heads/main/x", False),
    ("deploy/**", "deploy/a.json", True),
    ("deploy/**", "deploy/x/y/a.json", True),
    ("deploy/**", "deploy", False),
    ("deploy/*.json", "deploy/a.json", True),
    ("deploy/*.json", "deploy/x/a.json", False),
    ("**/*.json", "a.json", True),
    ("**/*.json", "x/y/a.json", True),
    ("a/**/b", "a/b", True),
    ("a/**/b", "a/x/b", True),
    ("a/**/b", "a/x/y/b", True),
    ("a/**/b", "ab", False),
    ("a/**/b", "a/xb", False),
    ("**", "anything/at/all", True),
    ("***", "a/b", True),
    ("**/", "a/", True),
    ("**/", "a", False),
    ("x**/y", "x/z/y", False),
    ("x**/y", "xz/y", True),
    ("**x/y", "z/x/y", False),
    ("**x/y", "zx/y", True),
    # `**` then an escaped `/` is a whole segment, but git skips the empty match.
    (r"**\/b", "b", False),
    (r"**\/b", "a/b", True),
    (r"**\/b", "a/c/b", True),
    # A `/` written as `\/` still bounds the segment before the `**`.
    (r"a\/**", "a/b/c", True),
    # Case-sensitive, and the whole path must match.
    ("*.PY", "a.py", False),
    ("a", "ba", False),
    ("a", "ab", False),
    # Regex metacharacters are literals in a glob.
    ("a.b", "axb", False),
    ("a+b(c)|d$", "a+b(c)|d$", True),
    ("{a,b}", "{a,b}", True),
    ("{a,b}", "a", False),
    # Bracket expressions never match `/`, whatever they list.
    ("a[!x]b", "a/b", False),
    ("a[[:punct:]]b", "a/b", False),
    ("a[[:punct:]]b", "a.b", True),
    # git's [:space:] is exactly space, tab, newline and carriage return.
    ("a[[:space:]]b", "a\rb", True),
    ("a[[:space:]]b", "a\vb", False),
    ("a[[:cntrl:]]b", "a\x7fb", True),
    ("a*b", "a\nb", True),
    ("a?b", "a\nb", True),
    ("**/b", "a\n/b", True),
    # A character is a code point here (git compares UTF-8 bytes).
    ("?", "é", True),
    ("[é]", "é", True),
    ("[[:alpha:]]", "é", False),
    ("*.txt", "naïve.txt", True),
]


@pytest.mark.parametrize(("pattern", "path", "expected"), T3070 + FAILGATE_CASES)
def test_match_table(pattern: str, path: str, expected: bool) -> None:
    assert wildmatch.match(pattern, path) is expected


@pytest.mark.parametrize(
    ("pattern", "fragment"),
    [
        ("", "empty"),
        ("a\0b", "NUL"),
        ("a[bc", "unterminated bracket"),
        ("a[]", "unterminated bracket"),
        ("[!]", "unterminated bracket"),
        ("[\\]", "unterminated bracket"),
        ("[a-\\", "unterminated bracket"),
        ("[[:alpha:]", "unterminated bracket"),
        ("[[:alpha", "unterminated bracket"),
        ("[[:alhpa:]]", "unknown character class [:alhpa:]"),
        ("[[::]]", "unknown character class"),
        ("abc\\", "trailing backslash"),
    ],
)
def test_pattern_error_says_why(pattern: str, fragment: str) -> None:
    error = wildmatch.pattern_error(pattern)
    assert error is not None
    assert fragment in error


def test_pattern_error_does_not_echo_an_unprintable_class_name() -> None:
    error = wildmatch.pattern_error("[[:\x1b[31m:]]")
    assert error is not None
    assert "\x1b" not in error


@pytest.mark.parametrize(
    "pattern",
    ["*", "**", "a/**/b", r"\*", "[]]", "[!]]", "[[:alpha:]]", "[[:alpha]", "[[:]", "[z-a]"],
)
def test_valid_patterns_have_no_error(pattern: str) -> None:
    assert wildmatch.pattern_error(pattern) is None


@pytest.mark.parametrize("pattern", ["", "a[", "[[:nope:]]", "x\\"])
def test_an_invalid_pattern_matches_nothing(pattern: str) -> None:
    assert not wildmatch.match(pattern, "")
    assert not wildmatch.match(pattern, "a[")
    assert not wildmatch.match(pattern, "x\\")


def test_match_any() -> None:
    patterns = ["refs/heads/main", "refs/heads/release/*"]
    assert wildmatch.match_any(patterns, "refs/heads/release/2")
    assert wildmatch.match_any(patterns, "refs/heads/main")
    assert not wildmatch.match_any(patterns, "refs/heads/feature")
    assert not wildmatch.match_any([], "refs/heads/main")
    assert wildmatch.match_any(iter(["[", "*"]), "x")


# --- A direct port of git's dowild() (wildmatch.c), used only as an oracle. ---

_MATCH, _NOMATCH, _ABORT_ALL, _ABORT_TO_STARSTAR = 0, 1, -1, -2

_ORACLE_CLASSES: dict[str, Callable[[str], bool]] = {
    "alnum": lambda c: c.isascii() and c.isalnum(),
    "alpha": lambda c: c.isascii() and c.isalpha(),
    "blank": lambda c: c in " \t",
    "cntrl": lambda c: ord(c) < 0x20 or c == "\x7f",
    "digit": lambda c: c in "0123456789",
    "graph": lambda c: 0x21 <= ord(c) <= 0x7E,
    "lower": lambda c: c.isascii() and c.islower(),
    "print": lambda c: 0x20 <= ord(c) <= 0x7E,
    "punct": lambda c: 0x21 <= ord(c) <= 0x7E and not c.isalnum(),
    "space": lambda c: c in " \t\n\r",
    "upper": lambda c: c.isascii() and c.isupper(),
    "xdigit": lambda c: c in "0123456789abcdefABCDEF",
}


def _at(s: str, i: int) -> str:
    """s[i], or "" past the end (C's NUL terminator)."""
    return s[i] if 0 <= i < len(s) else ""


def _dowild(p: str, pi: int, t: str, ti: int) -> int:
    """git's dowild() with WM_PATHNAME, transliterated from C."""
    while pi < len(p):
        p_ch = p[pi]
        t_ch = _at(t, ti)
        if t_ch == "" and p_ch != "*":
            return _ABORT_ALL
        if p_ch == "\\":
            pi += 1
            if t_ch != _at(p, pi):
                return _NOMATCH
        elif p_ch == "?":
            if t_ch == "/":
                return _NOMATCH
        elif p_ch == "*":
            pi += 1
            if _at(p, pi) == "*":
                prev = pi - 2
                while _at(p, pi) == "*":
                    pi += 1
                if (prev < 0 or p[prev] == "/") and (
                    _at(p, pi) in ("", "/") or p[pi : pi + 2] == "\\/"
                ):
                    if _at(p, pi) == "/" and _dowild(p, pi + 1, t, ti) == _MATCH:
                        return _MATCH
                    match_slash = True
                else:
                    match_slash = False
            else:
                match_slash = False
            if pi == len(p):
                if not match_slash and "/" in t[ti:]:
                    return _NOMATCH
                return _MATCH
            if not match_slash and p[pi] == "/":
                slash = t.find("/", ti)
                if slash == -1:
                    return _NOMATCH
                pi, ti = pi + 1, slash + 1
                continue
            while True:
                if t_ch == "":
                    break
                if p[pi] not in "*?[\\":
                    while ti < len(t) and (match_slash or t[ti] != "/") and t[ti] != p[pi]:
                        ti += 1
                    t_ch = _at(t, ti)
                    if t_ch != p[pi]:
                        return _NOMATCH
                matched = _dowild(p, pi, t, ti)
                if matched != _NOMATCH:
                    if not match_slash or matched != _ABORT_TO_STARSTAR:
                        return matched
                elif not match_slash and t_ch == "/":
                    return _ABORT_TO_STARSTAR
                ti += 1
                t_ch = _at(t, ti)
            return _ABORT_ALL
        elif p_ch == "[":
            pi += 1
            p_ch = _at(p, pi)
            if p_ch == "^":
                p_ch = "!"
            negated = p_ch == "!"
            if negated:
                pi += 1
                p_ch = _at(p, pi)
            prev_ch = ""
            in_set = False
            while True:
                if p_ch == "":
                    return _ABORT_ALL
                if p_ch == "\\":
                    pi += 1
                    p_ch = _at(p, pi)
                    if p_ch == "":
                        return _ABORT_ALL
                    in_set = in_set or t_ch == p_ch
                elif p_ch == "-" and prev_ch and _at(p, pi + 1) not in ("", "]"):
                    pi += 1
                    p_ch = _at(p, pi)
                    if p_ch == "\\":
                        pi += 1
                        p_ch = _at(p, pi)
                        if p_ch == "":
                            return _ABORT_ALL
                    in_set = in_set or prev_ch <= t_ch <= p_ch
                    p_ch = ""
                elif p_ch == "[" and _at(p, pi + 1) == ":":
                    pi += 2
                    s = pi
                    while _at(p, pi) not in ("", "]"):
                        pi += 1
                    if _at(p, pi) == "":
                        return _ABORT_ALL
                    if pi - s - 1 < 0 or p[pi - 1] != ":":
                        pi = s - 2
                        p_ch = "["
                        in_set = in_set or t_ch == p_ch
                    else:
                        test = _ORACLE_CLASSES.get(p[s : pi - 1])
                        if test is None:
                            return _ABORT_ALL
                        in_set = in_set or test(t_ch)
                        p_ch = ""
                else:
                    in_set = in_set or t_ch == p_ch
                prev_ch = p_ch
                pi += 1
                p_ch = _at(p, pi)
                if p_ch == "]":
                    break
            if in_set == negated or t_ch == "/":
                return _NOMATCH
        elif t_ch != p_ch:
            return _NOMATCH
        pi += 1
        ti += 1
    return _NOMATCH if ti < len(t) else _MATCH


def _git_wildmatch(pattern: str, path: str) -> bool:
    """The oracle's verdict."""
    return _dowild(pattern, 0, path, 0) == _MATCH


@pytest.mark.parametrize(("pattern", "path", "expected"), T3070)
def test_oracle_agrees_with_t3070(pattern: str, path: str, expected: bool) -> None:
    # Guards the oracle itself, so that agreement with it means something.
    assert _git_wildmatch(pattern, path) is expected


_PATTERN_PIECES = st.sampled_from(
    [
        *["a", "b", "/", "*", "**", "?", "[", "]", "!", "^", "-", "\\", ":"],
        *["[:alpha:]", "[:digit:]", "[:nope:]", "[a-b]", "[!a]", "**/", "/**"],
    ]
)


@settings(max_examples=3000, deadline=None)
@given(
    pattern=st.lists(_PATTERN_PIECES, min_size=1, max_size=8).map("".join),
    path=st.text(alphabet="ab/1-]![\\:^*", max_size=8),
)
def test_match_agrees_with_a_port_of_git_dowild(pattern: str, path: str) -> None:
    assert wildmatch.match(pattern, path) is _git_wildmatch(pattern, path)


@settings(max_examples=500, deadline=None)
@given(pattern=st.lists(_PATTERN_PIECES, min_size=1, max_size=8).map("".join))
def test_a_pattern_with_an_error_never_matches(pattern: str) -> None:
    if wildmatch.pattern_error(pattern) is None:
        return
    for path in ["", "a", "a/b", pattern, "[", "a[", ":"]:
        assert not wildmatch.match(pattern, path)


_SEGMENT_PIECES = st.sampled_from(
    [
        "a",
        "b",
        "ab",
        "*",
        "**",
        "?",
        "[ab]",
        "[!a]",
        "a*",
        "*b",
        "*a*",
        "a*b*",
        "?*",
        r"\*",
        "[[:alpha:]]",
    ]
)


@settings(max_examples=2000, deadline=None)
@given(
    pattern=st.lists(
        st.lists(_SEGMENT_PIECES, min_size=1, max_size=3).map("".join), min_size=1, max_size=5
    ).map("/".join),
    path=st.lists(st.text(alphabet="ab*", max_size=5), min_size=1, max_size=6).map("/".join),
)
def test_match_agrees_with_git_dowild_on_path_shaped_globs(pattern: str, path: str) -> None:
    # Longer paths and several wildcards per glob, segment by segment, as real globs are.
    assert wildmatch.match(pattern, path) is _git_wildmatch(pattern, path)


# Globs on which a backtracking matcher's work is exponential in its number of
# `*`, with what each matches. A pusher writes globs; none may hang a hook.
ADVERSARIAL = [
    ("src/" + "*e" * 8 + "Z", "src/" + "e" * 70, False),
    ("*a" * 12 + "b", "a" * 80, False),
    ("pad/" + "*a" * 30 + "b", "pad/" + "a" * 4000, False),
    ("pad/" + "*a" * 30, "pad/" + "a" * 4000, True),
    ("**/" * 20 + "x", "a/" * 2000 + "b", False),
    ("a/**/" * 20 + "b", "a/" * 2000 + "c", False),
    ("a/**/" * 20 + "b", "a/" * 2000 + "b", True),
    ("*" + "**a" * 20 + "b", "a" * 2000, False),
]


def test_adversarial_globs_finish() -> None:
    # In a child process with a time limit, so that a matcher that backtracks
    # fails this test instead of hanging the suite. Bounded work takes a small
    # fraction of a second here; the limit is a hundred times more than that
    # even on a slow, loaded machine.
    script = (
        "import json, sys\n"
        "from failgate_hooks.core import wildmatch\n"
        "cases = json.load(sys.stdin)\n"
        "print(json.dumps([wildmatch.match(pattern, path) for pattern, path in cases]))\n"
    )
    cases = json.dumps([[pattern, path] for pattern, path, _ in ADVERSARIAL])
    try:
        done = subprocess.run(
            [sys.executable, "-c", script], input=cases, capture_output=True, text=True, timeout=60
        )
    except subprocess.TimeoutExpired:
        pytest.fail("matching the adversarial globs did not finish within 60 seconds")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [expected for _, _, expected in ADVERSARIAL]


# --- Real git: `git ls-files -- ':(glob)PATTERN'` over an index of these paths. ---

GIT_FILES = [
    # No path is also a directory of another: an index cannot hold both.
    "foo/bar",
    "foo/baz/bar",
    "foo/b/a/z/bar",
    "foo/bba/arr",
    "foobazbar",
    "foo-bar",
    "XXX/foo",
    "bar/baz/foo",
    "deep/foo/bar/baz",
    "deep/foo/bar/qux/x",
    "zap/bar/baz/x",
    "a]b",
    "a-b",
    "aab",
    "ten",
    "ton",
    "ball",
    "a1B",
    "A",
    "1",
    "-",
    "]",
    "[ab]",
    "?a?b",
    "foo*",
    "f\\oo",
    "a b",
    "a\tb",
    "a\rb",
    ".hidden",
    "dir/.hidden",
    "a/b",
    "a/x/b",
    "a/x/y/b",
    "x/a/b",
    "b",
    "refs/heads/main",
    "refs/heads/main2",
    "refs/heads/release/1.0",
    "refs/heads/release/2.0/x",
    "refs/tags/v1",
    "deploy/a.json",
    "deploy/sub/b.json",
    "src/budget/x.py",
    "src/budget/deep/y.py",
    "src/budgetx/z.py",
    "docs/a.md",
    "top.md",
]

# Every pattern has a wildcard or an escape before any literal directory name
# could equal a path prefix, and none starts `x**` at its first wildcard: git's
# pathspec layer (not wildmatch) treats those specially. See the module docstring.
GIT_PATTERNS = [
    "*",
    "**",
    "*/*",
    "*/*/*",
    "**/foo",
    "**/bar",
    "**/bar/*",
    "**/bar/**",
    "*/bar/**",
    "foo/*",
    "foo/**",
    "foo/**/bar",
    "foo/**/**/bar",
    "foo*",
    "foo*bar",
    "foo**bar",
    "foo?bar",
    "foo[/]bar",
    "foo[^a-z]bar",
    "f[^eiu][^eiu][^eiu][^eiu][^eiu]r",
    "a[]]b",
    "a[]-]b",
    "[!]-]",
    "t[!a-g]n",
    "t[^a-g]n",
    "*[al]?",
    "[[:alpha:]][[:digit:]][[:upper:]]",
    "[[:upper:]]",
    "[[:punct:]]",
    "a[[:space:]]b",
    "a[[:blank:]]b",
    "[[:cntrl:][:digit:]]",
    r"\[ab]",
    "[[]ab]",
    "[[:]ab]",
    "[[:digit]ab]",
    r"\??\?b",
    r"foo\*",
    r"f\\oo",
    "refs/heads/release/*",
    "refs/heads/*",
    "refs/heads/main*",
    "refs/**",
    "refs/*/release/**",
    "deploy/*.json",
    "deploy/**/*.json",
    "src/budget/**",
    "src/budget*/**",
    "**/*.py",
    "*.md",
    "**/*.md",
    "**/.hidden",
    ".*",
    "*hidden",
    "a/**/b",
    "**/b",
    "a/*/b",
    "[a-c]/**",
    r"**\/b",
    "**/**/**",
    "*/**",
    "[z-a]*",
    "[b-a]*",
]


def _git(repo: Path, *args: str, stdin: bytes = b"") -> bytes:
    """Run git in `repo`, isolated from the user's config and any outer repository."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="Test",
        GIT_AUTHOR_EMAIL="test@example.org",
        GIT_COMMITTER_NAME="Test",
        GIT_COMMITTER_EMAIL="test@example.org",
    )
    result = subprocess.run(
        ["git", *args], cwd=repo, env=env, input=stdin, capture_output=True, check=True
    )
    return result.stdout


@pytest.fixture(scope="module")
def glob_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository whose index holds GIT_FILES (empty blobs, no working tree needed)."""
    assert shutil.which("git") is not None, "git is required: the comparison is with real git"
    repo = tmp_path_factory.mktemp("wildmatch-repo")
    _git(repo, "init", "-q")
    blob = _git(repo, "hash-object", "-w", "--stdin").decode().strip()
    entries = b"".join(f"100644 {blob}\t{path}\0".encode() for path in GIT_FILES)
    _git(repo, "update-index", "-z", "--add", "--index-info", stdin=entries)
    return repo


def test_git_fixture_holds_every_file(glob_repo: Path) -> None:
    listed = _git(glob_repo, "ls-files", "-z").decode().split("\0")[:-1]
    assert sorted(listed) == sorted(GIT_FILES)


@pytest.mark.parametrize("pattern", GIT_PATTERNS)
def test_match_agrees_with_git_ls_files(glob_repo: Path, pattern: str) -> None:
    out = _git(glob_repo, "ls-files", "-z", "--", f":(glob){pattern}")
    by_git = set(out.decode().split("\0")[:-1])
    ours = {path for path in GIT_FILES if wildmatch.match(pattern, path)}
    assert ours == by_git


def test_a_budget_bounds_the_work_of_many_matches_together() -> None:
    """Each match is bounded; many long globs beside many long file names are not, so
    the caller gives them one budget, and running out of it is said, never a miss."""
    paths = sorted(f"deep/{'a' * 2000}{i:04d}" for i in range(50))
    pattern = "*" + "?" * 60 + "*z"
    budget = wildmatch.Budget(len(pattern) * len(paths[0]) * 10)
    assert wildmatch.matching([pattern], paths[:10], budget=budget) == []
    with pytest.raises(wildmatch.WorkSpent):
        wildmatch.matching([pattern], paths, budget=budget)
    assert wildmatch.matching([pattern], paths) == []  # no budget, no bound
