"""The one place the command layer writes to standard output and standard error.

A GitHub Actions runner reads every line a step prints, on standard output and
standard error alike, for a workflow command (actions/runner, ActionCommand:
`::name …::` once the line's leading white space is trimmed, and the legacy
`##[name …]` anywhere in it). What failgate prints quotes the ledger, verifiers
and git, which anyone who can push a commit writes: a title `::add-mask::…` or
`::stop-commands::…` would hide the job's log or failgate's own annotations
after it, and an old runner would take `##[set-output …]` or `::set-env::`.

So inside a step (GITHUB_ACTIONS=true, read once per process) every line goes
through the one neutraliser, sanitize.no_workflow_commands: `##[` is written
`##\\[`, and a line that would start with `::` starts with `:\\:`. A JSON
document goes through sanitize.json_no_workflow_commands instead: `#` is written
`\\u0023`, so the document stays valid JSON and decodes to the same values (no
line of json.dumps's output starts with `:`). Outside a step nothing is changed.

failgate's own workflow commands (render/github.py builds them, escaping what
they quote) are the one thing written around the neutraliser: `Output.own_command`.

This module imports no click: the hooks print through it too.
"""

from __future__ import annotations

import functools
import os
import sys
from types import TracebackType
from typing import NamedTuple

from failgate_hooks.core import sanitize


class Output(NamedTuple):
    """Writes failgate's text, JSON and workflow commands; `in_actions` neutralises them."""

    in_actions: bool = False

    def text(self, text: str = "", *, err: bool = False, nl: bool = True) -> None:
        """Text for people, any of it possibly data: one or more lines."""
        if self.in_actions:
            text = sanitize.no_workflow_commands(text)
        _write(text + "\n" if nl else text, err=err)

    def json(self, document: str) -> None:
        """One JSON text on standard output, as json.dumps wrote it; a newline after it."""
        if self.in_actions:
            document = sanitize.json_no_workflow_commands(document)
        _write(document + "\n", err=False)

    def own_command(self, line: str, *, err: bool = False) -> None:
        """One workflow command failgate means to give, written as it is: only for the lines
        render/github.py builds (annotations, the stop-commands fence)."""
        # Escaped data never holds a line break: one here would let data start a line.
        if not line.startswith("::") or line.splitlines() != [line]:
            raise ValueError(f"not one workflow command line: {line!r}")
        _write(line + "\n", err=err)


def _write(text: str, *, err: bool) -> None:
    # The stream as it is at the call, as click.echo takes it (a test may swap it).
    stream = sys.stderr if err else sys.stdout
    stream.write(text)
    stream.flush()


@functools.cache
def output() -> Output:
    """This process's output: inside a GitHub Actions step, neutralised."""
    return Output(in_actions=sanitize.in_github_actions(os.environ))


def echo(text: str = "", *, err: bool = False, nl: bool = True) -> None:
    """`output().text`: what every command prints."""
    output().text(text, err=err, nl=nl)


def echo_json(document: str) -> None:
    """`output().json` on standard output."""
    output().json(document)


def neutralise_tracebacks() -> None:
    """Inside a step, a crash's traceback (its message may quote data) goes through the
    neutraliser too; elsewhere Python prints it as always."""
    if output().in_actions:
        sys.excepthook = _excepthook


def _excepthook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
    import traceback

    echo("".join(traceback.format_exception(kind, value, tb)), err=True, nl=False)
