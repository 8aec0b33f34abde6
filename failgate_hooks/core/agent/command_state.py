"""What the command scan has found so far in one command line, and how it reads further. Pure.

The scan is one recursion over the shell's grammar: a git alias, a `bash -c`, a
`--receive-pack` each hold a command line of their own. The modules that read a
part of it (git's, a shell's) hand such a line back through `LineReader`, so the
recursion keeps one depth limit and one state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from failgate_hooks.core.agent.command_rules import Finding
from failgate_hooks.core.agent.command_writes import WriteTarget
from failgate_hooks.core.agent.shell_lexer import Word


@dataclass
class Push:
    kind: str  # "push", "computed" (the subcommand is), "unknown" (git does not know it)
    bypass: str | None
    computed_args: bool


@dataclass
class ScanState:
    cwd: str | None
    findings: list[Finding] = field(default_factory=list)
    writes: list[WriteTarget] = field(default_factory=list)
    code: list[str] = field(default_factory=list)
    pushes: list[Push] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    bypass_variables: list[str] = field(default_factory=list)
    # `GIT_CONFIG_KEY_n` and `GIT_CONFIG_VALUE_n` set so far, by part and n: read as a pair
    config_variables: dict[tuple[str, str], Word] = field(default_factory=dict)
    # what gives a `git init` of the line a template, as shown: `-c init.templatedir`
    template: str | None = None
    # for the restores of paths (command_restores.py): the first command of the line that
    # could change what git holds, and why the line's commands may not run in order
    stirred: str | None = None
    irregular: str | None = None


class LineReader(Protocol):
    """The scan itself, as the parts that find a command line inside a command call it."""

    def argv(self, words: list[Word], state: ScanState, depth: int) -> None:
        """One command's words, as if the shell ran them."""

    def line(self, text: str, state: ScanState, depth: int) -> None:
        """A command line one level deeper."""

    def code_string(self, words: Sequence[Word], state: ScanState, depth: int, what: str) -> None:
        """Words the shell joins and runs again as a command line."""
