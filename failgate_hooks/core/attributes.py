"""git's attributes of a path, as `check-attr` reports them, and which values set nothing.
Pure: `git/conversion.py` asks git.

An attribute git knows nothing of for a path is `unspecified`; one a pattern
turns off (`-text`, `!filter`) is `unset`. In neither state does a conversion
attribute convert anything: every other value may (`set`, `auto`, `crlf`, a
filter driver's name, an encoding).
"""

from __future__ import annotations

from typing import NamedTuple

# The values of a conversion attribute under which git converts nothing.
NO_CONVERSION = frozenset({"unspecified", "unset"})


class Attribute(NamedTuple):
    """One (path, attribute, value) triple of `git check-attr` output."""

    path: str
    name: str
    value: str

    @property
    def converts(self) -> bool:
        """Whether this value of a conversion attribute may make git convert the file."""
        return self.value not in NO_CONVERSION
