"""Golden screens: the text a user reads, compared with a file under tests/golden/.

What differs from run to run is named, not compared: each commit id (full or
short) becomes <commit-N> and each event id <event-N>, numbered in the order they
first appear; a duration becomes N.NN; an ISO time <time>; the test's folder <tmp>;
and trailing spaces go.
Refresh every golden after a deliberate change of wording, then read the diff:

    FAILGATE_REFRESH_GOLDEN=1 .venv/bin/python -m pytest -q -p no:cacheprovider tests/test_screens.py
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent / "golden"
REFRESH = "FAILGATE_REFRESH_GOLDEN"

_EVENT = re.compile(r"\b\d{8}T\d{6}Z-[0-9a-f]{8}\b")
_COMMIT = re.compile(r"\b[0-9a-f]{40}\b|\b[0-9a-f]{12}\b")
_DURATION = re.compile(r"\b\d+\.\d\d s\b")
_TIME = re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)")


def normalise(text: str, *, tmp: Path | None = None) -> str:
    """The screen with what varies between runs replaced by stable names."""
    if tmp is not None:
        text = text.replace(str(tmp), "<tmp>")
    text = _numbered(_EVENT, "event", text)
    text = _numbered(_COMMIT, "commit", text, key=lambda found: found[:12])
    text = _DURATION.sub("N.NN s", text)
    text = _TIME.sub("<time>", text)
    # git pads a hook's "remote:" lines with spaces that erase a terminal's line
    return "\n".join(line.rstrip() for line in text.splitlines())


def _numbered(
    pattern: re.Pattern[str], name: str, text: str, key: Callable[[str], str] = str
) -> str:
    """Each distinct match (by `key`) as <NAME-N>, in order of first appearance."""
    names: dict[str, str] = {}

    def replace(match: re.Match[str]) -> str:
        found = key(match.group(0))
        names.setdefault(found, f"<{name}-{len(names) + 1}>")
        return names[found]

    return pattern.sub(replace, text)


def assert_screen(name: str, text: str, *, tmp: Path | None = None) -> None:
    """`text`, normalised, is tests/golden/NAME.txt (written instead under REFRESH)."""
    got = normalise(text, tmp=tmp).rstrip("\n") + "\n"
    path = GOLDEN / f"{name}.txt"
    if os.environ.get(REFRESH) == "1":
        path.write_text(got, encoding="utf-8")
        return
    assert path.exists(), f"no golden {path.name}: run with {REFRESH}=1 once, then read it"
    expected = path.read_text(encoding="utf-8")
    assert got == expected, f"{path.name} differs (refresh with {REFRESH}=1 if deliberate)"
