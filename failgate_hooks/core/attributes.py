"""git's attributes of a path, as `check-attr` reports them, which values set nothing, and
which attributes convert more than line endings. Pure: `git/conversion.py` asks git.

An attribute git knows nothing of for a path is `unspecified`; one a pattern
turns off (`-text`, `!filter`) is `unset`. In neither state does a conversion
attribute convert anything: every other value may (`set`, `auto`, `crlf`, a
filter driver's name, an encoding).

A line ending converted (core.autocrlf, `text`, `eol`, `crlf`) is the same
file. The attributes `CONVERTING_ATTRIBUTES` make git write other bytes than
that: `filter` runs whatever command its driver names, `ident` and
`working-tree-encoding` rewrite the text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

# The values of a conversion attribute under which git converts nothing.
NO_CONVERSION = frozenset({"unspecified", "unset"})

# The attributes under which git converts more than a file's line endings.
CONVERTING_ATTRIBUTES = ("filter", "ident", "working-tree-encoding")


class Attribute(NamedTuple):
    """One (path, attribute, value) triple of `git check-attr` output."""

    path: str
    name: str
    value: str

    @property
    def converts(self) -> bool:
        """Whether this value of a conversion attribute may make git convert the file."""
        return self.value not in NO_CONVERSION


def converting(attributes: Iterable[Attribute]) -> str | None:
    """The first (path, attribute) of `check-attr` output that converts more than line endings."""
    for attribute in attributes:
        if attribute.name in CONVERTING_ATTRIBUTES and attribute.converts:
            return f"{attribute.path} has the attribute {attribute.name}={attribute.value}"
    return None


def unproven(paths: Sequence[str], attributes: Sequence[Attribute]) -> str | None:
    """Why `attributes` (`check-attr` output) do not prove that git converts nothing but
    line endings at each of `paths`: an attribute that converts more, or one of
    `CONVERTING_ATTRIBUTES` that they do not report for a path (nothing known of it is
    no proof). None when each path is proven."""
    why = converting(attributes)
    if why is not None:
        return why
    reported = {(attribute.path, attribute.name) for attribute in attributes}
    for path in paths:
        for name in CONVERTING_ATTRIBUTES:
            if (path, name) not in reported:
                return f"nothing says what the attribute {name} of {path} is"
    return None
